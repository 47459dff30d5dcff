"""Every test runs in its own deterministic world: fresh virtual clock, id source seeded 0."""

import sys
from collections.abc import Iterator

import pytest
from hypothesis import settings

from agentkit.core.sim import Simulation, simulation
from tests.docs.pages import Shell

# pytest keeps the test modules it rewrote for assertions as .pyc files, unless bytecode writing
# is off (PYTHONDONTWRITEBYTECODE, which some CI images set): then every worker rewrites every
# test module at each run, about 15 CPU-seconds per worker here. The cache is pytest's own
# (__pycache__, git-ignored), so the suite writes it whatever the environment says.
sys.dont_write_bytecode = False

# No wall-clock deadline per hypothesis example: the suite asserts behaviour, never time, and
# on shared cores the default 200 ms deadline failed property tests at random.
settings.register_profile("agentkit", deadline=None)
settings.load_profile("agentkit")

# pytester (inner pytest sessions, tests/plugin): pytest only accepts `pytest_plugins` in a
# top-level conftest
pytest_plugins = ["pytester"]


@pytest.fixture(autouse=True)
def sim() -> Iterator[Simulation]:
    with simulation(seed=0) as world:
        yield world


@pytest.fixture
def shell(pytester: pytest.Pytester) -> Shell:
    """Runs a docs page's command lines in a folder of its own (pytester's), outside this
    repository: ``agentkit`` and ``python -m pytest`` lines in-process (tests/docs/pages.py)."""
    return Shell(pytester)
