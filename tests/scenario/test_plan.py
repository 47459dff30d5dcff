"""Parse apart from plan: loading a scenario reads and validates the file and nothing else;
what needs the agent-type registry, the tools' code, MCP servers or a recorded run is found by
planning it (agentkit.harness.plan_scenario), which every run does before anything runs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from agentkit.harness import (
    ScenarioResult,
    load,
    plan_scenario,
    register_agent_type,
    renderable_agent_types,
    run_scenario,
)
from agentkit.harness._agent_types import AGENT_TYPES
from agentkit.scenario import ScenarioError, load_scenario
from tests.scenario_text import adding_scenario

from .conftest import MINIMAL, TRAJECTORY_SCENARIO

ROOT = Path(__file__).resolve().parents[2]


def test_loading_does_not_ask_the_registry_and_planning_names_the_unknown_agent_type(
        write_file):
    path = write_file("bogus.yaml", MINIMAL.replace("function_calling:", "functon_calling:"))

    scenario = load_scenario(path)  # the file is well formed
    with pytest.raises(ScenarioError) as info:
        plan_scenario(scenario)

    assert str(info.value).startswith(f"{path}:8: agents.functon_calling: unknown agent type "
                                      "`functon_calling`; did you mean `function_calling`?")


def test_loading_does_not_import_the_tools_and_planning_checks_the_trajectorys_calls(
        write_file):
    path = write_file("traj.yaml", TRAJECTORY_SCENARIO.replace("  - call: add\n",
                                                               "  - call: ad\n"))

    scenario = load_scenario(path)
    with pytest.raises(ScenarioError) as info:
        plan_scenario(scenario)

    assert str(info.value).startswith(f"{path}:8: trajectory.0.call: unknown tool `ad`")


def test_a_run_plans_a_scenario_it_is_given_loaded(write_file):
    scenario = load_scenario(write_file("bogus.yaml",
                                        MINIMAL.replace("function_calling:", "nobody:")))

    with pytest.raises(ScenarioError, match=r"agents\.nobody: unknown agent type `nobody`"):
        run_scenario(scenario, "nobody")


def test_a_trajectory_scenario_without_agents_gets_them_when_planned(write_file):
    path = write_file("all.yaml", TRAJECTORY_SCENARIO.replace("agents: [mine]\n", ""))

    loaded = load_scenario(path)
    assert loaded.agents == {}  # who can render it is the registry's to say

    assert list(plan_scenario(loaded).agents) == renderable_agent_types()


def test_an_empty_agents_without_a_trajectory_is_still_a_file_error(write_file):
    path = write_file("none.yaml", MINIMAL[:MINIMAL.index("agents:")] + "agents: {}\n")

    with pytest.raises(ScenarioError, match=r"agents: needs at least 1 entry; add one"):
        load_scenario(path)


def test_planning_runs_each_check_once_a_plan_can_be_repeated(write_file):
    register_agent_type("mine", lambda context: None, trajectory="function_calling")
    try:
        scenario = load(write_file("traj.yaml", TRAJECTORY_SCENARIO))
        assert plan_scenario(scenario) is scenario
        assert list(scenario.agents) == ["mine"]
    finally:
        del AGENT_TYPES["mine"]


def test_the_run_type_is_the_harnesss():
    assert ScenarioResult.__module__ == "agentkit.harness._runner"


@pytest.mark.slow  # a fresh interpreter
def test_importing_the_file_format_imports_no_running_part():
    code = ("import sys, agentkit.scenario\n"
            "print(sorted(m for m in sys.modules if m.startswith(('agentkit.harness', "
            "'agentkit.verdict', 'agentkit.agent.'))))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout

    assert out.strip() == "[]"


def test_the_names_users_import_from_the_old_paths_are_the_new_ones():
    import agentkit.harness as harness
    import agentkit.scenario as scenario
    import agentkit.trace as trace
    from agentkit.scenario import agent_types, mcp, project, runner

    for name in ("register_agent_type", "AgentType", "AgentContext", "AGENT_TYPES",
                 "run_scenario", "run_all", "ScenarioResult"):
        assert getattr(scenario, name) is getattr(harness, name)
    assert scenario.Trace is trace.Trace
    assert agent_types.register_agent_type is harness.register_agent_type
    assert runner.execute_scenario is harness.execute_scenario
    assert project.activated is harness.activated
    assert mcp.close_session_servers is harness.close_session_servers
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        scenario.nothing


def test_an_agent_types_expected_calls_may_name_what_its_script_calls_and_nothing_else(
        write_file):
    """A framework team's hand-off tool (`transfer_to_calculator`) is not a scenario tool, but
    the agent type's script has its model call it: its own expectation may name it. A name
    neither gives is still an error at its line."""
    scenario = adding_scenario("team", """\
agents:
  function_calling:
    script:
      - tool_calls: [{name: transfer_to_calculator, args: {}}]
      - tool_calls: [{name: add, args: {a: 2, b: 3}}]
      - 2 + 3 = 5
    expect:
      tool_calls:
        calls:
          - {name: transfer_to_calculator, args: {}}
          - {name: add, args: {a: 2, b: 3}}
""")
    plan_scenario(load_scenario(write_file("team.yaml", scenario)))  # no error

    typo = write_file("typo.yaml", scenario.replace("- {name: add,", "- {name: ad,"))
    with pytest.raises(ScenarioError) as info:
        plan_scenario(load_scenario(typo))

    assert "expect.tool_calls.calls.1.name: unknown tool `ad`; did you mean `add`?" \
        in str(info.value)


def test_a_loaded_scenario_replayed_again_is_planned_again_only_when_what_it_checked_changed(
        write_file, monkeypatch):
    import agentkit.harness._plan as planning

    planned: list[object] = []
    real = planning.plan_scenario
    monkeypatch.setattr(planning, "plan_scenario", lambda s: planned.append(s) or real(s))
    scenario = load_scenario(write_file("again.yaml", MINIMAL))

    load(scenario)
    assert run_scenario(scenario, "function_calling").passed
    assert len(planned) == 1  # the replay did not plan it again

    with AGENT_TYPES.scoped():
        register_agent_type("newcomer", AGENT_TYPES["function_calling"])
        load(scenario)  # another registry: the agent-type names are checked again
        assert len(planned) == 2
    load(scenario)  # the scoped registration undone: the registry changed again
    assert len(planned) == 3
    load(scenario.model_copy(deep=True))  # a copy (a variant's, changed after it is made)
    assert len(planned) == 4

    resumed = load_scenario(write_file("resumed.yaml", """\
        format: 1
        name: resumed
        tools: [{ref: "mocks.tools:add"}]
        turns: [{user: What is 2 + 3?}]
        agents:
          function_agent:
            recording: cassettes/resumed.function_agent.yaml
          agent_workflow:
            resume_from: {recording: function_agent, step: 1}
            team:
              - {name: Agent, description: Arithmetic., script: [It is 5.]}
        """))
    load(resumed)
    load(resumed)  # its recorded trace is as it was (none yet): not planned again
    assert planned[-1:] == [resumed] and len(planned) == 5
    recorded = Path(resumed.path).parent / "__snapshots__" / "resumed" / "function_agent.json"
    recorded.parent.mkdir(parents=True)
    recorded.write_text('{"turns": [{"steps": [{}, {}]}]}')
    load(resumed)  # recorded since: its step count is checked again
    assert planned[-2:] == [resumed, resumed]
    load(resumed)
    assert len(planned) == 6
