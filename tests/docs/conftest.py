"""The README's first project, the folder the guides that build on it run their commands in."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from tests.docs.pages import README, Shell, commands, section, shown_files, write_files


@dataclass(frozen=True)
class Ran:
    command: str
    code: int
    output: str


@pytest.fixture
def first_project(shell: Shell) -> list[Ran]:
    """The files of the README's "Your first project" in ``shell``'s folder, and its
    commands run there in order (the README's tests assert what they did)."""
    text = section(README, "Your first project")
    write_files(shell.folder, shown_files(text))
    return [Ran(command, *shell(command)) for command in commands(text)]
