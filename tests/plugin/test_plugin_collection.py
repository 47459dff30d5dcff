"""Scenario files are collected as test items, one per agent type; bad files are collection
errors that say where the problem is."""

from __future__ import annotations

import pytest

from mocks.foreign_yaml import K8S_MANIFEST
from plugin_project import ADDING, CALC_TOOLS, MY_AGENTS, collected, deselected, ini, write

ADDING_ITEMS = ["scenarios/adding.yaml::react", "scenarios/adding.yaml::function_calling"]


@pytest.mark.slow  # an inner pytest session (pytester)
def test_scenario_file_is_collected_as_one_item_per_agent_type(project: pytest.Pytester) -> None:
    assert collected(project) == ADDING_ITEMS


def test_yaml_outside_a_scenarios_folder_is_not_collected(project: pytest.Pytester) -> None:
    write(project, "config/settings.yaml", "debug: true\n")

    assert collected(project) == ADDING_ITEMS
    project.runpytest("--collect-only").stdout.no_fnmatch_line("*settings.yaml*")


def test_cassettes_beside_scenarios_are_not_collected(project: pytest.Pytester) -> None:
    write(project, "scenarios/cassettes/adding.react.yaml", "format: 1\nexchanges: []\n")

    assert collected(project) == ADDING_ITEMS


def test_folder_named_scenarios_above_the_rootdir_does_not_make_yaml_files_scenarios(
        pytester: pytest.Pytester) -> None:
    write(pytester, "scenarios/app/pytest.ini",
          "[pytest]\nasyncio_default_fixture_loop_scope = function\n")
    write(pytester, "scenarios/app/docker-compose.yaml", "services: {}\n")
    write(pytester, "scenarios/app/test_app.py", "def test_ok():\n    pass\n")

    result = pytester.runpytest(str(pytester.path / "scenarios" / "app"))

    result.assert_outcomes(passed=1)


def test_malformed_scenario_is_a_collection_error_naming_file_line_and_field(
        project: pytest.Pytester) -> None:
    write(project, "scenarios/broken.yaml", """\
        format: 1
        name: broken
        turns:
          - user: hi
            strem: true
        agents:
          react:
            script: [hello]
        """)

    result = project.runpytest()

    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines([
        "*scenarios/broken.yaml:5: turns.0.strem: unknown field `strem`; did you mean `stream`?"])


def test_collection_error_shows_no_python_traceback(project: pytest.Pytester) -> None:
    write(project, "scenarios/broken.yaml", """\
        format: 1
        turns: [{user: hi}]
        agents: {reakt: {script: [hello]}}
        """)

    result = project.runpytest()

    result.stdout.fnmatch_lines(["*scenarios/broken.yaml:3: agents.reakt: unknown agent type*"])
    result.stdout.no_fnmatch_line("*Traceback*")
    result.stdout.no_fnmatch_line("*.py:[0-9]*")


@pytest.mark.slow  # an inner pytest session (pytester)
def test_invalid_yaml_is_a_collection_error_with_line_and_column(
        project: pytest.Pytester) -> None:
    write(project, "scenarios/broken.yaml", "format: 1\nturns:\n  - user: [unclosed\n")

    result = project.runpytest()

    result.stdout.fnmatch_lines(["*scenarios/broken.yaml:4:1: invalid YAML*"])


def test_tags_select_scenarios_with_k(project: pytest.Pytester) -> None:
    write(project, "scenarios/other.yaml", """\
        format: 1
        name: other
        tags: [greeting]
        turns:
          - user: hi
        agents:
          react:
            script: ["Thought: I can answer without using any more tools.\\nAnswer: hello"]
        """)

    assert collected(project, "-k", "arithmetic") == ADDING_ITEMS
    assert deselected(project, "-k", "arithmetic") == ["scenarios/other.yaml::react"]


# ----------------------------------------------------------------- which folders, which files
def test_yaml_that_is_not_a_scenario_is_left_alone_even_in_a_scenarios_folder(
        project: pytest.Pytester) -> None:
    write(project, "scenarios/k8s.yaml", K8S_MANIFEST)
    write(project, "tests/data/scenarios/k8s.yaml", K8S_MANIFEST)

    assert collected(project) == ADDING_ITEMS
    project.runpytest("--collect-only").stdout.no_fnmatch_line("*k8s*")  # nor a warning


def test_a_scenarios_folder_other_than_the_configured_ones_is_not_collected(
        project: pytest.Pytester) -> None:
    write(project, "tests/data/scenarios/adding.yaml", ADDING)

    assert collected(project) == ADDING_ITEMS


def test_pyproject_tool_agentkit_scenarios_names_the_folders_to_collect(
        pytester: pytest.Pytester) -> None:
    write(pytester, "calc_tools.py", CALC_TOOLS)
    write(pytester, "agent_tests/cases/adding.yaml", ADDING)
    write(pytester, "scenarios/ignored.yaml", ADDING)
    write(pytester, "pyproject.toml", '[tool.agentkit]\nscenarios = ["agent_tests/cases"]\n')
    pytester.syspathinsert()

    assert collected(pytester) == ["agent_tests/cases/adding.yaml::react",
                                   "agent_tests/cases/adding.yaml::function_calling"]


def test_the_ini_option_names_the_folders_to_collect(pytester: pytest.Pytester) -> None:
    write(pytester, "calc_tools.py", CALC_TOOLS)
    write(pytester, "checks/adding.yaml", ADDING)
    ini(pytester, "agentkit_scenarios = checks")
    pytester.syspathinsert()

    assert collected(pytester) == ["checks/adding.yaml::react",
                                   "checks/adding.yaml::function_calling"]


# ----------------------------------------------------------------- the project's agent types
def _my_agent_project(pytester: pytest.Pytester, pyproject: str) -> None:
    write(pytester, "calc_tools.py", CALC_TOOLS)
    write(pytester, "my_project/__init__.py", "")
    write(pytester, "my_project/agents.py", MY_AGENTS)
    write(pytester, "pyproject.toml", pyproject)
    write(pytester, "scenarios/adding.yaml", ADDING.replace("  function_calling:\n",
                                                            "  my_agent:\n"))


def test_an_agent_type_declared_in_pyproject_runs_scenario_items(
        pytester: pytest.Pytester) -> None:
    _my_agent_project(pytester, '[tool.agentkit.agent_types]\nmy_agent = "my_project.agents:build"\n')

    result = pytester.runpytest("scenarios/adding.yaml::my_agent", "--snapshot-update")

    result.assert_outcomes(passed=1)


def test_a_malformed_tool_agentkit_table_is_a_usage_error_naming_file_line_and_key(
        pytester: pytest.Pytester) -> None:
    _my_agent_project(pytester, '[tool.agentkit]\nscenarioz = ["scenarios"]\n')

    result = pytester.runpytest()

    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*{pytester.path / 'pyproject.toml'}:2: tool.agentkit."
                                 "scenarioz: unknown key `scenarioz`; did you mean `scenarios`?"])


def test_an_agent_type_registered_in_a_conftest_runs_and_does_not_outlive_the_session(
        pytester: pytest.Pytester) -> None:
    from agentkit.harness._agent_types import agent_type_names

    _my_agent_project(pytester, "")
    write(pytester, "conftest.py", """\
        from agentkit.scenario import register_agent_type
        from my_project.agents import build

        register_agent_type("my_agent", build)
        """)
    pytester.syspathinsert()

    result = pytester.runpytest("scenarios/adding.yaml::my_agent", "--snapshot-update")

    result.assert_outcomes(passed=1)
    assert "my_agent" not in agent_type_names()
