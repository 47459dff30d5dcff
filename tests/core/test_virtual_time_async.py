"""Virtual time in async code: ``sim.run`` and the ``agentkit_virtual_time`` marker give async
tests the overlap the sync API has; a plain event loop is reported, never silently wrong."""

import asyncio
import warnings

import pytest

from agentkit.agent import FunctionCallingAgent
from agentkit.core.ids import current_ids
from agentkit.core.sim import (
    Stopwatch,
    UnmodelledLatencyWarning,
    VirtualClock,
    VirtualTimeLoop,
    asleep,
    current_clock,
    in_simulation,
    run,
    simulation,
)
from agentkit.llms.mock import ScriptedLLM, ScriptedResponse, tool_call
from agentkit.tools import FunctionTool


async def slow_lookup(city: str) -> str:
    """Look a city up (0.1 s of simulated latency)."""
    await asleep(0.1)
    return city.upper()


def _four_lookup_agent() -> FunctionCallingAgent:
    calls = ScriptedResponse(tool_calls=[tool_call("slow_lookup", city=c)
                                         for c in ("oslo", "lima", "rome", "kyiv")])
    llm = ScriptedLLM([calls, "done"])
    return FunctionCallingAgent.from_tools([FunctionTool.from_defaults(slow_lookup)], llm=llm,
                                           allow_parallel_tool_calls=True)


async def _four_concurrent_calls() -> None:
    await asyncio.gather(*(asleep(0.1) for _ in range(4)))


# --------------------------------------------------------------------------- the marker
@pytest.mark.agentkit_virtual_time
async def test_four_parallel_tool_calls_in_an_async_test_overlap():
    agent = _four_lookup_agent()
    watch = Stopwatch.start()

    response = await agent.achat("Look up four cities")

    assert [s.content for s in response.sources] == ["OSLO", "LIMA", "ROME", "KYIV"]
    assert watch.wall == pytest.approx(0.1)
    assert watch.serial == pytest.approx(0.4)
    assert watch.warnings == []


@pytest.mark.agentkit_virtual_time
async def test_a_marked_async_test_runs_on_a_virtual_time_loop_in_a_simulation():
    loop = asyncio.get_running_loop()

    assert isinstance(loop, VirtualTimeLoop) and loop.clock is current_clock()
    assert in_simulation() and current_clock().now() == 0.0


@pytest.mark.agentkit_virtual_time(seed=7)
async def test_the_marker_seeds_the_ids():
    with simulation(7):
        expected = current_ids().uuid()
    assert current_ids().uuid() == expected


@pytest.mark.agentkit_virtual_time
def test_a_marked_sync_test_runs_in_a_simulation():
    assert in_simulation() and current_clock().now() == 0.0


# --------------------------------------------------------------------------- sim.run
def test_run_returns_the_coroutines_result_on_a_virtual_loop():
    async def main() -> str:
        return type(asyncio.get_running_loop()).__name__

    assert run(main()) == "VirtualTimeLoop"


def test_run_overlaps_concurrent_simulated_calls():
    watch = Stopwatch.start()
    run(_four_concurrent_calls())
    assert (watch.wall, watch.serial) == (pytest.approx(0.1), pytest.approx(0.4))


def test_run_uses_the_given_clock_inside_the_coroutine():
    clock = VirtualClock(start=5.0)

    async def main() -> float:
        await asleep(1.0)
        return current_clock().now()

    assert run(main(), clock=clock) == 6.0 and clock.now() == 6.0


def test_run_inside_a_running_loop_is_a_clear_error():
    async def outer() -> None:
        run(asleep(1.0))

    with pytest.raises(RuntimeError, match="cannot be called from a running event loop"):
        asyncio.run(outer())


def test_run_raises_the_coroutines_exception():
    async def fail() -> None:
        raise KeyError("missing")

    with pytest.raises(KeyError, match="missing"):
        run(fail())


# --------------------------------------------------------------------------- a plain loop
def test_simulated_latency_on_a_plain_loop_warns_that_calls_could_not_overlap(sim):
    with pytest.warns(UnmodelledLatencyWarning, match=r"0\.1 s of simulated latency ran on an "
                                                      r"event loop without virtual time"):
        asyncio.run(asleep(0.1))


def test_a_stopwatch_reports_latency_that_ran_without_the_overlap_model(sim):
    watch = Stopwatch.start()
    with pytest.warns(UnmodelledLatencyWarning):
        asyncio.run(_four_concurrent_calls())

    assert (watch.wall, watch.unmodelled) == (pytest.approx(0.4), pytest.approx(0.4))
    assert watch.warnings == [
        "0.4 s of simulated latency ran on an event loop without virtual time (asyncio.run, "
        "pytest-asyncio), where concurrent calls cannot overlap: wall time counts them one "
        "after another. Run async code with agentkit.core.sim.run(...) or mark the test "
        "@pytest.mark.agentkit_virtual_time."]


def test_zero_latency_on_a_plain_loop_does_not_warn(sim):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        asyncio.run(asleep(0.0))
    assert sim.clock.unmodelled == 0.0
