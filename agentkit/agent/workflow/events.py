"""The events of an agent workflow run (``llama_index.core.agent.workflow`` shape).

What the caller reads from ``handler.stream_events()``: ``AgentInput`` (what an agent's LLM
is about to get), ``AgentStream`` (each streamed delta), ``AgentOutput`` (what it answered),
``ToolCall`` and ``ToolCallResult`` (each tool call), then the ``StopEvent`` whose result is
the final ``AgentOutput``. ``AgentSetup`` and ``AgentWorkflowStartEvent`` travel between the
steps only.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, model_serializer

from agentkit.llms.types import ChatMessage, ToolOutput, ToolSelection
from agentkit.workflow import Event, StartEvent

__all__ = [
    "HANDOFF_TOOL_NAME",
    "AgentInput",
    "AgentSetup",
    "AgentStream",
    "AgentOutput",
    "ToolCall",
    "ToolCallResult",
    "AgentWorkflowStartEvent",
]

HANDOFF_TOOL_NAME = "handoff"
"""The name of an ``AgentWorkflow``'s hand-off tool (reserved: no agent tool may take it)."""


class AgentInput(Event):
    """The messages an agent is about to work on."""

    input: list[ChatMessage]
    current_agent_name: str


class AgentSetup(Event):
    """An agent's LLM input after the system prompt and the state were added."""

    input: list[ChatMessage]
    current_agent_name: str


class AgentStream(Event):
    """One streamed piece of an agent's LLM reply (``response`` is the text so far)."""

    delta: str
    response: str
    current_agent_name: str
    tool_calls: list[ToolSelection] = Field(default_factory=list)
    raw: Any = Field(default=None, exclude=True)


class AgentOutput(Event):
    """An agent's reply: its message, the tool calls it asks for, or messages to retry with.

    The run's final output (the handler's result) carries every tool call of the run."""

    response: ChatMessage
    current_agent_name: str
    tool_calls: list[ToolSelection] = Field(default_factory=list)
    raw: Any = Field(default=None, exclude=True)
    retry_messages: list[ChatMessage] = Field(default_factory=list)

    def __str__(self) -> str:
        return self.response.content or ""


class ToolCall(Event):
    """A tool call an agent asked for."""

    tool_name: str
    tool_kwargs: dict[str, Any]
    tool_id: str


class ToolCallResult(Event):
    """A tool call's output; ``return_direct`` is the tool's flag (an error never stops)."""

    tool_name: str
    tool_kwargs: dict[str, Any]
    tool_id: str
    tool_output: ToolOutput
    return_direct: bool

    @property
    def direct(self) -> bool:
        """A ``return_direct`` result that takes effect: the tool's flag, and no error."""
        return self.return_direct and not self.tool_output.is_error

    @property
    def is_handoff(self) -> bool:
        """The hand-off tool's result (direct, but it passes the turn instead of answering)."""
        return self.tool_name == HANDOFF_TOOL_NAME


class AgentWorkflowStartEvent(StartEvent):
    """How a run starts: ``user_msg``, ``chat_history``, ``memory``, ``max_iterations``.

    ``model_dump()`` (and ``model_dump_json()``) give only ``user_msg`` and ``chat_history``,
    as upstream: the memory and the iteration limit are the run's, not the message's.
    (Upstream fails when the event has no ``chat_history``; here a missing one is None.)"""

    @model_serializer(mode="plain")
    def _dump(self) -> dict[str, Any]:
        return {"user_msg": self.get("user_msg"), "chat_history": self.get("chat_history")}

    def __init__(self, **data: Any) -> None:
        history = data.get("chat_history")
        if history:
            data["chat_history"] = [m if isinstance(m, ChatMessage) else ChatMessage.model_validate(m)
                                    for m in history]
        super().__init__(**data)
