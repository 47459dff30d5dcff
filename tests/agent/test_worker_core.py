"""The worker core every agent worker is built on: the tool-call runner, tool retrieval,
scratch state, step output, finalize and finished-answer streams (agentkit.agent.worker)."""

import asyncio
from typing import Any

import pytest

from agentkit.agent import (
    AgentChatResponse,
    AgentWorker,
    StreamingAgentChatResponse,
    Task,
    TaskStep,
    TaskStepOutput,
)
from agentkit.core.events import ToolsOfferedEvent
from agentkit.core.sim import Stopwatch, asleep, run_sync, simulation
from agentkit.instrumentation import ToolCallEndEvent, ToolCallStartEvent, collect_events
from agentkit.llms.tool_calling import tool_specs
from agentkit.llms.types import ChatMessage, MessageRole, ToolSelection
from agentkit.memory import ChatMemoryBuffer
from agentkit.tools import FunctionTool, KeywordObjectRetriever, ToolOutput, ToolRunner

calls_made: list[str] = []


async def lookup(query: str) -> str:
    """Look something up; takes one simulated second."""
    await asleep(1.0)
    calls_made.append(query)
    return f"found {query}"


async def slow_lookup(query: str) -> str:
    """Look something up; takes two simulated seconds."""
    await asleep(2.0)
    return f"slowly found {query}"


def explode(reason: str) -> str:
    """Always fails."""
    raise RuntimeError(reason)


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def weather(city: str) -> str:
    """The weather of a city."""
    return f"Sunny in {city}"


LOOKUP = FunctionTool.from_defaults(async_fn=lookup)
TOOLS = [LOOKUP, FunctionTool.from_defaults(async_fn=slow_lookup),
         FunctionTool.from_defaults(explode), FunctionTool.from_defaults(add),
         FunctionTool.from_defaults(weather, return_direct=True),
         FunctionTool.from_defaults(explode, name="explode_direct", return_direct=True)]
RUNNER = ToolRunner(TOOLS)


def select(name: str, call_id: str = "call", arguments_error: str | None = None,
           **kwargs: Any) -> ToolSelection:
    return ToolSelection(tool_id=call_id, tool_name=name, tool_kwargs=kwargs,
                         arguments_error=arguments_error)


TWO_LOOKUPS = [select("lookup", "1", query="a"), select("lookup", "2", query="b")]


@pytest.fixture(autouse=True)
def _fresh_call_log() -> None:
    calls_made.clear()


# ================================================================ the tool-call runner
def test_two_one_second_tools_in_parallel_take_one_simulated_second():
    with simulation():
        watch = Stopwatch.start()
        outcomes = RUNNER.run(TWO_LOOKUPS, parallel=True)

    assert (watch.wall, watch.serial) == (1.0, 2.0)
    assert [o.output.content for o in outcomes] == ["found a", "found b"]


def test_two_one_second_tools_run_sequentially_take_two_simulated_seconds():
    with simulation():
        watch = Stopwatch.start()
        RUNNER.run(TWO_LOOKUPS)

    assert (watch.wall, watch.serial) == (2.0, 2.0)
    assert calls_made == ["a", "b"]


def test_parallel_outcomes_keep_call_order_when_a_later_call_finishes_first():
    calls = [select("slow_lookup", "1", query="x"), select("lookup", "2", query="y")]

    with simulation():
        outcomes = RUNNER.run(calls, parallel=True)

    assert [o.output.content for o in outcomes] == ["slowly found x", "found y"]


def test_per_call_coroutines_let_the_caller_schedule_a_dependency():
    async def plan() -> str:
        first = asyncio.create_task(RUNNER.acall("lookup", {"query": "a"}))
        other = asyncio.create_task(RUNNER.acall("lookup", {"query": "b"}))
        dependent = RUNNER.acall("lookup", {"query": (await first).output.content})
        await other
        return (await dependent).output.content

    with simulation():
        watch = Stopwatch.start()
        answer = run_sync(plan())

    assert answer == "found found a"
    assert (watch.wall, watch.serial) == (2.0, 3.0)


def test_a_raising_tool_is_an_error_observation_and_the_batch_goes_on():
    outcomes = RUNNER.run([select("explode", "1", reason="boom"), select("add", "2", a=1, b=2)],
                          parallel=True)

    failed, added = (o.output for o in outcomes)
    assert (failed.content, failed.is_error) == ("Error: boom", True)
    assert (added.content, added.is_error) == ("3", False)


def test_an_unknown_tool_is_an_error_observation_naming_it():
    outcome = RUNNER.call("nope", {"x": 1})

    assert (outcome.output.content, outcome.output.is_error) == (
        "Error: No such tool named `nope`.", True)
    assert (outcome.output.tool_name, outcome.return_direct) == ("nope", False)


def test_bad_arguments_are_an_error_observation():
    outcome = RUNNER.call("add", {"a": 1})

    assert outcome.output.is_error
    assert "b" in outcome.output.content


def test_a_call_with_an_arguments_error_does_not_run_the_tool():
    with collect_events() as events:
        outcome = RUNNER.call("lookup", {"query": "a"}, tool_id="y2",
                              arguments_error="input y1 failed")

    assert calls_made == []
    assert (outcome.output.content, outcome.output.is_error) == ("Error: input y1 failed", True)
    assert [type(e) for e in events] == [ToolCallStartEvent, ToolCallEndEvent]


def test_every_call_emits_one_start_and_one_end_event():
    calls = [*TWO_LOOKUPS, select("explode", "3", reason="x"), select("nope", "4")]

    with simulation(), collect_events() as events:
        RUNNER.run(calls, parallel=True)

    starts = [e.tool_id for e in events if isinstance(e, ToolCallStartEvent)]
    ends = [(e.tool_id, e.is_error) for e in events if isinstance(e, ToolCallEndEvent)]
    assert starts == ["1", "2", "3", "4"]
    assert sorted(ends) == [("1", False), ("2", False), ("3", True), ("4", True)]


def test_a_return_direct_tool_that_answers_is_flagged():
    assert RUNNER.call("weather", {"city": "Oslo"}).return_direct is True


def test_an_ordinary_tool_is_not_return_direct():
    assert RUNNER.call("add", {"a": 1, "b": 1}).return_direct is False


def test_a_failing_return_direct_tool_is_not_an_answer():
    assert RUNNER.call("explode_direct", {"reason": "x"}).return_direct is False


def test_the_runner_finds_tools_by_name():
    assert RUNNER.get("add") is TOOLS[3]
    assert RUNNER.get("nope") is None
    assert RUNNER.tools == TOOLS


def test_bind_names_positional_arguments_in_schema_order():
    assert RUNNER.bind("add", [3, 2]) == {"a": 3, "b": 2}


def test_bind_rejects_more_arguments_than_the_tool_takes():
    with pytest.raises(ValueError, match=r"^add\(\) takes 2 argument\(s\) \(a, b\) but 3 were given$"):
        RUNNER.bind("add", [1, 2, 3])


def test_bind_rejects_an_unknown_tool():
    with pytest.raises(ValueError, match=r"^No such tool named `nope`\.$"):
        RUNNER.bind("nope", [1])


# ================================================================ the worker core
class _Worker(AgentWorker):
    """The smallest worker: tools and state from the core, one step."""

    def __init__(self, tools: list[Any] | None = None, tool_retriever: Any = None) -> None:
        self._set_tools(tools, tool_retriever)

    def initialize_step(self, task: Task, **kwargs: Any) -> TaskStep:
        self._start_task(task, {"count": 0})
        return TaskStep(task_id=task.task_id, input=task.input)

    def run_step(self, step: TaskStep, task: Task, **kwargs: Any) -> TaskStepOutput:
        return self._step_output(step, "done", is_done=True)


class _StateInMemory(_Worker):
    memory_key = "memory"


def _task(text: str = "please add", memory: ChatMemoryBuffer | None = None) -> Task:
    return Task(input=text, memory=memory or ChatMemoryBuffer.from_defaults())


def _message(role: MessageRole, text: str) -> ChatMessage:
    return ChatMessage(role=role, content=text)


def test_tools_and_a_tool_retriever_together_are_rejected():
    with pytest.raises(ValueError, match=r"^Cannot specify both tools and tool_retriever$"):
        _Worker(TOOLS, KeywordObjectRetriever(TOOLS))


def test_something_other_than_a_retriever_is_a_clear_error():
    with pytest.raises(TypeError, match=r"^tool_retriever must be an ObjectRetriever, got list"):
        _Worker(tool_retriever=TOOLS)


def test_fixed_tools_are_offered_for_every_query():
    worker = _Worker(TOOLS[:2])

    assert run_sync(worker._atools_for("anything")).tools == TOOLS[:2]
    assert worker._tools_for("anything").tools == TOOLS[:2]


def test_the_offered_tools_are_reported_to_the_bus_with_their_descriptions():
    worker = _Worker(TOOLS[:2])

    with collect_events() as events:
        run_sync(worker._atools_for("anything"))
        worker._tools_for("anything")

    offered = [e.tools for e in events if isinstance(e, ToolsOfferedEvent)]
    assert offered == [tool_specs(TOOLS[:2])] * 2
    assert offered[0][0]["description"] == TOOLS[0].metadata.description


def test_a_retriever_picks_the_tools_offered_for_the_query():
    worker = _Worker(tool_retriever=KeywordObjectRetriever(TOOLS, top_k=1))

    assert run_sync(worker._atools_for("please add")).tools == [TOOLS[3]]
    assert worker._tools_for("weather in Oslo").tools == [TOOLS[4]]


def test_start_task_puts_fresh_sources_and_new_messages_next_to_the_worker_state():
    worker, task = _Worker(), _task()

    worker.initialize_step(task)

    assert task.extra_state["count"] == 0
    assert worker._sources(task) == task.extra_state["sources"] == []
    assert worker._new_memory(task) is task.extra_state["new_memory"]
    assert worker._new_memory(task).get_all() == []


def test_the_memory_key_names_where_the_new_messages_live():
    worker, task = _StateInMemory(), _task()

    worker.initialize_step(task)

    assert "new_memory" not in task.extra_state
    assert worker._new_memory(task) is task.extra_state["memory"]


def test_worker_state_may_not_use_the_reserved_keys():
    with pytest.raises(ValueError, match=r"^state keys \['memory', 'sources'\] are reserved"):
        _StateInMemory()._start_task(_task(), {"sources": 1, "memory": 2, "mine": 3})


def test_a_step_that_is_not_done_has_one_next_step_sharing_its_state():
    step = TaskStep(task_id="t", input="x", step_state={"n": 1})

    output = AgentWorker._step_output(step, AgentChatResponse("partial"), is_done=False)

    (following,) = output.next_steps
    assert (output.is_last, str(output)) == (False, "partial")
    assert (following.task_id, following.input, following.step_state) == ("t", None, {"n": 1})
    assert following.step_id != step.step_id


def test_next_state_replaces_the_state_of_the_next_step():
    step = TaskStep(task_id="t", step_state={"n": 1})

    output = AgentWorker._step_output(step, "x", is_done=False, next_state={})

    assert output.next_steps[0].step_state == {}


def test_a_last_step_has_no_next_steps():
    output = AgentWorker._step_output(TaskStep(task_id="t"), AgentChatResponse("x"), is_done=True)

    assert (output.is_last, output.next_steps) == (True, [])


def test_a_plain_step_output_is_wrapped_as_an_agent_response():
    output = AgentWorker._step_output(TaskStep(task_id="t"), 42, is_done=True)

    assert output.output == AgentChatResponse(response="42")


def test_a_streaming_step_output_is_kept_as_it_is():
    stream = StreamingAgentChatResponse(response="x")

    assert AgentWorker._step_output(TaskStep(task_id="t"), stream, is_done=True).output is stream


def test_finalize_appends_the_new_messages_to_the_full_history_and_clears_them():
    old = [_message(MessageRole.USER, "old question " * 20),
           _message(MessageRole.ASSISTANT, "old answer " * 20)]
    memory = ChatMemoryBuffer.from_defaults(chat_history=old, token_limit=30)
    worker, task = _Worker(), _task(memory=memory)
    worker.initialize_step(task)
    new = [_message(MessageRole.USER, "q"), _message(MessageRole.ASSISTANT, "a")]
    worker._new_memory(task).put_messages(new)

    worker.finalize_task(task)

    assert memory.get_all() == old + new
    assert worker._new_memory(task).get_all() == []


# ================================================================ finished answers as streams
def _drain(stream: StreamingAgentChatResponse) -> list[str]:
    return list(stream.response_gen)


SOURCE = ToolOutput(content="5", tool_name="add")


def test_a_finished_answer_streams_as_one_delta():
    answer = AgentChatResponse("the answer", sources=[SOURCE], metadata={"k": 1})

    stream = StreamingAgentChatResponse.from_answer(answer)

    assert _drain(stream) == ["the answer"]
    assert (stream.response, stream.sources, stream.metadata) == ("the answer", [SOURCE], {"k": 1})


def test_the_model_chunks_are_replayed_when_they_join_to_the_answer():
    stream = StreamingAgentChatResponse.from_answer(AgentChatResponse("the answer"),
                                                    ["the", "", " answer"])

    assert _drain(stream) == ["the", " answer"]


def test_chunks_that_do_not_join_to_the_answer_give_way_to_the_answer():
    stream = StreamingAgentChatResponse.from_answer(AgentChatResponse("Sunny in Oslo"),
                                                    ["calling", " weather"])

    assert _drain(stream) == ["Sunny in Oslo"]


def test_an_empty_answer_streams_no_delta():
    stream = StreamingAgentChatResponse.from_answer(AgentChatResponse(""))

    assert (_drain(stream), stream.is_done) == ([], True)
