"""What agent workflows report to the instrumentation bus, beside the engine's step events.

An agent's turn at the LLM (its input and its output) and a hand-off between agents are bus
events carrying the agent's name; tool calls carry it too (``ToolCallStartEvent.agent``), so a
trace can say which agent did what. Emitted by the shared agent loop, so every agent kind
reports the same events.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agentkit.core.events import Event as BusEvent

__all__ = ["WorkflowAgentInputEvent", "WorkflowAgentOutputEvent", "AgentHandoffEvent"]


@dataclass(kw_only=True, slots=True)
class WorkflowAgentInputEvent(BusEvent):
    """An agent takes a step: ``messages`` is its input before its own formatting (the LLM
    call events show what the model got)."""

    agent: str
    messages: list[Any] = field(default_factory=list)


@dataclass(kw_only=True, slots=True)
class WorkflowAgentOutputEvent(BusEvent):
    """An agent's step produced ``response`` (a ChatMessage) with ``tool_calls``; ``retry``
    when its output could not be used and it is asked again."""

    agent: str
    response: Any = None
    tool_calls: list[Any] = field(default_factory=list)
    retry: bool = False


@dataclass(kw_only=True, slots=True)
class AgentHandoffEvent(BusEvent):
    """``from_agent`` handed the conversation to ``to_agent`` for ``reason``."""

    from_agent: str
    to_agent: str
    reason: str = ""
