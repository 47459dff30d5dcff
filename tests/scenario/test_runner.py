"""Running a scenario under an agent type: choosing the LLM, merging expectations, reporting
problems, and staying deterministic."""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path

import pytest

from agentkit.agent import FunctionCallingAgent
from agentkit.core.sim import UnmodelledLatencyWarning
from agentkit.harness import load
from agentkit.harness._runner import cassette_path
from agentkit.llms import errors
from agentkit.llms.cassette import CassetteError
from agentkit.llms.mock import ScriptedLLM
from agentkit.llms.types import ChatMessage
from agentkit.scenario import (
    AGENT_TYPES,
    ScenarioError,
    load_scenario,
    register_agent_type,
    run_all,
    run_scenario,
)
from agentkit.scenario._model import ErrorItem, Expect, Scenario, ScriptReply
from agentkit.scenario._script import to_mock_items
from tests.python_calls import harness_calls

from .conftest import MINIMAL

SCENARIOS = Path(__file__).resolve().parents[2] / "scenarios"

TWO_AGENTS = """\
format: 1
name: two
tools: [{ref: "mocks.tools:add"}]
turns: [{user: "What is 2 + 3?"}]
expect:
  answer: {contains: "5"}
  max_llm_calls: 1
agents:
  react:
    script:
      - "Thought: add.\\nAction: add\\nAction Input: {\\"a\\": 2, \\"b\\": 3}"
      - "Thought: done.\\nAnswer: 5"
    expect:
      max_llm_calls: 2
  function_calling:
    script:
      - tool_calls: [{name: add, args: {a: 2, b: 3}}]
      - "It is 5"
"""


# ----------------------------------------------------------------- choosing the agent type
def test_a_scenario_with_one_agent_type_runs_under_it_by_default(write_file):
    result = run_scenario(write_file("one.yaml", MINIMAL))

    assert (result.agent_type, result.passed, result.name) == (
        "function_calling", True, "demo[function_calling]")


def test_a_scenario_with_several_agent_types_needs_one_named(write_file):
    path = write_file("two.yaml", TWO_AGENTS)

    with pytest.raises(ScenarioError) as info:
        run_scenario(path)

    assert str(info.value) == (f"{path}: scenario `two` runs under react, function_calling; say "
                               "which agent type")


def test_an_agent_type_the_scenario_does_not_declare_is_an_error(write_file):
    path = write_file("one.yaml", MINIMAL)

    with pytest.raises(ScenarioError, match="scenario `demo` has no agent type `react` \\(it has "
                                            "function_calling\\)"):
        run_scenario(path, "react")


def test_an_unknown_agent_type_is_an_error_with_a_suggestion():
    scenario = Scenario.model_validate({"format": 1, "name": "s", "turns": [{"user": "hi"}],
                                        "agents": {"reactt": {"script": ["hi"]}}})

    with pytest.raises(ScenarioError) as info:
        run_scenario(scenario, "reactt")

    assert str(info.value) == ("s: agents.reactt: unknown agent type `reactt`; did you mean "
                               f"`react`? (known: {', '.join(sorted(AGENT_TYPES))}; add yours "
                               "under [tool.agentkit.agent_types] in pyproject.toml)")


def test_a_registered_agent_type_can_run_scenarios(write_file, restore_agent_types):
    register_agent_type("fc_no_parallel", lambda context: FunctionCallingAgent.from_tools(
        list(context.tools), llm=context.llm, allow_parallel_tool_calls=False))
    path = write_file("custom.yaml", MINIMAL.replace("function_calling:", "fc_no_parallel:"))

    assert run_scenario(path).passed


class _OwnLoopAgent:
    """An agent type whose sync chat runs the async one with ``asyncio.run`` (a plain loop)."""

    def __init__(self, agent: FunctionCallingAgent) -> None:
        self.agent = agent
        self.chat_history = agent.chat_history

    def chat(self, message: str) -> object:
        response = asyncio.run(self.agent.achat(message))
        self.chat_history = self.agent.chat_history
        return response


def test_a_turn_whose_latency_ran_on_a_plain_loop_carries_a_warning(write_file,
                                                                     restore_agent_types):
    register_agent_type("own_loop", lambda context: _OwnLoopAgent(
        FunctionCallingAgent.from_tools(list(context.tools), llm=context.llm)))
    path = write_file("own_loop.yaml", MINIMAL.replace("function_calling:",
                                                       "own_loop:\n    latency: 0.5"))

    with pytest.warns(UnmodelledLatencyWarning):
        result = run_scenario(path)

    [turn] = result.trace.to_dict()["turns"]
    assert turn["warnings"] == [
        "1 s of simulated latency ran on an event loop without virtual time (asyncio.run, "
        "pytest-asyncio), where concurrent calls cannot overlap: wall time counts them one "
        "after another. Run async code with agentkit.core.sim.run(...) or mark the test "
        "@pytest.mark.agentkit_virtual_time."]


def test_a_turn_on_virtual_time_has_no_warnings_in_its_trace(write_file):
    result = run_scenario(write_file("plain.yaml", MINIMAL.replace(
        "function_calling:", "function_calling:\n    latency: 0.5")))

    assert "warnings" not in result.trace.to_dict()["turns"][0]


def test_run_all_runs_every_declared_agent_type(write_file):
    results = run_all(write_file("two.yaml", TWO_AGENTS))

    assert [r.agent_type for r in results] == ["react", "function_calling"]


def test_run_all_can_be_limited_to_some_agent_types(write_file):
    results = run_all(write_file("two.yaml", TWO_AGENTS), ["function_calling", "unknown"])

    assert [r.agent_type for r in results] == ["function_calling"]


# ----------------------------------------------------------------- expectations per agent type
def test_an_agent_types_expect_overrides_the_scenarios_for_that_agent_only(write_file):
    path = write_file("two.yaml", TWO_AGENTS)

    react = run_scenario(path, "react")
    function_calling = run_scenario(path, "function_calling")

    assert react.problems == []
    assert function_calling.problems == ["2 LLM calls, more than max_llm_calls 1"]


def test_a_scenario_expectation_the_agent_type_does_not_override_still_applies(write_file):
    path = write_file("two.yaml", TWO_AGENTS.replace('Answer: 5"', 'Answer: five"'))

    assert run_scenario(path, "react").problems == [
        "final answer 'five' does not match contains '5'"]


# ----------------------------------------------------------------- params
def test_unknown_params_fail_naming_file_line_and_the_parameter(write_file):
    path = write_file("params.yaml", MINIMAL.replace(
        "    script:", "    params: {max_function_cals: 2}\n    script:"))

    with pytest.raises(ScenarioError) as info:
        run_scenario(path)

    assert str(info.value).startswith(f"{path}:9: agents.function_calling.params: ")
    assert "max_function_cals" in str(info.value)


def test_params_are_passed_to_the_agent(write_file):
    path = write_file("params.yaml", """\
        format: 1
        name: p
        tools: [{ref: "mocks.tools:population"}]
        turns: [{user: "Which is biggest?"}]
        agents:
          react:
            params: {max_iterations: 1}
            script:
              - "Thought: check.\\nAction: population\\nAction Input: {\\"city\\": \\"Paris\\"}"
        expect:
          error: {contains: Reached max iterations.}
        """)

    result = run_scenario(path)

    assert result.passed, result.problems
    assert result.trace.totals().llm_calls == 1


# ----------------------------------------------------------------- the script
@pytest.mark.agentkit_allow_unused_script
def test_unused_script_replies_are_a_problem(write_file):
    path = write_file("extra.yaml", MINIMAL + "      - an extra reply\n      - and another\n")

    result = run_scenario(path)

    assert result.problems == ["the script has 2 unused replies (the agent made 2 LLM calls)"]
    assert not result.passed


def test_a_script_error_item_becomes_the_typed_backend_error():
    item = ErrorItem.model_validate({"error": {"type": "rate_limit", "retry_after": 2.5}})

    [error] = to_mock_items([item])

    assert isinstance(error, errors.RateLimitError)
    assert (error.message, error.retry_after, error.status_code) == ("Rate limit reached", 2.5, 429)


def test_the_scripted_backend_raises_the_typed_error_of_a_script_error_item():
    llm = ScriptedLLM(to_mock_items([ErrorItem.model_validate({"error": {"type": "server"}})]),
                      max_retries=0)

    with pytest.raises(errors.ServerError, match="The server had an error"):
        llm.chat([ChatMessage(role="user", content="hi")])


@pytest.mark.parametrize(("kind", "cls"), [
    ("server", errors.ServerError), ("timeout", errors.APITimeoutError),
    ("bad_request", errors.BadRequestError), ("authentication", errors.AuthenticationError)])
def test_each_script_error_type_maps_to_its_backend_error(kind, cls):
    [error] = to_mock_items([ErrorItem.model_validate({"error": {"type": kind, "message": "m"}})])

    assert type(error) is cls and str(error) == "m"


def test_the_scripted_backend_raises_a_script_error_item_and_the_run_fails_with_it(write_file):
    path = write_file("rate.yaml", MINIMAL.replace(
        "    script:\n      - tool_calls: [{name: add, args: {a: 2, b: 3}}]\n      - 2 + 3 = 5\n",
        "    max_retries: 0\n    script:\n      - error: {type: rate_limit, message: slow down}\n"))

    result = run_scenario(path)

    assert result.problems == ["turn 1 failed: RateLimitError: slow down"]
    assert result.trace.llm_calls[0].error == "RateLimitError: slow down"


def test_a_given_llm_is_used_instead_of_the_script(write_file):
    llm = ScriptedLLM(["2 + 3 = 5"], name="mine")

    result = run_scenario(write_file("one.yaml", MINIMAL), llm=llm)

    assert result.llm is llm and llm.calls == 1
    assert result.trace.tool_calls == []


# ----------------------------------------------------------------- determinism
def test_the_trace_is_the_same_under_another_seed(write_file):
    path = write_file("one.yaml", MINIMAL)

    assert (run_scenario(path, seed=0).trace.to_json()
            == run_scenario(path, seed="other").trace.to_json())


def test_raw_ids_differ_under_another_seed_and_repeat_under_the_same(write_file):
    path = write_file("one.yaml", MINIMAL)

    def raw_tool_id(seed):
        llm = run_scenario(path, seed=seed).llm
        return llm.requests[-1].messages[1].tool_calls[0].tool_id

    assert raw_tool_id(0) == raw_tool_id(0)
    assert raw_tool_id(0) != raw_tool_id(1)


# ----------------------------------------------------------------- recordings
def test_the_default_cassette_lives_beside_the_scenario(write_file, tmp_path):
    scenario = run_scenario(write_file("one.yaml", MINIMAL)).scenario

    assert cassette_path(scenario, "function_calling") == (
        tmp_path / "cassettes" / "demo.function_calling.yaml")


def test_a_recording_path_is_relative_to_the_scenario_file(write_file, tmp_path):
    path = write_file("sub/rec.yaml", MINIMAL.replace(
        "    script:\n      - tool_calls: [{name: add, args: {a: 2, b: 3}}]\n      - 2 + 3 = 5\n",
        "    recording: tapes/rec.yaml\n"))
    assert cassette_path(load_scenario(path), "function_calling") == (
        tmp_path / "sub" / "tapes" / "rec.yaml")


def test_a_missing_recording_fails_the_run_with_a_cassette_error(write_file):
    path = write_file("rec.yaml", MINIMAL.replace(
        "    script:\n      - tool_calls: [{name: add, args: {a: 2, b: 3}}]\n      - 2 + 3 = 5\n",
        "    recording: tapes/rec.yaml\n"))

    with pytest.raises(CassetteError, match="cannot read cassette"):
        run_scenario(path)


# ----------------------------------------------------------------- root cause
def test_a_run_stopped_by_an_unexpected_error_names_that_error_as_its_root_cause(write_file):
    path = write_file("short.yaml", MINIMAL.replace("      - 2 + 3 = 5\n", ""))

    result = run_scenario(path)

    assert not result.passed
    assert (result.stopped_by or "").startswith("ScriptExhaustedError: ")


def test_an_expected_error_is_no_root_cause():
    result = run_scenario(SCENARIOS / "max_iterations.yaml", "react")

    assert result.passed and result.trace.turns[-1].error
    assert result.stopped_by is None


def test_a_run_that_fails_without_an_error_has_no_root_cause_to_put_first(write_file):
    path = write_file("wrong.yaml", MINIMAL + "expect:\n  answer: {contains: '6'}\n")

    result = run_scenario(path)

    assert not result.passed and result.stopped_by is None


def test_replays_on_one_thread_run_on_one_event_loop_built_once(write_file, monkeypatch):
    from agentkit.core import sim
    from agentkit.scenario import load_scenario

    scenario = load_scenario(write_file("loop.yaml", MINIMAL))
    assert run_scenario(scenario, "function_calling").passed  # the thread's loop exists now
    built: list[object] = []
    real = sim.VirtualTimeLoop.__init__
    monkeypatch.setattr(sim.VirtualTimeLoop, "__init__",
                        lambda self, *args, **kw: built.append(self) or real(self, *args, **kw))

    results = [run_scenario(scenario, "function_calling") for _ in range(3)]

    assert all(result.passed for result in results)
    assert built == []  # each replay ran on the loop the first one left, none built a new one


def test_a_name_that_moved_to_the_harness_is_looked_up_once_then_kept():
    """``from agentkit.scenario import run_scenario`` (the documented path) costs a lookup
    the first time only: the face keeps what it found."""
    import agentkit.scenario as face
    from agentkit.harness import run_scenario as harness_run_scenario

    assert face.run_scenario is harness_run_scenario
    assert vars(face)["run_scenario"] is harness_run_scenario
    assert "run_scenario" in dir(face)


def test_a_replay_again_makes_few_python_calls_of_the_harness(write_file):
    # issue 36 (the harness's own cost per replay, besides the agent's chat): the agent type
    # resolved, the turns checked, the recording's files, the
    # expectations merged and the judged fields are worked out by the first run of a loaded
    # scenario, and judging and the trace skip work a passing run does not need. A replay of
    # MINIMAL (one tool call, two LLM calls) made 346 such calls before, 230 after.
    scenario = load(write_file("demo.yaml", MINIMAL))
    assert run_scenario(scenario, "function_calling").passed  # the first run works it out
    result, called = harness_calls(lambda: run_scenario(scenario, "function_calling"))

    assert result.passed
    assert len(called) <= 245, Counter(called).most_common(20)
    worked_out_once = {"resolve_agent_type", "recording_paths", "_judged_fields",
                       "import_module", "to_dict"}
    assert not worked_out_once & {call.split(":")[1] for call in called}


def test_a_replay_after_its_settings_changed_works_them_out_again(write_file):
    scenario = load(write_file("demo.yaml", MINIMAL))
    assert run_scenario(scenario, "function_calling").passed
    spec = scenario.agents["function_calling"]
    spec.expect = Expect(max_llm_calls=1)  # another object: the next run reads it

    assert run_scenario(scenario, "function_calling").problems == [
        "2 LLM calls, more than max_llm_calls 1"]
    mutant = scenario.model_copy(update={"agents": {"function_calling": spec.model_copy(
        update={"script": [ScriptReply(text="no tools")], "expect": None})}})
    assert run_scenario(mutant, "function_calling").trace.turns[0].response == "no tools"
    assert run_scenario(scenario, "function_calling").trace.turns[0].response == "2 + 3 = 5"
