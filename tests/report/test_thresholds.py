"""Cost regressions: a cost that grew by more than its threshold (relative and absolute) since
the baseline; thresholds default to +10 % and a floor per metric, and a scenario may set its
own."""

from __future__ import annotations

import pytest

from agentkit.report import compare_to_baseline
from agentkit.report._thresholds import DEFAULT_THRESHOLDS, cost_regressions, threshold_for
from agentkit.scenario._model import Threshold, Thresholds

from .conftest import make_comparison, make_row


def _flagged(before: dict, after: dict, thresholds: Thresholds | None = None) -> list[str]:
    current = make_row("a", **after).model_copy(update={"thresholds": thresholds})
    return [c.metric.key for c in cost_regressions(current, make_row("a", **before))]


@pytest.mark.parametrize(("metric", "before", "within", "past"), [
    ("steps", 20, 22, 23),
    ("llm_calls", 3, 3, 4),
    ("wall_time", 10.0, 11.0, 11.01),
])
def test_a_cost_regresses_only_past_ten_percent(metric, before, within, past):
    assert _flagged({metric: before}, {metric: within}) == []
    assert _flagged({metric: before}, {metric: past}) == [metric]


def test_tokens_are_prompt_plus_completion_tokens():
    before = {"prompt_tokens": 1000, "completion_tokens": 200}

    assert _flagged(before, {"prompt_tokens": 1100, "completion_tokens": 220}) == []
    assert _flagged(before, {"prompt_tokens": 1100, "completion_tokens": 221}) == ["tokens"]


def test_small_costs_have_a_floor_so_noise_is_no_regression():
    assert _flagged({"prompt_tokens": 100}, {"prompt_tokens": 150}) == []  # +50%, +50 tokens
    assert _flagged({"wall_time": 0.5}, {"wall_time": 0.75}) == []  # +50%, +0.25 s
    assert _flagged({"prompt_tokens": 100}, {"prompt_tokens": 151}) == ["tokens"]


def test_less_cost_is_never_a_regression():
    assert _flagged({"steps": 9, "wall_time": 9.0}, {"steps": 1, "wall_time": 0.0}) == []


def test_a_scenarios_own_threshold_replaces_the_default_for_that_metric_only():
    own = Thresholds(tokens=Threshold(relative=0.5))

    assert _flagged({"prompt_tokens": 1000}, {"prompt_tokens": 1400}, own) == []
    assert _flagged({"steps": 3}, {"steps": 4}, own) == ["steps"]


def test_a_threshold_given_in_part_keeps_the_default_for_the_rest():
    merged = threshold_for("tokens", Thresholds(tokens=Threshold(absolute=500)))

    assert (merged.relative, merged.absolute) == (DEFAULT_THRESHOLDS["tokens"].relative, 500)


def test_a_regression_says_what_grew_by_how_much_and_what_was_allowed():
    (regression,) = cost_regressions(make_row("a", prompt_tokens=2029, completion_tokens=0),
                                     make_row("a", prompt_tokens=1200, completion_tokens=0))

    assert regression.describe() == ("tokens 1,200 → 2,029 (+829, +69%; allowed: +10% or +50, "
                                     "whichever is more)")


def test_a_time_regression_is_shown_in_seconds():
    (regression,) = cost_regressions(make_row("a", wall_time=6.32919), make_row("a", wall_time=1))

    assert regression.describe() == ("wall time 1.00s → 6.33s (+5.33s, +533%; allowed: +10% "
                                     "or +0.25s, whichever is more)")


def test_a_run_that_could_not_run_has_no_costs_to_compare():
    assert cost_regressions(make_row("a", status="error"), make_row("a")) == []


def test_a_cost_regression_makes_the_baseline_comparison_fail_and_is_in_its_json():
    diff = compare_to_baseline(make_comparison(make_row("a", steps=5)),
                               make_comparison(make_row("a", steps=3)))

    data = diff.to_dict()
    assert diff.has_regressions and data["regressions"] == ["a[react]"]
    assert data["rows"][0]["cost_regressions"] == [
        {"metric": "steps", "baseline": 3, "current": 5, "relative": 0.1, "absolute": 0}]
