"""Virtual time: simulated latency that costs no wall-clock time.

A :class:`VirtualClock` holds the simulated time of a run. Async code runs on a
:class:`VirtualTimeLoop`, an asyncio loop whose ``time()`` is the virtual clock and which,
when every task is waiting on a timer, jumps straight to the next timer. Concurrent simulated
calls therefore overlap exactly as they would in real time, and a run reports simulated wall
time (clock delta) and serial time (sum of every simulated latency).

Two kinds of waiting exist and are kept apart:

* :func:`asleep` / :func:`sleep` is *simulated latency* (mock LLM calls, mock tools). It never
  sleeps for real: on a virtual loop it is a timer the loop jumps over; on any other loop (or
  in sync code) it advances the clock directly. On another loop concurrent calls cannot
  overlap, so the clock overstates wall time: that latency is counted as *unmodelled*
  (:attr:`Stopwatch.warnings`, a trace's ``warnings``) and an
  :class:`UnmodelledLatencyWarning` is issued. :func:`run` runs a coroutine on a fresh
  virtual loop (``asyncio.run`` for tests); the pytest plugin's ``agentkit_virtual_time``
  marker runs an ``async def`` test that way.
* :func:`wait` is a *real wait* (e.g. retry back-off). It really waits, except inside a
  :func:`simulation` (the harness, tests), where it is virtual so tests skip it -- unless
  :func:`real_time` (live recording) says otherwise. Outside a simulation the sync API still
  runs on a virtual-time loop, so whether a wait is real is decided by the simulation, never
  by the loop. Real I/O on a virtual loop (a live model) also takes real time, and the clock
  advances by the time it took, so a live call's latency shows up in the trace.

The sync API of agentkit is derived from the async one through :func:`run_sync`.
"""

from __future__ import annotations

import contextvars
import time as _time
import warnings
from collections.abc import Awaitable, Coroutine, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypeVar

from agentkit.core.ids import IdSource
from agentkit.core.ids import _current as _ids
from agentkit.core.lazy import lazy_names

if TYPE_CHECKING:
    from agentkit.core._simloop import VirtualTimeLoop

__all__ = [
    "MAX_LATENCY",
    "UnmodelledLatencyWarning",
    "VirtualClock",
    "VirtualTimeLoop",
    "Stopwatch",
    "current_clock",
    "use_clock",
    "now",
    "sleep",
    "asleep",
    "run_sync",
    "run",
    "real_time",
    "wait",
    "simulated_wait",
    "in_simulation",
    "simulation",
    "Simulation",
]

T = TypeVar("T")


class UnmodelledLatencyWarning(RuntimeWarning):
    """Simulated latency ran on an event loop without virtual time, where concurrent calls
    cannot overlap (see the module docstring)."""


def _unmodelled_message(seconds: float) -> str:
    """What to tell a user whose run had ``seconds`` of latency without the overlap model."""
    return (f"{seconds:g} s of simulated latency ran on an event loop without virtual time "
            "(asyncio.run, pytest-asyncio), where concurrent calls cannot overlap: wall time "
            "counts them one after another. Run async code with agentkit.core.sim.run(...) or "
            "mark the test @pytest.mark.agentkit_virtual_time.")


class VirtualClock:
    """Simulated time in seconds, starting at ``start``; it only moves when told to."""

    def __init__(self, start: float = 0.0) -> None:
        self._now = float(start)
        self.serial = 0.0  # sum of every simulated latency slept on this clock
        self.unmodelled = 0.0  # the part of it that ran on a loop that cannot overlap calls

    def now(self) -> float:
        return self._now

    def count_latency(self, seconds: float) -> None:
        """Count time that already passed (e.g. a live call's real I/O) as latency."""
        _check_latency(seconds)
        self.serial += seconds

    def advance(self, seconds: float) -> None:
        """Move time forward without counting it as latency."""
        if seconds < 0:
            raise ValueError(f"cannot move the clock backwards ({seconds} s)")
        self._now += seconds

    def sleep(self, seconds: float) -> None:
        """Simulated latency in sync code: the clock advances at once."""
        _check_latency(seconds)
        self.serial += seconds
        self._now += seconds

    async def asleep(self, seconds: float) -> None:
        """Simulated latency in async code (see the module docstring)."""
        on = _loop()  # the event-loop half: asyncio and the virtual loop
        asyncio, VirtualTimeLoop = on.asyncio, on.VirtualTimeLoop

        _check_latency(seconds)
        self.serial += seconds
        loop = asyncio.get_running_loop()
        if isinstance(loop, VirtualTimeLoop) and loop.clock is self:
            await asyncio.sleep(seconds)
        else:
            self._now += seconds
            if seconds:
                self.unmodelled += seconds
                warnings.warn(UnmodelledLatencyWarning(_unmodelled_message(seconds)),
                              stacklevel=2)
            await asyncio.sleep(0)

    def __repr__(self) -> str:
        return f"VirtualClock(now={self._now!r}, serial={self.serial!r})"


#: The longest simulated latency (or real wait) one call may take: a day. Longer is a typo in
#: practice, and beyond ~1e8 s a virtual timer could not be told apart from the time before it.
MAX_LATENCY = 86_400.0


def _check_latency(seconds: float) -> None:
    if not 0 <= seconds <= MAX_LATENCY:  # also rejects NaN and infinity
        raise ValueError(f"simulated latency must be between 0 and {MAX_LATENCY:g} seconds, got "
                         f"{seconds!r}")


_default_clock = VirtualClock()
_clock: contextvars.ContextVar[VirtualClock] = contextvars.ContextVar("agentkit_clock")
_real_time: contextvars.ContextVar[bool] = contextvars.ContextVar("agentkit_real_time", default=False)
_simulated: contextvars.ContextVar[bool] = contextvars.ContextVar("agentkit_simulated", default=False)


def current_clock() -> VirtualClock:
    return _clock.get(_default_clock)


@contextmanager
def use_clock(clock: VirtualClock | None = None) -> Iterator[VirtualClock]:
    """Run a block on ``clock`` (a fresh one by default)."""
    clock = clock or VirtualClock()
    token = _clock.set(clock)
    try:
        yield clock
    finally:
        _clock.reset(token)


def now() -> float:
    # current_clock().now(), without its two calls: events read the time on every emit
    return _clock.get(_default_clock)._now


def sleep(seconds: float) -> None:
    current_clock().sleep(seconds)


async def asleep(seconds: float) -> None:
    await current_clock().asleep(seconds)


@dataclass
class Stopwatch:
    """Simulated wall and serial time spent since it was started."""

    clock: VirtualClock
    started_at: float
    serial_at: float
    unmodelled_at: float = 0.0

    @classmethod
    def start(cls, clock: VirtualClock | None = None) -> Stopwatch:
        clock = clock or current_clock()
        return cls(clock, clock.now(), clock.serial, clock.unmodelled)

    @property
    def wall(self) -> float:
        return self.clock.now() - self.started_at

    @property
    def serial(self) -> float:
        return self.clock.serial - self.serial_at

    @property
    def unmodelled(self) -> float:
        """Simulated latency that ran where calls cannot overlap (so ``wall`` overstates)."""
        return self.clock.unmodelled - self.unmodelled_at

    @property
    def warnings(self) -> list[str]:
        """What makes ``wall`` untrustworthy, for a report or a trace (empty: nothing)."""
        unmodelled = self.unmodelled
        return [_unmodelled_message(unmodelled)] if unmodelled else []


_loop_module: ModuleType | None = None


def _loop() -> ModuleType:
    """:mod:`agentkit.core._simloop` (which holds asyncio), imported on the first call that
    needs an event loop; then a global's lookup (an import statement would cost microseconds
    on every simulated sleep)."""
    global _loop_module
    if _loop_module is None:
        from agentkit.core import _simloop

        _loop_module = _simloop
    return _loop_module


def run_sync(awaitable: Awaitable[T]) -> T:
    """Run ``awaitable`` to completion from sync code and return its result.

    Uses this thread's virtual-time loop, which lives on between calls (an async generator
    driven chunk by chunk stays on it) and is shut down at exit the way ``asyncio.run`` shuts
    down its own. Called from inside a running loop, it runs the awaitable on a helper thread
    and blocks until done.
    """
    result: T = (_loop_module or _loop()).run_sync(awaitable)  # _loop() called once
    return result


def run(main: Coroutine[Any, Any, T], *, clock: VirtualClock | None = None) -> T:
    """Run coroutine ``main`` on a fresh virtual-time loop and return its result, like
    ``asyncio.run`` (the loop is closed afterwards). Use it instead of ``asyncio.run`` in
    tests so that concurrent simulated calls overlap. The loop runs on ``clock`` (default:
    the current clock), which is also the current clock inside ``main``."""
    result: T = _loop().run(main, clock=clock)
    return result


@contextmanager
def real_time() -> Iterator[None]:
    """Make :func:`wait` really wait in this block (live recording: retry back-off against a
    real server must not be skipped). Simulated latency stays simulated."""
    token = _real_time.set(True)
    try:
        yield
    finally:
        _real_time.reset(token)


def in_simulation() -> bool:
    """Whether a :func:`simulation` is active here (and :func:`real_time` is not)."""
    return _simulated.get() and not _real_time.get()


async def wait(seconds: float) -> None:
    """A *real* wait, such as retry back-off: on the wall clock, except inside a
    :func:`simulation` without :func:`real_time`, where only the virtual clock moves. It is not
    latency, so it does not count as serial time."""
    if not 0 <= seconds <= MAX_LATENCY:  # also rejects NaN and infinity
        raise ValueError(f"cannot wait {seconds} s (a wait is between 0 and {MAX_LATENCY:g} s)")
    on = _loop()  # the event-loop half: asyncio and the virtual loop
    asyncio, VirtualTimeLoop = on.asyncio, on.VirtualTimeLoop

    loop = asyncio.get_running_loop()
    if in_simulation():
        await simulated_wait(seconds)
    elif isinstance(loop, VirtualTimeLoop):
        # the virtual loop would jump over a timer: wait on a thread, for real
        await loop.run_in_executor(None, _time.sleep, seconds)
    else:
        await asyncio.sleep(seconds)


async def simulated_wait(seconds: float) -> None:
    """A wait that is never real, wherever it runs: the virtual clock moves (a timer a virtual
    loop jumps over), and it is not latency, so it does not count as serial time. A double's
    retry back-off: its server is simulated, so is the wait for it."""
    if not 0 <= seconds <= MAX_LATENCY:
        raise ValueError(f"cannot wait {seconds} s (a wait is between 0 and {MAX_LATENCY:g} s)")
    on = _loop()  # the event-loop half: asyncio and the virtual loop
    asyncio, VirtualTimeLoop = on.asyncio, on.VirtualTimeLoop

    if isinstance(asyncio.get_running_loop(), VirtualTimeLoop):
        await asyncio.sleep(seconds)  # the loop jumps over it
    else:
        current_clock().advance(seconds)
        await asyncio.sleep(0)


@dataclass
class Simulation:
    """What :func:`simulation` sets up: its virtual clock and its seeded id source."""

    clock: VirtualClock
    ids: IdSource


@contextmanager
def simulation(seed: int | str = 0, *, start: float = 0.0) -> Iterator[Simulation]:
    """A deterministic world: a fresh virtual clock and an id source seeded with ``seed``; real
    waits (:func:`wait`) inside it are virtual."""
    clock, ids = VirtualClock(start), IdSource(seed)
    # use_clock and use_ids, without their two context managers' layers (every run opens one)
    simulated, clocked, sourced = _simulated.set(True), _clock.set(clock), _ids.set(ids)
    try:
        yield Simulation(clock, ids)
    finally:
        _ids.reset(sourced)
        _clock.reset(clocked)
        _simulated.reset(simulated)


__getattr__, __dir__ = lazy_names(__name__, {"VirtualTimeLoop": "agentkit.core._simloop",
                                             "THREAD_WAIT": "agentkit.core._simloop"})
