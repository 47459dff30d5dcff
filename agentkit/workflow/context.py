"""``Context``: the state of a workflow run that steps share and that a pause saves.

A context holds the store (``await ctx.store.get/set``, or the 0.12 spelling
``await ctx.get/set``: the same data; shared by the steps and kept across runs that reuse the
context), the events waiting for each step, the events a step was handling when the run
paused, ``collect_events`` buffers, ``wait_for_event`` waiters and the events written to the
stream but not read yet. ``to_dict()`` saves all of it as JSON-ready data and
``Context.from_dict(workflow, data)`` restores it; ``workflow.run(ctx=restored)`` then
resumes: every event that a step was handling is delivered to that step again, so the step
runs again from its start (as upstream: code before a ``wait_for_event`` runs twice).

A saved context is checked completely before anything of it is used (upstream trusts it):
it carries a SHA-256 digest of its content, so a context changed after it was saved is
refused; its shape, every type, the events in each step's queue (each one the step accepts),
the waiters' events and the store values the workflow declares types for
(``Workflow.context_store_schema``) are validated; and classes are restored only from the
workflow's own table (``Workflow.restorable_types``), never imported by the name in the data.
Any problem is one ``ContextSerdeError`` naming the path in the saved data.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import json
import warnings
from collections import deque
from collections.abc import Iterable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import ConfigDict, TypeAdapter, ValidationError

from agentkit.workflow.errors import ContextSerdeError, WorkflowRuntimeError, WorkflowTimeoutError
from agentkit.workflow.events import Event, HumanResponseEvent, StartEvent, StopEvent
from agentkit.workflow.serialize import at, decode, encode, type_path

if TYPE_CHECKING:
    from agentkit.workflow.decorators import StepSpec
    from agentkit.workflow.graph import WorkflowGraph
    from agentkit.workflow.runtime import Run
    from agentkit.workflow.workflow import Workflow

__all__ = ["Context", "ContextStore", "sealed", "check_seal", "stream_end"]

T = TypeVar("T", bound=Event)

_MISSING: Any = object()
_FORMAT = 1


@dataclass
class StepFrame:
    """The step invocation running in the current task, and what it emitted so far."""

    name: str
    ctx: Context
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
        raise _missing(key)

    def read(self, key: str) -> Any:
        """``await get(key)`` for sync code: the value under ``key``, ValueError when it is
        missing."""
        if key in self._data:
            return self._data[key]
        raise _missing(key)

    async def set(self, key: str, value: Any) -> None:
        """Store ``value`` under ``key``."""
        self._data[key] = value

    @property
    def data(self) -> dict[str, Any]:
        """The stored values themselves, for sync code: ``data.get(key, default)`` reads what
        ``await get(key, default)`` does (:meth:`read` what ``await get(key)`` does),
        ``data[key] = value`` stores (the agent loop's steps read and write a dozen keys each,
        where an await per key is a coroutine per key)."""
        return self._data

    def clear(self) -> None:
        """Forget every key."""
        self._data.clear()


def _missing(key: str) -> ValueError:
    return ValueError(f"Key '{key}' not found in the context store (pass default= to get a "
                      "fallback)")


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
        # fields and extras alike (upstream compared extras only: a requirement on a declared
        # field such as HumanResponseEvent.response never matched)
        return isinstance(event, self.event_type) and all(
            event.get(key, _MISSING) == value for key, value in self.requirements.items())

    def deliver(self, event: Event) -> None:
        self.events.append(event)
        wakeups, self.wakeups = self.wakeups, []
        for wakeup in wakeups:
            if not wakeup.done():
                wakeup.set_result(None)


stream_end: Any = object()
"""What ``EventStream.get()`` returns once the stream is closed and drained (a step may
write None itself, as upstream allows)."""


class EventStream:
    """What a run writes for its caller (events, or any object); ``get()`` gives
    ``stream_end`` once it is closed and drained."""

    def __init__(self, pending: Iterable[Any] = ()) -> None:
        self.items: deque[Any] = deque(pending)
        """The unread items, oldest first: a reader may pop what is there without a wait."""
        self._wakeups: list[asyncio.Future[None]] = []
        self._closed = False

    def put(self, event: Any) -> None:
        self.items.append(event)
        if self._wakeups:  # a reader waits (a streamed reply puts dozens with none waiting)
            self._wake()

    def close(self) -> None:
        """No more items will come: ``get()`` gives ``stream_end`` once the rest is read."""
        self._closed = True
        self._wake()

    def pending(self) -> list[Any]:
        return list(self.items)

    async def get(self) -> Any:
        while not self.items:
            if self._closed:
                return stream_end
            wakeup = asyncio.get_running_loop().create_future()
            self._wakeups.append(wakeup)
            await wakeup
        return self.items.popleft()

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
        self._held: list[Event] = []  # stepwise: emitted by the step, not handed out yet
        self._holding: list[Event] = []  # stepwise: what the last step emitted
        self._retval: Any = None  # the last run's result
        self._stream = EventStream()
        self._running = False  # a run started and has not ended (it may be paused)
        self._run: Run | None = None  # the live run, if any
        self.unread_in_stream: tuple[type, ...] = ()
        """Classes of stream events the caller reading the stream ignores, as it declares
        (the harness's chat adapter: a chat turn reads no ``AgentStream`` delta, no turn an
        agent's output or tool call); a step may skip writing such an event, and building
        one it would build only for the stream (:meth:`stream_reads`). Not saved with the
        context: the caller's, not the run's."""

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

    # ------------------------------------------------------------------ the store, 0.12 API
    async def get(self, key: str, default: Any = _MISSING) -> Any:
        """``await ctx.store.get(key, default=...)`` in LlamaIndex 0.12's spelling (same data)."""
        return await self.store.get(key, default)

    async def set(self, key: str, value: Any, make_private: bool = False) -> None:
        """``await ctx.store.set(key, value)`` in LlamaIndex 0.12's spelling (same data);
        ``make_private`` is ignored with a DeprecationWarning, as upstream."""
        if make_private:
            warnings.warn("`make_private` is deprecated and will be ignored", DeprecationWarning,
                          stacklevel=2)
        await self.store.set(key, value)

    def clear(self) -> None:
        """Forget everything in the store (the run's events and waiters stay)."""
        self.store.clear()

    @property
    def session(self) -> Context:
        """The context itself: upstream's backward-compatible alias (DeprecationWarning)."""
        warnings.warn("`session` is deprecated, please use the Context instance directly.",
                      DeprecationWarning, stacklevel=2)
        return self

    # ------------------------------------------------------------------ events
    def send_event(self, event: Event, step: str | None = None) -> None:
        """Deliver ``event`` to every step that accepts it and every matching
        ``wait_for_event`` (or only to ``step``). A StopEvent ends the run. An event nobody
        takes is an error, except a HumanResponseEvent: the caller may answer before the
        step asks, so it is kept for the first ``wait_for_event`` it matches.

        In a stepwise run an event a step sends is held, like the event it returns, and
        handed to the caller by ``handler.run_step()``; the caller delivers it (upstream
        delivered it at once *and* handed it out, so a driver loop delivered it twice)."""
        if not isinstance(event, Event):
            raise TypeError(f"send_event takes an Event, got {type(event).__name__}")
        if step is not None and not isinstance(event, StopEvent):
            self._check_step_accepts(step, event)
        if self._run is not None and self._run.stepwise and self._own_frame() is not None:
            self._hold(event)
            return
        if isinstance(event, StopEvent):
            if step is not None:
                raise WorkflowRuntimeError("StopEvent ends the run; it cannot be sent to a step")
            if self._run is None:
                raise WorkflowRuntimeError("send_event(StopEvent): no run is in progress")
            self._note_emitted(event)
            self._run.stop(event)
            return
        if step is not None:
            targets: tuple[StepSpec, ...] = (self._graph.steps[step],)
            waiters: list[_Waiter] = []
        else:
            graph = self._graph  # the routes of a known event type: the graph's own lookup
            targets = graph._accepting.get(type(event)) or graph.routes(event)
            waiters = ([w for w in self._waiters.values() if w.matches(event)]
                       if self._waiters else [])
            if not targets and not waiters:
                if not isinstance(event, HumanResponseEvent):
                    raise WorkflowRuntimeError(
                        f"No step accepts {type(event).__name__} and no wait_for_event is "
                        f"waiting for it (steps: {self._graph.describe_steps()})")
                self._unclaimed.append(event)
        frame = current_step.get()  # _note_emitted's work, inlined: an event a step sends
        if frame is not None and frame.ctx is self:
            frame.emitted.append(event)
        for spec in targets:
            self._queues[spec.name].append(event)
        for waiter in waiters:
            waiter.deliver(event)
        if self._run is not None:
            self._run.pump(targets)

    def _check_step_accepts(self, step: str, event: Event) -> None:
        spec = self._graph.steps.get(step)
        if spec is None:
            raise WorkflowRuntimeError(
                f"No step named '{step}' in {self._graph.workflow_name} "
                f"(steps: {self._graph.describe_steps()})")
        if not spec.accepts_event(event):
            accepted = ", ".join(t.__name__ for t in spec.accepts)
            raise WorkflowRuntimeError(f"Step '{step}' does not accept "
                                       f"{type(event).__name__} (it accepts {accepted})")

    def _own_frame(self) -> StepFrame | None:
        """The step of this context's run that the current task runs, if any (a nested
        workflow's steps and the caller's code have none)."""
        frame = current_step.get()
        return frame if frame is not None and frame.ctx is self else None

    def stream_reads(self, event_type: type) -> bool:
        """Whether the caller reads events of ``event_type`` from the stream (unless it said
        otherwise in ``unread_in_stream``, it reads everything)."""
        return event_type not in self.unread_in_stream

    def write_event_to_stream(self, event: Any) -> None:
        """Hand ``event`` to the caller, who reads it from ``handler.stream_events()``. As
        upstream, any object goes (an Event normally; a dict or None too); a context saved
        while it is unread keeps it only if ``to_dict`` can save it (JSON, a pydantic model,
        an object with ``to_dict``/``from_dict``)."""
        self._stream.put(event)

    def get_result(self) -> Any:
        """The result of the last run that ended with a StopEvent on this context (what
        ``await handler`` gave), None before."""
        return self._retval

    def get_holding_events(self) -> list[Event]:
        """Stepwise runs: a copy of the events the last ``handler.run_step()`` handed out
        (``[]`` before the first step, as upstream)."""
        return list(self._holding)

    def collect_events(self, event: Event, expected: list[type[T]],
                       buffer_id: str | None = None) -> list[T] | None:
        """Buffer ``event``; once one event of each ``expected`` type is buffered (matched by
        exact type, as upstream), return them in ``expected`` order, else None. The buffer is
        the calling step's own unless ``buffer_id`` names another."""
        if buffer_id is None:
            frame = self._own_frame()
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
        if self._run is not None and self._run.stepwise:
            # the caller is blocked in run_step() until this step returns: it could never answer
            raise WorkflowRuntimeError("Human-in-the-loop is not supported with stepwise "
                                       "execution (wait_for_event in a stepwise run)")
        wanted = dict(requirements or {})
        if waiter_id is None:
            frame = self._own_frame()
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

    def _hand_out(self, emitted: list[Event]) -> list[Event]:
        """Stepwise: the events a step emitted, now the caller's to deliver."""
        self._held.clear()
        self._holding = list(emitted)
        return list(emitted)

    def _hold(self, event: Event) -> None:
        """Stepwise: keep an event a step emitted for the caller (saved as delivered)."""
        self._note_emitted(event)
        self._held.append(event)

    def _note_emitted(self, event: Event) -> None:
        frame = self._own_frame()
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
        self._held.clear()
        self._holding = []

    # ------------------------------------------------------------------ saving
    def to_dict(self) -> dict[str, Any]:
        """Everything needed to resume this run later, as JSON-ready data (with a digest of
        its content: ``from_dict`` refuses data changed after it was saved)."""
        return sealed(self._content(self._held))

    def _content(self, held: Iterable[Event]) -> dict[str, Any]:
        """The saved context without its digest; ``held`` events (a stepwise step's output)
        are saved as delivered to the steps that accept them."""
        def events(items: Iterable[Event], where: str) -> list[Any]:
            return [encode(e, f"{where}[{i}]") for i, e in enumerate(items)]

        queues = {name: [*self._in_progress[name], *self._queues[name]]
                  for name in self._graph.steps}
        for event in held:
            for spec in self._graph.accepting(event):
                queues[spec.name].append(event)
        return {
            "format": _FORMAT,
            "workflow": self._workflow_name,
            "steps": list(self._graph.steps),
            "is_running": self._running,
            "store": {key: encode(value, f"store[{key!r}]")
                      for key, value in self.store._data.items()},
            "queues": {name: events(items, f"queue of step '{name}'")
                       for name, items in queues.items()},
            "buffers": {key: events(items, f"collect_events buffer {key!r}")
                        for key, items in self._buffers.items()},
            "waiters": {key: {"event_type": type_path(w.event_type),
                              "requirements": encode(w.requirements, f"waiter {key!r}"),
                              "announced": w.announced,
                              "events": events(w.events, f"waiter {key!r}")}
                        for key, w in self._waiters.items()},
            "unclaimed": events(self._unclaimed, "unclaimed"),
            "stream": encode(self._stream.pending(), "stream"),
        }

    @classmethod
    def from_dict(cls, workflow: Workflow, data: dict[str, Any]) -> Context:
        """Restore a context saved by ``to_dict`` for ``workflow`` (an instance of the
        workflow class that saved it); ``workflow.run(ctx=...)`` resumes it. Anything wrong
        with the data is a ContextSerdeError naming its path (see the module docstring)."""
        if not isinstance(data, dict) or data.get("format") != _FORMAT:
            raise ContextSerdeError(
                "Context.from_dict: not a saved context (expected the dict Context.to_dict() "
                f"returns, format {_FORMAT})")
        try:
            check_seal(data, "Context.from_dict", "context")
            return _Restorer(cls(workflow), workflow, data).restore()
        except RecursionError:  # decoding walks the saved values recursively
            raise ContextSerdeError("Context.from_dict: the saved context is nested too deeply "
                                    "to restore") from None


_SAVED_KEYS = ("format", "workflow", "steps", "is_running", "store", "queues", "buffers",
               "waiters", "unclaimed", "stream", "digest")
_WAITER_KEYS = ("event_type", "requirements", "announced", "events")
_LENIENT = ConfigDict(arbitrary_types_allowed=True)


@functools.lru_cache(maxsize=256)
def _cached_adapter(annotation: Any) -> TypeAdapter[Any]:
    return TypeAdapter(annotation, config=_LENIENT)


def _adapter(annotation: Any) -> TypeAdapter[Any]:
    """The validator of a store key's type, built once per type (building one is what
    restoring a context cost most: a schema generated per key on every restore)."""
    try:
        return _cached_adapter(annotation)
    except TypeError:  # an annotation that cannot be a key (unhashable): built each time
        return TypeAdapter(annotation, config=_LENIENT)


def _digest(content: dict[str, Any], who: str, what: str) -> str:
    try:
        text = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    except (TypeError, ValueError) as exc:
        raise ContextSerdeError(f"{who}: the saved {what} is not JSON data ({exc})") from None
    return "sha256:" + hashlib.sha256(text.encode("ascii")).hexdigest()


def sealed(content: dict[str, Any]) -> dict[str, Any]:
    """``content`` plus a ``digest`` of it (a SHA-256 of its canonical JSON)."""
    return {**content, "digest": _digest(content, "to_dict", "data")}


def check_seal(data: dict[str, Any], who: str, what: str) -> None:
    """Refuse ``data`` whose content does not match its digest (changed after saving).

    The digest catches corrupted and edited data; it is no signature: whoever can write the
    data can also recompute it, so every part is validated as well."""
    saved = data.get("digest")
    if not isinstance(saved, str):
        raise ContextSerdeError(f"{who}: at ['digest']: the saved {what} has no digest (save "
                                "it with to_dict())")
    content = {key: value for key, value in data.items() if key != "digest"}
    if _digest(content, who, what) != saved:
        raise ContextSerdeError(
            f"{who}: at ['digest']: the saved {what} was changed after it was saved (its "
            "content no longer matches its digest); restore the data to_dict() returned, "
            "unchanged")


class _Restorer:
    """Checks saved data part by part and fills a fresh context from it."""

    def __init__(self, ctx: Context, workflow: Workflow, data: dict[str, Any]) -> None:
        self.ctx = ctx
        self.workflow = workflow
        self.data = data
        self.restorable = workflow.restorable_types()

    def fail(self, path: str, problem: str) -> ContextSerdeError:
        return ContextSerdeError(f"Context.from_dict: at {path}: {problem}")

    def part(self, container: dict[str, Any], key: str, kind: type, path: str = "") -> Any:
        where = at(path, key)
        if key not in container:
            raise self.fail(where, "missing")
        value = container[key]
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise self.fail(where, f"must be a {kind.__name__}, got {type(value).__name__}")
        return value

    def events(self, items: Any, path: str, accepted: tuple[type[Event], ...] = (Event,),
               whose: str = "") -> list[Event]:
        if not isinstance(items, list):
            raise self.fail(path, f"must be a list, got {type(items).__name__}")
        restored = []
        for i, item in enumerate(items):
            event = decode(item, at(path, i), self.restorable)
            if not isinstance(event, accepted):
                wanted = " or ".join(t.__name__ for t in accepted)
                raise self.fail(at(path, i), f"{whose or 'must be'} {wanted}, got "
                                             f"{type(event).__name__}")
            restored.append(event)
        return restored

    def restore(self) -> Context:
        data, ctx, graph = self.data, self.ctx, self.ctx._graph
        unknown = sorted(set(data) - set(_SAVED_KEYS))
        if unknown:
            raise self.fail(at("", unknown[0]), "not part of a saved context")
        saved_name = self.part(data, "workflow", str)
        saved_steps = self.part(data, "steps", list)
        if saved_name != ctx._workflow_name or saved_steps != list(graph.steps):
            raise ContextSerdeError(
                f"Context.from_dict: the context was saved by workflow {saved_name} "
                f"(steps: {', '.join(map(str, saved_steps))}), not by {ctx._workflow_name} "
                f"(steps: {', '.join(graph.steps)}); restore it with the workflow that ran it")
        ctx._running = self.part(data, "is_running", bool)
        self.restore_store()
        queues = self.part(data, "queues", dict)
        for name, items in queues.items():
            spec = graph.steps.get(name)
            if spec is None:
                raise self.fail(at("['queues']", name), f"no step named {name!r} in "
                                                        f"{graph.workflow_name}")
            ctx._queues[name].extend(self.events(items, at("['queues']", name), spec.accepts,
                                                 whose=f"step '{name}' accepts"))
        for key, items in self.part(data, "buffers", dict).items():
            ctx._buffers[key] = self.events(items, at("['buffers']", key))
        for key, saved in self.part(data, "waiters", dict).items():
            ctx._waiters[key] = self.waiter(saved, at("['waiters']", key))
        ctx._unclaimed = self.events(self.part(data, "unclaimed", list), "['unclaimed']",
                                     (HumanResponseEvent,))
        ctx._stream = EventStream(decode(self.part(data, "stream", list), "['stream']",
                                         self.restorable))
        if not ctx._running:
            for key in ("queues", "buffers", "waiters", "unclaimed"):
                if any(data[key].values()) if isinstance(data[key], dict) else data[key]:
                    raise self.fail(at("", key), "a context saved with no run in progress "
                                                 "(is_running false) holds no run state")
        return ctx

    def restore_store(self) -> None:
        schema = self.workflow.context_store_schema()
        for key, saved in self.part(self.data, "store", dict).items():
            path = at("['store']", key)
            value = decode(saved, path, self.restorable)
            if key in schema:
                try:
                    _adapter(schema[key]).validate_python(value, strict=True)
                except ValidationError as exc:
                    first = exc.errors()[0]
                    where = "".join(f"[{p!r}]" for p in first["loc"])
                    raise self.fail(path + where, f"{first['msg']} (the workflow keeps a "
                                                  f"{_show(schema[key])} here)") from None
            self.ctx.store._data[key] = value

    def waiter(self, saved: Any, path: str) -> _Waiter:
        if not isinstance(saved, dict):
            raise self.fail(path, f"must be a dict, got {type(saved).__name__}")
        unknown = sorted(set(saved) - set(_WAITER_KEYS))
        if unknown:
            raise self.fail(at(path, unknown[0]), "not part of a saved waiter")
        name = self.part(saved, "event_type", str, path)
        event_type = self.restorable.get(name)
        if not (isinstance(event_type, type) and issubclass(event_type, Event)):
            raise self.fail(at(path, "event_type"), f"{name} is not an event type this "
                                                    "workflow restores")
        requirements = decode(self.part(saved, "requirements", dict, path),
                              at(path, "requirements"), self.restorable)
        waiter = _Waiter(event_type, requirements,
                         announced=self.part(saved, "announced", bool, path))
        events = self.events(self.part(saved, "events", list, path), at(path, "events"),
                             (event_type,))
        for i, event in enumerate(events):
            if not waiter.matches(event):
                raise self.fail(at(at(path, "events"), i), "does not meet the waiter's "
                                                           "requirements")
        waiter.events = events
        return waiter


def _show(annotation: Any) -> str:
    return annotation.__name__ if isinstance(annotation, type) else repr(annotation)
