"""Instrumentation: the event bus (one source of truth for traces) and the legacy callbacks.

Subscribe for a block with :func:`collect_events` (or ``dispatcher.listen``), for the whole
process with ``dispatcher.add_handler``.
"""

from collections.abc import Iterator
from contextlib import contextmanager

from agentkit.core.events import (
    AgentChatEndEvent,
    AgentChatStartEvent,
    AgentStepEndEvent,
    AgentStepStartEvent,
    Dispatcher,
    Event,
    EventFilter,
    LLMCallEndEvent,
    LLMCallStartEvent,
    LLMStreamChunkEvent,
    Span,
    ToolCallEndEvent,
    ToolCallStartEvent,
    dispatcher,
)
from agentkit.instrumentation.callbacks import (
    BaseCallbackHandler,
    CallbackManager,
    CBEvent,
    CBEventType,
    EventPayload,
    LlamaDebugHandler,
)


def get_dispatcher(name: str | None = None) -> Dispatcher:
    """The one bus (the ``name`` argument exists for LlamaIndex compatibility)."""
    return dispatcher


@contextmanager
def collect_events(wants: EventFilter | None = None) -> Iterator[list[Event]]:
    """Collect every event emitted in this block (and the tasks it starts) into a list; with
    ``wants``, those of the event types it takes (the rest, when nobody else listens for
    them, are not even built)."""
    events: list[Event] = []
    with dispatcher.listen(events.append, wants):
        yield events


__all__ = [
    "AgentChatEndEvent",
    "AgentChatStartEvent",
    "AgentStepEndEvent",
    "AgentStepStartEvent",
    "BaseCallbackHandler",
    "CBEvent",
    "CBEventType",
    "CallbackManager",
    "Dispatcher",
    "Event",
    "EventFilter",
    "EventPayload",
    "LLMCallEndEvent",
    "LLMCallStartEvent",
    "LLMStreamChunkEvent",
    "LlamaDebugHandler",
    "Span",
    "ToolCallEndEvent",
    "ToolCallStartEvent",
    "collect_events",
    "dispatcher",
    "get_dispatcher",
]
