"""README.md: at most 200 lines; its example passes; its first project, written from the
README into a folder outside this repository, passes its commands as the README says."""

from __future__ import annotations

from tests.docs.conftest import FirstProject
from tests.docs.pages import README, fenced, section, shown_files

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


def test_the_first_projects_commands_take_the_snapshot_then_pass(first_project: FirstProject):
    (update, again, command) = first_project.ran

    for line, done in first_project.ran:
        assert done.returncode == 0, f"{line}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    assert "1 snapshot generated" in update[1].stdout
    assert (first_project.folder / "scenarios" / "__snapshots__" / "umbrella"
            / "weather_agent.json").is_file()
    assert "1 passed" in again[1].stdout and "1 snapshot passed" in again[1].stdout
    assert "PASS  umbrella[weather_agent]" in command[1].stdout


def test_the_readme_links_the_documentation_index():
    assert "(docs/README.md)" in README.read_text(encoding="utf-8")
