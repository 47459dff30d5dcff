"""Virtual time: simulated latency overlaps like real time and never sleeps for real."""

import asyncio
import contextvars
import gc
import math
import selectors
import threading

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentkit.core.ids import new_uuid
from agentkit.core.sim import (
    MAX_LATENCY,
    Stopwatch,
    UnmodelledLatencyWarning,
    VirtualClock,
    VirtualTimeLoop,
    asleep,
    current_clock,
    in_simulation,
    now,
    real_time,
    run_sync,
    simulation,
    sleep,
    use_clock,
    wait,
)


async def _three_concurrent_calls() -> None:
    await asyncio.gather(*(asleep(1.0) for _ in range(3)))


async def _gather_sleeps(latencies: list[float]) -> None:
    await asyncio.gather(*(asleep(s) for s in latencies))


async def _three_serial_calls() -> None:
    for _ in range(3):
        await asleep(1.0)


# ---------------------------------------------------------------- the clock itself


def test_clock_starts_at_the_given_time():
    assert VirtualClock(start=12.5).now() == 12.5


def test_advance_moves_time_without_counting_latency():
    clock = VirtualClock()
    clock.advance(4.0)
    assert (clock.now(), clock.serial) == (4.0, 0.0)


def test_advance_backwards_is_an_error():
    with pytest.raises(ValueError, match=r"cannot move the clock backwards \(-1 s\)"):
        VirtualClock().advance(-1)


def test_sync_sleep_advances_the_clock_and_counts_as_latency():
    clock = VirtualClock()
    clock.sleep(2.0)
    clock.sleep(0.5)
    assert (clock.now(), clock.serial) == (2.5, 2.5)


@pytest.mark.parametrize("bad", [-0.1, math.nan, math.inf, MAX_LATENCY + 1])
def test_negative_nan_infinite_or_over_a_day_latency_is_an_error(bad):
    with pytest.raises(ValueError, match=r"simulated latency must be between 0 and 86400 seconds"):
        VirtualClock().sleep(bad)


@pytest.mark.parametrize("bad", [-2, math.inf])
def test_async_negative_or_infinite_latency_is_an_error(bad):
    with pytest.raises(ValueError, match=r"simulated latency must be between 0 and 86400 seconds"):
        run_sync(asleep(bad))


def test_a_timer_far_into_virtual_time_still_fires(sim):
    sim.clock.advance(1e9)

    run_sync(asleep(1.0))

    assert sim.clock.now() == 1e9 + 1.0


def test_module_sleep_uses_the_current_clock(sim):
    sleep(3.0)
    assert now() == 3.0 and sim.clock.serial == 3.0


# ---------------------------------------------------------------- the virtual loop


def test_three_concurrent_one_second_calls_take_one_second_of_clock_time():
    watch = Stopwatch.start()
    run_sync(_three_concurrent_calls())
    assert watch.wall == 1.0


def test_three_concurrent_one_second_calls_take_three_seconds_serial():
    watch = Stopwatch.start()
    run_sync(_three_concurrent_calls())
    assert watch.serial == 3.0


def test_three_sequential_one_second_calls_take_three_seconds_of_clock_time():
    watch = Stopwatch.start()
    run_sync(_three_serial_calls())
    assert (watch.wall, watch.serial) == (3.0, 3.0)


def test_an_hour_of_simulated_latency_completes_on_the_clock():
    run_sync(asleep(3600.0))
    assert now() == 3600.0


def test_a_timer_beyond_asyncios_longest_select_timeout_lands_exactly():
    run_sync(asyncio.sleep(200_000.0))
    assert now() == 200_000.0


def test_overlapping_calls_finish_in_order_of_their_latency():
    finished: list[tuple[str, float]] = []

    async def call(name: str, latency: float) -> None:
        await asleep(latency)
        finished.append((name, now()))

    async def main() -> None:
        await asyncio.gather(call("slow", 2.5), call("fast", 0.5), call("mid", 1.0))

    run_sync(main())
    assert finished == [("fast", 0.5), ("mid", 1.0), ("slow", 2.5)]


def test_zero_latency_does_not_move_the_clock():
    run_sync(asleep(0))
    assert now() == 0.0


def test_asyncio_sleep_on_the_virtual_loop_is_virtual_but_not_latency(sim):
    run_sync(asyncio.sleep(10))
    assert (sim.clock.now(), sim.clock.serial) == (10.0, 0.0)


def test_virtual_loop_time_is_the_clock_time():
    async def loop_time() -> float:
        await asleep(7.0)
        return asyncio.get_running_loop().time()

    assert run_sync(loop_time()) == 7.0


def test_run_sync_runs_on_a_virtual_time_loop():
    async def loop_type() -> type:
        return type(asyncio.get_running_loop())

    assert run_sync(loop_type()) is VirtualTimeLoop


def test_run_sync_returns_the_result():
    async def answer() -> int:
        await asleep(1)
        return 42

    assert run_sync(answer()) == 42


def test_run_sync_raises_the_awaitables_exception():
    async def fail() -> None:
        await asleep(1)
        raise KeyError("boom")

    with pytest.raises(KeyError, match="boom"):
        run_sync(fail())


def test_run_sync_raises_a_keyboard_interrupt_from_inside_and_the_next_call_works(caplog):
    async def interrupted() -> None:
        await asleep(1)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_sync(interrupted())
    assert run_sync(asyncio.sleep(1, result="next")) == "next"
    gc.collect()
    assert "never retrieved" not in caplog.text  # the exception raised was the task's


def _interrupt() -> None:
    raise KeyboardInterrupt


def test_a_call_interrupted_from_a_callback_does_not_stop_a_later_call_when_it_finishes():
    finished = []

    async def left_pending() -> None:
        asyncio.get_running_loop().call_soon(_interrupt)  # Ctrl-C while the task waits
        await asyncio.sleep(1)
        finished.append("left pending")

    with pytest.raises(KeyboardInterrupt):
        run_sync(left_pending())
    # the pending task finishes at t+1 during this call, which must still run to its end
    assert run_sync(asyncio.sleep(5, result="later")) == "later"
    assert finished == ["left pending"]


def test_a_loop_stopped_by_the_awaitable_is_an_error_that_does_not_stop_a_later_call():
    async def stops_the_loop() -> None:
        asyncio.get_running_loop().stop()
        await asyncio.sleep(1)

    with pytest.raises(RuntimeError, match="Event loop stopped before Future completed"):
        run_sync(stops_the_loop())
    assert run_sync(asyncio.sleep(5, result="later")) == "later"


def test_run_sync_runs_the_done_callbacks_of_its_task_before_it_returns():
    # as run_until_complete does: AnyIO stops a worker thread in one
    ran = []

    async def with_callback() -> str:
        asyncio.current_task().add_done_callback(lambda task: ran.append(task.result()))
        return "done"

    assert run_sync(with_callback()) == "done"
    assert ran == ["done"]


def test_run_sync_uses_the_clock_current_at_each_call():
    first, second = VirtualClock(), VirtualClock()
    with use_clock(first):
        run_sync(asleep(1.0))
    with use_clock(second):
        run_sync(asleep(5.0))
    assert (first.now(), second.now()) == (1.0, 5.0)


@given(st.lists(st.floats(min_value=0, max_value=1e4, allow_nan=False), min_size=1, max_size=8))
def test_concurrent_latencies_take_the_longest_of_them_in_wall_time_and_their_sum_serial(latencies):
    with simulation(seed=0):
        watch = Stopwatch.start()
        run_sync(_gather_sleeps(latencies))
        # the virtual loop runs timers due within its 1 µs clock resolution without a jump
        assert watch.wall == pytest.approx(max(latencies), abs=1e-6)
        assert watch.serial == pytest.approx(sum(latencies))


# ---------------------------------------------------------------- other loops and threads


def test_asleep_on_a_foreign_loop_advances_the_clock_directly(sim):
    async def main() -> None:
        await asleep(5.0)

    with pytest.warns(UnmodelledLatencyWarning):
        asyncio.run(main())
    assert (sim.clock.now(), sim.clock.serial, sim.clock.unmodelled) == (5.0, 5.0, 5.0)


def test_concurrent_asleeps_on_a_foreign_loop_add_up(sim):
    with pytest.warns(UnmodelledLatencyWarning):
        asyncio.run(_three_concurrent_calls())
    assert sim.clock.now() == 3.0


def test_run_sync_inside_a_running_loop_returns_the_result():
    async def inner() -> str:
        await asleep(2.0)
        return "done"

    async def outer() -> str:
        await asleep(1.0)
        return run_sync(inner())

    assert run_sync(outer()) == "done"


def test_run_sync_inside_a_running_loop_advances_the_same_clock(sim):
    async def outer() -> None:
        await asleep(1.0)
        run_sync(asleep(2.0))

    run_sync(outer())
    assert (sim.clock.now(), sim.clock.serial) == (3.0, 3.0)


def test_run_sync_inside_a_foreign_running_loop_works(sim):
    async def outer() -> float:
        run_sync(asleep(4.0))
        return now()

    assert asyncio.run(outer()) == 4.0


def test_run_sync_inside_a_running_loop_raises_the_awaitables_exception():
    async def fail() -> None:
        raise LookupError("nested failure")

    async def outer() -> None:
        run_sync(fail())

    with pytest.raises(LookupError, match="nested failure"):
        run_sync(outer())


def test_run_sync_inside_a_running_loop_keeps_the_callers_context():
    async def inner() -> str:
        return new_uuid()

    async def outer() -> str:
        return run_sync(inner())

    with simulation(seed=3):
        nested = run_sync(outer())
    with simulation(seed=3):
        direct = new_uuid()
    assert nested == direct


def test_run_sync_inside_a_running_loop_reuses_its_helper_loop():
    loops: list[asyncio.AbstractEventLoop] = []

    async def grab() -> None:
        loops.append(asyncio.get_running_loop())

    async def outer() -> None:
        run_sync(grab())
        run_sync(grab())

    run_sync(outer())
    assert loops[0] is loops[1]


def test_an_async_generator_can_be_driven_chunk_by_chunk_from_inside_a_running_loop():
    async def numbers():
        for n in range(3):
            await asleep(1)
            yield n

    async def outer() -> list[int]:
        stream, out = numbers(), []
        while True:
            try:
                out.append(run_sync(stream.__anext__()))
            except StopAsyncIteration:
                return out

    assert run_sync(outer()) == [0, 1, 2]


def test_the_virtual_loop_does_not_poll_the_os_while_callbacks_are_ready(monkeypatch):
    polls: list[float | None] = []
    base = selectors.DefaultSelector.select
    monkeypatch.setattr(selectors.DefaultSelector, "select",
                        lambda self, timeout=None: polls.append(timeout) or base(self, timeout))

    async def busy() -> int:
        for _ in range(5):
            await asyncio.sleep(0)
        return 1

    assert run_sync(busy()) == 1 and polls == []


def test_a_callback_another_thread_schedules_runs_while_the_loop_is_busy():
    async def wait_for_thread() -> str:
        loop = asyncio.get_running_loop()
        done = loop.create_future()
        threading.Thread(target=loop.call_soon_threadsafe,
                         args=(done.set_result, "from thread")).start()
        while not done.done():  # noqa: ASYNC110 -- busy on purpose: callbacks stay ready
            await asyncio.sleep(0)
        return done.result()

    assert run_sync(wait_for_thread()) == "from thread"


def test_a_task_an_earlier_call_left_pending_does_not_move_a_later_runs_clock():
    # a workflow run whose handler was never awaited: its 10 s timeout timer stays on this
    # thread's loop; a later simulation's call that waits on a thread (as the OpenAI SDK's
    # platform probe does) must not jump to that timer, set under another clock
    async def leave_pending() -> asyncio.Task[None]:
        task = asyncio.ensure_future(asyncio.sleep(10))
        await asyncio.sleep(0)  # it has started: its timer is set
        return task

    async def call() -> float:
        await asyncio.to_thread(threading.Event().wait, 0.05)
        await asleep(0.5)
        return now()

    seen: list[object] = []

    def on_a_fresh_thread() -> None:  # its own loop, which nothing else has used
        left = run_sync(leave_pending())
        with simulation(1):
            seen.append(run_sync(call()))
        seen.append(left.done())
        left.cancel()

    worker = threading.Thread(target=on_a_fresh_thread)
    worker.start()
    worker.join()
    assert seen == [0.5, False]


def test_a_timer_of_another_clock_fires_once_the_current_clock_passes_it():
    async def leave_pending() -> asyncio.Task[None]:
        task = asyncio.ensure_future(asyncio.sleep(1))
        await asyncio.sleep(0)
        return task

    async def call() -> float:
        await asleep(5)
        return now()

    seen: list[object] = []

    def on_a_fresh_thread() -> None:
        with simulation(1):
            left = run_sync(leave_pending())  # due at 1 s of this first clock
        with simulation(2):
            seen.append(run_sync(call()))
        seen.append(left.done())

    worker = threading.Thread(target=on_a_fresh_thread)
    worker.start()
    worker.join()
    assert seen == [5.0, True]


def test_each_thread_gets_its_own_virtual_loop():
    loops: list[object] = []

    async def grab() -> None:
        loops.append(asyncio.get_running_loop())

    run_sync(grab())
    worker = threading.Thread(target=lambda: run_sync(grab()))
    worker.start()
    worker.join()
    assert loops[0] is not loops[1]


def test_a_threads_loop_is_closed_when_the_thread_ends():
    # left open, the garbage collector would close it later, in whatever test runs then, and
    # its self-pipe may be gone by that time ("Invalid file descriptor: -1" from __del__)
    loops: list[asyncio.AbstractEventLoop] = []

    async def grab() -> None:
        loops.append(asyncio.get_running_loop())

    worker = threading.Thread(target=lambda: run_sync(grab()))
    worker.start()
    worker.join()
    assert len(loops) == 1 and loops[0].is_closed()


def test_a_task_left_pending_by_an_ended_thread_is_cancelled_when_its_loop_closes():
    states: list[str] = []

    async def forever() -> None:
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            states.append("cancelled")
            raise

    async def start() -> None:
        asyncio.get_running_loop().create_task(forever())
        await asyncio.sleep(0)

    worker = threading.Thread(target=lambda: run_sync(start()))
    worker.start()
    worker.join()
    assert states == ["cancelled"]


def test_run_sync_stays_on_the_virtual_loop_under_real_time():
    async def loop_type() -> type:
        return type(asyncio.get_running_loop())

    with real_time():
        assert run_sync(loop_type()) is VirtualTimeLoop


def test_wait_is_virtual_on_the_virtual_loop(sim):
    run_sync(wait(30.0))
    assert sim.clock.now() == 30.0 and sim.clock.serial == 0.0


def test_wait_under_real_time_waits_on_the_wall_clock_without_moving_the_clock(sim, monkeypatch):
    slept: list[float] = []
    monkeypatch.setattr("agentkit.core.sim._time.sleep", slept.append)
    with real_time():
        run_sync(wait(2.5))
    assert slept == [2.5] and sim.clock.now() == 0.0


def test_wait_outside_a_simulation_really_waits(monkeypatch):
    slept: list[float] = []
    monkeypatch.setattr("agentkit.core.sim._time.sleep", slept.append)

    contextvars.Context().run(run_sync, wait(2.5))  # a fresh context: no simulation active

    assert slept == [2.5]


def test_wait_inside_a_simulation_on_a_foreign_loop_moves_only_the_clock(sim, monkeypatch):
    slept: list[float] = []
    monkeypatch.setattr("agentkit.core.sim._time.sleep", slept.append)

    asyncio.run(wait(30.0))

    assert (sim.clock.now(), sim.clock.serial, slept) == (30.0, 0.0, [])


def test_in_simulation_is_true_in_a_simulation_and_false_under_real_time_or_outside(sim):
    with real_time():
        under_real_time = in_simulation()
    outside = contextvars.Context().run(in_simulation)
    assert (in_simulation(), under_real_time, outside) == (True, False, False)


@pytest.mark.parametrize("bad", [-1, math.inf, math.nan])
def test_wait_rejects_a_negative_or_endless_time(bad):
    with pytest.raises(ValueError, match="a wait is between 0 and 86400 s"):
        run_sync(wait(bad))


def test_simulated_latency_under_real_time_still_never_sleeps(sim):
    with real_time():
        run_sync(asleep(3600.0))
    assert sim.clock.now() == 3600.0


# ---------------------------------------------------------------- worlds and stopwatches


def test_simulation_gives_a_fresh_clock_at_its_start_time():
    with simulation(seed=1, start=100.0) as world:
        assert current_clock() is world.clock and now() == 100.0


def test_simulation_restores_the_previous_clock(sim):
    with simulation(seed=1):
        sleep(9)
    assert current_clock() is sim.clock and now() == 0.0


def test_simulations_with_the_same_seed_give_the_same_ids():
    with simulation(seed=7):
        first = [new_uuid() for _ in range(3)]
    with simulation(seed=7):
        second = [new_uuid() for _ in range(3)]
    assert first == second


def test_stopwatch_measures_from_its_start():
    sleep(10)
    watch = Stopwatch.start()
    sleep(2)
    current_clock().advance(1)
    assert (watch.wall, watch.serial) == (3.0, 2.0)


def test_stopwatch_on_an_explicit_clock_ignores_the_current_one():
    clock = VirtualClock()
    watch = Stopwatch.start(clock)
    sleep(5)
    clock.sleep(1)
    assert watch.wall == 1.0


# ---------------------------------------------------------------- work handed to threads


def _slow_read() -> str:
    threading.Event().wait(0.2)  # real time, as reading a store may take
    return "remembered"


def test_a_pending_timeout_is_not_jumped_to_while_a_thread_does_the_loops_work(sim):
    # a framework waiting for an event with a long timeout, its memory read on a thread
    # meanwhile (asyncio.to_thread): the thread's end comes first, the clock stands still
    async def waits_and_reads() -> tuple[str, float]:
        waiter = asyncio.ensure_future(asyncio.sleep(2000.0))
        started = now()
        read = await asyncio.to_thread(_slow_read)
        taken = now() - started
        waiter.cancel()
        return read, taken

    read, taken = run_sync(waits_and_reads())

    assert (read, taken) == ("remembered", 0.0)


def test_a_timer_is_still_jumped_to_once_the_threads_are_done(sim):
    async def reads_then_sleeps() -> float:
        await asyncio.to_thread(lambda: None)
        started = now()
        await asleep(5.0)
        return now() - started

    assert run_sync(reads_then_sleeps()) == 5.0
