"""No command loses a snapshot: a scenario item that errors before or during its run -- a bad
import ref, a factory that raises, a tool module that does not import, a recording that no
longer fits, Ctrl-C, a scenario file that cannot be collected -- leaves its committed
snapshot as it is, also under ``pytest --snapshot-update`` and under pytest-xdist."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from plugin_project import write

AGENTS = '''
from agentkit.agent import ReActAgent


def build(context):
    return ReActAgent.from_tools(list(context.tools), llm=context.llm)
'''

MINE = """\
format: 1
name: mine
tools:
  - ref: calc_tools:add
turns:
  - user: What is 2 + 3?
expect:
  answer: {contains: "5"}
agents:
  my_agent:
    script:
      - |-
        Thought: I need to add 2 and 3.
        Action: add
        Action Input: {"a": 2, "b": 3}
      - |-
        Thought: I can answer without using any more tools.
        Answer: 2 + 3 = 5
"""

PYPROJECT = '[tool.agentkit.agent_types]\nmy_agent = "calc_agents:build"\n'


def _replace(project: pytest.Pytester, relative: str, old: str, new: str) -> None:
    path = project.path / relative
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")


def _bad_factory_ref(project: pytest.Pytester) -> None:
    _replace(project, "pyproject.toml", "calc_agents:build", "calc_agents:biuld")


def _bad_tool_ref(project: pytest.Pytester) -> None:
    _replace(project, "scenarios/mine.yaml", "calc_tools:add", "calc_tools:ad")


def _factory_raises(project: pytest.Pytester) -> None:
    _replace(project, "calc_agents.py", "    return ReActAgent",
             "    raise RuntimeError('database down')\n    return ReActAgent")


def _tool_module_does_not_import(project: pytest.Pytester) -> None:
    path = project.path / "calc_tools.py"
    path.write_text("import no_such_module_here\n" + path.read_text(encoding="utf-8"),
                    encoding="utf-8")


def _recording_no_longer_fits(project: pytest.Pytester) -> None:
    _replace(project, "scenarios/mine.yaml", "      - |-\n        Thought: I can answer", "#")


def _ctrl_c(project: pytest.Pytester) -> None:
    _replace(project, "calc_tools.py", "    return a + b", "    raise KeyboardInterrupt")


def _file_cannot_be_collected(project: pytest.Pytester) -> None:
    _replace(project, "scenarios/mine.yaml", "turns:\n", "turns: [\n")


CAUSES: dict[str, Callable[[pytest.Pytester], None]] = {
    "a typo in the factory ref": _bad_factory_ref,
    "a typo in a tool ref": _bad_tool_ref,
    "a factory that raises": _factory_raises,
    "a tool module that does not import": _tool_module_does_not_import,
    "the recording no longer fits": _recording_no_longer_fits,
    "Ctrl-C": _ctrl_c,
    "a file that cannot be collected": _file_cannot_be_collected,
}


@pytest.fixture
def snapshotted(project: pytest.Pytester) -> dict[Path, bytes]:
    """The project with a second scenario under a project agent type, every snapshot taken."""
    write(project, "calc_agents.py", AGENTS)
    write(project, "scenarios/mine.yaml", MINE)
    write(project, "pyproject.toml", PYPROJECT)
    project.runpytest("--snapshot-update").assert_outcomes(passed=3)
    snapshots = sorted((project.path / "scenarios" / "__snapshots__").rglob("*.json"))
    assert [p.relative_to(project.path / "scenarios").as_posix() for p in snapshots] == [
        "__snapshots__/adding/function_calling.json", "__snapshots__/adding/react.json",
        "__snapshots__/mine/my_agent.json"]
    return {path: path.read_bytes() for path in snapshots}


def _files(snapshots: dict[Path, bytes]) -> dict[Path, bytes | None]:
    return {path: path.read_bytes() if path.exists() else None for path in snapshots}


def _subprocess(project: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
                *args: str) -> pytest.RunResult:
    """An inner session in its own process (Ctrl-C there must not stop this one; xdist starts
    workers from a real command line)."""
    for name in ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID"):
        monkeypatch.delenv(name, raising=False)  # the inner session is not a worker of ours
    monkeypatch.setenv("PYTHONPATH", str(project.path))
    return project.runpytest_subprocess(
        *args, *("-p", "no:cacheprovider", "-p", "no:hypothesispytest", "-p", "no:anyio"))


# Ctrl-C is sent to an inner session in a process of its own: the slow lane's
@pytest.mark.parametrize("cause", [pytest.param(cause, marks=pytest.mark.slow)
                                   if cause == "Ctrl-C" else cause for cause in CAUSES],
                         ids=list(CAUSES))
def test_snapshot_update_deletes_no_snapshot_of_an_item_that_did_not_get_through(
        project: pytest.Pytester, snapshotted: dict[Path, bytes],
        monkeypatch: pytest.MonkeyPatch, cause: str) -> None:
    CAUSES[cause](project)

    args = ("--snapshot-update", "--continue-on-collection-errors")
    result = (_subprocess(project, monkeypatch, *args) if cause == "Ctrl-C"
              else project.runpytest(*args))

    assert result.ret != 0
    assert _files(snapshotted) == snapshotted


@pytest.mark.parametrize("cause", ["a typo in the factory ref", "a factory that raises"])
def test_an_item_that_could_not_run_says_its_snapshot_was_kept_not_unused(
        project: pytest.Pytester, snapshotted: dict[Path, bytes], cause: str) -> None:
    CAUSES[cause](project)

    result = project.runpytest()

    result.assert_outcomes(passed=2, failed=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # not also for an "unused" snapshot
    result.stdout.no_fnmatch_line("*[0-9] snapshot* unused*")  # syrupy's summary line


@pytest.mark.slow
@pytest.mark.parametrize("cause", ["a factory that raises", "a file that cannot be collected"])
def test_under_xdist_no_snapshot_is_deleted_either(
        project: pytest.Pytester, snapshotted: dict[Path, bytes],
        monkeypatch: pytest.MonkeyPatch, cause: str) -> None:
    CAUSES[cause](project)

    result = _subprocess(project, monkeypatch, "-n", "2", "--snapshot-update",
                         "--continue-on-collection-errors")

    assert result.ret != 0
    assert _files(snapshotted) == snapshotted
