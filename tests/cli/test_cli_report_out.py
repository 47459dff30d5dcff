"""``agentkit report --out`` outside the normal case: a folder that is not a report, the
current folder and those above it, a symlink. Each refusal is exit 2 before any scenario
runs, and leaves every file where it was."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

import agentkit.report
from cli_helpers import Outcome

REPORT_FILES = [".agentkit-report", "report.html", "report.json", "report.md", "summary.md",
                "traces"]


def _only_react(adding: Path) -> Path:
    text = adding.read_text(encoding="utf-8")
    adding.write_text(text[:text.index("  function_calling:")], encoding="utf-8")
    return adding


def _tree(root: Path) -> dict[str, str]:
    """Every path under ``root`` with its content (or where a link leads)."""
    return {str(p.relative_to(root)): (f"-> {p.readlink()}" if p.is_symlink()
                                       else "" if p.is_dir() else p.read_text(encoding="utf-8"))
            for p in sorted(root.rglob("*"))}


@pytest.fixture
def no_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """A refusal comes before any work: running a scenario fails the test."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the scenarios ran before --out was checked")

    monkeypatch.setattr(agentkit.report, "run_comparison", refuse)


def test_an_existing_folder_that_is_not_a_report_is_refused_and_its_traces_kept(
        cli: Callable[..., Outcome], adding: Path, tmp_path: Path, no_run: None) -> None:
    mine = tmp_path / "mine"
    (mine / "traces").mkdir(parents=True)
    (mine / "traces" / "keep.json").write_text('{"mine": 1}', encoding="utf-8")
    scenario = _only_react(adding)
    before = _tree(tmp_path)

    result = cli("report", scenario, "--out", mine, "--snapshots", "off")

    assert result.code == 2 and result.out == ""
    assert result.err == (
        f"agentkit: error: --out {mine}: is a folder with other files and no .agentkit-report "
        "file (the mark of a folder agentkit wrote), so replacing it could delete them; give "
        "a new or empty folder, or one agentkit wrote\n")
    assert _tree(tmp_path) == before


@pytest.mark.parametrize("out", [".", "", ".."], ids=["dot", "empty", "dotdot"])
def test_the_current_folder_and_the_one_above_are_refused(
        cli: Callable[..., Outcome], adding: Path, tmp_path: Path, no_run: None,
        monkeypatch: pytest.MonkeyPatch, out: str) -> None:
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    scenario = _only_react(adding)
    before = _tree(tmp_path)

    result = cli("report", scenario, f"--out={out}", "--snapshots", "off")

    assert result.code == 2 and result.out == ""
    assert result.err.startswith(f"agentkit: error: --out {Path(out)}: is the current folder "
                                 "or holds it")
    assert _tree(tmp_path) == before


def test_a_symlink_to_a_folder_that_is_not_a_report_is_refused_and_left_a_link(
        cli: Callable[..., Outcome], adding: Path, tmp_path: Path, no_run: None) -> None:
    (tmp_path / "home").mkdir()
    (tmp_path / "home" / "notes.txt").write_text("mine", encoding="utf-8")
    (tmp_path / "latest").symlink_to(tmp_path / "home")
    scenario = _only_react(adding)
    before = _tree(tmp_path)

    result = cli("report", scenario, "--out", tmp_path / "latest", "--snapshots", "off")

    assert result.code == 2 and "no .agentkit-report file" in result.err
    assert _tree(tmp_path) == before


def test_a_symlink_to_a_report_folder_writes_through_the_link(
        cli: Callable[..., Outcome], adding: Path, tmp_path: Path) -> None:
    scenario = _only_react(adding)
    target = tmp_path / "reports" / "monday"
    assert cli("report", scenario, "--out", target, "--snapshots", "off").code == 0
    (tmp_path / "latest").symlink_to(target)

    result = cli("report", scenario, "--out", tmp_path / "latest", "--snapshots", "off")

    assert result.code == 0
    assert f"wrote {tmp_path / 'latest' / 'report.md'}" in result.out
    assert (tmp_path / "latest").is_symlink()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["latest", "reports", "scenarios"]
    assert sorted(p.name for p in (tmp_path / "reports").iterdir()) == ["monday"]
    assert sorted(p.name for p in target.iterdir()) == REPORT_FILES


def test_a_report_folder_is_replaced_by_the_next_report(
        cli: Callable[..., Outcome], adding: Path, tmp_path: Path) -> None:
    scenario = _only_react(adding)
    assert cli("report", scenario, "--out", tmp_path / "out", "--snapshots", "off").code == 0

    assert cli("report", scenario, "--out", tmp_path / "out", "--snapshots", "off").code == 0

    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == REPORT_FILES


def test_an_empty_folder_takes_a_report(cli: Callable[..., Outcome], adding: Path,
                                        tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()

    assert cli("report", _only_react(adding), "--out", tmp_path / "out", "--snapshots", "off").code == 0

    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == REPORT_FILES
