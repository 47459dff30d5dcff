"""The event bus: one stream of typed events for chats, agent steps, LLM calls and tool calls.

Every event carries the id of the span it belongs to and that span's parent, so a trace can be
rebuilt as a tree (chat > step > LLM call / tool call) even when calls run concurrently. Span
ids come from the seeded id source and timestamps from the virtual clock, so the stream of a
run is deterministic.

Handlers are plain callables. :meth:`Dispatcher.add_handler` subscribes for the whole process;
:meth:`Dispatcher.listen` subscribes for a block (and the tasks started inside it) only, which
is how concurrent runs keep their events apart. A block's listener may take only some event
types (``wants``, an :class:`EventFilter`): an event that no listener takes is not delivered,
and a producer asks :meth:`Dispatcher.wants` before building one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, ClassVar, NamedTuple

from agentkit.core import ids as _ids
from agentkit.core.sim import _clock, _default_clock

__all__ = [
    "Event",
    "Span",
    "Dispatcher",
    "EventFilter",
    "dispatcher",
    "AgentChatStartEvent",
    "AgentChatEndEvent",
    "AgentStepStartEvent",
    "AgentStepEndEvent",
    "LLMCallStartEvent",
    "LLMStreamChunkEvent",
    "LLMCallEndEvent",
    "ToolCallStartEvent",
    "ToolCallEndEvent",
    "ToolsOfferedEvent",
    "AgentLimitEvent",
]

Handler = Callable[["Event"], None]


@dataclass(kw_only=True, slots=True)
class Event:
    """Base of every event. ``time`` is virtual time at emission."""

    span_id: str | None = None
    parent_id: str | None = None
    time: float = 0.0

    span_told: ClassVar[bool] = False
    """True for an event class whose span another event of the same producer always holds,
    delivered to a listener taking every event (a streamed chunk's: its LLM call's start and
    end): a listener that needs events only for their spans' tree may leave it out."""

    @property
    def name(self) -> str:
        return type(self).__name__


@dataclass(kw_only=True, slots=True)
class AgentChatStartEvent(Event):
    """A chat starts on an agent with the user's message ``user_msg``."""

    user_msg: str


@dataclass(kw_only=True, slots=True)
class AgentChatEndEvent(Event):
    """A chat ended: its ``response``, or the ``error`` it ended with."""

    response: Any = None
    error: str | None = None


@dataclass(kw_only=True, slots=True)
class AgentStepStartEvent(Event):
    """A runner starts a step. As LlamaIndex's ``AgentRunStepStartEvent``, ``input`` is the
    ``input`` argument given to ``run_step`` (None for every step of a chat) and ``step`` is
    the ``TaskStep`` that runs; the step's own input is ``step.input``."""

    task_id: str
    step_id: str
    input: str | None = None
    step: Any = None


@dataclass(kw_only=True, slots=True)
class AgentStepEndEvent(Event):
    """A runner's step ended: its ``output`` (the ``TaskStepOutput``), whether it was the
    task's last, or the ``error`` it raised."""

    task_id: str
    step_id: str
    output: Any = None  # the TaskStepOutput
    is_last: bool = False
    error: str | None = None


@dataclass(kw_only=True, slots=True)
class LLMCallStartEvent(Event):
    """An LLM call starts: its ``kind``, the model, the messages sent and the tools offered."""

    kind: str  # chat | stream_chat | complete | stream_complete
    model: str
    messages: list[Any] = field(default_factory=list)
    tools: list[dict[str, Any]] | None = None
    tool_choice: Any = None


@dataclass(kw_only=True, slots=True)
class LLMStreamChunkEvent(Event):
    """One streamed piece of an LLM reply: its new text only. Never the reply so far, which
    every listener keeping the events (a trace's collector) would hold once per chunk: memory
    growing with the square of the answer. The whole reply is on :class:`LLMCallEndEvent`."""

    delta: str | None = None
    span_told: ClassVar[bool] = True  # its LLM call's start and end events hold its span


@dataclass(kw_only=True, slots=True)
class LLMCallEndEvent(Event):
    """An LLM call ended: who answered, its ``response`` and usage, its simulated ``latency``,
    or the ``error`` it ended with."""

    kind: str
    model: str
    provider: str = "agentkit"
    """Who answered (:attr:`agentkit.llms.LLM.provider`)."""
    messages: list[Any] = field(default_factory=list)
    response: Any = None
    usage: Any = None
    latency: float = 0.0
    error: str | None = None


@dataclass(kw_only=True, slots=True)
class ToolCallStartEvent(Event):
    """A tool call starts: the tool, the call's id and its arguments."""

    tool_name: str
    tool_id: str | None = None
    arguments: dict[str, Any] = field(default_factory=dict)
    agent: str | None = None  # the agent of a multi-agent workflow that made the call


@dataclass(kw_only=True, slots=True)
class ToolCallEndEvent(Event):
    """A tool call ended: its ``output``, whether it failed, its simulated ``latency``."""

    tool_name: str
    tool_id: str | None = None
    arguments: dict[str, Any] = field(default_factory=dict)
    output: Any = None  # the ToolOutput
    is_error: bool = False
    latency: float = 0.0
    agent: str | None = None
    exception: BaseException | None = None
    """What the tool raised, when the call failed that way (the output holds its text)."""


@dataclass(kw_only=True, slots=True)
class AgentLimitEvent(Event):
    """An agent ended its task at one of its limits (``limit``, e.g. ``max_function_calls``,
    at ``value``) although its model still asked for more: the answer is whatever it had."""

    limit: str
    value: int


@dataclass(kw_only=True, slots=True)
class ToolsOfferedEvent(Event):
    """An agent step offers these tools (name, description, JSON-schema parameters of each),
    whether it tells the model in a request's ``tools`` or in its prompt's text."""

    tools: list[dict[str, Any]] = field(default_factory=list)


class Span(NamedTuple):
    """The span an event belongs to: its id and its parent's (None at the root). A named
    tuple rather than a frozen dataclass: built for every step, LLM call and tool call, and a
    frozen dataclass's ``__init__`` costs twice as much (two ``object.__setattr__`` calls)."""

    id: str
    parent_id: str | None


class EventFilter(dict[type, bool]):
    """Which event types a listener takes (:meth:`Dispatcher.listen`'s ``wants``): ``wanted``
    answers for an event class (its subclasses asked apart), once per class; the bus then looks
    the answer up as ``filter[type(event)]``, without a call. :meth:`clear` it when ``wanted``
    may answer otherwise (e.g. a handler registered for a class it refused)."""

    __slots__ = ("_wanted",)

    def __init__(self, wanted: Callable[[type], bool]) -> None:
        super().__init__()
        self._wanted = wanted

    @classmethod
    def of(cls, *event_types: type) -> EventFilter:
        """The filter taking ``event_types`` and their subclasses."""
        return cls(lambda kind: issubclass(kind, event_types))

    def __missing__(self, kind: type) -> bool:
        answer = self[kind] = bool(self._wanted(kind))
        return answer


_Listener = tuple[Handler, EventFilter | None]
_current_span: ContextVar[Span | None] = ContextVar("agentkit_span", default=None)
_scoped: ContextVar[tuple[_Listener, ...]] = ContextVar("agentkit_scoped_handlers", default=())
_new_tuple = tuple.__new__  # builds a Span without the named tuple's Python ``__new__``


def _child_span() -> Span:
    """A new child span of the current one (every step, LLM call and tool call opens one:
    a plain function, not a method chain)."""
    parent = _current_span.get()
    ids = _ids._current.get(_ids._default)  # current_ids(), inlined: one frame less
    return _new_tuple(Span, (f"span-{next(ids.span_numbers)}",
                             parent.id if parent is not None else None))


class _SpanScope:
    """The block of :attr:`Dispatcher.span` (a class: every step and call opens one, and a
    generator-based context manager costs several times as much)."""

    __slots__ = ("_token",)

    def __enter__(self) -> Span:
        parent = _current_span.get()  # _child_span's body, inlined: one frame less per span
        ids = _ids._current.get(_ids._default)  # current_ids(), inlined: one frame less
        span = _new_tuple(Span, (f"span-{next(ids.span_numbers)}",
                                 parent.id if parent is not None else None))
        self._token = _current_span.set(span)
        return span

    def __exit__(self, *exc_info: object) -> None:
        _current_span.reset(self._token)


_NOBODY: frozenset[type] = frozenset()


def _someone_listened() -> None:
    """From now on :attr:`Dispatcher.wants` asks the listeners (see there); scoped
    listeners are shared by every dispatcher, so it changes for all of them."""
    if Dispatcher.wants is not Dispatcher._wants:  # type: ignore[comparison-overlap]
        Dispatcher.wants = Dispatcher._wants  # type: ignore[assignment]


class Dispatcher:
    """Delivers events to process-wide and block-scoped handlers, in subscription order."""

    def __init__(self) -> None:
        self._handlers: list[Handler] = []

    def add_handler(self, handler: Handler) -> None:
        _someone_listened()
        self._handlers.append(handler)

    def remove_handler(self, handler: Handler) -> None:
        self._handlers.remove(handler)

    @contextmanager
    def listen(self, handler: Handler, wants: EventFilter | None = None) -> Iterator[Handler]:
        """Deliver events emitted in this block (and tasks it starts) to ``handler``: every
        event, or those of the types ``wants`` takes."""
        _someone_listened()
        token = _scoped.set((*_scoped.get(), (handler, wants)))
        try:
            yield handler
        finally:
            _scoped.reset(token)

    @property
    def active(self) -> bool:
        """Whether anyone listens (to some event types at least)."""
        return bool(self._handlers or _scoped.get())

    def _wants(self, event_type: type) -> bool:
        """:attr:`wants`, once anyone has listened."""
        if self._handlers:
            return True
        # a loop, not any(): no generator for every event built
        for _, wanted in _scoped.get():  # noqa: SIM110
            if wanted is None or wanted[event_type]:
                return True
        return False

    wants: Callable[[type], bool] = _NOBODY.__contains__
    """``dispatcher.wants(event_type)``: whether an event of ``event_type`` emitted here
    reaches anyone -- a producer builds one only then (an event of a type no listener takes,
    such as a streamed chunk that only a trace listens for, is not built). Until anyone in
    the process listens (:meth:`listen`, :meth:`add_handler` on any dispatcher) nobody can,
    and the answer is ``False`` from C, without a Python call per event a producer might
    build; from then on it is :meth:`_wants`'s, for every dispatcher."""

    def emit(self, event: Event) -> None:
        scoped = _scoped.get()
        if not (self._handlers or scoped):
            return
        event.time = _clock.get(_default_clock)._now  # now(), inlined: once per event
        if event.span_id is None:
            span = _current_span.get()
            if span is not None:
                event.span_id, event.parent_id = span.id, span.parent_id
        for handler in (*self._handlers,):  # a copy: a handler may remove itself
            handler(event)
        kind = type(event)
        for handler, wanted in scoped:
            if wanted is None or wanted[kind]:
                handler(event)

    new_span = staticmethod(_child_span)
    """``dispatcher.new_span()``: a child span of the current one, without making it current
    (for streams). The function itself: every LLM call opens one."""

    span = _SpanScope
    """``with dispatcher.span() as span:`` opens a child span of the current one; events
    emitted inside belong to it. (The scope's class itself, not a method returning one:
    every step, LLM call and tool call opens a span.)"""

    def current_span(self) -> Span | None:
        return _current_span.get()

    def resume(self, span: Span) -> AbstractContextManager[Span]:
        """Make ``span`` (opened earlier, e.g. an agent step) current again for a block: a
        producer that learns of a span's events later (the bridge learns of a step's tool
        calls from the next request) files them under it."""
        return _ResumedSpan(span)


class _ResumedSpan:
    """The block of :meth:`Dispatcher.resume`."""

    __slots__ = ("_span", "_token")

    def __init__(self, span: Span) -> None:
        self._span = span

    def __enter__(self) -> Span:
        self._token = _current_span.set(self._span)
        return self._span

    def __exit__(self, *exc_info: object) -> None:
        _current_span.reset(self._token)


dispatcher = Dispatcher()

