"""An evaluation from start to end (:class:`agentkit.eval._run.EvalRun`, what `agentkit eval`
calls): the plan and its shard, the models the server lists, the outcome after recording --
complete, or what is missing and why -- and a budget below one run as bad input. Scripted
live models, one per sample."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentkit.core.errors import BadInputError
from agentkit.eval._run import EvalRun, LiveSettings
from agentkit.llms.mock import FunctionLLM, tool_call
from tests.scenario_text import adding_scenario

SERVER = "http://127.0.0.1:9/v1"  # never asked: the tests give the backend


def _scenario(name: str) -> str:
    return adding_scenario(name, 'expect:\n  answer: {contains: "5"}\n'
                                 "agents:\n  function_calling:\n    script: []\n")


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    folder = tmp_path / "scenarios"
    folder.mkdir()
    for name in ("one", "two", "three"):
        (folder / f"{name}.yaml").write_text(_scenario(name), "utf-8")
    return folder


def _adding(model: str, seed: int) -> FunctionLLM:
    """A sample's model: it calls add(2, 3), then answers the sum."""
    return FunctionLLM(lambda messages, tools: "2 + 3 = 5" if any(
        m.role == "tool" for m in messages) else tool_call("add", a=2, b=3), name=model)


def _run(suite: Path, samples: int = 2, **options) -> EvalRun:
    shard = options.pop("shard", None)
    return EvalRun([suite], ["function_calling"], ["m1"], samples,
                   LiveSettings(base_url=SERVER, **options), shard=shard, backend=_adding)


def test_a_run_records_every_missing_sample_and_its_outcome_is_complete(suite):
    run = _run(suite)

    assert len(run.todo) == 3 * 2 and run.records_live
    run.record()
    outcome = run.finish()

    assert (outcome.missing, outcome.incomplete, outcome.mismatched) == ({}, False, set())
    assert [r.sampled.stats.passed for r in outcome.results] == [2, 2, 2]
    assert not _run(suite).records_live  # everything is recorded now


def test_a_shard_runs_its_cases_and_keeps_the_whole_plan(suite):
    run = _run(suite, shard=(1, 2))
    other = _run(suite, shard=(2, 2))

    keys = ["one[function_calling@m1]", "three[function_calling@m1]",
            "two[function_calling@m1]"]
    assert sorted(run.keys) == sorted(other.keys) == keys
    assert sorted(c.key for c in run.evaluation.cases + other.evaluation.cases) == keys


def test_a_spent_budget_leaves_an_incomplete_outcome_saying_so(suite):
    run = _run(suite, max_calls=5, max_concurrency=1, concurrency=1)

    run.record()
    outcome = run.finish()

    assert outcome.incomplete and sum(outcome.missing.values()) == 6 - 2
    assert outcome.why_missing() == "the budget ran out (5 calls of 5, 0 tokens)"


def test_a_budget_below_one_run_is_bad_input_saying_to_give_more(suite):
    run = _run(suite, max_calls=1, max_concurrency=1, concurrency=1)

    run.record()
    with pytest.raises(BadInputError, match="below what one run takes; give a larger --max"):
        run.finish()


def test_a_model_the_server_does_not_list_is_bad_input_naming_what_it_serves(suite,
                                                                             monkeypatch):
    monkeypatch.setattr("agentkit.eval._run.served_models", lambda url, timeout: ["m2", "m3"])

    with pytest.raises(BadInputError, match=r"unknown model 'm1': the server at .* serves "
                                            r"m2, m3"):
        _run(suite).check_models()


def test_a_server_that_lists_no_models_is_not_checked(suite, monkeypatch):
    monkeypatch.setattr("agentkit.eval._run.served_models", lambda url, timeout: None)

    _run(suite).check_models()
