"""Calling tools as agents do: never raising, errors become outputs the model can read."""

import asyncio
import re

import pytest

from agentkit.core.sim import asleep, run_sync
from agentkit.instrumentation import ToolCallEndEvent, ToolCallStartEvent, collect_events
from agentkit.llms import ToolOutput, ToolSelection
from agentkit.tools import (
    FunctionTool,
    ToolErrorWording,
    ToolMetadata,
    ToolRunner,
    acall_tool,
    acall_tool_with_selection,
    call_tool,
    call_tool_with_selection,
)


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


async def slow_add(a: int, b: int) -> int:
    """Add two integers in two simulated seconds."""
    await asleep(2.0)
    return a + b


def explode(reason: str) -> str:
    """Always fails."""
    raise RuntimeError(reason)


ADD = FunctionTool.from_defaults(add)
TOOLS = [ADD, FunctionTool.from_defaults(slow_add), FunctionTool.from_defaults(explode)]


def _select(name: str, arguments_error: str | None = None, **kwargs) -> ToolSelection:
    return ToolSelection(tool_id="call_1", tool_name=name, tool_kwargs=kwargs,
                         arguments_error=arguments_error)


# ---------------------------------------------------------------- success


def test_call_tool_returns_the_tool_output():
    output = call_tool(ADD, {"a": 2, "b": 3})
    assert (output.content, output.raw_output, output.is_error) == ("5", 5, False)


def test_acall_tool_awaits_an_async_tool():
    output = run_sync(acall_tool(TOOLS[1], {"a": 2, "b": 3}))
    assert output.content == "5"


def test_call_tool_with_selection_finds_the_tool_by_name():
    assert call_tool_with_selection(_select("add", a=1, b=1), TOOLS).content == "2"


def test_acall_tool_with_selection_finds_the_tool_by_name():
    assert run_sync(acall_tool_with_selection(_select("slow_add", a=1, b=2), TOOLS)).content == "3"


def test_a_plain_callable_with_metadata_is_called_with_the_arguments():
    class Shout:
        metadata = ToolMetadata(name="shout", description="d")

        def __call__(self, input: str) -> str:
            return input.upper()

    output = call_tool(Shout(), {"input": "hi"})
    assert (output.content, output.tool_name, output.raw_input) == (
        "HI", "shout", {"args": (), "kwargs": {"input": "hi"}})


def test_a_tool_returning_a_tool_output_keeps_it():
    made = ToolOutput(content="custom", tool_name="make")

    class Maker:
        metadata = ToolMetadata(name="make", description="d")

        def call(self) -> ToolOutput:
            return made

    assert call_tool(Maker(), {}) is made


# ---------------------------------------------------------------- errors become outputs


def test_a_raising_tool_yields_an_error_output_with_the_exception_message():
    output = call_tool(TOOLS[2], {"reason": "disk full"})
    assert (output.content, output.is_error, output.tool_name) == ("Error: disk full", True, "explode")


def test_a_raising_tool_keeps_the_exception_as_raw_output():
    output = call_tool(TOOLS[2], {"reason": "disk full"})
    assert isinstance(output.raw_output, RuntimeError) and str(output.raw_output) == "disk full"


def test_an_exception_without_a_message_is_named_by_its_type():
    def silent() -> None:
        raise KeyError

    output = call_tool(FunctionTool.from_defaults(silent), {})
    assert output.content == "Error: KeyError"


def test_an_error_output_records_the_arguments_as_raw_input():
    output = call_tool(TOOLS[2], {"reason": "x"})
    assert output.raw_input == {"args": (), "kwargs": {"reason": "x"}}


def test_a_missing_argument_yields_an_error_output_naming_it():
    output = call_tool(ADD, {"a": 1})
    assert (output.content, output.is_error) == (
        "Error: invalid arguments for tool `add`: missing required argument `b`", True)


def test_an_unknown_argument_yields_an_error_output_naming_it():
    output = call_tool(ADD, {"a": 1, "b": 2, "c": 3})
    assert output.content == "Error: invalid arguments for tool `add`: unexpected argument(s) `c`"


def test_a_wrong_argument_type_yields_an_error_output_naming_the_argument():
    output = call_tool(ADD, {"a": "one", "b": 2})
    # what is wrong with `a` is pydantic's wording; the frame and the value given are agentkit's
    assert output.is_error
    assert re.fullmatch(r"Error: invalid arguments for tool `add`: `a`: .+ \(got 'one'\)",
                        output.content), output.content


def test_an_unknown_tool_yields_an_error_output_naming_it():
    output = call_tool_with_selection(_select("subtract", a=1), TOOLS)
    assert (output.content, output.tool_name, output.is_error) == (
        "Tool with name subtract not found, please double check.", "subtract", True)


def test_call_tool_without_a_tool_names_the_missing_one():
    assert call_tool(None, {}, tool_name="ghost").content == "Error: No such tool named `ghost`."


def test_an_arguments_error_yields_an_error_output_without_calling_the_tool():
    calls = []
    tool = FunctionTool.from_defaults(lambda: calls.append(1), name="record")
    output = call_tool_with_selection(
        _select("record", arguments_error="arguments are not valid JSON"), [tool])
    assert (output.content, output.is_error, calls) == (
        "Encountered error: arguments are not valid JSON", True, [])


def test_an_arguments_error_is_the_output_even_for_an_unknown_tool():
    # the caller's reason not to run a call (a CoA call that could not be read) is what the
    # model must read, whatever the call's name
    output = call_tool_with_selection(_select("ghost", arguments_error="FUNC #1 is not closed"), [])
    assert (output.content, output.tool_name, output.is_error) == (
        "Encountered error: FUNC #1 is not closed", "ghost", True)


def test_a_cancelled_tool_call_is_not_turned_into_an_output():
    async def cancelled() -> None:
        raise asyncio.CancelledError

    with pytest.raises(asyncio.CancelledError):
        call_tool(FunctionTool.from_defaults(cancelled), {})


# ---------------------------------------------------------------- events


def test_a_tool_call_emits_start_and_end_events_with_id_and_arguments():
    with collect_events() as events:
        call_tool_with_selection(_select("add", a=1, b=2), TOOLS)
    assert [(type(e), e.tool_name, e.tool_id, e.arguments) for e in events] == [
        (ToolCallStartEvent, "add", "call_1", {"a": 1, "b": 2}),
        (ToolCallEndEvent, "add", "call_1", {"a": 1, "b": 2})]


def test_the_end_event_carries_the_output():
    with collect_events() as events:
        output = call_tool(ADD, {"a": 1, "b": 2})
    assert events[-1].output is output and events[-1].is_error is False


def test_the_end_event_of_a_failing_tool_is_an_error():
    with collect_events() as events:
        call_tool(TOOLS[2], {"reason": "x"})
    assert events[-1].is_error is True


def test_the_end_event_reports_the_simulated_latency():
    with collect_events() as events:
        call_tool(TOOLS[1], {"a": 1, "b": 2})
    assert events[-1].latency == 2.0


def test_start_and_end_events_share_their_own_span():
    with collect_events() as events:
        call_tool(ADD, {"a": 1, "b": 2})
    assert events[0].span_id == events[1].span_id == "span-1"


# ---------------------------------------------------------------- runner: context, agent, wording
def test_the_runner_passes_a_context_to_a_tool_that_takes_one():
    from agentkit.workflow import Context

    def uses_ctx(ctx: Context, step: int) -> str:
        """Needs the workflow context."""
        return f"{ctx}:{step}"

    tool = FunctionTool.from_defaults(uses_ctx)
    outcome = ToolRunner([tool]).call("uses_ctx", {"step": 2}, context="CTX")
    assert outcome.output.content == "CTX:2"


def test_the_runner_passes_no_context_to_a_tool_without_one():
    outcome = ToolRunner([FunctionTool.from_defaults(add)]).call("add", {"a": 1, "b": 2},
                                                                 context="CTX")
    assert outcome.output.content == "3"


def test_tool_call_events_name_the_runners_agent():
    runner = ToolRunner([FunctionTool.from_defaults(add)], agent="adder")
    with collect_events() as events:
        runner.call("add", {"a": 1, "b": 2})
    assert [e.agent for e in events if isinstance(e, (ToolCallStartEvent, ToolCallEndEvent))] == [
        "adder", "adder"]


def test_a_runner_without_an_agent_leaves_the_events_unnamed():
    with collect_events() as events:
        ToolRunner([FunctionTool.from_defaults(add)]).call("add", {"a": 1, "b": 2})
    assert {e.agent for e in events} == {None}


def test_a_custom_wording_words_every_kind_of_failure():
    class Plain(ToolErrorWording):
        def unknown_tool(self, tool_name: str) -> str:
            return f"no {tool_name}"

        def bad_arguments(self, message: str) -> str:
            return f"bad: {message}"

        def failure(self, exc: Exception) -> str:
            return f"failed: {exc}"

    def boom() -> None:
        """Fails."""
        raise ValueError("x")

    runner = ToolRunner([FunctionTool.from_defaults(boom)], wording=Plain())
    assert runner.call("nope", {}).output.content == "no nope"
    assert runner.call("boom", {}, arguments_error="undecodable").output.content == (
        "bad: undecodable")
    assert runner.call("boom", {}).output.content == "failed: x"


def test_a_tool_call_nobody_listens_to_builds_no_events(monkeypatch):
    emitted: list[object] = []
    monkeypatch.setattr("agentkit.core.events.dispatcher.emit", emitted.append)

    call_tool(FunctionTool.from_defaults(add), {"a": 1, "b": 2})

    assert emitted == []
