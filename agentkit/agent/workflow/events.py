"""The events of an agent workflow run (``llama_index.core.agent.workflow`` shape).

What the caller reads from ``handler.stream_events()``: ``AgentInput`` (what an agent's LLM
is about to get), ``AgentStream`` (each streamed delta), ``AgentOutput`` (what it answered),
``ToolCall`` and ``ToolCallResult`` (each tool call), then the ``StopEvent`` whose result is
the final ``AgentOutput``. ``AgentSetup`` and ``AgentWorkflowStartEvent`` travel between the
steps only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import Field, PrivateAttr, computed_field, model_serializer

from agentkit.llms.types import ChatMessage, ToolOutput, ToolSelection
from agentkit.workflow import Event, StartEvent

__all__ = [
    "HANDOFF_TOOL_NAME",
    "AgentInput",
    "AgentSetup",
    "AgentStream",
    "StreamText",
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


class StreamText:
    """The text of one stream, piece by piece: each :class:`AgentStream` of the stream reads
    its text so far from here, so a long answer's events hold every piece once (a text per
    event would be memory growing with the square of the answer)."""

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._starts: list[int] = []  # where each part begins: after a reset, the part itself
        self._start = 0  # where the latest part's text begins
        self._count = 0  # len(self._parts): the mark of the latest text
        self._text = ""  # the latest text, to spot the new piece of the next one

    def add(self, text: str) -> int:
        """Take the stream's text so far; returns the mark to read it back with (once per
        streamed chunk: no call it can do without)."""
        previous = self._text
        if text.startswith(previous):  # (so it is at least as long)
            self._parts.append(text[len(previous):])
        else:  # a text that does not extend the last one replaces it
            self._parts.append(text)
            self._start = self._count
        self._starts.append(self._start)
        self._text = text
        self._count += 1
        return self._count

    def upto(self, mark: int) -> str:
        """The text as it was when ``mark`` was taken."""
        if mark == self._count:
            return self._text
        return "".join(self._parts[self._starts[mark - 1]:mark]) if mark else ""


_set = object.__setattr__
_STREAM_PRIVATE = {"_text", "_mark"}
_direct: dict[type, tuple[tuple[str, ...], frozenset[str]] | tuple[()]] = {}


def _direct_fields(cls: type[AgentStream]) -> tuple[tuple[str, ...], frozenset[str]] | tuple[()]:
    """The field names of ``cls`` (an AgentStream class), in order and as a set, when
    :meth:`AgentStream.of_stream` may build its events directly (its private state is
    AgentStream's own), else ``()``; worked out once per class, not once per streamed chunk."""
    names = tuple(cls.__pydantic_fields__)
    fields = ((names, frozenset(names))
              if cls.__private_attributes__.keys() == _STREAM_PRIVATE else ())
    return _direct.setdefault(cls, fields)


class AgentStream(Event):
    """One streamed piece of an agent's LLM reply; ``response`` is the text so far (read
    from the stream's :class:`StreamText` when asked, or as given)."""

    delta: str
    current_agent_name: str
    tool_calls: list[ToolSelection] = Field(default_factory=list)
    raw: Any = Field(default=None, exclude=True)
    _text: StreamText | str | None = PrivateAttr(default=None)
    _mark: int = PrivateAttr(default=0)

    if TYPE_CHECKING:
        def __init__(self, *, delta: str, current_agent_name: str, response: str = "",
                     tool_calls: list[ToolSelection] | None = None, raw: Any = None,
                     **extras: Any) -> None: ...
    else:
        def __init__(self, **data: Any) -> None:
            response = data.pop("response", "")
            super().__init__(**data)
            self._text = response

    @classmethod
    def of_stream(cls, text: StreamText, mark: int, **data: Any) -> AgentStream:
        """The event for ``text`` as it was at ``mark`` (:meth:`StreamText.add`). Built from
        the agent's own chunk (every field already of its type), one per streamed chunk:
        not validated again, its private state written at once."""
        fields = _direct.get(cls) or _direct_fields(cls)
        if not fields or data.keys() != fields[1]:
            event = cls.model_construct(**data)  # defaults or extras to work out: pydantic's way
            private = event.__pydantic_private__
            assert private is not None  # AgentStream has private attributes
            private["_text"], private["_mark"] = text, mark
            return event
        # every field given: what model_construct would set, without its per-field loop and
        # the defaults of the private state it overwrites
        event = cls.__new__(cls)
        _set(event, "__dict__", {name: data[name] for name in fields[0]})
        _set(event, "__pydantic_fields_set__", set(data))
        _set(event, "__pydantic_extra__", {})
        _set(event, "__pydantic_private__", {"_text": text, "_mark": mark})
        return event

    @computed_field  # type: ignore[prop-decorator]
    @property
    def response(self) -> str:
        """The reply's text so far."""
        text = self._text
        if isinstance(text, StreamText):
            return text.upto(self._mark)
        if text is None:  # validated from a dump (a checkpoint): the field is an extra
            return str((self.__pydantic_extra__ or {}).get("response", ""))
        return text


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
