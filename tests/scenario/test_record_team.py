"""Recording a team (``agent_workflow`` with ``team:``): each team agent with a ``recording:``
records its own cassette through the live model, and the cassettes and the team's trace are
replaced together, only when the recording replays.

The live model is a ScriptedLLM (offline) answering the agents' calls in the order they come.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from agentkit.harness._record import record_scenario
from agentkit.llms.mock import ScriptedLLM, tool_call
from agentkit.scenario import ScenarioError, run_scenario

TEAM = """\
format: 1
name: team
tools:
  - ref: mocks.tools:population
  - ref: mocks.tools:divide
turns:
  - user: How many millions of people live in Paris?
expect:
  answer: {contains: "2.1 million"}
  handoffs:
    calls: [{from: researcher, to: calculator}]
agents:
  agent_workflow:
    root: researcher
    team:
      - name: researcher
        description: Looks up facts about cities.
        tools: [population]
        can_handoff_to: [calculator]
        recording: cassettes/team.researcher.yaml
      - name: calculator
        description: Does arithmetic.
        kind: react
        tools: [divide]
        recording: cassettes/team.calculator.yaml
"""
RESEARCHER = [tool_call("population", city="Paris"),
              tool_call("handoff", to_agent="calculator", reason="a division")]
CALCULATOR = ['Thought: divide.\nAction: divide\nAction Input: {"a": 2102650, "b": 1000000}',
              "Thought: done.\nAnswer: About 2.1 million people live in Paris."]
CALCULATOR_SCRIPT = """\
        script:
          - |-
            Thought: divide.
            Action: divide
            Action Input: {"a": 2102650, "b": 1000000}
          - |-
            Thought: done.
            Answer: About 2.1 million people live in Paris.
"""


@pytest.fixture
def team(write_file) -> Path:
    return write_file("team.yaml", TEAM)


def _files(team: Path) -> list[Path]:
    """The two team agents' cassettes and the team's recorded trace (its snapshot)."""
    folder = team.parent / "cassettes"
    return [folder / "team.researcher.yaml", folder / "team.calculator.yaml",
            team.parent / "__snapshots__" / "team" / "agent_workflow.json"]


def _contents(team: Path) -> list[str]:
    return [path.read_text("utf-8") for path in _files(team)]


def _exchanges(cassette: Path) -> int:
    return len(yaml.safe_load(cassette.read_text("utf-8"))["exchanges"])


def _record(team: Path, answers: list[object], mode: str = "once"):
    return record_scenario(team, "agent_workflow", ScriptedLLM(list(answers), strict=False),
                           mode)


def test_each_team_agent_records_its_own_cassette_through_one_live_model(team):
    recording = _record(team, RESEARCHER + CALCULATOR)

    assert (recording.problems, recording.written, recording.recorded) == ([], True, 4)
    researcher, calculator, trace = _files(team)
    assert (_exchanges(researcher), _exchanges(calculator)) == (2, 2)
    assert recording.cassettes == [researcher, calculator] and recording.snapshot == trace


def test_a_recorded_team_replays_offline_to_the_recorded_trace(team):
    _record(team, RESEARCHER + CALCULATOR)

    result = run_scenario(team)

    assert result.passed, result.problems
    assert result.trace.to_dict() == json.loads(_files(team)[2].read_text("utf-8"))


def test_each_team_agent_may_record_through_its_own_live_model(team):
    live = {"researcher": ScriptedLLM(RESEARCHER), "calculator": ScriptedLLM(CALCULATOR)}

    recording = record_scenario(team, "agent_workflow", live, "once")

    assert (recording.ok, recording.written) == (True, True)
    assert (live["researcher"].calls, live["calculator"].calls) == (2, 2)
    assert run_scenario(team).passed


def test_a_failed_team_recording_leaves_every_cassette_and_the_trace_as_they_were(team):
    _record(team, RESEARCHER + CALCULATOR)
    before = _contents(team)

    recording = _record(team, [*RESEARCHER, CALCULATOR[0], "Thought: t\nAnswer: no idea"],
                        mode="rewrite")

    assert not recording.written
    assert recording.problems[0].startswith("the recorded run failed: ")
    assert _contents(team) == before


def test_a_team_agent_with_a_script_keeps_it_while_the_others_record(write_file):
    team = write_file("team.yaml", TEAM.replace(
        "        recording: cassettes/team.calculator.yaml\n", CALCULATOR_SCRIPT))

    recording = _record(team, RESEARCHER)

    assert (recording.problems, recording.recorded) == ([], 2)
    assert recording.cassettes == [_files(team)[0]] and not _files(team)[1].exists()
    assert run_scenario(team).passed


def test_a_team_without_a_recording_says_where_to_give_one(write_file):
    researcher = "        recording: cassettes/team.researcher.yaml\n"
    script = "        script: [{tool_calls: [{name: population, args: {city: Paris}}]}, done]\n"
    team = write_file("team.yaml", TEAM.replace(researcher, script).replace(
        "        recording: cassettes/team.calculator.yaml\n", CALCULATOR_SCRIPT))

    with pytest.raises(ScenarioError) as info:
        _record(team, [])

    assert str(info.value) == (f"{team}:14: agents.agent_workflow: none of its team agents "
                               "has a `recording:` (a cassette path) to record into")


def test_team_recordings_in_two_folders_are_written_together_and_replay(write_file):
    team = write_file("team.yaml", TEAM.replace("recording: cassettes/team.calculator.yaml",
                                                "recording: other/team.calculator.yaml"))

    recording = _record(team, RESEARCHER + CALCULATOR)

    assert (recording.problems, recording.written) == ([], True)
    assert (team.parent / "other" / "team.calculator.yaml").is_file()
    assert run_scenario(team).passed


def test_live_models_by_name_must_name_every_recorded_team_agent(team):
    with pytest.raises(ScenarioError) as info:
        record_scenario(team, "agent_workflow", {"researcher": ScriptedLLM(RESEARCHER, strict=False)},
                         "once")

    assert str(info.value) == (f"{team}:14: agents.agent_workflow: no live model for team agent "
                               "`calculator` (given: researcher); give one LLM, or (a team) one "
                               "for each agent it records")
