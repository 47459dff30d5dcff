"""Workflow agents in the harness: agent types, teams, traces, expectations, human answers."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentkit.harness import load
from agentkit.harness._agent_types import register_agent_type, resolve_agent_type
from agentkit.scenario import AGENT_TYPES, ScenarioError, run_scenario
from agentkit.scenario._model import Expect, Turn
from agentkit.scenario.check import check_expectations
from tests.scenario_text import adding_scenario

SCENARIOS = Path(__file__).parents[2] / "scenarios"

TEAM = adding_scenario("team", """\
agents:
  agent_workflow:
    root: front
    team:
      - name: front
        description: Routes.
        tools: []
        script:
          - tool_calls: [{name: handoff, args: {to_agent: math, reason: sums}}]
      - name: math
        description: Adds.
        kind: react
        tools: [add]
        script:
          - "Thought: add\\nAction: add\\nAction Input: {\\"a\\": 2, \\"b\\": 3}"
          - "Thought: done\\nAnswer: 5"
""")


def _team(**replace: str) -> str:
    text = TEAM
    for old, new in replace.items():
        text = text.replace(old, new)
    return text


def test_the_workflow_agent_types_are_registered() -> None:
    assert {"function_agent", "react_agent", "agent_workflow"} <= set(AGENT_TYPES)


def test_a_team_trace_has_agent_steps_tool_call_agents_and_handoffs(write_file) -> None:
    result = run_scenario(write_file("team.yaml", TEAM), "agent_workflow")
    assert result.passed, result.problems
    turn = result.trace.turns[0]
    assert [s.details["agent"] for s in turn.steps] == ["front", "math", "math"]
    assert [(c.name, c.agent) for c in turn.tool_calls] == [("handoff", "front"), ("add", "math")]
    assert turn.details["agents"] == ["front", "math"]
    assert turn.details["handoffs"] == [{"from": "front", "to": "math", "reason": "sums"}]
    assert [s.is_last for s in turn.steps] == [False, False, True]
    assert turn.steps[0].input == "What is 2 + 3?" and turn.steps[1].input is None


def test_a_team_trace_is_byte_identical_across_runs(write_file) -> None:
    path = write_file("team.yaml", TEAM)
    assert run_scenario(path, "agent_workflow").trace.to_json() == run_scenario(
        path, "agent_workflow").trace.to_json()


def test_runner_traces_carry_no_agent_fields() -> None:
    data = run_scenario(SCENARIOS / "single_tool_call.yaml", "react").trace.to_dict()
    assert "agents" not in data["turns"][0]
    assert all("agent" not in c for s in data["turns"][0]["steps"] for c in s["tool_calls"])


def test_a_handoffs_expectation_passes_and_fails_with_the_sequence(write_file) -> None:
    trace = run_scenario(write_file("team.yaml", TEAM), "agent_workflow").trace
    turns = [Turn(user="What is 2 + 3?")]
    good = Expect.model_validate({"handoffs": {"calls": [{"from": "front", "to": "math"}]}})
    bad = Expect.model_validate({"handoffs": {"calls": [{"from": "math", "to": "front"}]}})
    assert check_expectations(trace, turns, good) == []
    assert check_expectations(trace, turns, bad) == [
        "handoffs (strict): call 1: expected math -> front, got front -> math"]


def test_a_tool_call_expectation_can_name_the_agent(write_file) -> None:
    trace = run_scenario(write_file("team.yaml", TEAM), "agent_workflow").trace
    turns = [Turn(user="q")]
    expect = Expect.model_validate({"tool_calls": {"match": "subset", "args": "ignore",
                                                   "calls": [{"name": "add", "agent": "front"}]}})
    (problem,) = check_expectations(trace, turns, expect)
    assert "expected front: add({}) but it was not made" in problem


@pytest.mark.parametrize(("replace", "message"), [
    ({"    root: front\n": ""}, "a team of several agents needs a `root` (one of front, math)"),
    ({"root: front": "root: back"}, "root `back` is not a team agent (front, math)"),
    ({"name: math": "name: front"}, "team agent names must be unique: front"),
    ({"        tools: []\n": "        tools: []\n        can_handoff_to: [ghost]\n"},
     "team agent `front` can_handoff_to names unknown agent(s) ghost (team: front, math)"),
    ({"    root: front\n": "    root: front\n    script: [x]\n"},
     "a team's scripts belong to its agents"),
])
def test_a_malformed_team_is_a_loader_error_naming_the_line(write_file, replace, message) -> None:
    path = write_file("team.yaml", _team(**replace))
    with pytest.raises(ScenarioError) as info:
        load(path)
    assert str(info.value).startswith(f"{path}:")
    assert message in str(info.value)


def test_a_team_agent_without_a_script_is_a_loader_error(write_file) -> None:
    path = write_file("team.yaml", TEAM.replace(
        "        script:\n          - tool_calls: [{name: handoff",
        "        xscript:\n          - tool_calls: [{name: handoff"))
    with pytest.raises(ScenarioError, match="unknown field `xscript`"):
        load(path)


def test_a_team_agent_naming_an_unknown_tool_is_an_error_naming_the_line(write_file) -> None:
    path = write_file("team.yaml", TEAM.replace("tools: [add]", "tools: [subtract]"))
    with pytest.raises(ScenarioError) as info:
        run_scenario(path, "agent_workflow")
    assert str(info.value) == (f"{path}:19: agents.agent_workflow.team.1.tools: unknown tool(s) "
                               "subtract (the scenario's tools: add)")


def test_a_workflow_asking_for_input_with_no_human_answer_left_fails_the_turn(write_file) -> None:
    text = (SCENARIOS / "human_in_the_loop.yaml").read_text().replace(
        '    human: ["A-1002"]\n', "")
    result = run_scenario(write_file("scenarios/hitl.yaml", text), "function_agent")
    assert "the workflow asked for input ('Which order id?') but the turn has no scripted " \
           "`human` answer left" in result.trace.turns[0].error


def test_unused_human_answers_fail_the_turn(write_file) -> None:
    text = (SCENARIOS / "human_in_the_loop.yaml").read_text().replace(
        'human: ["A-1002"]', 'human: ["A-1002", "extra"]')
    result = run_scenario(write_file("scenarios/hitl.yaml", text), "function_agent")
    assert "1 scripted `human` answer(s) were never asked for" in result.trace.turns[0].error


HUMAN_UNDER_REACT = adding_scenario("asking", """\
  - user: And now?
    human: ["yes"]
agents:
  react:
    script: ["Thought: t\\nAnswer: 5", "Thought: t\\nAnswer: 5"]
""")


def test_human_answers_under_an_agent_type_that_takes_none_are_an_error_at_the_turn(
        write_file) -> None:
    path = write_file("asking.yaml", HUMAN_UNDER_REACT)

    with pytest.raises(ScenarioError) as info:
        run_scenario(path, "react")

    assert str(info.value) == (
        f"{path}:8: turns.1.human: agent type `react` does not take human answers (agent types "
        "that do: function_agent, react_agent, agent_workflow); run this scenario under one of "
        "those")


def test_a_registered_agent_type_takes_human_answers_when_registered_with_human(
        write_file) -> None:
    path = write_file("asking.yaml", HUMAN_UNDER_REACT.replace("  react:\n", "  asker:\n"))
    with AGENT_TYPES.scoped():
        register_agent_type("asker", resolve_agent_type("react_agent").factory, human=True)
        result = run_scenario(path, "asker")

    # it got the answers: the workflow never asked, so they are reported unused
    assert "1 scripted `human` answer(s) were never asked for" in result.trace.turns[1].error


def test_the_human_answer_is_in_the_trace() -> None:
    result = run_scenario(SCENARIOS / "human_in_the_loop.yaml", "react_agent")
    assert result.passed, result.problems
    assert result.trace.turns[0].details["human"] == [{"request": "Which order id?",
                                                       "response": "A-1002"}]


def test_a_failed_workflow_turn_leaves_the_memory_empty() -> None:
    result = run_scenario(SCENARIOS / "workflow_max_iterations.yaml", "function_agent")
    assert result.passed, result.problems
    assert result.trace.turns[0].memory == []
