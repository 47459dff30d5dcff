"""``@pytest.mark.agentkit_virtual_time(seed=N)``: the test runs inside
:func:`agentkit.core.sim.simulation` (a fresh clock, seeded ids, virtual waits); an ``async
def`` test runs on a fresh virtual-time loop (:func:`agentkit.core.sim.run`), with or without
pytest-asyncio (an item pytest-asyncio prepared is run from its original coroutine function)."""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from agentkit.core.sim import run, simulation

__all__ = ["simulated", "run_async_test"]

MARKER = "agentkit_virtual_time"


def _virtual_time_seed(item: pytest.Item) -> int | str | None:
    """The marker's seed (None: the test is not marked)."""
    marker = item.get_closest_marker(MARKER)
    if marker is None:
        return None
    if marker.args[1:] or set(marker.kwargs) - {"seed"}:
        pytest.fail(f"{item.nodeid}: agentkit_virtual_time takes one argument, seed (e.g. "
                    "@pytest.mark.agentkit_virtual_time(seed=1))", pytrace=False)
    seed = marker.kwargs.get("seed", marker.args[0] if marker.args else 0)
    if not isinstance(seed, int | str):
        pytest.fail(f"{item.nodeid}: agentkit_virtual_time seed must be an int or a str, got "
                    f"{type(seed).__name__}", pytrace=False)
    return seed


@contextmanager
def simulated(item: pytest.Item) -> Iterator[None]:
    """Around the test's call: the simulation of a marked test (nothing for another)."""
    seed = _virtual_time_seed(item)
    if seed is None:
        yield
        return
    with simulation(seed):
        yield


def run_async_test(pyfuncitem: pytest.Function) -> bool | None:
    """Run a marked ``async def`` test on a virtual-time loop (True); None for any other test,
    which pytest then calls as usual (a marked sync test: inside the simulation)."""
    if pyfuncitem.get_closest_marker(MARKER) is None:
        return None
    # pytest-asyncio swaps in a sync wrapper of the test (functools.wraps): run the coroutine
    # function it wraps on our loop instead of its runner's
    test = inspect.unwrap(pyfuncitem.obj, stop=inspect.iscoroutinefunction)
    if not inspect.iscoroutinefunction(test):
        return None
    args = {name: pyfuncitem.funcargs[name] for name in pyfuncitem._fixtureinfo.argnames}
    run(test(**args))
    return True
