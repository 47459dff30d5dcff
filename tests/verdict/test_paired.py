"""Paired statistics tested as statistics: exact values where they are known, and on thousands
of seeded simulated agents of known pass rates, the error rates the tests promise."""

from __future__ import annotations

import math
import random

import pytest

from agentkit.verdict._paired import (
    Pair,
    cluster_bootstrap,
    discordance,
    fixed_rejects,
    holm,
    mcnemar_exact,
    mixture_e_value,
    sequential_stop,
    simulated_pairs,
)


@pytest.mark.parametrize(("a_only", "b_only", "expected"), [
    (0, 0, 1.0),
    (3, 3, 1.0),
    (0, 5, 2 / 32),
    (1, 9, 2 * (1 + 10) / 1024),
    (9, 1, 2 * (1 + 10) / 1024),
    (0, 1, 1.0),
])
def test_the_exact_mcnemar_p_value_is_the_two_sided_binomial_tail_of_the_discordant_pairs(
        a_only, b_only, expected):
    assert mcnemar_exact(a_only, b_only) == pytest.approx(expected)


def test_mcnemar_refuses_negative_counts():
    with pytest.raises(ValueError, match="non-negative"):
        mcnemar_exact(-1, 2)


def test_holm_multiplies_the_ith_smallest_p_value_by_the_tests_left_and_keeps_them_monotone():
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])
    assert holm([]) == []


def test_the_mixture_e_value_is_one_without_evidence_and_grows_with_a_lopsided_split():
    assert mixture_e_value(0, 0) == pytest.approx(1.0)
    # 2**n * a! b! / (n + 1)!: ten discordant pairs all for B
    assert mixture_e_value(0, 10) == pytest.approx(2 ** 10 / 11)
    assert mixture_e_value(5, 5) < 1 < mixture_e_value(1, 9) < mixture_e_value(0, 10)


def test_discordance_counts_each_kind_of_pair():
    pairs = [Pair("s", 0, True, True), Pair("s", 1, True, False), Pair("s", 2, False, True),
             Pair("s", 3, False, True), Pair("s", 4, False, False)]
    counts = discordance(pairs)
    assert (counts.both, counts.a_only, counts.b_only, counts.neither) == (1, 1, 2, 1)
    assert (counts.pairs, counts.discordant) == (5, 3)


def test_the_cluster_bootstrap_is_seeded_and_brackets_the_difference():
    rng = random.Random(3)
    pairs = [Pair(f"s{i % 6}", i, rng.random() < 0.4, rng.random() < 0.8) for i in range(120)]
    first = cluster_bootstrap(pairs, seed=7)
    assert first == cluster_bootstrap(pairs, seed=7)
    difference, low, high = first
    assert low <= difference <= high
    assert difference == pytest.approx(sum(p.b - p.a for p in pairs) / len(pairs))
    assert low > 0  # 40% against 80% over 120 pairs in 6 scenarios is a real difference


def test_extra_seeds_of_one_scenario_do_not_manufacture_significance():
    """One scenario where B always wins, sampled 100 times, beside five where the agents
    agree: pair by pair the suite looks decided; scenario by scenario it is one case of six."""
    pairs = [Pair("lopsided", i, False, True) for i in range(100)]
    pairs += [Pair(f"even{k}", i, i % 2 == 0, i % 2 == 0) for k in range(5) for i in range(10)]
    difference, low, _ = cluster_bootstrap(pairs, seed=0)
    assert difference == pytest.approx(100 / 150)
    assert low <= 0  # no difference shown: five of six scenarios show none
    naive = [Pair(str(i), i, p.a, p.b) for i, p in enumerate(pairs)]  # every pair its own
    assert cluster_bootstrap(naive, seed=0)[1] > 0.5  # what an unclustered bootstrap would say


def test_mcnemars_false_positive_rate_is_at_or_under_its_level_when_the_agents_are_equal():
    rng = random.Random(2026)
    alpha, runs = 0.05, 4000
    rejected = sum(fixed_rejects(simulated_pairs(rng, 0.6, 0.6, 30), alpha) for _ in range(runs))
    assert rejected / runs <= alpha


@pytest.mark.slow  # seeded simulations of many runs
def test_the_sequential_rule_errs_under_its_bound_however_often_it_looks():
    """Looking after every single pair -- the most a user could peek -- the chance of ever
    declaring a difference between equal agents stays under alpha (Ville's inequality)."""
    rng = random.Random(11)
    alpha, runs = 0.05, 1500
    errors = sum(sequential_stop(simulated_pairs(rng, 0.5, 0.5, 200), alpha, batch=1)[0]
                 for _ in range(runs))
    assert errors / runs <= alpha


@pytest.mark.slow  # seeded simulations of many runs
def test_the_sequential_rule_uses_fewer_samples_than_a_fixed_design_of_the_same_power():
    rng = random.Random(5)
    alpha, runs, cap, batch = 0.05, 600, 60, 5
    sequential = [sequential_stop(simulated_pairs(rng, 0.3, 0.8, cap), alpha, batch)
                  for _ in range(runs)]
    power = sum(decided for decided, _ in sequential) / runs
    average = sum(used for _, used in sequential) / runs
    # the smallest fixed size with at least that power
    fixed_n = next(n for n in range(5, cap + 1, 5)
                   if sum(fixed_rejects(simulated_pairs(rng, 0.3, 0.8, n), alpha)
                          for _ in range(runs)) / runs >= power)
    assert power > 0.9
    assert average < fixed_n


def test_the_e_value_matches_its_closed_form_on_large_counts_without_overflow():
    value = mixture_e_value(400, 600)
    expected = math.exp(1000 * math.log(2) + math.lgamma(401) + math.lgamma(601)
                        - math.lgamma(1002))
    assert value == pytest.approx(expected)
