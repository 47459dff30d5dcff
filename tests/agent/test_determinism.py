"""The same scripted chat under the same seed yields the same ids and the same events."""

import dataclasses
import json
from enum import Enum
from typing import Any

import pytest
from pydantic import BaseModel

from agentkit.agent import FunctionCallingAgent, ReActAgent, StreamingAgentChatResponse
from agentkit.core.sim import simulation
from agentkit.instrumentation import ToolCallStartEvent, collect_events
from agentkit.llms.mock import ScriptedLLM, ScriptedResponse, tool_call
from agentkit.tools import FunctionTool


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def _plain(value: Any) -> Any:
    """A JSON-ready copy of ``value``: models and dataclasses as dicts, other objects by type."""
    if isinstance(value, StreamingAgentChatResponse):
        value = {"response": value.response, "sources": value.sources}
    elif isinstance(value, BaseModel):
        value = value.model_dump()
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if isinstance(value, Enum):
        return value.value
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return f"<{type(value).__name__}>"


def _serialise(events: list[Any]) -> str:
    return json.dumps([{"event": e.name, **_plain(e)} for e in events], sort_keys=True)


def _react_agent() -> ReActAgent:
    llm = ScriptedLLM(['Thought: I need to add.\nAction: add\nAction Input: {"a": 2, "b": 3}',
                       "Thought: I can answer.\nAnswer: 5"], function_calling=False, latency=0.5)
    return ReActAgent.from_tools([FunctionTool.from_defaults(add)], llm=llm)


def _fc_agent() -> FunctionCallingAgent:
    llm = ScriptedLLM([ScriptedResponse(tool_calls=[tool_call("add", a=2, b=3),
                                                    tool_call("add", a=1, b=1)]),
                       "5 and 2"], latency=0.5)
    return FunctionCallingAgent.from_tools([FunctionTool.from_defaults(add)], llm=llm)


AGENTS = {"react": _react_agent, "function_calling": _fc_agent}


def _run(kind: str, seed: int, stream: bool = False) -> dict[str, Any]:
    """One scripted chat in a fresh simulation: its ids and its serialised events."""
    with simulation(seed=seed):
        agent = AGENTS[kind]()
        with collect_events() as events:
            if stream:
                agent.stream_chat("What is 2 + 3?").get_response()
            else:
                agent.chat("What is 2 + 3?")
        [state] = agent.list_tasks()
        return {
            "task_ids": [state.task.task_id],
            "step_ids": [o.task_step.step_id for o in state.completed_steps],
            "tool_call_ids": [e.tool_id for e in events if isinstance(e, ToolCallStartEvent)],
            "events": _serialise(events),
        }


@pytest.mark.parametrize("stream", [False, True], ids=["chat", "stream_chat"])
@pytest.mark.parametrize("kind", list(AGENTS))
def test_the_same_seed_gives_identical_ids_and_events(kind, stream):
    first, second = _run(kind, seed=0, stream=stream), _run(kind, seed=0, stream=stream)
    assert first == second


@pytest.mark.parametrize("kind", list(AGENTS))
def test_a_different_seed_gives_different_task_and_step_ids(kind):
    first, other = _run(kind, seed=0), _run(kind, seed=1)
    assert set(first["task_ids"]).isdisjoint(other["task_ids"])
    assert set(first["step_ids"]).isdisjoint(other["step_ids"])


def test_a_different_seed_gives_different_tool_call_ids():
    first, other = _run("function_calling", seed=0), _run("function_calling", seed=1)
    assert len(first["tool_call_ids"]) == 2
    assert set(first["tool_call_ids"]).isdisjoint(other["tool_call_ids"])


def test_the_event_serialisation_covers_ids_and_virtual_times():
    run = json.loads(_run("function_calling", seed=0)["events"])
    assert {"span_id", "parent_id", "time"} <= set(run[0])
    assert [e["time"] for e in run][-1] == 1.0
    assert any(e.get("tool_id") for e in run)
