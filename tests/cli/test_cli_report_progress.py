"""``agentkit report`` shows its progress on a terminal (a counter on stderr) and stays quiet
when stderr is not one."""

from __future__ import annotations

import io
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from cli_helpers import Outcome


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _two_runs(write: Callable[[str, str], Path], adding: Path) -> Path:
    text = adding.read_text(encoding="utf-8")
    adding.write_text(text[:text.index("  function_calling:")], encoding="utf-8")
    write("scenarios/again.yaml", adding.read_text(encoding="utf-8").replace(
        "name: adding", "name: again"))
    return adding.parent


def test_report_counts_runs_on_a_terminal_and_clears_the_line_at_the_end(
        cli: Callable[..., Outcome], write: Callable[[str, str], Path], adding: Path,
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)

    result = cli("report", _two_runs(write, adding), "--out", tmp_path / "out", "--snapshots", "off")

    assert result.code == 0
    assert terminal.getvalue() == ("\r\x1b[K[1/2] adding[react] pass"
                                   "\r\x1b[K[2/2] again[react] pass\r\x1b[K")


def test_report_writes_no_progress_when_stderr_is_not_a_terminal(
        cli: Callable[..., Outcome], write: Callable[[str, str], Path], adding: Path,
        tmp_path: Path) -> None:
    result = cli("report", _two_runs(write, adding), "--out", tmp_path / "out", "--snapshots", "off")

    assert result.code == 0 and result.err == ""
