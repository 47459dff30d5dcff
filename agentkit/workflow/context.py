"""``Context``: the state of a workflow run that steps share and that a pause saves.

A context holds the store (``await ctx.store.get/set``, shared by the steps and kept across
runs that reuse the context), the events waiting for each step, the events a step was
handling when the run paused, ``collect_events`` buffers, ``wait_for_event`` waiters and the
events written to the stream but not read yet. ``to_dict()`` saves all of it as JSON-ready
data and ``Context.from_dict(workflow, data)`` restores it; ``workflow.run(ctx=restored)``
then resumes: every event that a step was handling is delivered to that step again, so the
step runs again from its start (as upstream: code before a ``wait_for_event`` runs twice).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Iterable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from agentkit.workflow.errors import ContextSerdeError, WorkflowRuntimeError, WorkflowTimeoutError
from agentkit.workflow.events import Event, HumanResponseEvent, StartEvent, StopEvent
from agentkit.workflow.serialize import decode, encode, import_type, type_path

if TYPE_CHECKING:
    from agentkit.workflow.graph import WorkflowGraph
    from agentkit.workflow.runtime import Run
    from agentkit.workflow.workflow import Workflow

__all__ = ["Context", "ContextStore"]

T = TypeVar("T", bound=Event)

_MISSING: Any = object()
_FORMAT = 1


@dataclass
class StepFrame:
    """The step invocation running in the current task, and what it emitted so far."""

    name: str
    emitted: list[Event] = field(default_factory=list)


current_step: ContextVar[StepFrame | None] = ContextVar("agentkit_workflow_step", default=None)


class ContextStore:
    """Key-value state shared by the steps of a run (and by runs that reuse the context)."""

    def __init__(self) -> None:
        self._data: dict[str, Any] = {}

    async def get(self, key: str, default: Any = _MISSING) -> Any:
        """The value under ``key``; ``default`` if given, else ValueError, when it is missing."""
        if key in self._data:
            return self._data[key]
        if default is not _MISSING:
            return default
        raise ValueError(f"Key '{key}' not found in the context store (pass default= to get a "
                         "fallback)")

    async def set(self, key: str, value: Any) -> None:
        """Store ``value`` under ``key``."""
        self._data[key] = value


@dataclass
class _Waiter:
    """A ``wait_for_event`` key: what it waits for, what arrived, who is waiting on it."""

    event_type: type[Event]
    requirements: dict[str, Any]
    announced: bool = False  # its waiter_event went to the stream already
    events: list[Event] = field(default_factory=list)
    awaiting: int = 0  # coroutines waiting on this key now (not saved)
    wakeups: list[asyncio.Future[None]] = field(default_factory=list)

    def matches(self, event: Event) -> bool:
        return isinstance(event, self.event_type) and all(
            event.get(key, _MISSING) == value for key, value in self.requirements.items())

    def deliver(self, event: Event) -> None:
        self.events.append(event)
        wakeups, self.wakeups = self.wakeups, []
        for wakeup in wakeups:
            if not wakeup.done():
                wakeup.set_result(None)


class EventStream:
    """The events a run writes for its caller; ``get()`` gives None once it is closed and
    drained, or raises the run's error."""

    def __init__(self, pending: Iterable[Event] = ()) -> None:
        self._items: deque[Event] = deque(pending)
        self._wakeups: list[asyncio.Future[None]] = []
        self._closed = False
        self._error: BaseException | None = None

    def put(self, event: Event) -> None:
        self._items.append(event)
        self._wake()

    def close(self, error: BaseException | None = None) -> None:
        self._closed, self._error = True, error
        self._wake()

    def pending(self) -> list[Event]:
        return list(self._items)

    async def get(self) -> Event | None:
        while not self._items:
            if self._closed:
                if self._error is not None:
                    raise self._error
                return None
            wakeup = asyncio.get_running_loop().create_future()
            self._wakeups.append(wakeup)
            await wakeup
        return self._items.popleft()

    def _wake(self) -> None:
        wakeups, self._wakeups = self._wakeups, []
        for wakeup in wakeups:
            if not wakeup.done():
                wakeup.set_result(None)


class Context:
    """The shared, saveable state of a workflow run (see the module docstring)."""

    def __init__(self, workflow: Workflow) -> None:
        self._workflow_name = type_path(type(workflow))
        self._graph: WorkflowGraph = workflow.graph
        self.store = ContextStore()
        self._lock: asyncio.Lock | None = None
        self._queues: dict[str, deque[Event]] = {name: deque() for name in self._graph.steps}
        self._in_progress: dict[str, list[Event]] = {name: [] for name in self._graph.steps}
        self._buffers: dict[str, list[Event]] = {}
        self._waiters: dict[str, _Waiter] = {}
        self._unclaimed: list[Event] = []  # caller answers no waiter has matched yet
        self._stream = EventStream()
        self._running = False  # a run started and has not ended (it may be paused)
        self._run: Run | None = None  # the live run, if any

    @property
    def is_running(self) -> bool:
        """True from a run's start to its end, including while it is paused."""
        return self._running

    @property
    def lock(self) -> asyncio.Lock:
        """A lock for steps that read-modify-write the store concurrently."""
        if self._lock is None:
            self._lock = asyncio.Lock()
        return self._lock

    # ------------------------------------------------------------------ events
    def send_event(self, event: Event, step: str | None = None) -> None:
        """Deliver ``event`` to every step that accepts it and every matching
        ``wait_for_event`` (or only to ``step``). A StopEvent ends the run. An event nobody
        takes is an error, except a HumanResponseEvent: the caller may answer before the
        step asks, so it is kept for the first ``wait_for_event`` it matches."""
        if not isinstance(event, Event):
            raise TypeError(f"send_event takes an Event, got {type(event).__name__}")
        if isinstance(event, StopEvent):
            if step is not None:
                raise WorkflowRuntimeError("StopEvent ends the run; it cannot be sent to a step")
            if self._run is None:
                raise WorkflowRuntimeError("send_event(StopEvent): no run is in progress")
            self._note_emitted(event)
            self._run.stop(event)
            return
        if step is not None:
            spec = self._graph.steps.get(step)
            if spec is None:
                raise WorkflowRuntimeError(
                    f"No step named '{step}' in {self._graph.workflow_name} "
                    f"(steps: {self._graph.describe_steps()})")
            if not spec.accepts_event(event):
                accepted = ", ".join(t.__name__ for t in spec.accepts)
                raise WorkflowRuntimeError(f"Step '{step}' does not accept "
                                           f"{type(event).__name__} (it accepts {accepted})")
            targets, waiters = [spec.name], []
        else:
            targets = [spec.name for spec in self._graph.accepting(event)]
            waiters = [w for w in self._waiters.values() if w.matches(event)]
            if not targets and not waiters:
                if not isinstance(event, HumanResponseEvent):
                    raise WorkflowRuntimeError(
                        f"No step accepts {type(event).__name__} and no wait_for_event is "
                        f"waiting for it (steps: {self._graph.describe_steps()})")
                self._unclaimed.append(event)
        self._note_emitted(event)
        for name in targets:
            self._queues[name].append(event)
        for waiter in waiters:
            waiter.deliver(event)
        if self._run is not None:
            self._run.pump()

    def write_event_to_stream(self, event: Event) -> None:
        """Hand ``event`` to the caller, who reads it from ``handler.stream_events()``."""
        if not isinstance(event, Event):
            raise TypeError(f"write_event_to_stream takes an Event, got {type(event).__name__}")
        self._stream.put(event)

    def collect_events(self, event: Event, expected: list[type[T]],
                       buffer_id: str | None = None) -> list[T] | None:
        """Buffer ``event``; once one event of each ``expected`` type is buffered (matched by
        exact type, as upstream), return them in ``expected`` order, else None. The buffer is
        the calling step's own unless ``buffer_id`` names another."""
        if buffer_id is None:
            frame = current_step.get()
            buffer_id = frame.name if frame else ":".join(type_path(t) for t in expected)
        buffer = self._buffers.setdefault(buffer_id, [])
        buffer.append(event)
        picks: list[int] = []
        for wanted in expected:
            index = next((i for i, e in enumerate(buffer) if i not in picks and type(e) is wanted),
                         None)
            if index is None:
                return None
            picks.append(index)
        collected: list[Any] = [buffer[i] for i in picks]  # each of its `expected` type
        rest = [e for i, e in enumerate(buffer) if i not in picks]
        if rest:
            self._buffers[buffer_id] = rest
        else:
            del self._buffers[buffer_id]
        return collected

    async def wait_for_event(self, event_type: type[T], waiter_event: Event | None = None,
                             waiter_id: str | None = None,
                             requirements: dict[str, Any] | None = None,
                             timeout: float | None = None) -> T:  # noqa: ASYNC109 (upstream's API)
        """Wait for an event of ``event_type`` whose fields equal ``requirements``.

        ``waiter_event`` (typically an InputRequiredEvent) goes to the stream once per
        waiter key, so a resumed step that waits again does not ask twice. The key is
        ``waiter_id`` (default: step, event type and requirements); calls sharing a key
        share one request and take its answers one each, so parallel calls that each need
        their own answer pass distinct ids or requirements. ``timeout`` is in (virtual)
        seconds; by default the workflow's timeout bounds the wait.
        """
        if not (isinstance(event_type, type) and issubclass(event_type, Event)):
            raise TypeError(f"wait_for_event waits for an Event type, got {event_type!r}")
        wanted = dict(requirements or {})
        if waiter_id is None:
            frame = current_step.get()
            waiter_id = (f"{frame.name if frame else '-'}:{type_path(event_type)}:"
                         f"{sorted(wanted.items())!r}")
        waiter = self._waiters.get(waiter_id)
        if waiter is None:
            waiter = self._waiters[waiter_id] = _Waiter(event_type, wanted)
            claimed = next((e for e in self._unclaimed if waiter.matches(e)), None)
            if claimed is not None:
                self._unclaimed.remove(claimed)
                waiter.deliver(claimed)
        if waiter_event is not None and not waiter.announced:
            waiter.announced = True
            self.write_event_to_stream(waiter_event)
        waiter.awaiting += 1
        try:
            async with asyncio.timeout(timeout):
                while not waiter.events:
                    wakeup = asyncio.get_running_loop().create_future()
                    waiter.wakeups.append(wakeup)
                    await wakeup
        except TimeoutError:
            self._leave(waiter_id, waiter)
            raise WorkflowTimeoutError(f"wait_for_event({event_type.__name__}) got no event "
                                       f"within {timeout} seconds") from None
        except asyncio.CancelledError:  # paused or ended: a resume waits on this key again
            waiter.awaiting -= 1
            raise
        event = waiter.events.pop(0)
        self._leave(waiter_id, waiter)
        assert isinstance(event, event_type)
        return event

    def _leave(self, waiter_id: str, waiter: _Waiter) -> None:
        """The last coroutine waiting on a key is done with it: drop the key, keeping any
        events it still holds for a later waiter."""
        waiter.awaiting -= 1
        if waiter.awaiting == 0:
            del self._waiters[waiter_id]
            self._unclaimed.extend(waiter.events)

    def _note_emitted(self, event: Event) -> None:
        frame = current_step.get()
        if frame is not None:
            frame.emitted.append(event)

    # ------------------------------------------------------------------ run lifecycle
    def _begin(self, run: Run, start_event: StartEvent | None) -> bool:
        """Attach ``run``; resume a paused run, or start a new one with ``start_event``.
        Returns True when resuming."""
        self._run = run
        self._stream = EventStream(self._stream.pending())
        if self._running:
            for name, events in self._in_progress.items():
                self._queues[name].extendleft(reversed(events))
                events.clear()
            return True
        assert start_event is not None
        self._running = True
        for spec in self._graph.accepting(start_event):
            self._queues[spec.name].append(start_event)
        return False

    def _end(self, *, paused: bool) -> None:
        """Detach the run; a finished run leaves only the store behind."""
        self._run = None
        if paused:
            return
        self._running = False
        for queue in self._queues.values():
            queue.clear()
        for events in self._in_progress.values():
            events.clear()
        self._buffers.clear()
        self._waiters.clear()
        self._unclaimed.clear()

    # ------------------------------------------------------------------ saving
    def to_dict(self) -> dict[str, Any]:
        """Everything needed to resume this run later, as JSON-ready data."""
        def events(items: Iterable[Event], where: str) -> list[Any]:
            return [encode(e, f"{where}[{i}]") for i, e in enumerate(items)]

        return {
            "format": _FORMAT,
            "workflow": self._workflow_name,
            "steps": list(self._graph.steps),
            "is_running": self._running,
            "store": {key: encode(value, f"store[{key!r}]")
                      for key, value in self.store._data.items()},
            "queues": {name: events([*self._in_progress[name], *self._queues[name]],
                                    f"queue of step '{name}'")
                       for name in self._graph.steps},
            "buffers": {key: events(items, f"collect_events buffer {key!r}")
                        for key, items in self._buffers.items()},
            "waiters": {key: {"event_type": type_path(w.event_type),
                              "requirements": encode(w.requirements, f"waiter {key!r}"),
                              "announced": w.announced,
                              "events": events(w.events, f"waiter {key!r}")}
                        for key, w in self._waiters.items()},
            "unclaimed": events(self._unclaimed, "unclaimed"),
            "stream": events(self._stream.pending(), "stream"),
        }

    @classmethod
    def from_dict(cls, workflow: Workflow, data: dict[str, Any]) -> Context:
        """Restore a context saved by ``to_dict`` for ``workflow`` (the workflow class that
        saved it); ``workflow.run(ctx=...)`` resumes it."""
        if not isinstance(data, dict) or data.get("format") != _FORMAT:
            raise ContextSerdeError(
                "Context.from_dict: not a saved context (expected the dict Context.to_dict() "
                f"returns, format {_FORMAT})")
        ctx = cls(workflow)
        saved_steps = _require(data, "steps", list)
        if data.get("workflow") != ctx._workflow_name or saved_steps != list(ctx._graph.steps):
            raise ContextSerdeError(
                f"Context.from_dict: the context was saved by workflow {data.get('workflow')} "
                f"(steps: {', '.join(map(str, saved_steps))}), not by {ctx._workflow_name} "
                f"(steps: {', '.join(ctx._graph.steps)}); restore it with the workflow that "
                "ran it")
        known = ctx._graph.event_types()

        def resolve(path: str, where: str) -> type:
            return known.get(path) or import_type(path, where)

        def events(items: Any, where: str) -> list[Event]:
            if not isinstance(items, list):
                raise ContextSerdeError(f"Context.from_dict: {where} must be a list")
            restored = [decode(item, f"{where}[{i}]", resolve) for i, item in enumerate(items)]
            for i, event in enumerate(restored):
                if not isinstance(event, Event):
                    raise ContextSerdeError(f"Context.from_dict: {where}[{i}] is not an Event")
            return restored

        ctx._running = bool(_require(data, "is_running", bool))
        for key, value in _require(data, "store", dict).items():
            ctx.store._data[key] = decode(value, f"store[{key!r}]", resolve)
        queues = _require(data, "queues", dict)
        for name in ctx._graph.steps:
            ctx._queues[name].extend(events(queues.get(name, []), f"queue of step '{name}'"))
        for key, items in _require(data, "buffers", dict).items():
            ctx._buffers[key] = events(items, f"collect_events buffer {key!r}")
        for key, saved in _require(data, "waiters", dict).items():
            where = f"waiter {key!r}"
            if not isinstance(saved, dict):
                raise ContextSerdeError(f"Context.from_dict: {where} must be a dict")
            event_type = resolve(_require(saved, "event_type", str), where)
            if not issubclass(event_type, Event):
                raise ContextSerdeError(f"Context.from_dict: {where} waits for a non-Event type")
            ctx._waiters[key] = _Waiter(
                event_type, decode(_require(saved, "requirements", dict), where, resolve),
                announced=bool(saved.get("announced")), events=events(saved.get("events", []),
                                                                      where))
        ctx._unclaimed = events(_require(data, "unclaimed", list), "unclaimed")
        ctx._stream = EventStream(events(_require(data, "stream", list), "stream"))
        return ctx


def _require(data: dict[str, Any], key: str, kind: type) -> Any:
    if key not in data:
        raise ContextSerdeError(f"Context.from_dict: the saved context has no `{key}`")
    value = data[key]
    if not isinstance(value, kind):
        raise ContextSerdeError(f"Context.from_dict: `{key}` must be a {kind.__name__}, got "
                                f"{type(value).__name__}")
    return value
