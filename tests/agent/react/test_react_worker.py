"""ReActAgentWorker: the think / act / observe loop, driven step by step (SPEC §5).

Each loop behaviour runs in the three step modes: ``run_step`` (sync), ``arun_step``
(async) and ``stream_step`` (streamed; the final answer is drained).
"""

import pytest

from agentkit.agent.react import (
    PARSE_FAILURE_OBSERVATION,
    ActionReasoningStep,
    ObservationReasoningStep,
    ReActAgentWorker,
    ReActChatFormatter,
    ResponseReasoningStep,
)
from agentkit.agent.types import Task
from agentkit.instrumentation import CallbackManager, ToolCallEndEvent, collect_events
from agentkit.llms.mock import ScriptedLLM
from agentkit.llms.prompts import PromptTemplate
from agentkit.llms.types import ChatMessage, MessageRole, ToolOutput
from agentkit.memory import ChatMemoryBuffer
from agentkit.tools import FunctionTool, KeywordObjectRetriever

from .conftest import run_one, run_task

ADD_2_3 = 'Thought: I add.\nAction: add\nAction Input: {"a": 2, "b": 3}'
ANSWER_5 = "Thought: I know it now.\nAnswer: 5"


def new_task(message: str = "What is 2 + 3?", history: list[ChatMessage] | None = None) -> Task:
    return Task(input=message, memory=ChatMemoryBuffer.from_defaults(chat_history=history or []))


def last_message(llm: ScriptedLLM, call: int) -> ChatMessage:
    return llm.requests[call].messages[-1]


# ---------------------------------------------------------------- construction and state
def test_initialize_step_sets_up_sources_reasoning_and_new_memory(tools):
    worker = ReActAgentWorker.from_tools(tools, llm=ScriptedLLM([]))
    task = new_task()

    step = worker.initialize_step(task)

    assert task.extra_state["sources"] == []
    assert task.extra_state["current_reasoning"] == []
    assert task.extra_state["new_memory"].get_all() == []
    assert step.input == "What is 2 + 3?" and step.task_id == task.task_id


def test_tools_and_tool_retriever_together_are_rejected(tools):
    with pytest.raises(ValueError, match=r"^Cannot specify both tools and tool_retriever$"):
        ReActAgentWorker.from_tools(tools, tool_retriever=KeywordObjectRetriever(tools),
                                    llm=ScriptedLLM([]))


def test_from_tools_takes_the_llm_second_as_in_the_spec(tools):
    llm = ScriptedLLM([], strict=False)
    assert ReActAgentWorker.from_tools(tools, llm).llm is llm


def test_a_model_passed_where_the_tool_retriever_goes_is_a_clear_error(tools):
    with pytest.raises(TypeError, match=r"^tool_retriever must be an ObjectRetriever, got "
                                        r"ScriptedLLM \(pass the model as llm=\.\.\.\)$"):
        ReActAgentWorker(tools, ScriptedLLM([], strict=False), tool_retriever=ScriptedLLM([], strict=False))


def test_a_worker_needs_an_llm(tools):
    with pytest.raises(ValueError, match="ReActAgentWorker needs an `llm`"):
        ReActAgentWorker.from_tools(tools)


def test_max_iterations_below_one_is_rejected(tools):
    with pytest.raises(ValueError, match="max_iterations must be at least 1, got 0"):
        ReActAgentWorker.from_tools(tools, llm=ScriptedLLM([]), max_iterations=0)


# ---------------------------------------------------------------- the loop
def test_single_tool_call_then_answer(tools, step_mode):
    llm = ScriptedLLM([ADD_2_3, ANSWER_5])
    worker = ReActAgentWorker.from_tools(tools, llm=llm)
    task = new_task()

    outputs = run_task(worker, task, step_mode)

    assert [o.is_last for o in outputs] == [False, True]
    assert outputs[-1].output.response == "5"
    assert last_message(llm, 1) == ChatMessage(role=MessageRole.USER, content="Observation: 5")
    llm.assert_complete()


def test_first_llm_request_is_system_header_then_user_message(tools, step_mode):
    llm = ScriptedLLM([ANSWER_5])
    worker = ReActAgentWorker.from_tools(tools, llm=llm)

    run_task(worker, new_task(), step_mode)

    system, user = llm.requests[0].messages
    assert system.role == MessageRole.SYSTEM and "> Tool Name: add" in system.content
    assert user == ChatMessage(role=MessageRole.USER, content="What is 2 + 3?")


def test_two_sequential_tool_calls_each_see_the_earlier_reasoning(tools, step_mode):
    multiply_5_4 = 'Thought: Now multiply.\nAction: multiply\nAction Input: {"a": 5, "b": 4}'
    llm = ScriptedLLM([ADD_2_3, multiply_5_4, "Thought: done\nAnswer: 20"])
    worker = ReActAgentWorker.from_tools(tools, llm=llm)
    task = new_task("What is (2 + 3) * 4?")

    outputs = run_task(worker, task, step_mode)

    assert outputs[-1].output.response == "20"
    assert [(m.role, m.content) for m in llm.requests[2].messages[2:]] == [
        (MessageRole.ASSISTANT, ADD_2_3),
        (MessageRole.USER, "Observation: 5"),
        (MessageRole.ASSISTANT, multiply_5_4),
        (MessageRole.USER, "Observation: 20")]


def test_tool_outputs_are_collected_as_sources(tools, step_mode):
    worker = ReActAgentWorker.from_tools(tools, llm=ScriptedLLM([ADD_2_3, ANSWER_5]))
    task = new_task()

    run_task(worker, task, step_mode)

    (source,) = task.extra_state["sources"]
    assert (source.tool_name, source.content, source.raw_output) == ("add", "5", 5)
    assert source.raw_input["kwargs"] == {"a": 2, "b": 3}


def test_a_tool_call_emits_tool_call_events(tools, step_mode):
    worker = ReActAgentWorker.from_tools(tools, llm=ScriptedLLM([ADD_2_3, ANSWER_5]))

    with collect_events() as events:
        run_task(worker, new_task(), step_mode)

    (end,) = [e for e in events if isinstance(e, ToolCallEndEvent)]
    assert (end.tool_name, end.arguments, str(end.output)) == ("add", {"a": 2, "b": 3}, "5")


def test_current_reasoning_holds_action_observation_and_answer(tools, step_mode):
    worker = ReActAgentWorker.from_tools(tools, llm=ScriptedLLM([ADD_2_3, ANSWER_5]))
    task = new_task()

    run_task(worker, task, step_mode)

    action, observation, answer = task.extra_state["current_reasoning"]
    assert action == ActionReasoningStep(thought="I add.", action="add",
                                         action_input={"a": 2, "b": 3})
    assert observation == ObservationReasoningStep(observation="5")
    assert isinstance(answer, ResponseReasoningStep) and answer.response == "5"


def test_an_intermediate_step_output_is_the_latest_observation(tools):
    worker = ReActAgentWorker.from_tools(tools, llm=ScriptedLLM([ADD_2_3]))
    task = new_task()

    output = worker.run_step(worker.initialize_step(task), task)

    assert not output.is_last and len(output.next_steps) == 1
    assert output.output.response == "Observation: 5"


# ---------------------------------------------------------------- failures become observations
def test_parse_failure_becomes_an_observation_and_the_loop_continues(tools, step_mode):
    llm = ScriptedLLM(["Thought: I am not sure what to do.", ANSWER_5])
    worker = ReActAgentWorker.from_tools(tools, llm=llm)

    outputs = run_task(worker, new_task(), step_mode)

    assert outputs[-1].output.response == "5"
    assert PARSE_FAILURE_OBSERVATION == ("Error: Could not parse output. Please follow the "
                                         "thought-action-input format. Try again.")
    assert last_message(llm, 1) == ChatMessage(role=MessageRole.USER,
                                                content=f"Observation: {PARSE_FAILURE_OBSERVATION}")


def test_a_custom_reasoning_failure_handler_gets_the_parse_error(tools, step_mode):
    seen: list[tuple[CallbackManager, Exception]] = []

    def handler(callback_manager: CallbackManager, error: Exception) -> ToolOutput:
        seen.append((callback_manager, error))
        return ToolOutput(content="Use the format, please.", tool_name="format", raw_input={},
                          raw_output=None, is_error=True)

    llm = ScriptedLLM(["Thought: hmm", ANSWER_5])
    worker = ReActAgentWorker.from_tools(tools, llm=llm, handle_reasoning_failure_fn=handler)

    run_task(worker, new_task(), step_mode)

    ((manager, error),) = seen
    assert manager is worker.callback_manager
    assert isinstance(error, ValueError) and str(error).startswith("Could not parse output:")
    assert last_message(llm, 1).content == "Observation: Use the format, please."


def test_a_reasoning_failure_handler_may_return_plain_text(tools):
    llm = ScriptedLLM(["Thought: hmm", ANSWER_5])
    worker = ReActAgentWorker.from_tools(tools, llm=llm,
                                         handle_reasoning_failure_fn=lambda _cm, _e: "Try again")

    run_task(worker, new_task(), "run")

    assert last_message(llm, 1).content == "Observation: Try again"


def test_unknown_tool_becomes_a_no_such_tool_observation(tools, step_mode):
    llm = ScriptedLLM(['Thought: t\nAction: subtract\nAction Input: {"a": 1}', ANSWER_5])
    worker = ReActAgentWorker.from_tools(tools, llm=llm)
    task = new_task()

    run_task(worker, task, step_mode)

    assert last_message(llm, 1).content == "Observation: Error: No such tool named `subtract`."
    assert task.extra_state["sources"][0].is_error


def test_a_tool_that_raises_becomes_an_error_observation(divide_tool, step_mode):
    llm = ScriptedLLM(['Thought: t\nAction: divide\nAction Input: {"a": 1, "b": 0}', ANSWER_5])
    worker = ReActAgentWorker.from_tools([divide_tool], llm=llm)
    task = new_task()

    run_task(worker, task, step_mode)

    assert last_message(llm, 1).content == "Observation: Error: division by zero"
    (source,) = task.extra_state["sources"]
    # issue 38 B4: upstream 0.12.42's ReAct worker keeps the exception itself as raw_output
    assert source.is_error and isinstance(source.raw_output, ZeroDivisionError)


def test_wrong_tool_arguments_become_an_error_observation(tools, step_mode):
    llm = ScriptedLLM(['Thought: t\nAction: add\nAction Input: {"a": 1, "c": 2}', ANSWER_5])
    worker = ReActAgentWorker.from_tools(tools, llm=llm)

    run_task(worker, new_task(), step_mode)

    observation = last_message(llm, 1).content
    assert observation.startswith("Observation: Error: invalid arguments for tool `add`")
    assert "c" in observation


def test_a_return_direct_tool_output_is_the_answer_without_another_llm_call(step_mode):
    lookup = FunctionTool.from_defaults(lambda city: f"Sunny in {city}", name="weather",
                                        description="Weather of a city.", return_direct=True)
    llm = ScriptedLLM(['Thought: t\nAction: weather\nAction Input: {"city": "Oslo"}'])
    worker = ReActAgentWorker.from_tools([lookup], llm=llm)
    task = new_task()

    (output,) = run_task(worker, task, step_mode)

    assert output.is_last and output.next_steps == []
    assert output.output.response == "Sunny in Oslo"
    assert llm.calls == 1


def test_a_failing_return_direct_tool_does_not_end_the_task(step_mode):
    def weather(city: str) -> str:
        raise RuntimeError("service down")

    tool = FunctionTool.from_defaults(weather, return_direct=True)
    llm = ScriptedLLM(['Thought: t\nAction: weather\nAction Input: {"city": "Oslo"}',
                       "Thought: no luck\nAnswer: I do not know."])
    worker = ReActAgentWorker.from_tools([tool], llm=llm)

    outputs = run_task(worker, new_task(), step_mode)

    assert outputs[-1].output.response == "I do not know."
    assert last_message(llm, 1).content == "Observation: Error: service down"


def test_max_iterations_counts_an_action_and_its_observation_as_two(tools, step_mode):
    llm = ScriptedLLM([ADD_2_3, ADD_2_3])
    worker = ReActAgentWorker.from_tools(tools, llm=llm, max_iterations=4)

    with pytest.raises(ValueError, match=r"^Reached max iterations\.$"):
        run_task(worker, new_task(), step_mode)
    assert llm.calls == 2


def test_the_step_that_reaches_max_iterations_fails_after_its_tool_call(tools, step_mode):
    llm = ScriptedLLM([ADD_2_3])
    worker = ReActAgentWorker.from_tools(tools, llm=llm, max_iterations=2)
    task = new_task()

    with pytest.raises(ValueError, match=r"^Reached max iterations\.$"):
        run_one(worker, worker.initialize_step(task), task, step_mode)
    assert [type(s).__name__ for s in task.extra_state["current_reasoning"]] == [
        "ActionReasoningStep", "ObservationReasoningStep"]


def test_an_odd_max_iterations_allows_the_calls_below_it(tools, step_mode):
    llm = ScriptedLLM([ADD_2_3, ADD_2_3])
    worker = ReActAgentWorker.from_tools(tools, llm=llm, max_iterations=3)

    with pytest.raises(ValueError, match=r"^Reached max iterations\.$"):
        run_task(worker, new_task(), step_mode)
    assert llm.calls == 2


def test_a_parse_failure_counts_as_one_reasoning_step(tools, step_mode):
    llm = ScriptedLLM(["Thought: I am unsure.", "Thought: still unsure."])
    worker = ReActAgentWorker.from_tools(tools, llm=llm, max_iterations=2)

    with pytest.raises(ValueError, match=r"^Reached max iterations\.$"):
        run_task(worker, new_task(), step_mode)
    assert llm.calls == 2


def test_an_answer_reaching_max_iterations_is_accepted(tools, step_mode):
    worker = ReActAgentWorker.from_tools(tools, llm=ScriptedLLM([ADD_2_3, ANSWER_5]),
                                         max_iterations=3)

    assert run_task(worker, new_task(), step_mode)[-1].output.response == "5"


def test_a_direct_answer_with_max_iterations_one_is_accepted(tools, step_mode):
    worker = ReActAgentWorker.from_tools(tools, llm=ScriptedLLM([ANSWER_5]), max_iterations=1)

    assert run_task(worker, new_task(), step_mode)[-1].output.response == "5"


# ---------------------------------------------------------------- step inputs and memory
def test_a_later_step_input_is_added_as_an_observation(tools, step_mode):
    llm = ScriptedLLM([ADD_2_3, ANSWER_5])
    worker = ReActAgentWorker.from_tools(tools, llm=llm)
    task = new_task()
    first = run_one(worker, worker.initialize_step(task), task, step_mode)
    (step,) = first.next_steps
    step.input = "Also, the user says hi."

    run_one(worker, step, task, step_mode)

    assert [m.content for m in llm.requests[1].messages[-2:]] == [
        "Observation: 5", "Observation: Also, the user says hi."]


def test_new_memory_holds_the_user_message_and_the_answer_only(tools, step_mode):
    worker = ReActAgentWorker.from_tools(tools, llm=ScriptedLLM([ADD_2_3, ANSWER_5]))
    task = new_task()

    run_task(worker, task, step_mode)

    assert task.extra_state["new_memory"].get_all() == [
        ChatMessage(role=MessageRole.USER, content="What is 2 + 3?"),
        ChatMessage(role=MessageRole.ASSISTANT, content="5")]


def test_finalize_task_appends_user_message_and_answer_to_the_history(tools, step_mode):
    history = [ChatMessage(role=MessageRole.USER, content="hi"),
               ChatMessage(role=MessageRole.ASSISTANT, content="hello")]
    worker = ReActAgentWorker.from_tools(tools, llm=ScriptedLLM([ADD_2_3, ANSWER_5]))
    task = new_task(history=history)
    run_task(worker, task, step_mode)

    worker.finalize_task(task)

    assert task.memory.get_all() == [
        *history,
        ChatMessage(role=MessageRole.USER, content="What is 2 + 3?"),
        ChatMessage(role=MessageRole.ASSISTANT, content="5")]


def test_memory_is_untouched_until_the_task_is_finalized(tools, step_mode):
    history = [ChatMessage(role=MessageRole.USER, content="hi")]
    worker = ReActAgentWorker.from_tools(tools, llm=ScriptedLLM([ADD_2_3, ANSWER_5]))
    task = new_task(history=history)

    run_task(worker, task, step_mode)

    assert task.memory.get_all() == history


def test_chat_history_comes_between_system_header_and_the_new_user_message(tools, step_mode):
    history = [ChatMessage(role=MessageRole.USER, content="hi"),
               ChatMessage(role=MessageRole.ASSISTANT, content="hello")]
    llm = ScriptedLLM([ANSWER_5])
    worker = ReActAgentWorker.from_tools(tools, llm=llm)

    run_task(worker, new_task(history=history), step_mode)

    assert llm.requests[0].messages[1:] == [
        *history, ChatMessage(role=MessageRole.USER, content="What is 2 + 3?")]


# ---------------------------------------------------------------- tool retrieval and prompts
def test_tool_retriever_offers_only_the_tools_matching_the_task(tools, divide_tool, step_mode):
    retriever = KeywordObjectRetriever([*tools, divide_tool], top_k=1)
    llm = ScriptedLLM(['Thought: t\nAction: multiply\nAction Input: {"a": 6, "b": 7}',
                       "Thought: t\nAnswer: 42"])
    worker = ReActAgentWorker.from_tools(tool_retriever=retriever, llm=llm)

    outputs = run_task(worker, new_task("Please multiply 6 by 7"), step_mode)

    system = llm.requests[0].messages[0].content
    assert "> Tool Name: multiply" in system
    assert "> Tool Name: add" not in system and "> Tool Name: divide" not in system
    assert last_message(llm, 1).content == "Observation: 42"
    assert outputs[-1].output.response == "42"


def test_a_tool_the_retriever_did_not_offer_is_unknown(tools, step_mode):
    retriever = KeywordObjectRetriever(tools, top_k=1)
    llm = ScriptedLLM([ADD_2_3, ANSWER_5])
    worker = ReActAgentWorker.from_tools(tool_retriever=retriever, llm=llm)

    run_task(worker, new_task("Please multiply 6 by 7"), step_mode)

    assert last_message(llm, 1).content == "Observation: Error: No such tool named `add`."


def test_get_prompts_returns_the_system_header_as_system_prompt(tools):
    formatter = ReActChatFormatter(system_header="Tools: {tool_desc}")
    worker = ReActAgentWorker.from_tools(tools, llm=ScriptedLLM([]),
                                         react_chat_formatter=formatter)

    assert worker.get_prompts() == {"system_prompt": PromptTemplate("Tools: {tool_desc}")}


def test_update_prompts_changes_the_system_message_the_llm_sees(tools, step_mode):
    llm = ScriptedLLM([ANSWER_5])
    worker = ReActAgentWorker.from_tools(tools, llm=llm)

    worker.update_prompts({"system_prompt": PromptTemplate("Be brief. Tools: {tool_names}")})
    run_task(worker, new_task(), step_mode)

    assert llm.requests[0].messages[0] == ChatMessage(
        role=MessageRole.SYSTEM, content="Be brief. Tools: add, multiply")


def test_update_prompts_accepts_a_plain_string(tools):
    worker = ReActAgentWorker.from_tools(tools, llm=ScriptedLLM([]))

    worker.update_prompts({"system_prompt": "Plain {tool_names}"})

    assert worker.get_prompts()["system_prompt"].get_template() == "Plain {tool_names}"


def test_update_prompts_rejects_an_unknown_prompt_name(tools):
    worker = ReActAgentWorker.from_tools(tools, llm=ScriptedLLM([]))

    with pytest.raises(ValueError, match=r"ReActAgentWorker has no prompt\(s\) named \['nope'\]"):
        worker.update_prompts({"nope": "x"})


def test_a_custom_output_parser_is_used(tools, step_mode):
    class AlwaysAnswer:
        def parse(self, output: str, is_streaming: bool = False) -> ResponseReasoningStep:
            return ResponseReasoningStep(thought="", response=output.upper(),
                                         is_streaming=is_streaming)

    worker = ReActAgentWorker.from_tools(tools, llm=ScriptedLLM(["thought: x"]),
                                         output_parser=AlwaysAnswer())

    assert run_task(worker, new_task(), step_mode)[-1].output.response == "THOUGHT: X"


def test_verbose_prints_each_reasoning_step(tools, capsys):
    worker = ReActAgentWorker.from_tools(tools, llm=ScriptedLLM([ADD_2_3, ANSWER_5]),
                                         verbose=True)

    run_task(worker, new_task(), "run")

    printed = capsys.readouterr().out
    assert ADD_2_3 in printed and "Observation: 5" in printed and ANSWER_5 in printed
