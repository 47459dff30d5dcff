"""Scenario items run their scenario and compare their trace with a syrupy snapshot; changes
fail with a step-aligned diff, and ``--snapshot-update`` accepts them."""

from __future__ import annotations

import json

import pytest

from plugin_project import failure_lines, write


def _change_reply(project: pytest.Pytester, old: str, new: str) -> None:
    path = project.path / "scenarios" / "adding.yaml"
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")


def test_snapshot_update_writes_one_trace_snapshot_per_agent_type(
        project: pytest.Pytester) -> None:
    result = project.runpytest("--snapshot-update")

    result.assert_outcomes(passed=2)
    snapshot = project.path / "scenarios" / "__snapshots__" / "adding" / "react.json"
    trace = json.loads(snapshot.read_text(encoding="utf-8"))
    assert (trace["scenario"], trace["agent"]) == ("adding", "react")
    assert (project.path / "scenarios" / "__snapshots__" / "adding" / "function_calling.json"
            ).is_file()


def test_scenario_passes_against_its_snapshot(project: pytest.Pytester) -> None:
    project.runpytest("--snapshot-update").assert_outcomes(passed=2)

    result = project.runpytest()

    result.assert_outcomes(passed=2)


def test_missing_snapshot_fails_with_how_to_create_it_and_no_dump(
        project: pytest.Pytester) -> None:
    result = project.runpytest("scenarios/adding.yaml::react")

    result.assert_outcomes(failed=1)
    assert failure_lines(result, "scenario adding [react] failed:") == [
        "scenario adding [react] failed:",
        "- no snapshot of this trace yet (scenarios/__snapshots__/adding/react.json); create it "
        "with --snapshot-update"]


def test_changed_reply_fails_with_step_aligned_diff(project: pytest.Pytester) -> None:
    project.runpytest("--snapshot-update").assert_outcomes(passed=2)
    _change_reply(project, "- 2 + 3 = 5", "- 2 + 3 = 6")

    result = project.runpytest("scenarios/adding.yaml::function_calling")

    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "- the trace differs from its snapshot (accept the change with --snapshot-update once "
        "the run passes; a failing run is never written as its snapshot):",
        "*step 2: changed",
        '*llm_calls[[]0[]].response.content: "2 + 3 = 5" -> "2 + 3 = 6"'])


@pytest.mark.slow  # inner pytest sessions
def test_a_snapshot_from_an_older_agentkit_fails_saying_so_and_updates(
        project: pytest.Pytester) -> None:
    project.runpytest("--snapshot-update").assert_outcomes(passed=2)
    snapshot = project.path / "scenarios/__snapshots__/adding/react.json"
    older = json.loads(snapshot.read_text(encoding="utf-8"))
    del older["tools"]  # what agentkit wrote before trace format 2
    snapshot.write_text(json.dumps({**older, "format": 1}, indent=2) + "\n", encoding="utf-8")

    result = project.runpytest("scenarios/adding.yaml::react")

    result.assert_outcomes(failed=1)
    assert failure_lines(result, "scenario adding [react] failed:") == [
        "scenario adding [react] failed:",
        "- scenarios/__snapshots__/adding/react.json: this snapshot was written by an older "
        "agentkit (trace format 1); run --snapshot-update to rewrite it"]
    project.runpytest("scenarios/adding.yaml::react", "--snapshot-update"
                      ).assert_outcomes(passed=1)
    project.runpytest("scenarios/adding.yaml::react").assert_outcomes(passed=1)


def test_changed_reply_lists_unmet_expectations(project: pytest.Pytester) -> None:
    project.runpytest("--snapshot-update").assert_outcomes(passed=2)
    _change_reply(project, "- 2 + 3 = 5", "- 2 + 3 = 6")

    result = project.runpytest("scenarios/adding.yaml::function_calling")

    result.stdout.fnmatch_lines(["scenario adding [[]function_calling[]] failed:",
                                 "- final answer '2 + 3 = 6' does not match contains '5'"])


def test_scenario_failure_shows_no_python_traceback(project: pytest.Pytester) -> None:
    project.runpytest("--snapshot-update").assert_outcomes(passed=2)
    _change_reply(project, "- 2 + 3 = 5", "- 2 + 3 = 6")

    result = project.runpytest("scenarios/adding.yaml::function_calling")

    result.stdout.no_fnmatch_line("*Traceback*")
    result.stdout.no_fnmatch_line("*pytest_plugin.py*")
    result.stdout.no_fnmatch_line("*agentkit/_pytest/*")


@pytest.mark.slow  # an inner pytest session (pytester)
def test_snapshot_update_accepts_a_changed_trace(project: pytest.Pytester) -> None:
    project.runpytest("--snapshot-update").assert_outcomes(passed=2)
    _change_reply(project, "Answer: 2 + 3 = 5", "Answer: the sum is 5")

    updated = project.runpytest("--snapshot-update")
    rerun = project.runpytest()

    updated.assert_outcomes(passed=2)
    rerun.assert_outcomes(passed=2)
    snapshot = project.path / "scenarios" / "__snapshots__" / "adding" / "react.json"
    assert json.loads(snapshot.read_text(encoding="utf-8"))["turns"][0]["response"] == \
        "the sum is 5"


def test_unimportable_tool_fails_the_item_naming_file_and_field(
        project: pytest.Pytester) -> None:
    path = project.path / "scenarios" / "adding.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("calc_tools:add", "calc_tools:sub"),
                    encoding="utf-8")

    result = project.runpytest("scenarios/adding.yaml::react")

    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["scenario adding [[]react[]] could not run:",
                                 "*scenarios/adding.yaml*: tools.0.ref: cannot use "
                                 "`calc_tools:sub`*"])
    result.stdout.no_fnmatch_line("*Traceback*")


@pytest.mark.slow  # an inner pytest session (pytester)
def test_unexpected_error_in_an_item_is_reported_with_its_traceback(
        project: pytest.Pytester) -> None:
    write(project, "broken_tools.py", """\
        def add(a: int, b: int) -> int:
            \"\"\"Add two integers.\"\"\"
            raise SystemExit("the tool exited")
        """)
    path = project.path / "scenarios" / "adding.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("calc_tools:add",
                                                             "broken_tools:add"),
                    encoding="utf-8")

    result = project.runpytest("scenarios/adding.yaml::react")

    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(['*raise SystemExit("the tool exited")*',
                                 "*SystemExit: the tool exited*", "*broken_tools.py:3*"])
    result.stdout.no_fnmatch_line("*INTERNALERROR*")


def test_a_run_that_stops_on_an_error_reports_the_error_first_and_alone(
        project: pytest.Pytester) -> None:
    project.runpytest("--snapshot-update").assert_outcomes(passed=2)
    _change_reply(project, "      - 2 + 3 = 5\n", "")  # function_calling's script runs out

    result = project.runpytest("scenarios/adding.yaml::function_calling")

    result.assert_outcomes(failed=1)
    lines = failure_lines(result, "scenario adding [function_calling] failed: the run stopped "
                                  "on an error in turn 1:")
    assert lines[1].startswith("ScriptExhaustedError: ")
    assert lines[-1] == "(expectations and the snapshot are checked once the run gets through)"
    assert len(lines) <= 5


def test_snapshot_update_keeps_the_snapshot_of_a_run_that_stopped_on_an_error(
        project: pytest.Pytester) -> None:
    project.runpytest("--snapshot-update").assert_outcomes(passed=2)
    snapshot = project.path / "scenarios/__snapshots__/adding/function_calling.json"
    before = snapshot.read_text(encoding="utf-8")
    _change_reply(project, "      - 2 + 3 = 5\n", "")

    project.runpytest("--snapshot-update").assert_outcomes(passed=1, failed=1)

    assert snapshot.read_text(encoding="utf-8") == before


@pytest.mark.slow  # an inner pytest session (pytester)
def test_snapshot_update_keeps_the_snapshot_of_a_run_that_fails_its_expectations(
        project: pytest.Pytester) -> None:
    project.runpytest("--snapshot-update").assert_outcomes(passed=2)
    snapshot = project.path / "scenarios" / "__snapshots__" / "adding" / "function_calling.json"
    good = snapshot.read_bytes()
    _change_reply(project, "- 2 + 3 = 5", "- 2 + 3 = 6")  # now fails its expected answer

    result = project.runpytest("--snapshot-update")

    result.assert_outcomes(passed=1, failed=1)
    assert snapshot.read_bytes() == good
    result.stdout.fnmatch_lines(["*a failing run is never written as its snapshot*"])
