"""The legacy ``CallbackManager`` API, as a facade over the event bus.

A :class:`CallbackManager` is itself a bus handler: it translates bus events into the old
``on_event_start`` / ``on_event_end`` / ``start_trace`` / ``end_trace`` calls of its
handlers. Agents scope it to their own runs, so handlers see exactly the events of the agent
they were given to. Event ids are the bus's span ids, so parents and children line up.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from agentkit.core.events import (
    AgentChatEndEvent,
    AgentChatStartEvent,
    AgentStepEndEvent,
    AgentStepStartEvent,
    Event,
    LLMCallEndEvent,
    LLMCallStartEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
)
from agentkit.core.ids import current_ids
from agentkit.core.sim import now

__all__ = [
    "CBEventType",
    "EventPayload",
    "CBEvent",
    "BaseCallbackHandler",
    "CallbackManager",
    "LlamaDebugHandler",
]

BASE_TRACE_EVENT = "root"


class CBEventType(str, Enum):
    LLM = "llm"
    FUNCTION_CALL = "function_call"
    AGENT_STEP = "agent_step"
    EXCEPTION = "exception"
    QUERY = "query"
    RETRIEVE = "retrieve"
    TEMPLATING = "templating"


class EventPayload(str, Enum):
    MESSAGES = "messages"
    PROMPT = "formatted_prompt"
    COMPLETION = "completion"
    RESPONSE = "response"
    FUNCTION_CALL = "function_call"
    FUNCTION_OUTPUT = "function_call_response"
    TOOL = "tool"
    EXCEPTION = "exception"


@dataclass
class CBEvent:
    """One callback event (LlamaIndex's ``CBEvent``): its type, payload, virtual time and id."""

    event_type: CBEventType
    payload: dict[str, Any] | None = None
    time: float = 0.0
    id_: str = ""


class BaseCallbackHandler(ABC):
    """A legacy callback handler."""

    def __init__(self, event_starts_to_ignore: list[CBEventType] | None = None,
                 event_ends_to_ignore: list[CBEventType] | None = None) -> None:
        self.event_starts_to_ignore = tuple(event_starts_to_ignore or ())
        self.event_ends_to_ignore = tuple(event_ends_to_ignore or ())

    @abstractmethod
    def on_event_start(self, event_type: CBEventType, payload: dict[str, Any] | None = None,
                       event_id: str = "", parent_id: str = "", **kwargs: Any) -> str: ...

    @abstractmethod
    def on_event_end(self, event_type: CBEventType, payload: dict[str, Any] | None = None,
                     event_id: str = "", **kwargs: Any) -> None: ...

    @abstractmethod
    def start_trace(self, trace_id: str | None = None) -> None: ...

    @abstractmethod
    def end_trace(self, trace_id: str | None = None,
                  trace_map: dict[str, list[str]] | None = None) -> None: ...


def _tool_args(arguments: dict[str, Any]) -> str:
    return json.dumps(arguments, default=str, sort_keys=True)


class CallbackManager:
    """Dispatches legacy callbacks to handlers; also a bus handler (it is callable)."""

    def __init__(self, handlers: list[BaseCallbackHandler] | None = None) -> None:
        self.handlers: list[BaseCallbackHandler] = list(handlers or [])
        self._trace_stack: list[str] = []
        self._trace_map: dict[str, list[str]] = defaultdict(list)
        self._step_parents: dict[str, str | None] = {}

    def add_handler(self, handler: BaseCallbackHandler) -> None:
        self.handlers.append(handler)

    def remove_handler(self, handler: BaseCallbackHandler) -> None:
        self.handlers.remove(handler)

    def set_handlers(self, handlers: list[BaseCallbackHandler]) -> None:
        self.handlers = list(handlers)

    # ---------------------------------------------------------------- the legacy API
    def on_event_start(self, event_type: CBEventType, payload: dict[str, Any] | None = None,
                       event_id: str | None = None, parent_id: str | None = None,
                       **kwargs: Any) -> str:
        event_id = event_id or current_ids().uuid()
        parent_id = parent_id or BASE_TRACE_EVENT
        self._trace_map[parent_id].append(event_id)
        for handler in self.handlers:
            if event_type not in handler.event_starts_to_ignore:
                handler.on_event_start(event_type, payload, event_id=event_id,
                                       parent_id=parent_id, **kwargs)
        return event_id

    def on_event_end(self, event_type: CBEventType, payload: dict[str, Any] | None = None,
                     event_id: str | None = None, **kwargs: Any) -> None:
        event_id = event_id or current_ids().uuid()
        for handler in self.handlers:
            if event_type not in handler.event_ends_to_ignore:
                handler.on_event_end(event_type, payload, event_id=event_id, **kwargs)

    def start_trace(self, trace_id: str | None = None) -> None:
        if not self._trace_stack:
            self._trace_map = defaultdict(list)
            for handler in self.handlers:
                handler.start_trace(trace_id)
        self._trace_stack.append(trace_id or BASE_TRACE_EVENT)

    def end_trace(self, trace_id: str | None = None,
                  trace_map: dict[str, list[str]] | None = None) -> None:
        if self._trace_stack:
            self._trace_stack.pop()
        if not self._trace_stack:
            self._step_parents.clear()
            for handler in self.handlers:
                handler.end_trace(trace_id, trace_map or dict(self._trace_map))

    @contextmanager
    def event(self, event_type: CBEventType, payload: dict[str, Any] | None = None,
              event_id: str | None = None) -> Iterator[EventContext]:
        """Open an event; call ``.on_end(payload)`` on the yielded context to close it."""
        context = EventContext(self, event_type, event_id=event_id)
        context.on_start(payload)
        try:
            yield context
        except Exception as exc:
            self.on_event_start(CBEventType.EXCEPTION, {EventPayload.EXCEPTION: exc})
            raise
        finally:
            if not context.finished:
                context.on_end()

    @contextmanager
    def as_trace(self, trace_id: str) -> Iterator[None]:
        self.start_trace(trace_id)
        try:
            yield
        finally:
            self.end_trace(trace_id)

    # ---------------------------------------------------------------- bus facade
    def __call__(self, event: Event) -> None:
        if not self.handlers:
            return
        span, parent = event.span_id or "", self._visible_parent(event.parent_id)
        # As in LlamaIndex, a chat is one AGENT_STEP event holding the user message, with
        # every LLM and tool call of its steps directly under it; steps have no event.
        if isinstance(event, AgentChatStartEvent):
            self.start_trace("chat")
            self.on_event_start(CBEventType.AGENT_STEP, {EventPayload.MESSAGES: [event.user_msg]},
                                event_id=span, parent_id=parent)
        elif isinstance(event, AgentChatEndEvent):
            if event.error:
                self.on_event_start(CBEventType.EXCEPTION, {EventPayload.EXCEPTION: event.error},
                                    parent_id=span)
                self.on_event_end(CBEventType.AGENT_STEP, None, event_id=span)
            else:
                self.on_event_end(CBEventType.AGENT_STEP, {EventPayload.RESPONSE: event.response},
                                  event_id=span)
            self.end_trace("chat")
        elif isinstance(event, AgentStepStartEvent):
            self._step_parents[span] = event.parent_id
        elif isinstance(event, AgentStepEndEvent):
            if not self._trace_stack:  # inside a chat, end_trace forgets the chat's steps
                self._step_parents.pop(span, None)
        elif isinstance(event, LLMCallStartEvent):
            self.on_event_start(CBEventType.LLM, {EventPayload.MESSAGES: event.messages},
                                event_id=span, parent_id=parent)
        elif isinstance(event, LLMCallEndEvent):
            payload: dict[str, Any] = {EventPayload.MESSAGES: event.messages,
                                       EventPayload.RESPONSE: event.response}
            if event.error:
                payload[EventPayload.EXCEPTION] = event.error
            self.on_event_end(CBEventType.LLM, payload, event_id=span)
        elif isinstance(event, ToolCallStartEvent):
            self.on_event_start(CBEventType.FUNCTION_CALL,
                                {EventPayload.FUNCTION_CALL: _tool_args(event.arguments),
                                 EventPayload.TOOL: event.tool_name},
                                event_id=span, parent_id=parent)
        elif isinstance(event, ToolCallEndEvent):
            self.on_event_end(CBEventType.FUNCTION_CALL,
                              {EventPayload.FUNCTION_OUTPUT: str(event.output)}, event_id=span)

    def _visible_parent(self, parent: str | None) -> str:
        """The nearest enclosing span that handlers saw as an event (steps are skipped)."""
        while parent in self._step_parents:
            parent = self._step_parents[parent]
        return parent or ""


@dataclass
class EventContext:
    """A started callback event (``CallbackManager.event``): ``on_start`` and ``on_end`` send
    its start and end once each."""

    manager: CallbackManager
    event_type: CBEventType
    event_id: str | None = None
    started: bool = False
    finished: bool = False

    def on_start(self, payload: dict[str, Any] | None = None, **kwargs: Any) -> None:
        if not self.started:
            self.started = True
            self.event_id = self.manager.on_event_start(self.event_type, payload,
                                                        event_id=self.event_id, **kwargs)

    def on_end(self, payload: dict[str, Any] | None = None, **kwargs: Any) -> None:
        if not self.finished:
            self.finished = True
            self.manager.on_event_end(self.event_type, payload, event_id=self.event_id, **kwargs)


@dataclass
class LlamaDebugHandler(BaseCallbackHandler):
    """Keeps every callback event, by type, for inspection in tests."""

    events: dict[CBEventType, list[CBEvent]] = field(default_factory=lambda: defaultdict(list))
    sequence: list[CBEvent] = field(default_factory=list)
    traces: list[tuple[str | None, dict[str, list[str]]]] = field(default_factory=list)

    def __post_init__(self) -> None:
        super().__init__()

    def on_event_start(self, event_type: CBEventType, payload: dict[str, Any] | None = None,
                       event_id: str = "", parent_id: str = "", **kwargs: Any) -> str:
        self._keep(CBEvent(event_type, payload, now(), event_id))
        return event_id

    def on_event_end(self, event_type: CBEventType, payload: dict[str, Any] | None = None,
                     event_id: str = "", **kwargs: Any) -> None:
        self._keep(CBEvent(event_type, payload, now(), event_id))

    def _keep(self, event: CBEvent) -> None:
        self.events[event.event_type].append(event)
        self.sequence.append(event)

    def start_trace(self, trace_id: str | None = None) -> None:
        pass

    def end_trace(self, trace_id: str | None = None,
                  trace_map: dict[str, list[str]] | None = None) -> None:
        self.traces.append((trace_id, dict(trace_map or {})))

    def get_events(self, event_type: CBEventType | None = None) -> list[CBEvent]:
        if event_type is not None:
            return list(self.events.get(event_type, []))
        return list(self.sequence)

    def get_event_pairs(self, event_type: CBEventType | None = None) -> list[list[CBEvent]]:
        """Start/end pairs, matched by event id, in start order."""
        pairs: dict[str, list[CBEvent]] = {}
        for event in self.get_events(event_type):
            pairs.setdefault(event.id_, []).append(event)
        return list(pairs.values())

    def get_llm_inputs_outputs(self) -> list[list[CBEvent]]:
        return self.get_event_pairs(CBEventType.LLM)

    def flush_event_logs(self) -> None:
        self.events = defaultdict(list)
        self.sequence = []
