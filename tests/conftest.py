"""Every test runs in its own deterministic world: fresh virtual clock, id source seeded 0."""

from collections.abc import Iterator

import pytest

from agentkit.core.sim import Simulation, simulation

# pytester (inner pytest sessions, tests/plugin): pytest only accepts `pytest_plugins` in a
# top-level conftest
pytest_plugins = ["pytester"]


@pytest.fixture(autouse=True)
def sim() -> Iterator[Simulation]:
    with simulation(seed=0) as world:
        yield world
