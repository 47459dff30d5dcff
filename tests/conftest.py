"""Every test runs in its own deterministic world: fresh virtual clock, id source seeded 0."""

import compileall
import os
import sys
from collections.abc import Iterator
from pathlib import Path

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


def pytest_configure(config: pytest.Config) -> None:
    if not hasattr(config, "workerinput") and getattr(config.option, "tx", None):
        _prepare_for_workers(config, len(config.option.tx))


def _prepare_for_workers(config: pytest.Config, workers: int) -> None:
    """Before xdist starts its workers, rewrite the test modules whose assertion-rewrite cache
    is missing or stale (a fresh clone: all of them), split over ``workers`` processes, and
    compile agentkit's modules: otherwise every worker rewrites every module itself, ~16
    CPU-seconds each on a first run. Only a speed-up: on anything unexpected (another pytest's
    internals) the workers rewrite as before."""
    try:
        from _pytest.assertion.rewrite import (
            PYC_TAIL,
            _read_pyc,
            _rewrite_test,
            _write_pyc,
            assertstate_key,
            get_cache_dir,
            try_makedirs,
        )
        state = config.stash[assertstate_key]
    except (ImportError, KeyError):  # another pytest, or --assert=plain
        return
    root = config.rootpath
    stale = []
    for fn in sorted((root / "tests").rglob("*.py")):
        if fn.name == "conftest.py" or fn.name.startswith("test_"):
            pyc = get_cache_dir(fn) / (fn.name[:-3] + PYC_TAIL)
            if _read_pyc(fn, pyc, lambda *_: None) is None:
                stale.append((fn, pyc))

    def rewrite(share: list[tuple[Path, Path]]) -> None:
        for fn, pyc in share:
            try:
                if try_makedirs(pyc.parent):
                    source, code = _rewrite_test(fn, config)
                    _write_pyc(state, code, source, pyc)
            except Exception:  # noqa: BLE001 -- a broken module is the worker's to report
                pass

    shares = [stale[i::workers] for i in range(workers)]
    children = []
    for share in shares[1:]:
        pid = os.fork()
        if pid == 0:
            try:
                rewrite(share)
            finally:
                os._exit(0)
        children.append(pid)
    rewrite(shares[0])
    compileall.compile_dir(root / "agentkit", quiet=2)
    for pid in children:
        os.waitpid(pid, 0)


@pytest.fixture(autouse=True)
def sim() -> Iterator[Simulation]:
    with simulation(seed=0) as world:
        yield world


@pytest.fixture
def shell(pytester: pytest.Pytester) -> Shell:
    """Runs a docs page's command lines in a folder of its own (pytester's), outside this
    repository: ``agentkit`` and ``python -m pytest`` lines in-process (tests/docs/pages.py)."""
    return Shell(pytester)

