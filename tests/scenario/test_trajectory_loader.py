"""Loading a scenario given as a trajectory: numbering, references, which agent types run it,
and a clear ``file:line: field: problem`` for every mistake."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentkit.harness import load, renderable_agent_types
from agentkit.scenario import AGENT_TYPES, AgentType, ScenarioError
from agentkit.scenario._trajectory import Ref, compile_trajectory

HEAD = """\
format: 1
name: traj
tools:
  - ref: mocks.tools:population
  - ref: mocks.tools:add
turns:
  - user: How many people live in Paris and Tokyo?
"""

TRAJECTORY = """\
trajectory:
  - call: population
    args: {city: Paris}
  - parallel:
      - {call: population, args: {city: Tokyo}}
      - {call: population, args: {city: Lima}}
  - call: add
    args: {a: $1, b: $2}
  - answer: "Together: {$4}."
"""


def _load(write_file, body: str, head: str = HEAD):
    return load(write_file("traj.yaml", head + body))


def _error(write_file, body: str, head: str = HEAD) -> tuple[Path, str]:
    path = write_file("traj.yaml", head + body)
    with pytest.raises(ScenarioError) as info:
        load(path)
    return path, str(info.value)


def _compiled(scenario):
    return compile_trajectory(scenario.trajectory)


# ----------------------------------------------------------------- what a trajectory means
def test_calls_are_numbered_in_order_with_a_parallel_groups_calls_in_theirs(write_file):
    trajectory = _compiled(_load(write_file, TRAJECTORY))

    assert [(c.number, c.name, dict(c.args)) for c in trajectory.calls] == [
        (1, "population", {"city": "Paris"}), (2, "population", {"city": "Tokyo"}),
        (3, "population", {"city": "Lima"}), (4, "add", {"a": Ref(1), "b": Ref(2)})]


def test_a_parallel_group_is_one_step(write_file):
    trajectory = _compiled(_load(write_file, TRAJECTORY))

    assert [[c.number for c in group] for group in trajectory.groups] == [[1], [2, 3], [4]]


def test_a_whole_dollar_value_is_a_reference_and_records_the_dependency(write_file):
    trajectory = _compiled(_load(write_file, TRAJECTORY))

    assert trajectory.call(4).refs == (1, 2)


def test_references_inside_lists_and_objects_are_read(write_file):
    body = TRAJECTORY.replace("args: {a: $1, b: $2}", "args: {a: $1, b: $2}\n  - call: add\n"
                              "    args: {a: [$1, {x: $3}], b: 1}")
    trajectory = compile_trajectory(_load(write_file, body, HEAD).trajectory)

    assert trajectory.call(5).args["a"] == [Ref(1), {"x": Ref(3)}]


def test_the_answer_keeps_its_placeholders_and_names_the_calls_it_uses(write_file):
    answer = _compiled(_load(write_file, TRAJECTORY)).answer

    assert (answer.text, answer.refs) == ("Together: {$4}.", (4,))


def test_a_trajectory_scenario_without_agents_runs_under_every_type_with_a_renderer(write_file):
    scenario = _load(write_file, TRAJECTORY)

    assert list(scenario.agents) == renderable_agent_types()
    assert set(scenario.agents) >= {"react", "function_calling", "llm_compiler", "coa",
                                    "react_multimodal", "function_agent", "react_agent"}


def test_agents_may_be_listed_by_name_only(write_file):
    scenario = _load(write_file, TRAJECTORY + "agents: [react, coa]\n")

    assert list(scenario.agents) == ["react", "coa"]
    assert scenario.agents["coa"].script is None


def test_agents_may_give_settings_without_a_script(write_file):
    scenario = _load(write_file, TRAJECTORY + "agents:\n  react:\n  llm_compiler:\n"
                                              "    params: {max_replans: 0}\n")

    assert scenario.agents["llm_compiler"].params == {"max_replans": 0}
    assert scenario.agents["react"].params == {}


def test_an_agent_type_with_its_own_script_keeps_it(write_file):
    scenario = _load(write_file, TRAJECTORY + "agents:\n  react:\n    script: [\"Answer: x\"]\n"
                                              "  coa:\n")

    assert scenario.agents["react"].script == ["Answer: x"]


# ----------------------------------------------------------------- mistakes, located
@pytest.mark.parametrize("body, line, field, problem", [
    (TRAJECTORY.replace("call: add", "call: ad"), 14, "trajectory.2.call",
     "unknown tool `ad`; did you mean `add`? (the scenario's tools: population, add)"),
    (TRAJECTORY.replace("{city: Lima}", "{city: Lima, town: Lima}"), 13,
     "trajectory.1.parallel.1.args.town",
     "`population` has no parameter `town`; (its parameters: city)"),
    (TRAJECTORY.replace("{a: $1, b: $2}", "{a: $1}"), 15, "trajectory.2.args",
     "`add` needs b; add it"),
    (TRAJECTORY.replace("{a: $1, b: $2}", "{a: $1, b: $5}"), 15, "trajectory.2.args.b",
     "$5 does not name an earlier call: call 4 can use the outputs of calls 1 to 3"),
    (TRAJECTORY.replace("{city: Paris}", "{city: $1}"), 10, "trajectory.0.args.city",
     "$1 does not name an earlier call: call 1 can use the outputs of no call (it is the first)"),
    (TRAJECTORY.replace("{city: Lima}", "{city: $2}"), 13, "trajectory.1.parallel.1.args.city",
     "$2 is in the same parallel group as call 3: calls made together cannot use each other's "
     "outputs; move it to a later step"),
    (TRAJECTORY.replace("{a: $1, b: $2}", "{a: $0, b: $2}"), 15, "trajectory.2.args.a",
     "$0 does not name an earlier call: call 4 can use the outputs of calls 1 to 3"),
    (TRAJECTORY.replace("{city: Paris}", "{city: \"$1 Paris\"}"), 10, "trajectory.0.args.city",
     "'$1 Paris': `$N` must be a whole value (`$1`), not inside text (LLMCompiler plans would "
     "read it as a reference)"),
    (TRAJECTORY.replace("{city: Paris}", "{city: 2024-01-01}"), 10, "trajectory.0.args.city",
     "datetime.date(2024, 1, 1) (date) is not a JSON value; quote it to make it a string"),
    (TRAJECTORY.replace("{city: Paris}", "{city: .inf}"), 10, "trajectory.0.args.city",
     "inf is not a JSON number"),
    (TRAJECTORY.replace("Together: {$4}.", "Together: {$7}."), 16, "trajectory.3.answer",
     "{$7} names no call (the trajectory has 4)"),
    (TRAJECTORY.replace("  - answer: \"Together: {$4}.\"\n", ""), 9, "trajectory",
     "the trajectory has no `answer`; end it with `- answer: <the final answer>`"),
    (TRAJECTORY + "  - call: add\n    args: {a: 1, b: 2}\n", 17, "trajectory.4",
     "the answer (step 3) must be the last step; move the calls before it"),
])
def test_a_bad_trajectory_is_an_error_naming_file_line_and_field(write_file, body, line, field,
                                                                 problem):
    path, message = _error(write_file, body)

    assert message == f"{path}:{line}: {field}: {problem}"


@pytest.mark.parametrize("step, problem", [
    ("  - {call: add, answer: x}",
     "a trajectory step is one of `call` (with `args`), `parallel` (a list of calls) or "
     "`answer`; this one has call and answer"),
    ("  - {args: {a: 1}}",
     "a trajectory step is one of `call` (with `args`), `parallel` (a list of calls) or "
     "`answer`"),
    ("  - {answer: x, args: {a: 1}}", "`args` belong to a `call`"),
    ("  - {answer: \"  \"}", "the answer is empty; write the text the agent should answer"),
    ("  - {parallel: [{call: add, args: {a: 1, b: 2}}, {call: add, args: {a: 1, b: 2}}], "
     "thought: t}", "put thoughts on the calls of a parallel group"),
])
def test_a_malformed_step_is_an_error_at_that_step(write_file, step, problem):
    path, message = _error(write_file, "trajectory:\n" + step + "\n")

    assert message == f"{path}:9: trajectory.0: {problem}"


def test_a_parallel_group_needs_two_calls(write_file):
    path, message = _error(write_file, "trajectory:\n  - parallel: [{call: add, args: "
                                       "{a: 1, b: 2}}]\n  - answer: x\n")

    assert message == f"{path}:9: trajectory.0.parallel: needs at least 2 entry; add one"


@pytest.mark.parametrize("thought, problem", [
    ("\"two\\nlines\"", "a thought is one line (LLMCompiler plans and ReAct texts read one)"),
    ("\"Action: add\"", "a thought must not contain `Action:`: the agents' text formats would "
                        "read it as a marker"),
    ("\"see [FUNC x\"", "a thought must not contain `[FUNC`: the agents' text formats would "
                        "read it as a marker"),
])
def test_a_thought_the_text_formats_cannot_carry_is_an_error(write_file, thought, problem):
    path, message = _error(write_file, f"trajectory:\n  - answer: x\n    thought: {thought}\n")

    assert message == f"{path}:10: trajectory.0.thought: {problem}"


def test_an_unknown_step_field_gets_a_did_you_mean(write_file):
    path, message = _error(write_file, "trajectory:\n  - answr: x\n")

    assert message == f"{path}:9: trajectory.0.answr: unknown field `answr`; did you mean `answer`?"


def test_a_trajectory_describes_one_turn(write_file):
    head = HEAD + "  - user: And Lima?\n"
    path, message = _error(write_file, TRAJECTORY, head)

    assert message == (f"{path}:10: trajectory: a trajectory describes one turn, and this scenario "
                       "has 2; give multi-turn scenarios a script per agent type")


def test_an_unknown_agent_type_is_reported_as_unknown_not_as_unrenderable(write_file):
    path, message = _error(write_file, TRAJECTORY + "agents:\n  react:\n  mystery:\n")

    [line] = message.splitlines()
    assert line.startswith(f"{path}:19: agents.mystery: unknown agent type `mystery`")


def test_a_registered_type_without_a_renderer_needs_a_script(write_file, monkeypatch):
    monkeypatch.setitem(AGENT_TYPES, "plain", AgentType(AGENT_TYPES["react"].factory))
    path, message = _error(write_file, TRAJECTORY + "agents:\n  react:\n  plain:\n")

    assert message == (f"{path}:19: agents.plain: agent type `plain` cannot render a trajectory "
                       "(it has no renderer): give it a `script`, or register one with "
                       "register_agent_type(..., trajectory=renderer)")


def test_a_tool_that_cannot_be_imported_is_a_load_error(write_file):
    path, message = _error(write_file, TRAJECTORY, HEAD.replace("mocks.tools:add",
                                                                "mocks.tools:nothing_here"))

    assert message.startswith(f"{path}:5: tools.1.ref: cannot use `mocks.tools:nothing_here`")


def test_every_tool_that_cannot_be_imported_is_reported(write_file):
    head = HEAD.replace("mocks.tools:population", "mocks.tools:nowhere").replace(
        "mocks.tools:add", "mocks.tools:nothing_here")
    path, message = _error(write_file, TRAJECTORY, head)

    assert [line.split(": ", 2)[:2] for line in message.splitlines()] == [
        [f"{path}:4", "tools.0.ref"], [f"{path}:5", "tools.1.ref"]]
