"""AgentRunner: tasks, step queues, finalizing, chat in every mode, events, callbacks (SPEC §4)."""

import asyncio
from typing import Any

import pytest

from agentkit.agent import (
    AgentChatResponse,
    AgentRunner,
    AgentState,
    BaseAgentWorker,
    FunctionCallingAgent,
    FunctionCallingAgentWorker,
    ReActAgent,
    StreamingAgentChatResponse,
    Task,
    TaskStep,
    TaskStepOutput,
)
from agentkit.core.sim import run_sync
from agentkit.instrumentation import (
    AgentChatEndEvent,
    AgentChatStartEvent,
    AgentStepEndEvent,
    AgentStepStartEvent,
    CallbackManager,
    CBEventType,
    EventPayload,
    LlamaDebugHandler,
    collect_events,
)
from agentkit.llms.mock import ScriptedLLM, tool_call
from agentkit.llms.types import ChatMessage, MessageRole
from agentkit.memory import ChatMemoryBuffer
from agentkit.tools import FunctionTool

MODES = ["sync", "async", "stream", "astream"]
AGENT_EVENTS = (AgentChatStartEvent, AgentChatEndEvent, AgentStepStartEvent, AgentStepEndEvent)


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def _agent(*script: Any, **runner_kwargs: Any) -> tuple[AgentRunner, ScriptedLLM]:
    llm = ScriptedLLM(list(script))
    worker = FunctionCallingAgentWorker.from_tools([FunctionTool.from_defaults(add)], llm=llm)
    return AgentRunner(worker, **runner_kwargs), llm


def _two_steps() -> list[Any]:
    """Step 1 calls add(2, 3); step 2 answers."""
    return [tool_call("add", a=2, b=3), "The sum is 5."]


def _chat(agent: AgentRunner, message: str, mode: str, **kwargs: Any) -> str:
    """Chat in one of the four modes and return the (drained) answer text."""
    if mode == "sync":
        return str(agent.chat(message, **kwargs))
    if mode == "async":
        return str(run_sync(agent.achat(message, **kwargs)))
    if mode == "stream":
        return "".join(agent.stream_chat(message, **kwargs).response_gen)

    async def drain() -> str:
        stream = await agent.astream_chat(message, **kwargs)
        return "".join([delta async for delta in stream.async_response_gen()])

    return run_sync(drain())


def _user(text: str) -> ChatMessage:
    return ChatMessage(role=MessageRole.USER, content=text)


def _assistant(text: str) -> ChatMessage:
    return ChatMessage(role=MessageRole.ASSISTANT, content=text)


def _roles_and_text(messages: list[ChatMessage]) -> list[tuple[str, str]]:
    return [(m.role.value, m.content or "") for m in messages]


# --------------------------------------------------------------------------- tasks
def test_create_task_queues_the_workers_initial_step():
    agent, _ = _agent()
    task = agent.create_task("What is 2 + 3?")
    [step] = agent.get_upcoming_steps(task.task_id)
    assert (step.task_id, step.input) == (task.task_id, "What is 2 + 3?")


def test_create_task_shares_the_runner_memory():
    agent, _ = _agent()
    assert agent.create_task("q").memory is agent.memory


def test_create_task_passes_extra_state_to_the_task():
    agent, _ = _agent()
    task = agent.create_task("q", extra_state={"user": "ada"})
    assert task.extra_state["user"] == "ada"


def test_each_task_starts_from_its_own_copy_of_init_task_state_kwargs():
    agent, _ = _agent(init_task_state_kwargs={"count": 0})
    first = agent.create_task("q")
    first.extra_state["count"] = 5
    assert agent.create_task("q").extra_state["count"] == 0


def test_create_task_rejects_extra_state_together_with_init_task_state_kwargs():
    agent, _ = _agent(init_task_state_kwargs={"count": 0})
    with pytest.raises(ValueError, match="Cannot specify both `extra_state` and "
                                         "`init_task_state_kwargs`"):
        agent.create_task("q", extra_state={"count": 1})


def test_list_tasks_lists_every_created_task():
    agent, _ = _agent()
    first, second = agent.create_task("a"), agent.create_task("b")
    assert [state.task for state in agent.list_tasks()] == [first, second]


def test_get_task_returns_the_task_with_that_id():
    agent, _ = _agent()
    task = agent.create_task("q")
    assert agent.get_task(task.task_id) is task


def test_get_task_with_an_unknown_id_names_the_id():
    agent, _ = _agent()
    with pytest.raises(ValueError, match="No task with task_id: nope"):
        agent.get_task("nope")


def test_a_new_task_has_no_completed_steps():
    agent, _ = _agent()
    assert agent.get_completed_steps(agent.create_task("q").task_id) == []


def test_get_task_output_without_completed_steps_names_the_task():
    agent, _ = _agent()
    task = agent.create_task("q")
    with pytest.raises(ValueError, match=f"No completed steps for task_id: {task.task_id}"):
        agent.get_task_output(task.task_id)


def test_get_task_output_is_the_last_completed_step():
    agent, _ = _agent(*_two_steps())
    task = agent.create_task("q")
    agent.run_step(task.task_id)
    last = agent.run_step(task.task_id)
    assert agent.get_task_output(task.task_id) is last


def test_get_completed_tasks_lists_only_tasks_whose_last_step_ran():
    agent, _ = _agent("done")
    finished, pending = agent.create_task("a"), agent.create_task("b")
    agent.run_step(finished.task_id)
    assert agent.get_completed_tasks() == [finished]
    assert pending not in agent.get_completed_tasks()


def test_delete_task_removes_the_task():
    agent, _ = _agent()
    task = agent.create_task("q")
    agent.delete_task(task.task_id)
    assert agent.list_tasks() == []


def test_delete_task_with_an_unknown_id_names_the_id():
    agent, _ = _agent()
    with pytest.raises(ValueError, match="No task with task_id: nope"):
        agent.delete_task("nope")


# --------------------------------------------------------------------------- steps
def test_run_step_runs_the_queued_step_and_pops_it():
    agent, _ = _agent("done")
    task = agent.create_task("q")
    [queued] = agent.get_upcoming_steps(task.task_id)
    output = agent.run_step(task.task_id)
    assert output.task_step is queued
    assert queued not in agent.get_upcoming_steps(task.task_id)


def test_run_step_appends_its_output_to_the_completed_steps():
    agent, _ = _agent(*_two_steps())
    task = agent.create_task("q")
    first = agent.run_step(task.task_id)
    second = agent.run_step(task.task_id)
    assert agent.get_completed_steps(task.task_id) == [first, second]


def test_run_step_queues_the_next_steps_of_a_step_that_is_not_last():
    agent, _ = _agent(tool_call("add", a=2, b=3))
    task = agent.create_task("q")
    output = agent.run_step(task.task_id)
    assert not output.is_last and len(output.next_steps) == 1
    assert agent.get_upcoming_steps(task.task_id) == output.next_steps


class _LastWithNextWorker(BaseAgentWorker):
    """Its only step is last yet still proposes a next step."""

    def initialize_step(self, task: Task, **kwargs: Any) -> TaskStep:
        return TaskStep(task_id=task.task_id, input=task.input)

    def run_step(self, step: TaskStep, task: Task, **kwargs: Any) -> TaskStepOutput:
        return TaskStepOutput(output=AgentChatResponse(response="done"), task_step=step,
                              next_steps=[step.get_next_step(step_id="ignored")], is_last=True)

    def finalize_task(self, task: Task, **kwargs: Any) -> None:
        pass


def test_run_step_queues_nothing_after_the_last_step():
    agent = AgentRunner(_LastWithNextWorker())
    task = agent.create_task("q")
    agent.run_step(task.task_id)
    assert agent.get_upcoming_steps(task.task_id) == []


def test_run_step_with_a_step_runs_that_step_and_takes_it_off_the_queue():
    agent, _ = _agent("done")
    task = agent.create_task("q")
    [queued] = agent.get_upcoming_steps(task.task_id)
    output = agent.run_step(task.task_id, step=queued)
    assert output.task_step is queued and agent.get_upcoming_steps(task.task_id) == []


def test_run_step_with_input_feeds_it_to_the_queued_step():
    agent, llm = _agent("ok")
    task = agent.create_task("q")
    output = agent.run_step(task.task_id, input="Answer briefly.")
    assert output.task_step.input == "Answer briefly."
    assert llm.requests[0].messages[-1].content == "Answer briefly."


def test_run_step_with_input_on_an_empty_queue_runs_a_new_step_with_that_input():
    agent, _ = _agent("done", "more")
    task = agent.create_task("q")
    agent.run_step(task.task_id)
    output = agent.run_step(task.task_id, input="Anything else?")
    assert output.task_step.input == "Anything else?" and str(output) == "more"


def test_run_step_on_an_empty_queue_without_input_names_the_task():
    agent, _ = _agent("done")
    task = agent.create_task("q")
    agent.run_step(task.task_id)
    with pytest.raises(ValueError, match=f"No steps left to run for task_id: {task.task_id}"):
        agent.run_step(task.task_id)


@pytest.mark.parametrize("method", ["run_step", "arun_step", "stream_step", "astream_step"])
def test_a_step_run_rejects_both_step_and_input(method):
    agent, _ = _agent()
    task = agent.create_task("q")
    [step] = agent.get_upcoming_steps(task.task_id)

    def run() -> None:
        result = getattr(agent, method)(task.task_id, input="x", step=step)
        if asyncio.iscoroutine(result):
            run_sync(result)

    with pytest.raises(ValueError, match="Cannot specify both `step` and `input`"):
        run()


def test_arun_step_runs_the_queued_step():
    agent, _ = _agent("done")
    task = agent.create_task("q")
    output = run_sync(agent.arun_step(task.task_id))
    assert str(output) == "done" and output.is_last


def test_stream_step_hands_out_the_final_answer_as_a_stream():
    agent, _ = _agent(*_two_steps())
    task = agent.create_task("q")
    agent.stream_step(task.task_id)
    output = agent.stream_step(task.task_id)
    assert isinstance(output.output, StreamingAgentChatResponse)
    assert "".join(output.output.response_gen) == "The sum is 5."


def test_astream_step_hands_out_the_final_answer_as_a_stream():
    agent, _ = _agent("All done.")
    task = agent.create_task("q")
    output = run_sync(agent.astream_step(task.task_id))
    assert isinstance(output.output, StreamingAgentChatResponse)
    assert output.output.get_response().response == "All done."


# --------------------------------------------------------------------------- finalize
def test_finalize_response_rejects_a_step_output_that_is_not_last():
    agent, _ = _agent(tool_call("add", a=2, b=3))
    task = agent.create_task("q")
    output = agent.run_step(task.task_id)
    with pytest.raises(ValueError,
                       match="finalize_response can only be called on the last step output"):
        agent.finalize_response(task.task_id, output)


def test_finalize_response_defaults_to_the_tasks_last_output():
    agent, _ = _agent("done")
    task = agent.create_task("q")
    agent.run_step(task.task_id)
    assert str(agent.finalize_response(task.task_id)) == "done"


def test_finalize_response_writes_the_task_to_memory():
    agent, _ = _agent(*_two_steps())
    task = agent.create_task("What is 2 + 3?")
    agent.run_step(task.task_id)
    agent.run_step(task.task_id)
    assert agent.chat_history == []
    agent.finalize_response(task.task_id)
    assert _roles_and_text(agent.chat_history) == [
        ("user", "What is 2 + 3?"), ("assistant", ""), ("tool", "5"),
        ("assistant", "The sum is 5.")]


def test_finalize_response_attaches_the_tasks_sources():
    agent, _ = _agent(*_two_steps())
    task = agent.create_task("q")
    agent.run_step(task.task_id)
    agent.run_step(task.task_id)
    response = agent.finalize_response(task.task_id)
    assert response.sources == task.extra_state["sources"]
    assert [s.content for s in response.sources] == ["5"]


def test_finalize_response_on_a_stream_read_to_its_end_writes_memory_at_once():
    agent, _ = _agent("All done.")
    task = agent.create_task("q")
    output = agent.stream_step(task.task_id)
    assert "".join(output.output.response_gen) == "All done."
    agent.finalize_response(task.task_id)
    assert _roles_and_text(agent.chat_history) == [("user", "q"), ("assistant", "All done.")]


def test_finalize_response_on_a_stream_writes_memory_when_the_stream_ends():
    agent, _ = _agent("All done.")
    task = agent.create_task("q")
    agent.stream_step(task.task_id)
    stream = agent.finalize_response(task.task_id)
    assert agent.chat_history == []
    stream.get_response()
    assert len(agent.chat_history) == 2


class _PlainOutputWorker(BaseAgentWorker):
    """Ends its task with a plain string instead of a chat response."""

    def initialize_step(self, task: Task, **kwargs: Any) -> TaskStep:
        return TaskStep(task_id=task.task_id, input=task.input)

    def run_step(self, step: TaskStep, task: Task, **kwargs: Any) -> TaskStepOutput:
        return TaskStepOutput(output="plain", task_step=step, is_last=True)

    def finalize_task(self, task: Task, **kwargs: Any) -> None:
        pass


def test_finalize_response_rejects_a_last_output_that_is_not_a_chat_response():
    agent = AgentRunner(_PlainOutputWorker())
    task = agent.create_task("q")
    agent.run_step(task.task_id)
    with pytest.raises(ValueError, match="When `is_last` is True, the step output must be an "
                                         "AgentChatResponse or StreamingAgentChatResponse, "
                                         "got 'plain'"):
        agent.finalize_response(task.task_id)


def test_tasks_are_kept_after_a_chat_by_default():
    agent, _ = _agent("done")
    agent.chat("q")
    assert len(agent.list_tasks()) == 1


def test_delete_task_on_finish_removes_the_task_after_attaching_its_sources():
    agent, _ = _agent(*_two_steps(), delete_task_on_finish=True)
    response = agent.chat("What is 2 + 3?")
    assert [s.content for s in response.sources] == ["5"]
    assert agent.list_tasks() == []


def test_delete_task_on_finish_removes_a_streamed_task_when_its_stream_ends():
    agent, _ = _agent(*_two_steps(), delete_task_on_finish=True)
    stream = agent.stream_chat("What is 2 + 3?")
    assert len(agent.list_tasks()) == 1
    stream.get_response()
    assert agent.list_tasks() == []
    assert [s.content for s in stream.sources] == ["5"]


# --------------------------------------------------------------------------- tool_choice
@pytest.mark.parametrize("mode", MODES)
def test_the_first_step_gets_the_chats_tool_choice_and_later_steps_auto(mode):
    agent, llm = _agent(tool_call("add", a=1, b=1), tool_call("add", a=2, b=2), "done")
    _chat(agent, "q", mode, tool_choice="add")
    assert [request.tool_choice for request in llm.requests] == ["add", "auto", "auto"]


def test_without_a_tool_choice_the_first_step_gets_the_runners_default():
    agent, llm = _agent(*_two_steps(), default_tool_choice="required")
    agent.chat("q")
    assert [request.tool_choice for request in llm.requests] == ["required", "auto"]


# --------------------------------------------------------------------------- chat and memory
@pytest.mark.parametrize("mode", MODES)
def test_chat_answers_with_the_final_reply_after_tool_steps(mode):
    agent, _ = _agent(*_two_steps())
    assert _chat(agent, "What is 2 + 3?", mode) == "The sum is 5."


@pytest.mark.parametrize("mode", MODES)
def test_chat_stores_the_whole_exchange_in_memory(mode):
    agent, _ = _agent(*_two_steps())
    _chat(agent, "What is 2 + 3?", mode)
    assert _roles_and_text(agent.chat_history) == [
        ("user", "What is 2 + 3?"), ("assistant", ""), ("tool", "5"),
        ("assistant", "The sum is 5.")]


def test_the_runner_starts_its_memory_from_chat_history():
    agent, _ = _agent(chat_history=[_user("earlier"), _assistant("noted")])
    assert _roles_and_text(agent.chat_history) == [("user", "earlier"), ("assistant", "noted")]


def test_the_runner_uses_the_memory_it_is_given():
    memory = ChatMemoryBuffer.from_defaults(chat_history=[_user("kept")])
    agent, _ = _agent(memory=memory)
    assert agent.memory is memory and _roles_and_text(agent.chat_history) == [("user", "kept")]


def test_the_runners_default_memory_fits_three_quarters_of_the_llms_context_window():
    llm = ScriptedLLM([], context_window=1000)
    agent = AgentRunner(FunctionCallingAgentWorker.from_tools([], llm=llm))
    assert agent.memory.token_limit == 750


def test_the_runner_keeps_its_tasks_in_the_state_it_is_given():
    state = AgentState()
    agent, _ = _agent(state=state)
    task = agent.create_task("q")
    assert list(state.task_dict) == [task.task_id]


def test_a_second_chat_sees_the_first_exchange():
    agent, llm = _agent("first answer", "second answer")
    agent.chat("one")
    agent.chat("two")
    assert _roles_and_text(llm.requests[1].messages) == [
        ("user", "one"), ("assistant", "first answer"), ("user", "two")]


def test_chat_history_argument_replaces_the_memory():
    agent, llm = _agent("fresh answer", chat_history=[_user("old"), _assistant("old answer")])
    agent.chat("new", chat_history=[_user("given"), _assistant("given answer")])
    assert _roles_and_text(llm.requests[0].messages) == [
        ("user", "given"), ("assistant", "given answer"), ("user", "new")]
    assert _roles_and_text(agent.chat_history)[0] == ("user", "given")


def test_chat_history_property_is_the_whole_memory():
    agent, _ = _agent("done")
    agent.chat("q")
    assert agent.chat_history == agent.memory.get_all()


def test_reset_clears_memory_and_tasks():
    agent, _ = _agent("done")
    agent.chat("q")
    agent.reset()
    assert agent.chat_history == [] and agent.list_tasks() == []


def test_query_answers_from_an_empty_history():
    agent, llm = _agent("answer", chat_history=[_user("old"), _assistant("old answer")])
    assert str(agent.query("question")) == "answer"
    assert _roles_and_text(llm.requests[0].messages) == [("user", "question")]


def test_aquery_answers_from_an_empty_history():
    agent, llm = _agent("answer", chat_history=[_user("old")])
    assert str(run_sync(agent.aquery("question"))) == "answer"
    assert _roles_and_text(llm.requests[0].messages) == [("user", "question")]


def test_achat_returns_an_agent_chat_response():
    agent, _ = _agent("done")
    response = run_sync(agent.achat("q"))
    assert isinstance(response, AgentChatResponse) and response.response == "done"


def test_stream_chat_yields_the_answer_in_word_chunks():
    agent, _ = _agent(*_two_steps())
    stream = agent.stream_chat("q")
    assert list(stream.response_gen) == ["The ", "sum ", "is ", "5."]


def test_stream_chat_writes_memory_only_when_the_stream_is_drained():
    agent, _ = _agent("The sum is 5.")
    stream = agent.stream_chat("q")
    chunks = stream.response_gen
    next(chunks)
    assert agent.chat_history == []
    list(chunks)
    assert _roles_and_text(agent.chat_history) == [("user", "q"), ("assistant", "The sum is 5.")]


def test_astream_chat_writes_memory_when_its_async_stream_is_drained():
    agent, _ = _agent("The sum is 5.")

    async def run() -> list[Any]:
        stream = await agent.astream_chat("q")
        before = agent.chat_history
        await stream.aget_response()
        return [before, agent.chat_history]

    before, after = run_sync(run())
    assert before == [] and len(after) == 2


def test_sync_chat_works_inside_a_running_event_loop():
    agent, _ = _agent(*_two_steps())

    async def inside_a_loop() -> str:
        return str(agent.chat("What is 2 + 3?"))

    assert asyncio.run(inside_a_loop()) == "The sum is 5."


def test_stream_chat_works_inside_a_running_event_loop():
    agent, _ = _agent(*_two_steps())

    async def inside_a_loop() -> list[str]:
        return list(agent.stream_chat("What is 2 + 3?").response_gen)

    assert asyncio.run(inside_a_loop()) == ["The ", "sum ", "is ", "5."]
    assert len(agent.chat_history) == 4


@pytest.mark.parametrize("mode", MODES)
def test_a_failing_llm_propagates_its_exception(mode):
    agent, _ = _agent(RuntimeError("model is down"))
    with pytest.raises(RuntimeError, match="model is down"):
        _chat(agent, "q", mode)


@pytest.mark.parametrize("mode", MODES)
def test_a_failing_llm_leaves_memory_untouched(mode):
    agent, _ = _agent(tool_call("add", a=1, b=2), RuntimeError("model is down"),
                      chat_history=[_user("earlier")])
    with pytest.raises(RuntimeError):
        _chat(agent, "q", mode)
    assert _roles_and_text(agent.chat_history) == [("user", "earlier")]


def test_a_verbose_runner_prints_each_step(capsys):
    agent, _ = _agent("done", verbose=True)
    agent.chat("hello")
    assert "Step input: hello" in capsys.readouterr().out


# --------------------------------------------------------------------------- events
def _agent_event_names(events: list[Any]) -> list[str]:
    return [e.name for e in events if isinstance(e, AGENT_EVENTS)]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("n_steps", [1, 3])
def test_a_chat_with_n_steps_emits_exactly_two_plus_two_n_agent_events(mode, n_steps):
    script = [tool_call("add", a=i, b=i) for i in range(n_steps - 1)] + ["done"]
    agent, _ = _agent(*script)
    with collect_events() as events:
        _chat(agent, "q", mode)
    names = _agent_event_names(events)
    assert len(names) == 2 + 2 * n_steps
    assert names == (["AgentChatStartEvent"]
                     + ["AgentStepStartEvent", "AgentStepEndEvent"] * n_steps
                     + ["AgentChatEndEvent"])


def test_step_events_are_children_of_the_chat_span():
    agent, _ = _agent(*_two_steps())
    with collect_events() as events:
        agent.chat("q")
    [chat_start] = [e for e in events if isinstance(e, AgentChatStartEvent)]
    steps = [e for e in events if isinstance(e, (AgentStepStartEvent, AgentStepEndEvent))]
    assert {e.parent_id for e in steps} == {chat_start.span_id}


def test_only_the_final_step_end_event_is_marked_last():
    agent, _ = _agent(*_two_steps())
    with collect_events() as events:
        agent.chat("q")
    assert [e.is_last for e in events if isinstance(e, AgentStepEndEvent)] == [False, True]


def test_a_failing_chat_ends_its_step_and_chat_events_with_the_error():
    agent, _ = _agent(RuntimeError("model is down"))
    with collect_events() as events, pytest.raises(RuntimeError):
        agent.chat("q")
    ends = [e for e in events if isinstance(e, (AgentStepEndEvent, AgentChatEndEvent))]
    assert [(e.name, e.error) for e in ends] == [
        ("AgentStepEndEvent", "RuntimeError: model is down"),
        ("AgentChatEndEvent", "RuntimeError: model is down")]


@pytest.mark.parametrize("mode", MODES)
def test_step_start_events_of_a_chat_report_no_run_step_input(mode):
    agent, _ = _agent(*_two_steps())
    with collect_events() as events:
        _chat(agent, "What is 2 + 3?", mode)
    starts = [e for e in events if isinstance(e, AgentStepStartEvent)]
    assert [e.input for e in starts] == [None, None]
    assert [e.step.input for e in starts] == ["What is 2 + 3?", None]


def test_step_start_event_reports_the_input_given_to_run_step():
    agent, _ = _agent("done")
    task = agent.create_task("q")
    with collect_events() as events:
        agent.run_step(task.task_id, input="Answer briefly.")
    [start] = [e for e in events if isinstance(e, AgentStepStartEvent)]
    assert (start.input, start.step.step_id) == ("Answer briefly.", start.step_id)


def test_a_run_step_emits_one_step_start_and_end_pair():
    agent, _ = _agent("done")
    task = agent.create_task("q")
    with collect_events() as events:
        agent.run_step(task.task_id)
    assert _agent_event_names(events) == ["AgentStepStartEvent", "AgentStepEndEvent"]


# --------------------------------------------------------------------------- callbacks
def _debug_agent(*script: Any) -> tuple[AgentRunner, LlamaDebugHandler]:
    handler = LlamaDebugHandler()
    agent, _ = _agent(*script, callback_manager=CallbackManager([handler]))
    return agent, handler


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("event_type, pairs", [(CBEventType.AGENT_STEP, 1), (CBEventType.LLM, 2),
                                              (CBEventType.FUNCTION_CALL, 1)])
def test_a_debug_handler_sees_start_end_pairs_of_the_runners_chat(event_type, pairs, mode):
    agent, handler = _debug_agent(*_two_steps())
    _chat(agent, "What is 2 + 3?", mode)
    found = handler.get_event_pairs(event_type)
    assert len(found) == pairs
    assert all(len(pair) == 2 for pair in found)


def test_a_debug_handler_sees_the_tool_output_of_a_function_call():
    agent, handler = _debug_agent(*_two_steps())
    agent.chat("What is 2 + 3?")
    [(_start, end)] = handler.get_event_pairs(CBEventType.FUNCTION_CALL)
    assert end.payload["function_call_response"] == "5"


def test_a_debug_handler_sees_the_chat_as_one_agent_step_with_the_user_message():
    agent, handler = _debug_agent(*_two_steps())
    agent.chat("What is 2 + 3?")
    [(start, end)] = handler.get_event_pairs(CBEventType.AGENT_STEP)
    assert start.payload == {EventPayload.MESSAGES: ["What is 2 + 3?"]}
    assert str(end.payload[EventPayload.RESPONSE]) == "The sum is 5."


def test_a_debug_handler_gets_one_trace_per_chat():
    agent, handler = _debug_agent("one", "two")
    agent.chat("a")
    agent.chat("b")
    assert [trace_id for trace_id, _map in handler.traces] == ["chat", "chat"]


def test_a_callback_manager_sees_only_the_events_of_its_own_agent():
    watched, handler = _debug_agent("watched")
    other, _ = _agent("other")
    other.chat("q")
    assert handler.get_events() == []
    watched.chat("q")
    assert handler.get_events() != []


def test_a_worker_gets_the_runners_callback_manager():
    manager = CallbackManager()
    agent, _ = _agent(callback_manager=manager)
    assert agent.agent_worker.callback_manager is manager


# --------------------------------------------------------------------------- from_llm
def test_from_llm_builds_a_function_calling_agent_for_a_function_calling_llm():
    llm = ScriptedLLM(["hi"])
    agent = AgentRunner.from_llm([FunctionTool.from_defaults(add)], llm=llm)
    assert isinstance(agent.agent_worker, FunctionCallingAgentWorker)
    assert str(agent.chat("q")) == "hi"


def test_from_llm_builds_a_react_agent_for_other_llms():
    llm = ScriptedLLM(["Thought: easy.\nAnswer: hi"], function_calling=False)
    agent = AgentRunner.from_llm([FunctionTool.from_defaults(add)], llm=llm)
    assert isinstance(agent, ReActAgent)
    assert str(agent.chat("q")) == "hi"


def test_from_llm_passes_runner_arguments_to_a_function_calling_agent():
    agent = AgentRunner.from_llm([], llm=ScriptedLLM([]), chat_history=[_user("earlier")],
                                 delete_task_on_finish=True)
    assert isinstance(agent, FunctionCallingAgent)
    assert _roles_and_text(agent.chat_history) == [("user", "earlier")]
    assert agent.delete_task_on_finish is True


def test_from_llm_without_an_llm_says_it_needs_one():
    with pytest.raises(ValueError, match=r"AgentRunner\.from_llm needs an `llm`"):
        AgentRunner.from_llm([])


def test_a_chat_nobody_listens_to_builds_no_events(monkeypatch):
    emitted: list[Any] = []
    monkeypatch.setattr("agentkit.core.events.dispatcher.emit", emitted.append)
    agent, _ = _agent(tool_call("add", a=1, b=2), "3")

    agent.chat("1 + 2?")

    assert emitted == []
