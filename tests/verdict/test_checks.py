"""Checks are values: each kind of expectation returns its problems with a kind, so the
commands tell them apart without reading their wording."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest

from agentkit.scenario import run_scenario
from agentkit.scenario._model import Expect, Turn
from agentkit.trace._trace import LLMCallTrace, StepTrace, ToolCallTrace, Trace, TurnTrace
from agentkit.verdict import CHECKS, PROBLEM_KINDS, Leftovers, Problem, check_expectations
from tests.scenario_text import adding_scenario


def _trace(calls: list[tuple[str, dict[str, Any], float, float]], response: str = "done",
           memory: list[dict[str, Any]] | None = None) -> Trace:
    tool_calls = [ToolCallTrace(id=f"call_{i}", name=name, args=args, output="ok",
                                is_error=False, latency=latency, started=started)
                  for i, (name, args, started, latency) in enumerate(calls)]
    step = StepTrace(index=0, input=None, is_last=True, output=None)
    step.tool_calls = tool_calls
    step.llm_calls = [LLMCallTrace(kind="chat", messages=[], response=None, usage=None,
                                   latency=0.0)]
    turn = TurnTrace(user="q", steps=[step], response=response, error=None,
                     memory=memory or [], wall_time=0.0, serial_time=0.0)
    return Trace(scenario="s", agent="a", turns=[turn])


def _kinds(trace: Trace, expect: dict[str, Any]) -> list[str]:
    problems = check_expectations(trace, [Turn(user="q")], Expect.model_validate(expect))
    assert all(isinstance(problem, Problem) for problem in problems)
    return [problem.kind for problem in problems]


ADD = {"name": "add", "args": {"a": 1, "b": 2}}
MUL = {"name": "mul", "args": {"a": 3, "b": 4}}


def test_an_answer_that_does_not_match_is_an_answer_problem() -> None:
    assert _kinds(_trace([]), {"answer": {"contains": "5"}}) == ["answer"]


def test_a_missing_tool_call_is_a_tool_calls_problem() -> None:
    assert _kinds(_trace([]), {"tool_calls": {"calls": [ADD]}}) == ["tool_calls"]


def test_a_call_started_before_the_one_it_must_follow_ended_is_an_order_problem() -> None:
    trace = _trace([("add", ADD["args"], 0.0, 2.0), ("mul", MUL["args"], 1.0, 1.0)])
    expect = {"tool_calls": {"match": "unordered", "calls": [ADD, {**MUL, "after": [1]}]}}

    assert _kinds(trace, expect) == ["order"]


def test_a_different_memory_is_a_memory_problem() -> None:
    assert _kinds(_trace([]), {"memory": [{"role": "user"}]}) == ["memory"]


def test_too_many_steps_is_a_budget_problem() -> None:
    assert _kinds(_trace([]), {"max_llm_calls": 0}) == ["budget"]


def test_every_kind_a_check_returns_is_a_declared_kind() -> None:
    assert len(set(PROBLEM_KINDS)) == len(PROBLEM_KINDS)
    assert "recording_mismatch" in PROBLEM_KINDS and "leftover" in PROBLEM_KINDS


@pytest.fixture
def scenario_file(tmp_path: Path):  # type: ignore[no-untyped-def]
    def write(text: str) -> Path:
        path = tmp_path / "s.yaml"
        path.write_text(text, encoding="utf-8")
        return path

    return write


@pytest.mark.agentkit_allow_unused_script
def test_an_unused_script_reply_is_a_leftover(scenario_file) -> None:  # type: ignore[no-untyped-def]
    path = scenario_file(adding_scenario("left", textwrap.dedent("""\
        agents:
          function_calling:
            script:
              - tool_calls: [{name: add, args: {a: 2, b: 3}}]
              - 2 + 3 = 5
              - never asked
        """)))

    result = run_scenario(path)

    assert [(p.kind, str(p)) for p in result.problems] == [
        ("leftover", "the script has 1 unused reply (the agent made 2 LLM calls)")]
    assert result.verdict.has("leftover") and not result.verdict.has("answer")
    assert Leftovers().evaluate(result) == result.problems


def test_a_trajectory_the_agent_left_is_a_trajectory_problem(scenario_file) -> None:  # type: ignore[no-untyped-def]
    path = scenario_file(adding_scenario("traj", textwrap.dedent("""\
        trajectory:
          - call: add
            args: {a: 2, b: 3}
          - answer: "2 + 3 = {$1}"
        agents:
          function_calling:
            script:
              - 2 + 3 = 5
        """)))

    result = run_scenario(path)

    assert {p.kind for p in result.problems} == {"trajectory"}


def test_the_checks_run_in_the_order_their_problems_are_reported() -> None:
    assert [type(check).__name__ for check in CHECKS] == [
        "RecordingPrefix", "Expectations", "Conversation", "Trajectory", "Leftovers",
        "ToolAccounting"]


@pytest.mark.parametrize("expect", [
    {}, {"answer": {"contains": "done"}}, {"max_steps": 1},
    {"max_llm_calls": 1, "max_wall_time": 5}])
def test_judging_works_out_no_totals_of_the_trace(monkeypatch, expect) -> None:
    # issue 36 (judging a replay): the budgets count steps, LLM calls and times themselves;
    # the totals (critical path, tokens, roles) walk every call
    counted = []
    real = Trace.totals
    monkeypatch.setattr(Trace, "totals", lambda self: counted.append(1) or real(self))

    assert _kinds(_trace([("add", ADD["args"], 0.0, 1.0)]), expect) == []
    assert counted == []


def test_a_budget_problem_tells_the_traces_totals() -> None:
    trace = _trace([("add", ADD["args"], 0.0, 1.0)])
    trace.turns[0].wall_time, trace.turns[0].serial_time = 2.0000004, 3.5
    totals = trace.totals()
    problems = check_expectations(trace, [Turn(user="q")], Expect.model_validate(
        {"max_steps": 0, "max_llm_calls": 0, "max_wall_time": 1}))
    assert [str(p) for p in problems] == [
        f"{totals.steps} steps, more than max_steps 0",
        f"{totals.llm_calls} LLM calls, more than max_llm_calls 0",
        "simulated wall time 2.00s is over max_wall_time 1.00s (serial time 3.50s)"]


def test_a_problem_found_twice_is_told_once_with_its_count() -> None:
    from agentkit.verdict import run_checks

    class Twice:
        def evaluate(self, run: Any) -> list[Problem]:
            return [Problem("same", "answer"), Problem("other", "turns"), Problem("same", "answer")]

    from types import SimpleNamespace

    run: Any = SimpleNamespace(trace=_trace([]))
    assert run_checks(run, (Twice(),)) == [Problem("same (2 times)", "answer"),
                                           Problem("other", "turns")]
    assert run_checks(run, ()) == []
