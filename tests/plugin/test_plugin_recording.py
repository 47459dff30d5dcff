"""Recording through the plugin: ``--record-mode=once`` records a scenario's cassette through
the OpenAI backend (here a respx fake endpoint), later runs replay it offline."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import yaml

from plugin_project import FAKE_ENDPOINT_CONFTEST, FAKE_URL, RECORDED, failure_lines, write
from tests.scenario_text import adding_scenario

CASSETTE = "scenarios/cassettes/recorded.function_calling.yaml"
RECORD = ("--record-mode=once", f"--agentkit-base-url={FAKE_URL}")


@pytest.fixture(autouse=True)
def no_openai_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The inner sessions share this process's environment: no real key or URL leaks in."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("AGENTKIT_MODEL", raising=False)
    yield


@pytest.fixture
def recording_project(project: pytest.Pytester) -> pytest.Pytester:
    write(project, "scenarios/recorded.yaml", RECORDED)
    write(project, "conftest.py", FAKE_ENDPOINT_CONFTEST)
    return project


def test_record_mode_once_records_a_cassette_through_the_openai_backend(
        recording_project: pytest.Pytester) -> None:
    result = recording_project.runpytest("scenarios/recorded.yaml", "--snapshot-update", *RECORD)

    result.assert_outcomes(passed=1)
    cassette = yaml.safe_load((recording_project.path / CASSETTE).read_text(encoding="utf-8"))
    assert (cassette["model"], cassette["agent_type"]) == ("gpt-4o-mini", "function_calling")
    replies = [e["response"]["message"] for e in cassette["exchanges"]]
    assert [r["additional_kwargs"]["tool_calls"][0]["tool_name"] for r in replies[:1]] == ["add"]
    assert replies[1]["content"] == "2 + 3 = 5"


@pytest.mark.slow  # an inner pytest session (pytester)
def test_recorded_scenario_replays_offline_and_matches_the_snapshot_taken_while_recording(
        recording_project: pytest.Pytester) -> None:
    recording_project.runpytest("scenarios/recorded.yaml", "--snapshot-update", *RECORD
                                ).assert_outcomes(passed=1)

    # record mode none: the fake endpoint is off, so a request would meet the network guard
    result = recording_project.runpytest("scenarios/recorded.yaml")

    result.assert_outcomes(passed=1)


def test_record_mode_once_replays_an_existing_cassette_without_recording(
        recording_project: pytest.Pytester) -> None:
    recording_project.runpytest("scenarios/recorded.yaml", "--snapshot-update", *RECORD
                                ).assert_outcomes(passed=1)
    before = (recording_project.path / CASSETTE).read_text(encoding="utf-8")

    # an endpoint without script: any request reaching it would fail the run
    no_script = FAKE_ENDPOINT_CONFTEST.replace('[tool_call("add", a=2, b=3), "2 + 3 = 5"]', "[]")
    assert no_script != FAKE_ENDPOINT_CONFTEST
    write(recording_project, "conftest.py", no_script)
    result = recording_project.runpytest("scenarios/recorded.yaml", *RECORD)

    result.assert_outcomes(passed=1)
    assert (recording_project.path / CASSETTE).read_text(encoding="utf-8") == before


def test_replay_without_a_cassette_fails_with_how_to_record(
        recording_project: pytest.Pytester) -> None:
    result = recording_project.runpytest("scenarios/recorded.yaml")

    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "scenario recorded [[]function_calling[]] could not run:",
        "*scenarios/recorded.yaml: agents.function_calling.recording: no cassette at "
        f"*{CASSETTE}; record it once with "
        "`pytest --record-mode=once scenarios/recorded.yaml::function_calling` "
        "(then it replays offline)"])


def test_recording_without_an_api_key_fails_naming_the_variable(
        project: pytest.Pytester) -> None:
    write(project, "scenarios/recorded.yaml", RECORDED)

    result = project.runpytest("scenarios/recorded.yaml", "--record-mode=once")

    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["scenario recorded [[]function_calling[]] could not run:",
                                 "No OpenAI API key: set the OPENAI_API_KEY environment variable*"])
    result.stdout.no_fnmatch_line("*Traceback*")


@pytest.mark.slow  # an inner pytest session (pytester)
def test_record_mode_creates_a_missing_snapshot_without_snapshot_update(
        recording_project: pytest.Pytester) -> None:
    result = recording_project.runpytest("scenarios/recorded.yaml", *RECORD)

    result.assert_outcomes(passed=1)
    snapshot = recording_project.path / "scenarios/__snapshots__/recorded/function_calling.json"
    assert snapshot.exists()
    recording_project.runpytest("scenarios/recorded.yaml").assert_outcomes(passed=1)


def test_record_mode_writes_the_snapshot_with_the_cassette_as_agentkit_record_does(
        recording_project: pytest.Pytester) -> None:
    recording_project.runpytest("scenarios/recorded.yaml", *RECORD).assert_outcomes(passed=1)

    snapshot = (recording_project.path / "scenarios" / "__snapshots__" / "recorded"
                / "function_calling.json")
    assert yaml.safe_load(snapshot.read_text(encoding="utf-8"))["agent"] == "function_calling"
    assert not (recording_project.path / CASSETTE.replace(".yaml", ".trace.json")).exists()


@pytest.mark.slow  # an inner pytest session (pytester)
def test_a_recording_that_fails_keeps_the_good_cassette_and_fails_the_item(
        recording_project: pytest.Pytester) -> None:
    recording_project.runpytest("scenarios/recorded.yaml", *RECORD).assert_outcomes(passed=1)
    before = (recording_project.path / CASSETTE).read_text(encoding="utf-8")
    write(recording_project, "conftest.py", FAKE_ENDPOINT_CONFTEST.replace(
        '[tool_call("add", a=2, b=3), "2 + 3 = 5"]', '["I cannot add."]'))

    result = recording_project.runpytest("scenarios/recorded.yaml", "--record-mode=rewrite",
                                         f"--agentkit-base-url={FAKE_URL}")

    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["scenario recorded [[]function_calling[]] could not be recorded:",
                                 "the recorded run failed: *", "(nothing written: *"])
    assert (recording_project.path / CASSETTE).read_text(encoding="utf-8") == before


@pytest.mark.slow  # an inner pytest session (pytester)
def test_a_cassette_miss_is_reported_alone_briefly_with_how_to_re_record(
        recording_project: pytest.Pytester) -> None:
    recording_project.runpytest("scenarios/recorded.yaml", *RECORD).assert_outcomes(passed=1)
    scenario = recording_project.path / "scenarios/recorded.yaml"
    scenario.write_text(scenario.read_text(encoding="utf-8").replace("2 + 3?", "2 + 4?"),
                        encoding="utf-8")

    result = recording_project.runpytest("scenarios/recorded.yaml")

    result.assert_outcomes(failed=1)
    lines = failure_lines(result, "scenario recorded [function_calling] failed: the run stopped "
                                  "on an error in turn 1:")
    assert lines[1].startswith("CassetteMissError: ") and lines[1].endswith(
        'last user: "What is 2 + 4?", tools add)')
    assert lines[3:] == [
        'first difference (recorded -> now), at messages[0].content: "What is 2 + 3?" -> '
        '"What is 2 + 4?"',
        "If the change is intended, re-record with record mode `new_episodes` or `rewrite`.",
        "to re-record: pytest --record-mode=rewrite --agentkit-model gpt-4o-mini "
        f"--agentkit-base-url {FAKE_URL} 'scenarios/recorded.yaml::function_calling'",
        "(expectations and the snapshot are checked once the run gets through)"]
    result.stdout.no_fnmatch_line("*differs from its snapshot*")


TEAM = adding_scenario("team", """\
expect:
  answer: {contains: "5"}
  handoffs:
    calls: [{from: planner, to: calculator}]
agents:
  agent_workflow:
    root: planner
    team:
      - {name: planner, description: Plans., tools: [], can_handoff_to: [calculator],
         recording: cassettes/team.planner.yaml}
      - {name: calculator, description: Adds., recording: cassettes/team.calculator.yaml}
""", tool="calc_tools:add")


@pytest.mark.slow  # an inner pytest session (pytester)
def test_record_mode_records_each_team_agents_cassette_and_the_team_trace(
        project: pytest.Pytester) -> None:
    write(project, "scenarios/team.yaml", TEAM)
    write(project, "conftest.py", FAKE_ENDPOINT_CONFTEST.replace(
        '[tool_call("add", a=2, b=3), "2 + 3 = 5"]',
        '[tool_call("handoff", to_agent="calculator", reason="a sum"), '
        'tool_call("add", a=2, b=3), "2 + 3 = 5"]'))

    project.runpytest("scenarios/team.yaml", *RECORD).assert_outcomes(passed=1)

    cassettes = project.path / "scenarios" / "cassettes"
    exchanges = [len(yaml.safe_load((cassettes / name).read_text(encoding="utf-8"))["exchanges"])
                 for name in ("team.planner.yaml", "team.calculator.yaml")]
    assert exchanges == [1, 2]
    assert (project.path / "scenarios" / "__snapshots__" / "team" / "agent_workflow.json").exists()
    project.runpytest("scenarios/team.yaml").assert_outcomes(passed=1)  # offline replay
