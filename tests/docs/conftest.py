"""The README's first project, built once per session: the documentation's guides run their
commands in copies of it."""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.docs.pages import README, commands, run, section, shown_files, write_files


@dataclass(frozen=True)
class FirstProject:
    folder: Path
    #: each README command with what it did, in order
    ran: list[tuple[str, subprocess.CompletedProcess[str]]]

    def copy(self, to: Path) -> Path:
        """A copy of the project (its snapshots included) to change without touching it."""
        shutil.copytree(self.folder, to, ignore=shutil.ignore_patterns("__pycache__"))
        return to


@pytest.fixture(scope="session")
def first_project(tmp_path_factory: pytest.TempPathFactory) -> FirstProject:
    """The files of the README's "Your first project" in a folder outside this repository,
    its commands run there in order (the README's tests assert what they did)."""
    text = section(README, "Your first project")
    folder = tmp_path_factory.mktemp("weather")
    write_files(folder, shown_files(text))
    return FirstProject(folder, [(command, run(command, folder)) for command in commands(text)])
