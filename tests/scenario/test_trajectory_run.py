"""Running a trajectory scenario: every agent type makes the same calls and gives the same
answer from one description, a user's own agent type renders its own format, and the
expectations a trajectory implies catch an agent that strays from it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentkit.agent import FunctionCallingAgent
from agentkit.harness._agent_types import AgentContext, AgentTypeError, renderable_agent_types
from agentkit.harness._runner import load
from agentkit.llms.mock import ScriptedResponse, tool_call
from agentkit.scenario import AGENT_TYPES, ScenarioError, register_agent_type, run_scenario
from agentkit.scenario._trajectory import (
    RenderContext,
    TrajectoryStep,
    compile_trajectory,
)
from agentkit.scenario._trajectory_run import TrajectoryDeviationError, TrajectoryOutputs

BUNDLED = Path(__file__).parents[2] / "scenarios" / "trajectory_parallel_lookups.yaml"
ANSWER = "Paris and Tokyo have 16062886 people together; Lima has 10004000."

HEAD = """\
format: 1
name: mine
tools:
  - {ref: "mocks.tools:population", latency: 1.0}
  - {ref: "mocks.tools:add"}
turns:
  - user: Paris and Tokyo together?
trajectory:
  - parallel:
      - {call: population, args: {city: Paris}}
      - {call: population, args: {city: Tokyo}}
  - call: add
    args: {a: $1, b: $2}
  - answer: "Together: {$3}."
"""


@pytest.fixture(scope="module")
def bundled_results():
    scenario = load(BUNDLED)
    return {name: run_scenario(scenario, name) for name in scenario.agents}


def _calls(result) -> list[tuple[str, dict[str, Any]]]:
    return sorted((c.name, sorted(c.args.items())) for c in result.trace.tool_calls)


# ----------------------------------------------------------------- the bundled scenario
def test_the_bundled_trajectory_scenario_runs_under_every_bundled_renderable_type(
        bundled_results):
    assert list(bundled_results) == renderable_agent_types()
    assert {name: result.problems for name, result in bundled_results.items()} == {
        name: [] for name in bundled_results}


def test_every_agent_type_makes_the_same_calls_with_the_same_arguments(bundled_results):
    expected = _calls(bundled_results["react"])

    assert expected == sorted([("add", [("a", 2102650), ("b", 13960236)]),
                               ("population", [("city", "Lima")]),
                               ("population", [("city", "Paris")]),
                               ("population", [("city", "Tokyo")])])
    assert all(_calls(result) == expected for result in bundled_results.values())


def test_every_agent_type_gives_the_answer_with_the_actual_outputs(bundled_results):
    assert {result.trace.turns[0].response for result in bundled_results.values()} == {ANSWER}


def test_the_architectures_differ_in_simulated_wall_time(bundled_results):
    walls = {name: result.trace.totals().wall_time for name, result in bundled_results.items()}

    # openai_sdk_agent (through the bridge) runs tools of its own, which take no simulated time
    assert walls == {"react": 4.0, "react_multimodal": 4.0, "react_agent": 4.0,
                     "function_calling": 3.0, "function_agent": 3.0,
                     "llm_compiler": 2.0, "coa": 2.0, "openai_sdk_agent": 0.0}


def test_the_architectures_differ_in_llm_calls(bundled_results):
    calls = {name: result.trace.totals().llm_calls for name, result in bundled_results.items()}

    assert calls == {"react": 5, "react_multimodal": 5, "react_agent": 5,
                     "function_calling": 4, "function_agent": 4, "llm_compiler": 2, "coa": 2,
                     "openai_sdk_agent": 4}


def test_a_rendered_script_also_drives_the_openai_backend_against_the_fake_endpoint(
        write_file):
    scenario = load(write_file("mine.yaml", HEAD + "agents:\n  function_calling: "
                                                   "{backend: openai}\n"))

    result = run_scenario(scenario, "function_calling")

    assert (result.problems, result.trace.turns[0].response) == ([], "Together: 16062886.")


@pytest.mark.parametrize("agent_type", ["react", "function_agent", "llm_compiler", "coa"])
def test_a_streamed_turn_gets_the_same_answer(write_file, agent_type):
    scenario = load(write_file("mine.yaml", HEAD.replace(
        "  - user: Paris and Tokyo together?\n",
        "  - user: Paris and Tokyo together?\n    stream: true\n")))

    result = run_scenario(scenario, agent_type)

    assert (result.problems, result.trace.turns[0].response) == ([], "Together: 16062886.")


# ----------------------------------------------------------------- a user's own agent type
def _one_call_per_reply(context: RenderContext) -> list[Any]:
    """A renderer of the user's own: every call in a reply of its own, then the answer."""
    outputs, answer = context.outputs, context.trajectory.answer
    items = [context.deferred(lambda call=call: ScriptedResponse(tool_calls=[
        tool_call(call.name, **call.arguments(outputs))]), call.refs)
        for call in context.trajectory.calls]
    return [*items, context.deferred(lambda: answer.render(outputs), answer.refs)]


@pytest.fixture
def sequential_type():
    def factory(context):
        return FunctionCallingAgent.from_tools(list(context.tools), llm=context.llm,
                                               **context.params)

    with AGENT_TYPES.scoped():  # the type and its renderer are gone after the test
        register_agent_type("sequential_fc", factory, trajectory=_one_call_per_reply)
        yield "sequential_fc"


def test_a_users_agent_type_registers_its_renderer_beside_its_factory(sequential_type,
                                                                       write_file):
    scenario = load(write_file("mine.yaml", HEAD))

    assert sequential_type in scenario.agents
    result = run_scenario(scenario, sequential_type)
    assert result.problems == []
    assert result.trace.totals().wall_time == 2.0  # its replies make the look-ups one by one


def _caller(context: AgentContext) -> FunctionCallingAgent:
    """A user's agent type whose LLM speaks function calling."""
    return FunctionCallingAgent.from_tools(list(context.tools), llm=context.llm)


def test_a_users_agent_type_renders_like_the_bundled_type_its_trajectory_names(write_file):
    with AGENT_TYPES.scoped():
        register_agent_type("caller", _caller, trajectory="function_calling")
        result = run_scenario(load(write_file("mine.yaml", HEAD)), "caller")

    assert result.problems == []
    assert result.trace.totals().wall_time == 1.0  # the look-ups as one reply's parallel calls


def test_a_users_agent_type_may_name_a_wire_format_to_render_like(write_file):
    with AGENT_TYPES.scoped():
        register_agent_type("caller", _caller, trajectory="tool_calls")
        result = run_scenario(load(write_file("mine.yaml", HEAD)), "caller")

    assert (result.problems, result.trace.turns[0].response) == ([], "Together: 16062886.")


def test_an_unknown_trajectory_name_is_an_error_suggesting_the_nearest_and_registers_nothing():
    with AGENT_TYPES.scoped():
        with pytest.raises(AgentTypeError) as info:
            register_agent_type("caller", _caller, trajectory="function_caling")

        assert "caller" not in AGENT_TYPES
    assert str(info.value) == (
        "agent type `caller` (register_agent_type): trajectory: unknown trajectory format "
        "`function_caling`; did you mean `function_calling`? (give a wire format or a bundled "
        "agent type to render like: coa, function_agent, function_calling, llm_compiler, "
        "react, react_agent, react_multimodal, tool_calls; or an import ref "
        "\"package.module:render\" of your own renderer)")


# ----------------------------------------------------------------- derived expectations
def test_an_agent_type_with_a_script_that_strays_fails_the_trajectory(write_file):
    scenario = load(write_file("mine.yaml", HEAD + """\
agents:
  react:
    script:
      - "Thought: t\\nAction: population\\nAction Input: {\\"city\\": \\"Lima\\"}"
      - "Thought: t\\nAnswer: 42"
"""))

    problems = run_scenario(scenario, "react").problems

    assert problems == [
        "trajectory call 1 population(city=\"Paris\") was not made (made: "
        "population({\"city\": \"Lima\"}))",
        "trajectory call 2 population(city=\"Tokyo\") was not made (made: "
        "population({\"city\": \"Lima\"}))",
        "trajectory call 3 add(a=$1, b=$2) was not made (made: population({\"city\": \"Lima\"}))",
        "unexpected tool call population({\"city\": \"Lima\"}) (not in the trajectory)",
        "the trajectory's answer uses the output of call 3, which was not made"]


def test_a_reference_matches_the_output_value_it_names(write_file):
    scenario = load(write_file("mine.yaml", HEAD + """\
agents:
  function_calling:
    script:
      - tool_calls: [{name: population, args: {city: Paris}}, {name: population, args: {city: Tokyo}}]
      - tool_calls: [{name: add, args: {a: 2102650, b: 1}}]
      - "Together: 2102651."
"""))

    problems = run_scenario(scenario, "function_calling").problems

    assert problems == [
        "trajectory call 3 add(a=$1, b=$2) was not made (made: population({\"city\": \"Paris\"}), "
        "population({\"city\": \"Tokyo\"}), add({\"a\": 2102650, \"b\": 1}))",
        "unexpected tool call add({\"a\": 2102650, \"b\": 1}) (not in the trajectory)",
        "the trajectory's answer uses the output of call 3, which was not made"]


def test_a_call_that_starts_before_the_call_whose_output_it_uses_fails(write_file):
    head = HEAD.replace('{ref: "mocks.tools:add"}', '{ref: "mocks.tools:add", latency: 1.0}')
    scenario = load(write_file("mine.yaml", head + """\
agents:
  function_calling:
    script:
      - tool_calls:
          - {name: population, args: {city: Paris}}
          - {name: population, args: {city: Tokyo}}
          - {name: add, args: {a: 2102650, b: 13960236}}
      - "Together: 16062886."
"""))

    problems = run_scenario(scenario, "function_calling").problems

    assert problems == ["trajectory call 3 add(a=$1, b=$2) started at 0.00s, before call 1 "
                        'population({"city": "Paris"}) (whose output it uses) finished at 1.00s']


def test_a_wrong_answer_fails_the_trajectory(write_file):
    scenario = load(write_file("mine.yaml", HEAD + """\
agents:
  function_calling:
    script:
      - tool_calls: [{name: population, args: {city: Paris}}, {name: population, args: {city: Tokyo}}]
      - tool_calls: [{name: add, args: {a: 2102650, b: 13960236}}]
      - "Together: a lot."
"""))

    assert run_scenario(scenario, "function_calling").problems == [
        "final answer 'Together: a lot.' is not the trajectory's answer 'Together: 16062886.'"]


def test_expectations_given_in_the_file_replace_the_derived_ones(write_file):
    scenario = load(write_file("mine.yaml", HEAD + """\
expect:
  answer: {contains: "a lot"}
  tool_calls: {match: subset, args: ignore, calls: [{name: population}]}
agents:
  function_calling:
    script:
      - tool_calls: [{name: population, args: {city: Lima}}]
      - "Together: a lot."
"""))

    assert run_scenario(scenario, "function_calling").problems == []


# ----------------------------------------------------------------- run-time problems
def test_a_format_that_cannot_carry_the_trajectory_is_an_error_at_its_line(write_file):
    path = write_file("mine.yaml", HEAD.replace("Together: {$3}.", "Together :) {$3}."))

    with pytest.raises(ScenarioError) as info:
        run_scenario(load(path), "llm_compiler")

    assert str(info.value) == (f"{path}:14: trajectory.2.answer: llm_compiler: the answer "
                               "'Together :) {$3}.' has unbalanced parentheses: LLMCompiler's "
                               "`Finish(...)` cannot carry it")


def test_outputs_of_a_call_not_made_yet_are_a_clear_error():
    steps = [TrajectoryStep.model_validate(s) for s in (
        {"call": "population", "args": {"city": "Paris"}}, {"answer": "{$1}"})]
    outputs = TrajectoryOutputs(compile_trajectory(steps))

    with pytest.raises(TrajectoryDeviationError) as info:
        outputs.value(1)

    assert str(info.value) == ("the script needs the output of trajectory call 1 "
                               "population(city=\"Paris\"), which the agent has not made (made "
                               "so far: none)")
