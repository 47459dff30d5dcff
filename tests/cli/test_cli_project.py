"""The command in a user's project: the nearest pyproject.toml from the current directory up
gives the scenario folders and the project's own agent types (``[tool.agentkit]``), and the
project root is importable, as in the pytest plugin."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from agentkit.harness._agent_types import agent_type_names
from cli_helpers import ADDING, Outcome

MY_AGENTS = '''
from agentkit.agent import FunctionCallingAgent


def build(context):
    return FunctionCallingAgent.from_tools(list(context.tools), llm=context.llm,
                                           allow_parallel_tool_calls=False)
'''

PYPROJECT = """\
[project]
name = "my-project"

[tool.agentkit]
scenarios = ["agent_scenarios"]

[tool.agentkit.agent_types]
my_agent = "my_project.agents:build"
"""

MINE = ADDING.replace("  function_calling:\n    recording: cassettes/adding.function_calling.yaml\n",
                      "  my_agent:\n    script:\n      - tool_calls: [{name: add, args: {a: 2, "
                      "b: 3}}]\n      - 2 + 3 = 5\n")


@pytest.fixture
def my_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
               write: Callable[[str, str], Path]) -> Iterator[Path]:
    """A project with its own agent type `my_agent` and `agent_scenarios/adding.yaml` (react
    and my_agent); the current directory is its root."""
    write("pyproject.toml", PYPROJECT)
    write("my_project/__init__.py", "")
    write("my_project/agents.py", MY_AGENTS)
    write("agent_scenarios/adding.yaml", MINE)
    monkeypatch.chdir(tmp_path)
    yield tmp_path
    for name in [m for m in sys.modules if m == "my_project" or m.startswith("my_project.")]:
        del sys.modules[name]


def test_list_without_paths_lists_the_projects_scenario_folders(
        cli: Callable[..., Outcome], my_project: Path) -> None:
    result = cli("list")

    assert result.code == 0, result.err
    assert result.out.splitlines()[:3] == [
        f"adding  ({Path('agent_scenarios/adding.yaml')})",
        "  - react: script, 2 replies", "  - my_agent: script, 2 replies"]


def test_run_runs_the_projects_agent_type_declared_in_pyproject(
        cli: Callable[..., Outcome], my_project: Path) -> None:
    result = cli("run", "--agents", "my_agent", "--snapshots", "off")

    assert result.code == 0, result.err
    assert result.out.splitlines()[0].startswith("PASS  adding[my_agent] ")


def test_the_project_is_found_from_a_folder_below_its_root(
        cli: Callable[..., Outcome], my_project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (my_project / "docs").mkdir()
    monkeypatch.chdir(my_project / "docs")

    result = cli("run", "--snapshots", "off")

    assert result.code == 0, result.err
    assert result.out.endswith("2 passed, 0 failed\n")


def test_the_projects_agent_types_and_import_path_last_only_for_the_command(
        cli: Callable[..., Outcome], my_project: Path) -> None:
    assert cli("run", "--snapshots", "off").code == 0

    assert "my_agent" not in agent_type_names()
    assert str(my_project) not in sys.path


def test_a_missing_scenario_folder_of_the_project_says_where_it_is_configured(
        cli: Callable[..., Outcome], my_project: Path) -> None:
    (my_project / "agent_scenarios" / "adding.yaml").unlink()
    (my_project / "agent_scenarios").rmdir()

    result = cli("list")

    assert result.code == 2
    assert result.err == (f"agentkit: error: agent_scenarios: no such scenario folder "
                          f"(`scenarios` under [tool.agentkit] in {my_project / 'pyproject.toml'}"
                          "); give scenario files or folders, or set `scenarios` under "
                          "[tool.agentkit] in pyproject.toml\n")


def test_a_malformed_agent_type_entry_is_a_usage_error_with_file_line_and_key(
        cli: Callable[..., Outcome], my_project: Path) -> None:
    pyproject = my_project / "pyproject.toml"
    pyproject.write_text(PYPROJECT.replace('"my_project.agents:build"', '"my_project.agents"'),
                         encoding="utf-8")

    result = cli("list")

    assert result.code == 2
    assert result.err == (f"agentkit: error: {pyproject}:8: tool.agentkit.agent_types.my_agent: "
                          "expected an import ref \"package.module:factory\", got "
                          "'my_project.agents'\n")


def test_an_agent_type_that_cannot_be_imported_fails_naming_its_pyproject_line(
        cli: Callable[..., Outcome], my_project: Path) -> None:
    (my_project / "my_project" / "agents.py").write_text("import not_installed_xyz\n",
                                                          encoding="utf-8")

    result = cli("run", "--agents", "my_agent", "--snapshots", "off")

    assert result.code == 2
    assert (f"agents.my_agent: agent type `my_agent` ({my_project / 'pyproject.toml'}:8): "
            "cannot import `my_project.agents:build`: ModuleNotFoundError: No module named "
            "'not_installed_xyz'") in result.err
