"""Scenario items under pytest-xdist (``pytest -n 2``): spread over worker processes, they
give the traces and snapshots a serial run gives, byte for byte.

One inner session in a subprocess (xdist starts its workers from a real command line) over
a copy of some bundled scenarios: those that keep their committed snapshots must pass
against them, and those whose snapshots were removed get them written again -- identical to
the committed ones, and no other file appears or goes (not from pytest-xdist's or syrupy's
report wording: from the files and the workers themselves).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

#: a whole xdist session in a subprocess: the slow lane's
pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
KEPT = ("parallel_lookups", "coa_long_chain")
REWRITTEN = ("slow_tools",)

#: An inner conftest: each xdist worker leaves a file named after itself.
WORKER_CONFTEST = """\
import os


def pytest_configure(config):
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker:
        (config.rootpath / f"ran-on-{worker}").touch()
"""


def _copy(project: Path, name: str, *, snapshots: bool) -> list[Path]:
    source = REPO / "scenarios"
    shutil.copy(source / f"{name}.yaml", project / "scenarios" / f"{name}.yaml")
    committed = sorted((source / "__snapshots__" / name).iterdir())
    if snapshots:
        shutil.copytree(source / "__snapshots__" / name,
                        project / "scenarios" / "__snapshots__" / name)
    return committed


def test_scenario_items_under_xdist_reproduce_the_serial_traces_and_snapshots(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    (pytester.path / "scenarios" / "__snapshots__").mkdir(parents=True)
    kept = [p for name in KEPT for p in _copy(pytester.path, name, snapshots=True)]
    rewritten = [p for name in REWRITTEN for p in _copy(pytester.path, name, snapshots=False)]
    (pytester.path / "conftest.py").write_text(WORKER_CONFTEST, encoding="utf-8")
    monkeypatch.setenv("PYTHONPATH", str(REPO))  # the scenarios' tools live in mocks/
    for name in ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID"):
        # when this suite itself runs under xdist, the inner session must not think it is a
        # worker (syrupy then leaves its end-of-session work to a controller that is not there)
        monkeypatch.delenv(name, raising=False)

    result = pytester.runpytest_subprocess(
        "-n", "2", "--snapshot-update", "scenarios",
        # plugins the scenario items do not use, each imported by three processes otherwise
        *("-p", "no:cacheprovider", "-p", "no:hypothesispytest", "-p", "no:asyncio",
          "-p", "no:anyio"))

    result.assert_outcomes(passed=len(kept) + len(rewritten))
    assert sorted(p.name for p in pytester.path.glob("ran-on-*")) == ["ran-on-gw0", "ran-on-gw1"]
    snapshots = pytester.path / "scenarios" / "__snapshots__"
    assert sorted(p.relative_to(snapshots) for p in snapshots.rglob("*") if p.is_file()) == \
        sorted(p.relative_to(p.parents[1]) for p in kept + rewritten)
    for committed in kept + rewritten:
        written = (pytester.path / "scenarios" / "__snapshots__" / committed.parent.name
                   / committed.name)
        assert written.read_bytes() == committed.read_bytes(), committed
