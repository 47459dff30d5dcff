"""``agentkit run --snapshot-update`` says which snapshot files it wrote: each case judged
once (the summary reads the verdict that wrote the file), each written file named."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from agentkit.scenario._layout import snapshot_file
from cli_helpers import ADDING, Outcome


def _snapshot(scenario: Path) -> Path:
    return snapshot_file(scenario, "react")


def test_snapshot_update_on_a_missing_snapshot_names_the_file_it_wrote(
        cli: Callable[..., Outcome], adding: Path) -> None:
    result = cli("run", adding, "--agents", "react", "--snapshot-update")
    assert result.code == 0, result.out
    written = _snapshot(adding)
    assert written.is_file()
    assert f"      wrote {written}" in result.out.splitlines()
    assert result.out.splitlines()[-1] == "1 passed, 0 failed, 1 snapshot written"


def test_snapshot_update_on_a_changed_snapshot_names_the_file_it_rewrote(
        cli: Callable[..., Outcome], adding: Path) -> None:
    cli("run", adding, "--agents", "react", "--snapshot-update")
    before = _snapshot(adding).read_text(encoding="utf-8")
    adding.write_text(ADDING.replace("Answer: 2 + 3 = 5", "Answer: the sum is 5"),
                      encoding="utf-8")
    result = cli("run", adding, "--agents", "react", "--snapshot-update")
    assert result.code == 0, result.out
    after = _snapshot(adding).read_text(encoding="utf-8")
    assert after != before and "the sum is 5" in after
    assert f"      wrote {_snapshot(adding)}" in result.out.splitlines()
    assert result.out.splitlines()[-1] == "1 passed, 0 failed, 1 snapshot written"


def test_snapshot_update_on_an_unchanged_snapshot_writes_and_names_nothing(
        cli: Callable[..., Outcome], adding: Path) -> None:
    cli("run", adding, "--agents", "react", "--snapshot-update")
    result = cli("run", adding, "--agents", "react", "--snapshot-update")
    assert result.code == 0, result.out
    assert "wrote" not in result.out
    assert result.out.splitlines()[-1] == "1 passed, 0 failed"


def test_a_missing_snapshot_without_update_is_written_by_no_one(
        cli: Callable[..., Outcome], adding: Path) -> None:
    result = cli("run", adding, "--agents", "react")
    assert result.code == 1
    assert not _snapshot(adding).exists()
    assert "wrote" not in result.out


def test_snapshot_update_never_writes_the_snapshot_of_a_failing_run(
        cli: Callable[..., Outcome], adding: Path) -> None:
    adding.write_text(ADDING.replace('answer: {contains: "5"}', 'answer: {contains: "6"}'),
                      encoding="utf-8")
    result = cli("run", adding, "--agents", "react", "--snapshot-update")
    assert result.code == 1
    assert not _snapshot(adding).exists()
    assert "wrote" not in result.out
