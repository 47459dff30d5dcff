"""Scenario files are collected as test items, one per agent type; bad files are collection
errors that say where the problem is."""

from __future__ import annotations

import pytest

from plugin_project import write


def test_scenario_file_is_collected_as_one_item_per_agent_type(project: pytest.Pytester) -> None:
    result = project.runpytest("--collect-only", "-q")

    result.stdout.fnmatch_lines(["scenarios/adding.yaml::react",
                                 "scenarios/adding.yaml::function_calling",
                                 "2 tests collected*"])


def test_yaml_outside_a_scenarios_folder_is_not_collected(project: pytest.Pytester) -> None:
    write(project, "config/settings.yaml", "debug: true\n")

    result = project.runpytest("--collect-only", "-q")

    assert result.ret == pytest.ExitCode.OK
    result.stdout.no_fnmatch_line("*settings.yaml*")


def test_cassettes_beside_scenarios_are_not_collected(project: pytest.Pytester) -> None:
    write(project, "scenarios/cassettes/adding.react.yaml", "format: 1\nexchanges: []\n")

    result = project.runpytest("--collect-only", "-q")

    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["2 tests collected*"])


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
    result.stdout.fnmatch_lines([
        "*ERROR collecting scenarios/broken.yaml*",
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

    result = project.runpytest("--collect-only", "-q", "-k", "arithmetic")

    result.stdout.fnmatch_lines(["scenarios/adding.yaml::react",
                                 "scenarios/adding.yaml::function_calling",
                                 "2/3 tests collected (1 deselected)*"])
