"""README.md: at most 200 lines; its example passes; its first project, written from the
README into a folder outside this repository, passes its commands as the README says."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.docs.conftest import Ran
from tests.docs.pages import (
    README,
    commands,
    fenced,
    run,
    section,
    shown_files,
    write_files,
)

MAX_LINES = 200


def test_the_readme_is_at_most_200_lines():
    lines = README.read_text(encoding="utf-8").count("\n")

    assert lines <= MAX_LINES, (f"README.md has {lines} lines, more than {MAX_LINES}: move "
                                "the new part into a page under docs/ and link it")


def test_the_readmes_example_test_passes():
    (example,) = fenced(section(README, "An example"), "python")
    namespace: dict[str, object] = {}
    exec(compile(example, "README.md", "exec"), namespace)

    namespace["test_agent_adds"]()  # type: ignore[operator]


def test_the_first_project_is_an_agent_its_agent_type_and_a_scenario():
    files = shown_files(section(README, "Your first project"))

    assert sorted(files) == ["pyproject.toml", "scenarios/umbrella.yaml", "weather.py"]


def _assert_as_the_readme_says(ran: list[Ran], folder: Path) -> None:
    (update, again, command) = ran
    for step in ran:
        assert step.code == 0, f"{step.command}\n{step.output[-3000:]}"
    assert "1 snapshot generated" in update.output
    assert (folder / "scenarios" / "__snapshots__" / "umbrella" / "weather_agent.json").is_file()
    assert "1 passed" in again.output and "1 snapshot passed" in again.output
    assert "PASS  umbrella[weather_agent]" in command.output


def test_the_first_projects_commands_take_the_snapshot_then_pass(
        first_project: list[Ran], pytester: pytest.Pytester):
    _assert_as_the_readme_says(first_project, pytester.path)


@pytest.mark.slow
def test_the_first_project_passes_as_a_user_runs_it_in_a_shell(tmp_path: Path):
    """The same commands, each in a new process from the project's folder (the installed
    console scripts, nothing of this repository on the path)."""
    text = section(README, "Your first project")
    write_files(tmp_path, shown_files(text))

    ran = []
    for command in commands(text):
        done = run(command, tmp_path)
        ran.append(Ran(command, done.returncode, done.stdout + done.stderr))

    _assert_as_the_readme_says(ran, tmp_path)


def test_the_readme_links_the_documentation_index():
    assert "(docs/README.md)" in README.read_text(encoding="utf-8")
