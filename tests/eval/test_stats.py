"""agentkit.eval._stats: the numbers every pass rate in a report comes from, checked against
values computed by hand (and published tables) rather than against the code itself."""

from __future__ import annotations

import pytest

from agentkit.eval._stats import (
    fisher_lower,
    pass_all_k,
    pass_at_k,
    spread,
    wilson_interval,
)


def test_the_wilson_interval_of_10_passes_of_10_at_95_percent_is_72_to_100():
    low, high = wilson_interval(10, 10)
    assert (round(low, 4), high) == (0.7225, 1.0)


def test_the_wilson_interval_of_0_of_10_starts_at_exactly_zero():
    low, high = wilson_interval(0, 10)
    assert (low, round(high, 4)) == (0.0, 0.2775)


def test_the_wilson_interval_of_6_of_10_matches_the_published_value():
    low, high = wilson_interval(6, 10)
    assert (round(low, 4), round(high, 4)) == (0.3127, 0.8318)


def test_a_lower_confidence_gives_a_narrower_interval():
    wide, narrow = wilson_interval(6, 10, 0.95), wilson_interval(6, 10, 0.8)
    assert narrow[0] > wide[0] and narrow[1] < wide[1]


def test_one_run_says_little_its_interval_is_wide():
    assert wilson_interval(1, 1)[0] < 0.21


@pytest.mark.parametrize("args", [(11, 10), (0, 0), (-1, 3)])
def test_impossible_counts_are_an_error(args):
    with pytest.raises(ValueError, match="passed <= total"):
        wilson_interval(*args)


@pytest.mark.parametrize("confidence", [0, 1, 1.5])
def test_a_confidence_outside_zero_and_one_is_an_error(confidence):
    with pytest.raises(ValueError, match="between 0 and 1"):
        wilson_interval(5, 10, confidence)


def test_pass_at_1_is_the_pass_rate_and_pass_at_n_is_whether_any_passed():
    assert pass_at_k(10, 3, 1) == pytest.approx(0.3)
    assert (pass_at_k(10, 3, 10), pass_at_k(10, 0, 10)) == (1.0, 0.0)


def test_pass_at_k_is_the_unbiased_estimator_of_chen_et_al():
    # 1 - C(7, 5) / C(10, 5) = 1 - 21 / 252
    assert pass_at_k(10, 3, 5) == pytest.approx(1 - 21 / 252)


def test_pass_all_k_is_the_chance_that_k_draws_all_pass():
    # C(7, 3) / C(10, 3) = 35 / 120
    assert pass_all_k(10, 7, 3) == pytest.approx(35 / 120)
    assert (pass_all_k(10, 10, 10), pass_all_k(10, 9, 10)) == (1.0, 0.0)


def test_k_beyond_the_samples_is_an_error():
    with pytest.raises(ValueError, match="k <= total"):
        pass_at_k(5, 2, 6)


def test_fisher_a_fall_from_10_of_10_to_5_of_10_is_unlikely_by_chance():
    # hypergeometric: passes 15 of 20; P(after <= 5) = C(10,5)C(10,10)/C(20,15)
    assert fisher_lower(10, 10, 5, 10) == pytest.approx(252 / 15504)


def test_fisher_a_fall_from_10_of_10_to_8_of_10_is_likely_by_chance():
    assert fisher_lower(10, 10, 8, 10) == pytest.approx(45 / 190)


def test_fisher_no_fall_at_all_has_p_of_at_least_a_half():
    assert fisher_lower(5, 10, 5, 10) >= 0.5
    assert fisher_lower(3, 10, 9, 10) == pytest.approx(1.0, abs=1e-3)


def test_spread_gives_mean_sample_standard_deviation_and_extremes():
    found = spread([2, 4, 4, 4, 5, 5, 7, 9])
    assert (found.mean, found.low, found.high) == (5.0, 2, 9)
    assert found.sd == pytest.approx(2.13809, abs=1e-5)
    assert spread([3.0]).sd == 0.0
