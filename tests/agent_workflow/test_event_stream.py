"""The event stream of a run with a tool call and a hand-off, snapshotted (syrupy)."""

from __future__ import annotations

from typing import Any

from agentkit.agent.workflow import (
    AgentInput,
    AgentOutput,
    AgentStream,
    AgentWorkflow,
    FunctionAgent,
    ReActAgent,
    StreamText,
    ToolCall,
    ToolCallResult,
)
from agentkit.core.sim import run_sync
from agentkit.llms.mock import ScriptedLLM, ScriptedResponse, tool_call
from agentkit.workflow import StopEvent

from .helpers import REACT_ADD, REACT_DONE, add


def _describe(event: Any) -> dict[str, Any]:
    if isinstance(event, (AgentInput, AgentStream, AgentOutput)):
        data: dict[str, Any] = {"agent": event.current_agent_name}
        if isinstance(event, AgentInput):
            data["input"] = [f"{m.role.value}: {(m.content or '')[:80]}" for m in event.input]
        elif isinstance(event, AgentStream):
            data["delta"] = event.delta
        else:
            data["response"] = event.response.content
            data["tool_calls"] = [c.tool_name for c in event.tool_calls]
        return {type(event).__name__: data}
    if isinstance(event, ToolCallResult):
        return {"ToolCallResult": {"tool": event.tool_name, "args": event.tool_kwargs,
                                   "output": event.tool_output.content,
                                   "is_error": event.tool_output.is_error,
                                   "return_direct": event.return_direct}}
    if isinstance(event, ToolCall):
        return {"ToolCall": {"tool": event.tool_name, "args": event.tool_kwargs}}
    assert isinstance(event, StopEvent)
    return {"StopEvent": str(event.result)}


def test_the_event_stream_of_a_tool_call_and_a_handoff(snapshot) -> None:
    retriever = FunctionAgent(
        name="retriever", description="Finds numbers.", tools=[add],
        llm=ScriptedLLM([tool_call("add", a=1, b=1),
                         tool_call("handoff", to_agent="calculator", reason="it adds")]))
    calculator = ReActAgent(name="calculator", description="Adds numbers.", tools=[add],
                            llm=ScriptedLLM([REACT_ADD, REACT_DONE], function_calling=False))
    workflow = AgentWorkflow(agents=[retriever, calculator], root_agent="retriever")

    async def stream() -> list[dict[str, Any]]:
        handler = workflow.run(user_msg="What is 5 + 3?")
        events = [_describe(e) async for e in handler.stream_events()]
        await handler
        return events

    assert run_sync(stream()) == snapshot


def test_each_stream_event_reads_the_text_so_far_though_it_holds_only_its_delta() -> None:
    pieces = ["The ", "answer ", "is ", "8."]
    agent = FunctionAgent(name="solo", description="Answers.", tools=[add], llm=ScriptedLLM(
        [ScriptedResponse(text="".join(pieces), chunks=pieces)]))

    async def stream() -> list[AgentStream]:
        handler = AgentWorkflow(agents=[agent]).run(user_msg="5 + 3?")
        events = [e async for e in handler.stream_events() if isinstance(e, AgentStream)]
        await handler
        return events

    events = run_sync(stream())

    so_far = ["The ", "The answer ", "The answer is ", "The answer is 8.", "The answer is 8."]
    assert [e.response for e in events] == so_far
    assert [e.model_dump()["response"] for e in events] == so_far
    assert AgentStream.model_validate(events[2].model_dump()).response == "The answer is "
    assert AgentStream(delta="x", response="given", current_agent_name="a").response == "given"


def test_stream_text_after_a_text_that_does_not_extend_the_last_reads_the_new_one() -> None:
    text = StreamText()
    marks = [text.add(t) for t in ("ab", "abc", "xy", "xyz")]

    assert [text.upto(m) for m in marks] == ["ab", "abc", "xy", "xyz"]


def test_a_streamed_chunks_event_is_what_model_construct_builds_without_building_it(monkeypatch):
    """One AgentStream per streamed chunk: built straight from the agent's own chunk, equal
    to pydantic's model_construct of it (fields, fields set, extras, private state)."""
    text = StreamText()
    data = {"delta": "lo", "tool_calls": [], "raw": None, "current_agent_name": "agent"}
    mark = text.add("hello")
    expected = AgentStream.model_construct(**data)
    expected.__pydantic_private__.update({"_text": text, "_mark": mark})
    constructed: list[object] = []
    construct = AgentStream.model_construct.__func__
    monkeypatch.setattr(AgentStream, "model_construct", classmethod(
        lambda cls, **kw: constructed.append(kw) or construct(cls, **kw)))

    event = AgentStream.of_stream(text, mark, **data)

    assert constructed == []
    assert event == expected and event.response == "hello"
    assert (event.model_fields_set, event.__pydantic_extra__) == (
        expected.model_fields_set, expected.__pydantic_extra__)
    assert list(event.__dict__) == list(expected.__dict__)
    assert event.model_dump() == expected.model_dump()
