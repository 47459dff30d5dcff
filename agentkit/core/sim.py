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

import asyncio
import atexit
import contextvars
import math
import selectors
import threading
import time as _time
import warnings
import weakref
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar, TypeVarTuple

from agentkit.core.ids import IdSource, use_ids

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
_Ts = TypeVarTuple("_Ts")


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


def _whole_ms(seconds: float) -> float:
    """Real time rounded up to whole milliseconds: recorded latencies stay on a coarse grid,
    so a replay that sleeps them lands on the same clock values as the recording did."""
    return math.ceil(seconds * 1000) / 1000


class _VirtualSelector(selectors.DefaultSelector):
    """Selector that turns 'wait for the next timer' into a jump of the virtual clock.

    Real I/O still works: while sockets other than the loop's self-pipe are registered it
    waits for real and advances the clock by the real time waited (live recording).

    A timer set under another clock (a task an earlier run left pending on this thread's
    loop, such as a never-awaited workflow with its timeout) is no reason to jump: its time is
    that clock's, not this run's. The loop only jumps to timers of its current clock; the others
    still fire once the current clock passes their time, without moving it.

    Nor is a timer while work the loop handed to a thread (``run_in_executor``,
    ``asyncio.to_thread``: a framework's sync memory or tool) is still running: that work's
    end is what comes next, so the loop waits for it for real, the clock standing still (up to
    :data:`THREAD_WAIT` real seconds at a time; a thread still busy then -- waiting on a timer
    itself -- lets the clock jump). Otherwise a pending timeout would be jumped to, and a wait
    of a workflow's for an event (2000 s by default) passed, on every call of a thread.
    """

    def __init__(self, loop_ref: list[VirtualTimeLoop]) -> None:
        super().__init__()
        self._loop_ref = loop_ref

    def select(self, timeout: float | None = None) -> list[Any]:
        # real sockets besides the self-pipe (the map's own table: get_map() and its len()
        # are two calls more on every loop iteration)
        real_io = len(self._fd_to_key) > 1  # type: ignore[attr-defined]
        if not real_io and timeout is not None and timeout <= 0:
            # callbacks are ready: only the self-pipe could be polled, and what another
            # thread schedules is in the ready queue already (the pipe is drained later)
            return []
        ready = super().select(0)
        if ready or (timeout is not None and timeout <= 0):
            return ready
        loop = self._loop_ref[0]
        clock = loop.clock
        if timeout is not None:
            timeout = loop.next_timer_delay(timeout)
        if loop.in_threads and not real_io and timeout is not None:
            ready = super().select(min(timeout, THREAD_WAIT))
            if ready:
                return ready
        if real_io:
            started = _time.monotonic()
            ready = super().select(timeout)
            clock.advance(_whole_ms(_time.monotonic() - started))
            return ready
        if timeout is None:  # nothing scheduled: only another thread can wake us
            return super().select(None)
        clock.advance(timeout)
        return []


THREAD_WAIT = 30.0
"""Real seconds a virtual loop waits at a time for work it handed to a thread before it jumps
to its next timer (:class:`_VirtualSelector`)."""


class VirtualTimeLoop(asyncio.SelectorEventLoop):
    """An asyncio loop on virtual time (see the module docstring)."""

    def __init__(self, clock: VirtualClock | None = None) -> None:
        ref: list[VirtualTimeLoop] = []
        super().__init__(selector=_VirtualSelector(ref))
        ref.append(self)
        self.clock = clock or current_clock()
        # asyncio runs a timer once `when < time() + resolution`; at large virtual times the
        # default (1 ns) vanishes in float rounding and the loop would spin on a due timer
        self._clock_resolution = 1e-6
        # the clock each pending timer was set under (see _VirtualSelector)
        self._timer_clocks: weakref.WeakKeyDictionary[asyncio.TimerHandle, VirtualClock] = (
            weakref.WeakKeyDictionary())
        self.in_threads = 0
        """Calls handed to threads (``run_in_executor``) that have not ended yet."""

    def run_in_executor(self, executor: Any, func: Callable[[*_Ts], T],
                        *args: *_Ts) -> asyncio.Future[T]:
        future = super().run_in_executor(executor, func, *args)
        self.in_threads += 1
        future.add_done_callback(self._thread_done)
        return future

    def _thread_done(self, future: asyncio.Future[Any]) -> None:
        self.in_threads -= 1

    def time(self) -> float:
        return self.clock._now  # asyncio asks on every timer and iteration

    def call_at(self, when: float, callback: Callable[[*_Ts], object], *args: *_Ts,
                context: contextvars.Context | None = None) -> asyncio.TimerHandle:
        handle = super().call_at(when, callback, *args, context=context)
        self._timer_clocks[handle] = self.clock
        return handle

    def next_timer_delay(self, delay: float) -> float | None:
        """Seconds to the next timer of the current clock (None: it has none), given
        ``delay``, asyncio's seconds to the next timer of any clock."""
        scheduled: list[asyncio.TimerHandle] = self._scheduled  # type: ignore[attr-defined]
        if scheduled and self._timer_clocks.get(scheduled[0]) is self.clock:
            return delay  # the common case: the earliest timer is this clock's
        ours = [h.when() for h in scheduled
                if not h.cancelled() and self._timer_clocks.get(h) is self.clock]
        return max(0.0, min(ours) - self.clock.now()) if ours else None


_local = threading.local()
# every thread's loop (while it lives) and the thread it belongs to
_loops: weakref.WeakKeyDictionary[VirtualTimeLoop, threading.Thread] = weakref.WeakKeyDictionary()


def _thread_loop() -> VirtualTimeLoop:
    loop: VirtualTimeLoop | None = getattr(_local, "loop", None)
    if loop is None or loop.is_closed():
        loop = VirtualTimeLoop()
        _local.loop = loop
        _loops[loop] = threading.current_thread()
    return loop


def _shut_down(loop: asyncio.AbstractEventLoop) -> None:
    """Finish ``loop`` the way ``asyncio.run`` finishes its own: the tasks still pending are
    cancelled and unwind, async generators are closed, the default executor's threads are
    joined, and the loop is closed."""
    try:
        pending = asyncio.all_tasks(loop)
        for task in pending:
            task.cancel()
        if pending:
            loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        loop.run_until_complete(loop.shutdown_asyncgens())
        loop.run_until_complete(loop.shutdown_default_executor())
    finally:
        loop.close()


def _shut_down_loops() -> None:
    """At exit, before Python waits for the threads that are still running (a thread a pending
    task would stop must be stopped first), shut down the loops no other thread may be using:
    this thread's, those of threads that ended, and those of agentkit's idle helper threads."""
    here = threading.current_thread()
    for loop, thread in list(_loops.items()):
        in_use = thread is not here and thread.is_alive() and thread not in _helper_threads
        if loop.is_closed() or loop.is_running() or in_use:
            continue
        try:
            _shut_down(loop)
        except Exception as exc:  # noqa: BLE001 (reported; the next loop is still shut down)
            loop.call_exception_handler({"message": "shutting down agentkit's event loop at "
                                                    "exit failed", "exception": exc})


# CPython's hook that runs before non-daemon threads are joined (concurrent.futures joins its
# workers there); atexit, which runs after the join, where it does not exist
getattr(threading, "_register_atexit", atexit.register)(_shut_down_loops)


def run_sync(awaitable: Awaitable[T]) -> T:
    """Run ``awaitable`` to completion from sync code and return its result.

    Uses this thread's virtual-time loop, which lives on between calls (an async generator
    driven chunk by chunk stays on it) and is shut down at exit the way ``asyncio.run`` shuts
    down its own. Called from inside a running loop, it runs the awaitable on a helper thread
    and blocks until done.
    """
    if asyncio._get_running_loop() is not None:
        return _run_on_helper_thread(awaitable)
    loop = _thread_loop()
    loop.clock = current_clock()
    # Not run_until_complete: it stops the loop from a done-callback, one loop iteration after
    # the awaitable finished; stopping from inside the task saves that iteration (a sync call
    # costs ~5 us instead of ~8). `armed` is cleared when the call ends abnormally (Ctrl-C in
    # a callback, loop.stop() from user code): the task left pending may then finish during a
    # later call, and must not stop that call's loop.
    armed: list[asyncio.AbstractEventLoop] = [loop]
    task = loop.create_task(_stopping_when_done(awaitable, armed))
    try:
        loop.run_forever()
        if task.done() and loop._ready:  # type: ignore[attr-defined]
            # what the task's end made ready (its done-callbacks: AnyIO stops the worker
            # thread of a sync function there) runs now, as under run_until_complete: left
            # for a later call that may never come, a non-daemon thread would wait forever
            loop.stop()
            loop.run_forever()
    except BaseException:
        armed.clear()
        if task.done() and not task.cancelled():
            task.exception()  # it is the one being raised: not "never retrieved"
        raise
    if not task.done():
        armed.clear()
        raise RuntimeError("Event loop stopped before Future completed.")  # as asyncio says
    return task.result()


async def _stopping_when_done(awaitable: Awaitable[T],
                              armed: list[asyncio.AbstractEventLoop]) -> T:
    """Await ``awaitable``, then stop the loop in ``armed`` (if any) in the same iteration."""
    try:
        return await awaitable
    finally:
        for loop in armed:
            loop.stop()


def run(main: Coroutine[Any, Any, T], *, clock: VirtualClock | None = None) -> T:
    """Run coroutine ``main`` on a fresh virtual-time loop and return its result, like
    ``asyncio.run`` (the loop is closed afterwards). Use it instead of ``asyncio.run`` in
    tests so that concurrent simulated calls overlap. The loop runs on ``clock`` (default:
    the current clock), which is also the current clock inside ``main``."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:
        main.close()
        raise RuntimeError("agentkit.core.sim.run() cannot be called from a running event "
                           "loop: await the coroutine instead")
    clock = clock or current_clock()
    with use_clock(clock), asyncio.Runner(loop_factory=lambda: VirtualTimeLoop(clock)) as runner:
        return runner.run(main)


_helper_threads: weakref.WeakSet[threading.Thread] = weakref.WeakSet()
_helpers = ThreadPoolExecutor(max_workers=32, thread_name_prefix="agentkit-run-sync",
                              initializer=lambda: _helper_threads.add(threading.current_thread()))


def _run_on_helper_thread(awaitable: Awaitable[T]) -> T:
    """Run on a pooled helper thread: its loop is reused, so nothing leaks per call and an
    async generator driven chunk by chunk stays on a loop that lives on. (Nesting deeper than
    the pool's 32 threads would deadlock; nothing in agentkit nests more than a few levels.)"""
    context = contextvars.copy_context()
    return _helpers.submit(context.run, run_sync, awaitable).result()


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
    if isinstance(asyncio.get_running_loop(), VirtualTimeLoop):
        await asyncio.sleep(seconds)  # the loop jumps over it
    else:
        current_clock().advance(seconds)
        await asyncio.sleep(0)


@dataclass
class Simulation:
    clock: VirtualClock
    ids: IdSource


@contextmanager
def simulation(seed: int | str = 0, *, start: float = 0.0) -> Iterator[Simulation]:
    """A deterministic world: a fresh virtual clock and an id source seeded with ``seed``; real
    waits (:func:`wait`) inside it are virtual."""
    token = _simulated.set(True)
    try:
        with use_clock(VirtualClock(start)) as clock, use_ids(IdSource(seed)) as ids:
            yield Simulation(clock, ids)
    finally:
        _simulated.reset(token)
