"""The event-loop half of :mod:`agentkit.core.sim`: the virtual-time asyncio loop, each
thread's loop and its shutdown at exit, and ``run_sync``/``run`` on them.

Kept apart so that importing :mod:`agentkit.core.sim` (and ``agentkit.agent`` above it) does
not import asyncio, and with it ssl, socket and concurrent.futures: :mod:`agentkit.core.sim`
imports this module on its first sync call (or async wait), when the loop is needed. The
module docstring of :mod:`agentkit.core.sim` describes the model."""

from __future__ import annotations

import asyncio
import atexit
import collections
import contextvars
import math
import selectors
import sys
import threading
import time as _time
import weakref
from collections.abc import Awaitable, Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar, TypeVarTuple

from agentkit.core.sim import VirtualClock, _clock, _default_clock, current_clock, use_clock

__all__ = ["THREAD_WAIT", "VirtualTimeLoop", "run", "run_sync"]

T = TypeVar("T")
_Ts = TypeVarTuple("_Ts")


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

    def run_forever(self) -> None:
        """asyncio's ``run_forever``, in fewer frames (every sync call runs the loop once).
        Out of debug mode it does what asyncio's does -- the same checks and errors, the
        async-generator hooks, the thread and the running loop set for the run and put back
        after it -- and an iteration whose callbacks are ready, with no timer pending and no
        real I/O watched, runs them directly: asyncio's iteration would poll the virtual
        selector with a zero timeout (nothing, without real I/O), find no timer due and run
        the same callbacks. Any other iteration is asyncio's own ``_run_once``."""
        loop: Any = self  # asyncio's private attributes, which its typing does not declare
        if loop._debug or loop._coroutine_origin_tracking_enabled:
            super().run_forever()
            return
        if loop._closed:
            raise RuntimeError("Event loop is closed")
        if loop._thread_id is not None:  # is_running()
            raise RuntimeError("This event loop is already running")
        if asyncio.events._get_running_loop() is not None:
            raise RuntimeError("Cannot run the event loop while another loop is running")
        old_hooks = sys.get_asyncgen_hooks()
        try:
            loop._thread_id = threading.get_ident()
            sys.set_asyncgen_hooks(firstiter=loop._asyncgen_firstiter_hook,
                                   finalizer=loop._asyncgen_finalizer_hook)
            asyncio.events._set_running_loop(self)
            ready: collections.deque[asyncio.Handle] = loop._ready
            fds = loop._selector._fd_to_key
            while True:
                if ready and not loop._scheduled and len(fds) <= 1:
                    for _ in range(len(ready)):  # those ready now, not those they schedule
                        handle: Any = ready.popleft()
                        if not handle._cancelled:
                            handle._run()
                else:
                    loop._run_once()
                if loop._stopping:
                    break
        finally:
            loop._stopping = False
            loop._thread_id = None
            asyncio.events._set_running_loop(None)
            sys.set_asyncgen_hooks(*old_hooks)

    def call_soon(self, callback: Callable[[*_Ts], object], *args: *_Ts,
                  context: contextvars.Context | None = None) -> asyncio.Handle:
        """asyncio's ``call_soon``: every task step and done-callback is scheduled here. An
        open loop out of debug mode appends the handle itself (asyncio's closed-loop check
        and helper are two frames per callback); otherwise asyncio does it all."""
        loop: Any = self
        if loop._closed or loop._debug:
            return super().call_soon(callback, *args, context=context)
        handle = asyncio.Handle(callback, args, self, context)
        loop._ready.append(handle)
        return handle

    def create_task(self, coro: Any, *, name: Any = None,
                    context: contextvars.Context | None = None, **kwargs: Any) -> asyncio.Task[Any]:
        """asyncio's ``create_task``: without a task factory, on an open loop out of debug
        mode, the task is made here (asyncio's method and its closed-loop check are two frames
        per sync call); anything else goes to asyncio."""
        loop: Any = self
        if kwargs or loop._task_factory is not None or loop._closed or loop._debug:
            task: asyncio.Task[Any] = super().create_task(coro, name=name, context=context,
                                                          **kwargs)
            return task
        return asyncio.Task(coro, loop=self, name=name, context=context)

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


class _ClosedWithThread:
    """Kept in a thread's local storage beside its loop, and only there: when the thread ends,
    its storage is let go and this shuts the loop down then, in that thread. Left to the
    garbage collector instead, the loop (always in a reference cycle with its self-pipe's
    handler) would be closed in whichever later collection found it, after its self-pipe
    socket may already have been finalized: "Invalid file descriptor: -1" raised from
    ``BaseEventLoop.__del__`` into whatever code happened to be running."""

    __slots__ = ("loop",)

    def __init__(self, loop: VirtualTimeLoop) -> None:
        self.loop = loop

    def __del__(self) -> None:
        loop = self.loop
        if loop.is_closed() or loop.is_running() or sys.is_finalizing():
            # at interpreter exit the thread states of threads still running are deleted
            # too: their code may wait on locks no thread will release (the loops of ended
            # threads were shut down by `_shut_down_loops` before that)
            return
        try:
            # a few iterations, not until done: a task that ignores its cancellation would
            # hold the ending thread forever
            _shut_down(loop, iterations=_UNWIND_ITERATIONS)
        except Exception as exc:  # noqa: BLE001 (reported; the loop is closed all the same)
            loop.call_exception_handler({"message": "unwinding the tasks of an ended thread's "
                                                    "event loop failed", "exception": exc})


_UNWIND_ITERATIONS = 8


def _thread_loop() -> VirtualTimeLoop:
    loop: VirtualTimeLoop | None = getattr(_local, "loop", None)
    if loop is None or loop._closed:  # type: ignore[attr-defined]  # is_closed(), one call less
        loop = VirtualTimeLoop()
        _local.loop = loop
        _local.closer = _ClosedWithThread(loop)
        _loops[loop] = threading.current_thread()
    return loop


def _shut_down(loop: asyncio.AbstractEventLoop, *, iterations: int | None = None) -> None:
    """Finish ``loop`` the way ``asyncio.run`` finishes its own: the tasks still pending are
    cancelled and unwind, async generators are closed, the default executor's threads are
    joined, and the loop is closed. With ``iterations``, the cancelled tasks get at most that
    many iterations of the loop to unwind, and nothing else is waited for."""
    try:
        pending = asyncio.all_tasks(loop)
        for task in pending:
            task.cancel()
        if iterations is not None:
            for _ in range(iterations):
                if all(task.done() for task in pending):
                    break
                loop.call_soon(loop.stop)
                loop.run_forever()
            return
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
    """:func:`agentkit.core.sim.run_sync`, on this thread's loop."""
    if asyncio._get_running_loop() is not None:
        return _run_on_helper_thread(awaitable)
    loop: VirtualTimeLoop | None = getattr(_local, "loop", None)  # _thread_loop(), its frame
    if loop is None or loop._closed:  # type: ignore[attr-defined]  # only when one is made
        loop = _thread_loop()
    loop.clock = _clock.get(_default_clock)  # current_clock(), one call less per sync call
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
    result: T = task.result()
    return result


async def _stopping_when_done(awaitable: Awaitable[T],
                              armed: list[asyncio.AbstractEventLoop]) -> T:
    """Await ``awaitable``, then stop the loop in ``armed`` (if any) in the same iteration."""
    try:
        return await awaitable
    finally:
        for loop in armed:
            loop.stop()


def run(main: Coroutine[Any, Any, T], *, clock: VirtualClock | None = None) -> T:
    """:func:`agentkit.core.sim.run`, on a fresh loop."""
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


