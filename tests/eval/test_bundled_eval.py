"""The evaluation bundled under scenarios/live (recorded with `agentkit eval ... --samples 10`
against SmolLM2-135M, see docs/evaluation.md) replays offline over all ten samples of every
case: the judgement a pull request gets without a model."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentkit.eval._matrix import Evaluation, plan
from agentkit.eval._samples import sample_count
from agentkit.scenario._loader import discover_scenarios, load_scenario

ROOT = Path(__file__).resolve().parents[2]
MODEL = "smollm2-135m-instruct"


def _bundled() -> Evaluation:
    cases = plan([ROOT / "scenarios" / "live"], ["react", "function_calling"], [MODEL])
    evaluation = Evaluation(cases, 10)  # no live model: everything must be recorded
    evaluation.open()
    return evaluation


def test_every_case_of_the_bundled_evaluation_has_its_ten_samples_recorded():
    evaluation = _bundled()

    assert [case.key for case in evaluation.cases] == [
        f"live_answers[react@{MODEL}]", f"live_answers[function_calling@{MODEL}]",
        f"live_compare[react@{MODEL}]", f"live_compare[function_calling@{MODEL}]",
        f"live_function_calling[function_calling@{MODEL}]", f"live_react[react@{MODEL}]"]
    assert evaluation.todo == [] and evaluation.missing() == {}


@pytest.mark.slow  # the whole bundled evaluation
def test_the_bundled_evaluation_replays_offline_judging_all_ten_samples_of_each_case():
    results = _bundled().results()

    assert [len(r.sampled.runs) for r in results] == [10] * 6
    assert all(r.sampled.stats.judged + r.sampled.stats.infra_errors == 10 for r in results)
    assert all(r.sampled.verdict.outcome != "error" for r in results)


def test_the_bundled_evaluation_has_a_flaky_case_beside_stable_ones():
    classes = {r.case.key: r.sampled.stats.case_class for r in _bundled().results()}

    assert classes[f"live_answers[react@{MODEL}]"] == "flaky"
    assert {"stable_pass", "stable_fail"} <= set(classes.values())


def test_the_bundled_samples_are_independent_runs_not_copies_of_one():
    for result in _bundled().results():
        traces = {str(run.result.trace.to_dict()) for run in result.sampled.runs
                  if run.result is not None}
        assert len(traces) > 1, result.case.key


def test_every_recording_of_the_bundled_live_scenarios_holds_at_least_five_samples():
    recorded = [(scenario, name) for path in discover_scenarios(ROOT / "scenarios" / "live")
                for scenario in [load_scenario(path)]
                for name, spec in scenario.agents.items() if spec.recording is not None]

    assert len(recorded) >= 5
    assert {f"{s.name}[{name}]": sample_count(s, name) for s, name in recorded
            if (sample_count(s, name) or 0) < 5} == {}
