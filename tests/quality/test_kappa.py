"""Cohen's kappa and its bootstrap interval, against values worked out by hand."""

from __future__ import annotations

import pytest

from agentkit.verdict import cohen_kappa, kappa_interval

P, F = True, False


def _table(both_pass: int, people_only: int, judge_only: int, both_fail: int
           ) -> list[tuple[bool, bool]]:
    """(people, judge) pairs from a 2x2 table."""
    return ([(P, P)] * both_pass + [(P, F)] * people_only + [(F, P)] * judge_only
            + [(F, F)] * both_fail)


def test_kappa_of_a_mixed_table_is_the_hand_computed_value():
    # po = 15/20 = 0.75; pe = 0.6 * 0.55 + 0.4 * 0.45 = 0.51; (0.75 - 0.51) / 0.49
    assert cohen_kappa(_table(9, 3, 2, 6)) == pytest.approx(0.24 / 0.49)


def test_perfect_agreement_on_both_verdicts_is_one():
    assert cohen_kappa(_table(7, 0, 0, 13)) == pytest.approx(1.0)


def test_perfect_disagreement_with_even_base_rates_is_minus_one():
    assert cohen_kappa(_table(0, 10, 10, 0)) == pytest.approx(-1.0)


def test_perfect_disagreement_with_uneven_base_rates_is_above_minus_one():
    # people pass 15, the judge 5: pe = 0.75 * 0.25 + 0.25 * 0.75 = 0.375; -0.375 / 0.625
    assert cohen_kappa(_table(0, 15, 5, 0)) == pytest.approx(-0.6)


def test_labels_all_one_class_give_zero_however_often_the_judge_agrees():
    # people pass all 20, the judge 15: po = 0.75 = pe, so no agreement beyond chance
    assert cohen_kappa(_table(15, 5, 0, 0)) == pytest.approx(0.0)


def test_both_raters_all_one_class_is_undefined():
    assert cohen_kappa(_table(20, 0, 0, 0)) is None
    assert cohen_kappa(_table(0, 0, 0, 20)) is None
    assert cohen_kappa([]) is None


def test_the_interval_holds_the_estimate_and_is_the_same_for_the_same_seed():
    pairs = _table(9, 3, 2, 6)
    low, high = kappa_interval(pairs)
    assert low < 0.24 / 0.49 < high
    assert low >= -1 and high <= 1
    assert kappa_interval(pairs) == (low, high)
    assert kappa_interval(pairs, seed=1) != (low, high)


def test_perfect_agreement_has_a_point_interval_at_one():
    assert kappa_interval(_table(10, 0, 0, 10)) == (1.0, 1.0)


def test_a_wider_confidence_gives_a_wider_interval():
    pairs = _table(9, 3, 2, 6)
    low90, high90 = kappa_interval(pairs, 0.90)
    low99, high99 = kappa_interval(pairs, 0.99)
    assert low99 <= low90 and high90 <= high99 and (low99, high99) != (low90, high90)


def test_an_interval_of_nothing_or_of_one_verdict_throughout_is_none():
    assert kappa_interval([]) is None
    assert kappa_interval(_table(20, 0, 0, 0)) is None
