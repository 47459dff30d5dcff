"""compare_to_baseline: metric deltas per row, new/removed rows, and what is a regression."""

from __future__ import annotations

import pytest

from agentkit.report import compare_to_baseline

from .conftest import make_comparison, make_row


@pytest.mark.slow  # the bundled comparison, twice
def test_identical_runs_have_zero_deltas_and_no_regressions(bundled):
    diff = compare_to_baseline(bundled, bundled)

    assert not diff.has_regressions
    assert all(set(d.deltas.values()) == {0} for d in diff.rows)
    assert (diff.new, diff.removed) == ([], [])


def test_deltas_are_current_minus_baseline():
    before = make_comparison(make_row("a", steps=3, wall_time=2.5, speedup=1.0))
    after = make_comparison(make_row("a", steps=5, wall_time=1.0, speedup=2.0))

    deltas = compare_to_baseline(after, before).rows[0].deltas

    assert (deltas["steps"], deltas["wall_time"], deltas["speedup"]) == (2, -1.5, 1.0)


def test_pass_to_fail_is_a_regression_naming_the_problem():
    diff = compare_to_baseline(make_comparison(make_row("a", status="fail")),
                               make_comparison(make_row("a")))

    assert diff.has_regressions
    assert diff.regressions[0].regression == (
        "passed in the baseline; fails now: the answer was wrong")


def test_pass_to_error_is_a_regression():
    diff = compare_to_baseline(make_comparison(make_row("a", status="error")),
                               make_comparison(make_row("a")))

    assert [d.key for d in diff.regressions] == ["a[react]"]


def test_a_cost_within_its_threshold_is_a_delta_not_a_regression():
    diff = compare_to_baseline(make_comparison(make_row("a", llm_calls=21, prompt_tokens=200)),
                               make_comparison(make_row("a", llm_calls=20, prompt_tokens=160)))

    assert not diff.has_regressions
    assert diff.rows[0].deltas["llm_calls"] == 1


def test_a_cost_past_its_default_threshold_is_a_regression():
    diff = compare_to_baseline(make_comparison(make_row("a", llm_calls=9)),
                               make_comparison(make_row("a", llm_calls=2)))

    assert [d.key for d in diff.regressions] == ["a[react]"]
    assert diff.rows[0].regression is None
    assert diff.rows[0].reasons == [
        "LLM calls 2 → 9 (+7, +350%; allowed: +10% or +0, whichever is more)"]


def test_disappeared_passing_row_is_a_regression():
    diff = compare_to_baseline(make_comparison(make_row("a")),
                               make_comparison(make_row("a"), make_row("b")))

    assert [(d.key, d.change) for d in diff.removed] == [("b[react]", "removed")]
    assert diff.regressions[0].regression == "passed in the baseline; missing now"


def test_disappeared_row_of_an_unloadable_file_says_so():
    diff = compare_to_baseline(make_comparison(make_row("a"), make_row("b", None, "error")),
                               make_comparison(make_row("a"), make_row("b")))

    assert diff.regressions[0].regression == (
        "passed in the baseline; missing now: the scenario file fails to load")


def test_disappeared_failing_row_is_not_a_regression():
    diff = compare_to_baseline(make_comparison(make_row("a")),
                               make_comparison(make_row("a"), make_row("b", status="fail")))

    assert [d.key for d in diff.removed] == ["b[react]"]
    assert not diff.has_regressions


def test_new_failing_row_is_new_not_a_regression():
    diff = compare_to_baseline(make_comparison(make_row("a"), make_row("b", status="fail")),
                               make_comparison(make_row("a")))

    assert [d.key for d in diff.new] == ["b[react]"]
    assert not diff.has_regressions


def test_fail_to_pass_is_reported_as_fixed():
    diff = compare_to_baseline(make_comparison(make_row("a")),
                               make_comparison(make_row("a", status="fail")))

    assert [d.key for d in diff.fixed] == ["a[react]"]
    assert not diff.has_regressions


def test_rows_are_paired_by_scenario_and_agent_type():
    diff = compare_to_baseline(make_comparison(make_row("a", "react", steps=2)),
                               make_comparison(make_row("a", "function_calling", steps=7)))

    assert [(d.key, d.change) for d in diff.rows] == [
        ("a[react]", "new"), ("a[function_calling]", "removed")]


def _sampled(scenario: str, passes: int, judged: int, **extra):
    from agentkit.eval._cases import CaseStats

    stats = CaseStats(passes, judged - passes)
    return make_row(scenario, status="pass", samples=judged, passes=passes,
                    pass_rate=stats.pass_rate, interval=stats.interval, confidence=0.95,
                    **{"class": stats.case_class}, **extra)


def test_a_pass_rate_drop_beyond_noise_is_a_regression_said_in_words():
    baseline = make_comparison(_sampled("a", 10, 10))
    current = make_comparison(_sampled("a", 5, 10))

    diff = compare_to_baseline(current, baseline)

    assert [d.key for d in diff.regressions] == ["a[react]"]
    assert diff.regressions[0].reasons == [
        "pass rate 100% (10/10) -> 50% (5/10): a drop this large happens by chance 1.6% of the "
        "time (Fisher's exact test, one-sided), under 5%, so it is real"]


def test_a_pass_rate_drop_within_noise_is_not_a_regression_but_is_reported():
    baseline = make_comparison(_sampled("a", 10, 10))
    current = make_comparison(_sampled("a", 8, 10))

    diff = compare_to_baseline(current, baseline)

    assert diff.regressions == []
    change = diff.rows[0].to_dict()["pass_rate_change"]
    assert (change["regressed"], change["p_value"]) == (False, 0.236842)
    assert "within noise" in change["text"]


def test_a_single_run_baseline_against_samples_compares_pass_rates():
    baseline = make_comparison(make_row("a"))
    current = make_comparison(_sampled("a", 4, 10))

    assert compare_to_baseline(current, baseline).regressions == []  # 1/1 -> 4/10: one run says little
