"""A case judged on its samples: class, gate, and the words of a pass-rate change."""

from __future__ import annotations

from agentkit.eval._cases import case_stats, compare_pass_rates, gate_warning, samples_needed
from agentkit.eval._stats import fisher_lower, wilson_interval
from agentkit.verdict import samples_to_fail_gate, samples_to_separate


def _stats(passed: int, failed: int, infra: int = 0):
    return case_stats(["pass"] * passed + ["fail"] * failed + ["infra"] * infra)


def test_every_sample_passing_is_a_stable_pass():
    assert _stats(5, 0).case_class == "stable_pass"


def test_some_passing_is_flaky_and_none_is_a_stable_fail():
    assert (_stats(3, 2).case_class, _stats(0, 5).case_class) == ("flaky", "stable_fail")


def test_infrastructure_errors_are_never_counted_as_failures():
    stats = _stats(4, 0, infra=3)
    assert (stats.pass_rate, stats.judged, stats.samples, stats.case_class) == (
        1.0, 4, 7, "stable_pass")


def test_a_case_with_only_infrastructure_errors_has_no_pass_rate():
    stats = _stats(0, 0, infra=2)
    assert (stats.case_class, stats.pass_rate, stats.interval) == ("infra_error", None, None)
    assert stats.gate(0.5) is None
    assert "all 2 samples hit infrastructure errors" in stats.describe()


def test_pass_at_k_and_pass_all_k_are_given_for_every_k():
    stats = _stats(2, 1)
    assert list(stats.pass_at_k) == [1, 2, 3] == list(stats.pass_all_k)
    assert (stats.pass_at_k[3], stats.pass_all_k[3]) == (1.0, 0.0)


def test_without_min_pass_rate_one_failed_sample_fails_the_gate():
    assert "1 of 5 samples failed" in (_stats(4, 1).gate(None) or "")
    assert _stats(5, 0).gate(None) is None


def test_a_rate_below_min_pass_rate_only_by_noise_passes_the_gate():
    assert _stats(6, 4).gate(0.8) is None  # 60%, interval up to 83%


def test_a_rate_below_min_pass_rate_beyond_noise_fails_the_gate_saying_why():
    problem = _stats(6, 4).gate(0.9) or ""
    assert "60% (6/10, 95% interval 31-83%) is below min_pass_rate 90% beyond noise" in problem


def test_no_sample_passing_never_meets_a_min_pass_rate_however_few_the_samples():
    # 0/5's interval reaches 43%: on the interval alone min_pass_rate 0.2 could not fail
    assert _stats(0, 5).gate(0.2) == ("no sample passed (0/5): a case meets min_pass_rate 20% "
                                      "only with passes")
    assert _stats(1, 4).gate(0.2) is None


def test_a_min_pass_rate_that_cannot_fail_at_the_sample_count_is_warned_naming_the_samples():
    assert gate_warning(0.2, 5) == (
        "min_pass_rate 20% cannot fail at 5 samples unless none passes (even 0/5 has a 95% "
        "interval up to 43%); give at least 16 samples for a pass rate below it to fail")
    assert gate_warning(0.2, 16) is None and gate_warning(None, 5) is None
    assert gate_warning(0.9, 1) is None  # one sample can fail 90%: 0/1 reaches only 79%


def test_the_samples_needed_are_the_fewest_at_which_no_pass_falls_below_the_gate():
    for rate in (0.05, 0.2, 0.5, 0.8):
        needed = samples_needed(rate)
        assert wilson_interval(0, needed)[1] < rate <= wilson_interval(0, needed - 1)[1] \
            if needed > 1 else wilson_interval(0, 1)[1] < rate


def test_a_drop_beyond_noise_is_a_regression_in_plain_words():
    change = compare_pass_rates(_stats(10, 0), _stats(5, 5))
    assert change is not None and change.regressed
    assert change.describe() == (
        "pass rate 100% (10/10) -> 50% (5/10): a drop this large happens by chance 1.6% of the "
        "time (Fisher's exact test, one-sided), under 5%, so it is real")


def test_a_drop_within_noise_is_not_a_regression_and_says_so():
    change = compare_pass_rates(_stats(10, 0), _stats(8, 2))
    assert change is not None and not change.regressed
    assert "within noise" in change.describe() and "more samples would tell" in change.describe()


def test_a_higher_confidence_needs_a_larger_drop_to_call_it_real():
    # 10/10 -> 6/10: p = C(10,6) / C(20,16) = 210 / 4845, about 4.3%
    assert compare_pass_rates(_stats(10, 0), _stats(6, 4)).regressed
    assert not compare_pass_rates(_stats(10, 0), _stats(6, 4), confidence=0.99).regressed


def test_no_pass_rate_change_without_judged_samples():
    assert compare_pass_rates(_stats(0, 0, infra=3), _stats(5, 0)) is None


def test_the_samples_to_separate_two_rates_are_the_fewest_at_which_fisher_calls_them_apart():
    assert samples_to_separate((5, 5), (2, 5)) == 6
    assert fisher_lower(5, 5, 2, 5) >= 0.05 > fisher_lower(6, 6, 2, 6)
    assert samples_to_separate((3, 5), (3, 5)) is None  # equal rates never separate
    assert samples_to_separate((51, 100), (50, 100)) is None  # beyond the limit


def test_the_samples_to_fail_a_gate_are_the_fewest_at_which_the_rate_is_under_it_beyond_noise():
    needed = samples_to_fail_gate(2, 5, 0.6)

    assert needed == 25
    assert wilson_interval(10, 25)[1] < 0.6 <= wilson_interval(10, 24)[1]  # 40% of each
    assert samples_to_fail_gate(3, 5, 0.6) is None  # not under it
