"""docs/suite-quality.md: every command of the page runs, in-process, from the repository's
root, and exits 0."""

from __future__ import annotations

import io
import re
import shlex
from pathlib import Path

import pytest

from agentkit.cli import main

PAGE = Path(__file__).resolve().parents[2] / "docs" / "suite-quality.md"


def _commands() -> list[str]:
    blocks = re.findall(r"```bash\n(.*?)```", PAGE.read_text(encoding="utf-8"), re.DOTALL)
    return [line for block in blocks for line in block.splitlines()
            if line.strip() and not line.startswith("#")]


def test_the_page_has_commands_and_each_is_agentkits():
    assert len(_commands()) >= 2
    assert all(command.startswith("agentkit ") for command in _commands())


@pytest.mark.parametrize("command", _commands())
def test_every_command_of_the_page_runs(command: str):
    out = io.StringIO()

    assert main(shlex.split(command)[1:], out=out) == 0, out.getvalue()
