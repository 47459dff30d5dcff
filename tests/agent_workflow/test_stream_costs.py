"""What a workflow agent's run repeats, counted (issue 36: a streamed reply is dozens of chunks,
so what is done per chunk, per step or per agent built is what a replay pays).

Counts of calls, never times: each test patches the function whose calls it counts."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from agentkit.agent.workflow import (
    AgentStream,
    AgentWorkflow,
    BaseWorkflowAgent,
    FunctionAgent,
    ReActAgent,
    base_agent,
)
from agentkit.agent.workflow import events as agent_events
from agentkit.core.events import dispatcher
from agentkit.core.sim import run_sync
from agentkit.harness._families.workflow import WorkflowChatAgent
from agentkit.llms import base as llm_base
from agentkit.llms.mock import ScriptedLLM, ScriptedResponse, tool_call
from agentkit.llms.types import ChatResponse
from agentkit.workflow import context as workflow_context
from agentkit.workflow import serialize
from agentkit.workflow.context import EventStream
from tests.python_calls import noted_calls, spawned_tasks

from .helpers import REACT_ADD, add, roles

PIECES = [f"word{i} " for i in range(20)]
ANSWER = "".join(PIECES)


def _streamed_run(agent: Any) -> list[AgentStream]:
    async def stream() -> list[AgentStream]:
        handler = AgentWorkflow(agents=[agent]).run(user_msg="5 + 3?")
        events = [e async for e in handler.stream_events() if isinstance(e, AgentStream)]
        await handler
        return events
    return run_sync(stream())


def _answering_agent() -> FunctionAgent:
    return FunctionAgent(name="solo", description="Answers.", tools=[add], llm=ScriptedLLM(
        [tool_call("add", a=5, b=3), ScriptedResponse(text=ANSWER, chunks=PIECES)]))


def test_a_function_agent_reads_how_to_find_a_chunks_tool_calls_once_per_stream(
        monkeypatch: pytest.MonkeyPatch) -> None:
    required = noted_calls(monkeypatch, FunctionAgent, "_require_llm")
    read = noted_calls(monkeypatch, ScriptedLLM, "get_tool_calls_from_response")

    events = _streamed_run(_answering_agent())

    answer_chunks = len(PIECES) + 1  # the words, then the whole message
    assert len(events) > answer_chunks
    # two steps, each: take_step's two reads of its model, _chunk_tool_calls' one and the
    # reply's _tool_calls_of -- not one more per chunk, as each chunk's _tool_calls_of made
    assert len(required) == 2 * 4
    # each chunk's calls are still the model's to read, and the step's reply's once more
    assert len(read) == len(events) + 2
    assert events[-1].tool_calls == [] and events[-1].response == ANSWER


def test_an_agent_that_asks_in_text_reads_no_tool_calls_per_chunk(
        monkeypatch: pytest.MonkeyPatch) -> None:
    agent = ReActAgent(name="solo", description="Answers.", tools=[add], llm=ScriptedLLM(
        [REACT_ADD, ScriptedResponse(text=f"Thought: done.\nAnswer: {ANSWER}")],
        function_calling=False))
    tool_calls_of = noted_calls(monkeypatch, BaseWorkflowAgent, "_tool_calls_of")

    events = _streamed_run(agent)

    assert len(events) > len(PIECES) and tool_calls_of == []
    assert all(e.tool_calls == [] for e in events)
    assert len({id(e.tool_calls) for e in events}) == len(events)  # a list of its own each


def test_a_stream_event_class_is_checked_once_not_once_per_chunk(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(agent_events, "_direct", {})
    checked = noted_calls(monkeypatch, agent_events, "_direct_fields")

    events = _streamed_run(_answering_agent())

    assert len(events) > len(PIECES) and checked == [AgentStream]


def test_a_chunk_written_while_no_reader_waits_wakes_nobody(
        monkeypatch: pytest.MonkeyPatch) -> None:
    woken = noted_calls(monkeypatch, EventStream, "_wake")
    stream = EventStream()
    for i in range(10):
        stream.put(i)
    stream.close()

    assert len(woken) == 1  # the close
    assert stream.pending() == list(range(10))


def test_reading_the_stream_waits_only_when_nothing_is_there(
        monkeypatch: pytest.MonkeyPatch) -> None:
    waits = noted_calls(monkeypatch, EventStream, "get")

    events = _streamed_run(_answering_agent())

    # a read waits once per burst a step writes (the first step's input, its chunks and
    # output, the tool call...), not once per event: the answer's 21 chunks are one burst
    assert len(events) > len(PIECES) and len(waits) < 12


def test_the_tool_calling_stream_of_a_model_allowed_parallel_calls_is_not_mapped(
        monkeypatch: pytest.MonkeyPatch) -> None:
    mapped = noted_calls(monkeypatch, llm_base, "_single_call_unless_parallel")
    llm = ScriptedLLM([ScriptedResponse(text=ANSWER, chunks=PIECES)] * 2)

    async def chunks(parallel: bool) -> list[ChatResponse]:
        stream = await llm.astream_chat_with_tools([], user_msg="hi",
                                                   allow_parallel_tool_calls=parallel)
        return [c async for c in stream]

    assert len(run_sync(chunks(True))) == len(PIECES) + 1 and mapped == []
    assert len(run_sync(chunks(False))) == len(mapped) == len(PIECES) + 1


def test_a_streamed_chunk_is_one_bus_event_built_in_its_call_span() -> None:
    llm = ScriptedLLM([ScriptedResponse(text=ANSWER, chunks=PIECES)])
    seen: list[Any] = []
    with dispatcher.listen(seen.append):
        chunks = list(llm.stream_chat([]))

    start, *pieces, end = seen
    assert (type(start).__name__, type(end).__name__) == ("LLMCallStartEvent", "LLMCallEndEvent")
    assert len(pieces) == len(chunks) == len(PIECES) + 1
    assert {(e.span_id, e.parent_id) for e in pieces} == {(start.span_id, start.parent_id)}
    assert [e.delta for e in pieces] == [c.delta for c in chunks]


def test_an_event_sent_with_no_wait_for_event_pending_matches_no_waiter(
        monkeypatch: pytest.MonkeyPatch) -> None:
    matched = noted_calls(monkeypatch, workflow_context._Waiter, "matches")

    _streamed_run(_answering_agent())

    assert matched == []


def test_building_a_workflow_agent_sets_its_workflow_state_without_pydantics_handler(
        monkeypatch: pytest.MonkeyPatch) -> None:
    handled = noted_calls(monkeypatch, BaseModel, "_setattr_handler")

    agent = FunctionAgent(name="solo", description="Answers.", tools=[add], timeout=5.0)
    workflow = AgentWorkflow(agents=[agent])
    WorkflowChatAgent(workflow)

    assert handled == []
    assert (agent.timeout, agent._graph, agent._runners) == (5.0, agent.graph, {})
    agent.name = "renamed"  # a field still goes through pydantic
    assert agent.name == "renamed" and len(handled) == 1


def test_a_models_field_models_are_worked_out_once(monkeypatch: pytest.MonkeyPatch) -> None:
    workflow = AgentWorkflow(agents=[FunctionAgent(name="solo", description="Answers.",
                                                   tools=[add])])
    first = workflow.restorable_types()
    walked = noted_calls(monkeypatch, serialize, "models_in")

    again = workflow.restorable_types()

    assert again == first
    # only the store schema's annotations are walked again, not every field of every model
    assert len(walked) <= 3 * len(workflow.context_store_schema())


def test_a_chat_turn_of_the_harness_builds_no_delta_event_a_streamed_turn_reads_them(
        monkeypatch: pytest.MonkeyPatch) -> None:
    built = noted_calls(monkeypatch, AgentStream, "of_stream")
    chats = [WorkflowChatAgent(AgentWorkflow(agents=[_answering_agent()])) for _ in range(2)]

    answer = chats[0].chat("5 + 3?")

    assert answer.response == ANSWER and built == []  # nobody reads a chat turn's deltas
    streamed = chats[1].stream_chat("5 + 3?")
    assert list(streamed.response_gen) == PIECES and streamed.response == ANSWER
    assert len(built) > len(PIECES)
    assert roles(chats[0].chat_history) == roles(chats[1].chat_history)


def test_a_context_reads_every_stream_event_unless_its_caller_says_otherwise() -> None:
    agent = FunctionAgent(name="solo", description="Answers.", tools=[add])
    ctx = workflow_context.Context(agent)
    assert ctx.stream_reads(AgentStream)
    ctx.unread_in_stream = (AgentStream,)
    assert not ctx.stream_reads(AgentStream) and ctx.stream_reads(dict)
    restored = workflow_context.Context.from_dict(agent, ctx.to_dict())
    assert restored.stream_reads(AgentStream)  # the caller's say, not saved with the run


def test_an_agent_run_starts_a_task_for_its_first_step_and_each_tool_call_only(
        monkeypatch: pytest.MonkeyPatch) -> None:
    spawned = spawned_tasks(monkeypatch)

    answer = WorkflowChatAgent(AgentWorkflow(agents=[_answering_agent()])).chat("5 + 3?")

    # init_run, then the tool call parse_agent_output sends; the setups, the agent's steps,
    # the parses of its outputs and the aggregation run in the task of the step before them
    assert answer.response == ANSWER
    assert spawned == ["init_run", "call_tool"]


def test_a_chat_turn_writes_to_the_stream_only_what_the_harness_reads(
        monkeypatch: pytest.MonkeyPatch) -> None:
    written: list[str] = []
    put = EventStream.put

    def counted(stream: EventStream, event: Any) -> None:
        written.append(type(event).__name__)
        put(stream, event)

    monkeypatch.setattr(EventStream, "put", counted)
    chats = [WorkflowChatAgent(AgentWorkflow(agents=[_answering_agent()])) for _ in range(2)]

    assert chats[0].chat("5 + 3?").response == ANSWER
    # no step's input, output, tool call or result: the harness takes those from the bus
    assert written == ["StopEvent"]

    written.clear()
    streamed = chats[1].stream_chat("5 + 3?")
    assert list(streamed.response_gen) == PIECES
    # a streamed turn reads each agent step's input (where its deltas start) and the deltas
    tool_call_chunks = written.index("AgentInput", 1) - 1
    assert written == ["AgentInput", *["AgentStream"] * tool_call_chunks, "AgentInput",
                       *["AgentStream"] * (len(PIECES) + 1), "StopEvent"]
    assert roles(chats[0].chat_history) == roles(chats[1].chat_history)


def test_a_streamed_step_builds_no_placeholder_reply(monkeypatch: pytest.MonkeyPatch) -> None:
    placeholders = noted_calls(monkeypatch, base_agent, "_empty_reply")

    events = _streamed_run(_answering_agent())
    answer = WorkflowChatAgent(AgentWorkflow(agents=[_answering_agent()])).chat("5 + 3?")

    # the reply is the stream's last chunk; an empty reply is built only for an empty stream
    assert events[-1].response == answer.response == ANSWER
    assert placeholders == []
