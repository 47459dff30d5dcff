"""FunctionCallingAgentWorker / FunctionCallingAgent (SPEC §6), in sync, async and streaming."""

import selectors
from typing import Any

import pytest
from pydantic import BaseModel

from agentkit.agent import FunctionCallingAgent, FunctionCallingAgentWorker
from agentkit.core.sim import Stopwatch, asleep, run_sync
from agentkit.harness import SimulatedTool
from agentkit.instrumentation import ToolCallStartEvent, collect_events
from agentkit.llms.mock import ScriptedLLM, ScriptedResponse, tool_call
from agentkit.llms.types import ChatMessage, MessageRole
from agentkit.tools import FunctionTool, KeywordObjectRetriever
from agentkit.tools.recorded import RecordedTool


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def fail(reason: str) -> str:
    """Always raises."""
    raise RuntimeError(reason)


async def slow_double(x: int) -> int:
    """Double x after 1 s of simulated latency."""
    await asleep(1.0)
    return 2 * x


def lookup(key: str) -> str:
    """Look a key up; the result is the answer."""
    return f"value of {key}"


def _tools() -> list[FunctionTool]:
    return [FunctionTool.from_defaults(add), FunctionTool.from_defaults(fail),
            FunctionTool.from_defaults(async_fn=slow_double, name="slow_double"),
            FunctionTool.from_defaults(lookup, return_direct=True)]


def _agent(*script: Any, **kwargs: Any) -> tuple[FunctionCallingAgent, ScriptedLLM]:
    llm = ScriptedLLM(list(script))
    return FunctionCallingAgent.from_tools(_tools(), llm=llm, **kwargs), llm


def _three_slow_calls() -> ScriptedResponse:
    return ScriptedResponse(tool_calls=[tool_call("slow_double", x=x) for x in (1, 2, 3)])


def _tool_messages(agent: FunctionCallingAgent) -> list[ChatMessage]:
    return [m for m in agent.chat_history if m.role == MessageRole.TOOL]


# --------------------------------------------------------------------------- one call
def test_a_single_tool_call_runs_the_tool_and_the_reply_after_it_is_the_answer(ask):
    agent, llm = _agent(tool_call("add", a=2, b=3), "2 + 3 = 5")
    response = ask(agent, "What is 2 + 3?")
    assert str(response) == "2 + 3 = 5"
    assert [s.content for s in response.sources] == ["5"]
    assert llm.calls == 2


def test_the_llm_is_offered_every_tool():
    agent, llm = _agent("no tools needed")
    agent.chat("hi")
    assert [t.metadata.name for t in llm.requests[0].tools] == [
        "add", "fail", "slow_double", "lookup"]


def test_the_llm_sees_the_tool_result_before_its_next_reply():
    call = tool_call("add", a=2, b=3)
    agent, llm = _agent(call, "5")
    agent.chat("What is 2 + 3?")
    last = llm.requests[1].messages[-1]
    assert (last.role, last.content, last.additional_kwargs["tool_call_id"]) == (
        MessageRole.TOOL, "5", call.tool_id)


def test_the_agent_loops_until_a_reply_has_no_tool_calls():
    agent, llm = _agent(tool_call("add", a=1, b=1), tool_call("add", a=2, b=2),
                        tool_call("add", a=3, b=3), "done")
    agent.chat("q")
    assert llm.calls == 4
    assert [m.content for m in _tool_messages(agent)] == ["2", "4", "6"]


def test_the_task_state_counts_function_calls():
    agent, _ = _agent(tool_call("add", a=1, b=1), tool_call("add", a=2, b=2), "done")
    agent.chat("q")
    [state] = agent.list_tasks()
    assert state.task.extra_state["n_function_calls"] == 2


def test_run_step_input_mid_task_reaches_the_llm_as_a_user_message():
    agent, llm = _agent(tool_call("add", a=1, b=1), "done")
    task = agent.create_task("q")
    agent.run_step(task.task_id)
    agent.run_step(task.task_id, input="Be brief.")
    assert (llm.requests[1].messages[-1].role, llm.requests[1].messages[-1].content) == (
        MessageRole.USER, "Be brief.")


# --------------------------------------------------------------------------- memory
def test_memory_after_a_chat_is_history_user_tool_call_message_tool_results_and_answer(ask):
    calls = [tool_call("add", a=1, b=2), tool_call("add", a=3, b=4)]
    history = [ChatMessage(role=MessageRole.USER, content="earlier"),
               ChatMessage(role=MessageRole.ASSISTANT, content="noted")]
    agent, _ = _agent(ScriptedResponse(tool_calls=calls), "3 and 7", chat_history=history)
    ask(agent, "Add both pairs")
    messages = agent.chat_history
    assert [(m.role.value, m.content) for m in messages] == [
        ("user", "earlier"), ("assistant", "noted"), ("user", "Add both pairs"),
        ("assistant", ""), ("tool", "3"), ("tool", "7"), ("assistant", "3 and 7")]
    assert [c.tool_id for c in messages[3].tool_calls] == [c.tool_id for c in calls]
    assert [m.additional_kwargs["tool_call_id"] for m in messages[4:6]] == [
        c.tool_id for c in calls]


def test_a_tool_message_names_its_tool():
    agent, _ = _agent(tool_call("add", a=1, b=2), "3")
    agent.chat("q")
    assert _tool_messages(agent)[0].additional_kwargs["name"] == "add"


# --------------------------------------------------------------------------- concurrency
def test_parallel_tool_calls_overlap_in_virtual_time(ask):
    agent, _ = _agent(_three_slow_calls(), "2, 4 and 6", allow_parallel_tool_calls=True)
    watch = Stopwatch.start()
    response = ask(agent, "Double 1, 2 and 3")
    assert [s.content for s in response.sources] == ["2", "4", "6"]
    assert watch.wall == 1.0
    assert watch.serial == 3.0


def test_parallel_tool_calls_never_wait_for_real(monkeypatch):
    timeouts: list[float | None] = []
    real_select = selectors.DefaultSelector.select

    def recording_select(self: Any, timeout: float | None = None) -> Any:
        timeouts.append(timeout)
        return real_select(self, timeout)

    monkeypatch.setattr(selectors.DefaultSelector, "select", recording_select)
    agent, _ = _agent(_three_slow_calls(), "2, 4 and 6", allow_parallel_tool_calls=True)
    watch = Stopwatch.start()
    agent.chat("Double 1, 2 and 3")
    assert watch.wall == 1.0
    assert timeouts and set(timeouts) == {0}


def test_parallel_tool_calls_all_start_before_any_finishes():
    agent, _ = _agent(_three_slow_calls(), "done", allow_parallel_tool_calls=True)
    with collect_events() as events:
        agent.chat("q")
    assert [e.time for e in events if isinstance(e, ToolCallStartEvent)] == [0.0, 0.0, 0.0]


def test_without_parallel_tool_calls_each_call_starts_after_the_previous_finished():
    agent, _ = _agent(tool_call("slow_double", x=1), tool_call("slow_double", x=2),
                      tool_call("slow_double", x=3), "done", allow_parallel_tool_calls=False)
    watch = Stopwatch.start()
    with collect_events() as events:
        agent.chat("q")
    assert [e.time for e in events if isinstance(e, ToolCallStartEvent)] == [0.0, 1.0, 2.0]
    assert (watch.wall, watch.serial) == (3.0, 3.0)


def test_without_parallel_tool_calls_the_llm_is_asked_for_one_call_at_a_time():
    agent, llm = _agent("done", allow_parallel_tool_calls=False)
    agent.chat("q")
    assert llm.requests[0].allow_parallel_tool_calls is False


def test_with_parallel_tool_calls_the_llm_is_told_so():
    agent, llm = _agent("done", allow_parallel_tool_calls=True)
    agent.chat("q")
    assert llm.requests[0].allow_parallel_tool_calls is True


# --------------------------------------------------------------------------- stopping
def test_max_function_calls_stops_the_loop_with_the_last_replys_text():
    agent, llm = _agent(tool_call("add", a=1, b=1), tool_call("add", a=2, b=2),
                        ScriptedResponse(text="Still working",
                                         tool_calls=[tool_call("add", a=3, b=3)]),
                        max_function_calls=2)
    response = agent.chat("q")
    assert str(response) == "Still working"
    assert llm.calls == 3
    assert [m.content for m in _tool_messages(agent)] == ["2", "4"]


def test_when_max_function_calls_stops_the_task_the_stored_reply_has_no_unrun_tool_calls():
    agent, _ = _agent(tool_call("add", a=1, b=1), tool_call("add", a=2, b=2), max_function_calls=1)
    agent.chat("q")
    last = agent.chat_history[-1]
    assert (last.role, last.tool_calls) == (MessageRole.ASSISTANT, [])


def test_a_return_direct_tool_ends_the_task_with_its_output(ask):
    agent, llm = _agent(tool_call("lookup", key="pi"))
    response = ask(agent, "What is pi?")
    assert str(response) == "value of pi"
    assert llm.calls == 1


def test_a_return_direct_answer_leaves_every_tool_call_answered_in_memory():
    calls = [tool_call("lookup", key="pi"), tool_call("add", a=1, b=1)]
    agent, _ = _agent(ScriptedResponse(tool_calls=calls))
    response = agent.chat("q")
    assert str(response) == "value of pi"
    assert [m.additional_kwargs["tool_call_id"] for m in _tool_messages(agent)] == [
        c.tool_id for c in calls]


def test_a_failing_return_direct_tool_does_not_end_the_task():
    agent, llm = _agent(tool_call("lookup", wrong="pi"), "Sorry, the lookup failed.")
    assert str(agent.chat("q")) == "Sorry, the lookup failed."
    assert llm.calls == 2


def test_an_empty_final_answer_is_an_empty_string():
    agent, _ = _agent(ScriptedResponse(text=""))
    assert agent.chat("q").response == ""


# --------------------------------------------------------------------------- tool errors
def test_an_unknown_tool_becomes_an_error_tool_message():
    agent, _ = _agent(tool_call("nope", x=1), "I cannot do that.")
    assert str(agent.chat("q")) == "I cannot do that."
    # upstream 0.12.42's FunctionCallingAgentWorker words (issue 38 B5)
    assert _tool_messages(agent)[0].content == "Tool with name nope not found, please double check."


def test_a_raising_tool_becomes_an_error_tool_message():
    agent, _ = _agent(tool_call("fail", reason="disk full"), "It failed.")
    response = agent.chat("q")
    # upstream 0.12.42's call_tool words (issue 38 B2)
    assert _tool_messages(agent)[0].content == "Encountered error: disk full"
    assert response.sources[0].is_error


def test_a_failed_calls_output_holds_the_message_as_upstream():
    # issue 38 B4: upstream's raw_output of a failed call is str(e), with is_error
    agent, _ = _agent(tool_call("fail", reason="disk full"), "It failed.")
    (source,) = agent.chat("q").sources
    assert (source.raw_output, source.is_error) == ("disk full", True)


def test_a_one_parameter_tools_raw_input_is_positional_as_upstream():
    # issue 38 B3: upstream's call_tool calls a one-parameter tool positionally, so its
    # raw_input is {"args": (value,), "kwargs": {}}; several parameters go by keyword
    agent, _ = _agent(ScriptedResponse(tool_calls=[tool_call("slow_double", x=4),
                                                   tool_call("add", a=1, b=2)]), "ok")
    double_output, add_output = agent.chat("q").sources
    assert double_output.raw_input == {"args": (4,), "kwargs": {}}
    assert add_output.raw_input == {"args": (), "kwargs": {"a": 1, "b": 2}}


def _city(city: str) -> str:
    return f"sunny in {city}"


def _city_by_name(*, city: str) -> str:
    return f"sunny in {city}"


def _city_in(units: str, city: str) -> str:
    return f"sunny in {city}" if units == "C" else "no such units"


def _any_city(**kwargs: Any) -> str:
    return f"sunny in {kwargs['city']}"


class _CitySchema(BaseModel):
    city: str


@pytest.mark.parametrize(("tool", "raw_input"), [
    (FunctionTool.from_defaults(_city, name="weather"), {"args": ("Paris",), "kwargs": {}}),
    (FunctionTool.from_defaults(_city_by_name, name="weather"),
     {"args": (), "kwargs": {"city": "Paris"}}),
    (FunctionTool.from_defaults(_city_in, name="weather", partial_params={"units": "C"}),
     {"args": (), "kwargs": {"city": "Paris"}}),
    (FunctionTool.from_defaults(_any_city, name="weather", fn_schema=_CitySchema),
     {"args": (), "kwargs": {"city": "Paris"}}),
    (RecordedTool("weather", parameters={"properties": {"city": {"type": "string"}}},
                  calls=[{"args": {"city": "Paris"}, "output": "sunny in Paris"}]),
     {"args": ("Paris",), "kwargs": {}}),
    (SimulatedTool(FunctionTool.from_defaults(_city, name="weather")),
     {"args": ("Paris",), "kwargs": {}}),
    (SimulatedTool(FunctionTool.from_defaults(_city_by_name, name="weather")),
     {"args": (), "kwargs": {"city": "Paris"}}),
], ids=["positional", "keyword_only", "partial_first", "var_keyword", "recorded",
        "simulated", "simulated_keyword_only"])
def test_each_tool_kinds_raw_input_is_the_form_upstreams_call_tool_ends_up_using(tool, raw_input):
    # issue 38 B3: 0.12.42's call_tool calls a one-parameter tool positionally and calls it by
    # keyword when that raises, so a function that cannot take its argument positionally
    # (keyword-only, a partial parameter first, **kwargs) records the keyword form
    llm = ScriptedLLM([tool_call("weather", city="Paris"), "ok"])
    agent = FunctionCallingAgent.from_tools([tool], llm=llm)
    (output,) = agent.chat("weather?").sources
    assert (output.content, output.raw_input) == ("sunny in Paris", raw_input)


def test_wrong_argument_types_become_an_error_tool_message():
    agent, _ = _agent(tool_call("add", a="two", b=3), "Bad input.")
    agent.chat("q")
    content = _tool_messages(agent)[0].content
    assert content.startswith("Encountered error: invalid arguments for tool `add`: `a`:")
    assert "'two'" in content


def test_missing_arguments_become_an_error_tool_message():
    agent, _ = _agent(tool_call("add", a=1), "Bad input.")
    agent.chat("q")
    assert _tool_messages(agent)[0].content == (
        "Encountered error: add() missing 1 required positional argument: 'b'")


def test_unparseable_arguments_become_an_error_tool_message():
    call = tool_call("add")
    call.arguments_error = "arguments are not valid JSON: '{a: 1'"
    agent, _ = _agent(call, "Bad input.")
    agent.chat("q")
    assert _tool_messages(agent)[0].content == "Encountered error: arguments are not valid JSON: '{a: 1'"


def test_the_llm_sees_a_tool_error_and_the_loop_goes_on():
    agent, llm = _agent(tool_call("fail", reason="disk full"), tool_call("add", a=1, b=1), "2")
    assert str(agent.chat("q")) == "2"
    assert "Encountered error: disk full" in [m.content for m in llm.requests[1].messages]


# --------------------------------------------------------------------------- construction
def test_a_non_function_calling_llm_is_rejected():
    llm = ScriptedLLM([], function_calling=False, name="plain-model")
    with pytest.raises(ValueError, match=r"Model name plain-model does not support function "
                                         r"calling API\."):
        FunctionCallingAgentWorker.from_tools([], llm=llm)


def test_the_worker_needs_an_llm():
    with pytest.raises(ValueError, match="FunctionCallingAgentWorker needs an `llm`"):
        FunctionCallingAgentWorker.from_tools([])


def test_a_system_prompt_is_the_first_message_of_every_request():
    agent, llm = _agent(tool_call("add", a=1, b=1), "2", system_prompt="You add numbers.")
    agent.chat("q")
    assert [(r.messages[0].role, r.messages[0].content) for r in llm.requests] == [
        (MessageRole.SYSTEM, "You add numbers.")] * 2


def test_a_system_prompt_is_not_stored_in_memory():
    agent, _ = _agent("hi", system_prompt="You add numbers.")
    agent.chat("q")
    assert MessageRole.SYSTEM not in [m.role for m in agent.chat_history]


def test_prefix_messages_come_before_the_history():
    prefix = [ChatMessage(role=MessageRole.SYSTEM, content="Rules."),
              ChatMessage(role=MessageRole.USER, content="Example question")]
    agent, llm = _agent("answer", prefix_messages=prefix)
    agent.chat("q")
    assert [m.content for m in llm.requests[0].messages] == ["Rules.", "Example question", "q"]


def test_system_prompt_and_prefix_messages_together_are_rejected():
    with pytest.raises(ValueError, match="Cannot specify both system_prompt and prefix_messages"):
        _agent(system_prompt="x", prefix_messages=[])


def test_tools_and_a_tool_retriever_together_are_rejected():
    retriever = KeywordObjectRetriever(_tools())
    with pytest.raises(ValueError, match="Cannot specify both tools and tool_retriever"):
        FunctionCallingAgentWorker.from_tools(_tools(), tool_retriever=retriever,
                                              llm=ScriptedLLM([]))


def test_a_tool_retriever_picks_the_tools_offered_for_the_task():
    llm = ScriptedLLM(["ok"])
    retriever = KeywordObjectRetriever(_tools(), top_k=1)
    agent = FunctionCallingAgent.from_tools(tool_retriever=retriever, llm=llm)
    agent.chat("please add these integers")
    assert [t.metadata.name for t in llm.requests[0].tools] == ["add"]


def test_from_tools_passes_runner_options_to_the_runner():
    agent, _ = _agent("done", delete_task_on_finish=True)
    agent.chat("q")
    assert agent.delete_task_on_finish is True and agent.list_tasks() == []


def test_from_tools_rejects_unknown_runner_options():
    with pytest.raises(TypeError, match="not_an_option"):
        _agent(not_an_option=True)


def test_a_verbose_worker_prints_each_function_call_and_its_output(capsys):
    agent, _ = _agent(tool_call("add", a=2, b=3), "5", verbose=True)
    agent.chat("q")
    out = capsys.readouterr().out
    assert "add({'a': 2, 'b': 3})" in out and "=== Function Output ===\n5" in out


# --------------------------------------------------------------------------- streaming
def test_streaming_yields_only_the_final_answer_in_chunks_after_tool_steps():
    agent, _ = _agent(tool_call("add", a=2, b=3), "The sum is 5.")
    stream = agent.stream_chat("What is 2 + 3?")
    assert list(stream.response_gen) == ["The ", "sum ", "is ", "5."]
    assert [s.content for s in stream.sources] == ["5"]


def test_streaming_keeps_the_scripted_chunking_of_the_answer():
    agent, _ = _agent(ScriptedResponse(chunks=["Th", "e answ", "er"]))
    assert list(agent.stream_chat("q").response_gen) == ["Th", "e answ", "er"]


def test_streaming_does_not_hand_out_the_text_of_a_reply_that_also_calls_tools():
    agent, _ = _agent(ScriptedResponse(text="Let me add.", tool_calls=[tool_call("add", a=2, b=3)]),
                      "5")
    assert "".join(agent.stream_chat("q").response_gen) == "5"


def test_a_streamed_return_direct_answer_is_the_tool_output():
    agent, _ = _agent(tool_call("lookup", key="e"))
    assert "".join(agent.stream_chat("q").response_gen) == "value of e"


def test_astream_chat_yields_the_final_answer_after_tool_steps():
    agent, _ = _agent(tool_call("add", a=2, b=3), "The sum is 5.")

    async def collect() -> list[str]:
        stream = await agent.astream_chat("q")
        return [delta async for delta in stream.async_response_gen()]

    assert run_sync(collect()) == ["The ", "sum ", "is ", "5."]
