"""Paired statistics: two agents (types, models, versions) run on the same cases with the same
seeds, so sample i of one and sample i of the other form a pair, and the question is whether
they differ -- not whether two pass rates, taken as independent, do.

- :func:`mcnemar_exact` -- per case, the exact McNemar test: only the discordant pairs (one
  passed, the other failed) carry information; under "no difference" each is a fair coin.
- :func:`holm` -- Holm's step-down adjustment of the per-case p-values (family-wise error
  at the level, whatever the dependence between cases).
- :func:`cluster_bootstrap` -- the suite's difference in pass rate with an interval from a
  paired bootstrap that resamples *scenarios* (clusters), keeping each scenario's pairs
  together: extra seeds of one scenario then add precision about that scenario, not
  independent evidence about the suite.
- :func:`mixture_e_value` -- an e-value for "no difference" that stays valid however often it
  is looked at (a test martingale: the likelihood ratio of the discordant pairs under a
  uniform mixture of alternatives against the fair coin; by Ville's inequality it exceeds
  ``1/alpha`` with probability at most ``alpha`` under the null, ever). Sequential
  evaluation stops a case once its e-value crosses the threshold.

Every function is pure and seeded: the same pairs give the same figures.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

__all__ = ["mcnemar_exact", "holm", "bootstrap", "Bootstrap", "cluster_bootstrap", "mixture_e_value", "Pair",
           "Discordance", "discordance"]


@dataclass(frozen=True)
class Pair:
    """Sample ``index`` of one case under both agents: did ``a`` pass, did ``b`` pass;
    ``cluster`` is the scenario it belongs to."""

    cluster: str
    index: int
    a: bool
    b: bool


@dataclass(frozen=True)
class Discordance:
    """The pairs of a case counted: both passed, only A, only B, neither."""

    both: int = 0
    a_only: int = 0
    b_only: int = 0
    neither: int = 0

    @property
    def pairs(self) -> int:
        return self.both + self.a_only + self.b_only + self.neither

    @property
    def discordant(self) -> int:
        return self.a_only + self.b_only


def discordance(pairs: Sequence[Pair]) -> Discordance:
    """The counts of ``pairs``."""
    return Discordance(both=sum(p.a and p.b for p in pairs),
                       a_only=sum(p.a and not p.b for p in pairs),
                       b_only=sum(p.b and not p.a for p in pairs),
                       neither=sum(not p.a and not p.b for p in pairs))


def mcnemar_exact(a_only: int, b_only: int) -> float:
    """The two-sided exact McNemar p-value: the chance, if each discordant pair were a fair
    coin, of a split at least as uneven as ``a_only`` : ``b_only`` (1.0 without discordant
    pairs)."""
    if a_only < 0 or b_only < 0:
        raise ValueError(f"counts must be non-negative, got {a_only} and {b_only}")
    n = a_only + b_only
    if n == 0:
        return 1.0
    low = min(a_only, b_only)
    tail: float = sum(math.comb(n, k) for k in range(low + 1)) / 2 ** n
    return min(1.0, 2 * tail)


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's adjusted p-values, in the order given: the i-th smallest is multiplied by
    (m - i), made monotone, capped at 1. Reject where the adjusted value is under the level."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: (p_values[i], i))
    adjusted = [0.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


@dataclass(frozen=True)
class Bootstrap:
    """A paired bootstrap's point difference (B minus A) and its sorted resampled
    differences, from which intervals at any confidence are read."""

    difference: float
    draws: tuple[float, ...]

    def interval(self, confidence: float) -> tuple[float, float]:
        """The two-sided percentile interval at ``confidence``."""
        count = len(self.draws)
        tail = (1 - confidence) / 2
        return (self.draws[max(0, math.floor(tail * count))],
                self.draws[min(count - 1, math.ceil((1 - tail) * count) - 1)])


def bootstrap(pairs: Sequence[Pair], *, resamples: int = 2000, seed: int = 0) -> Bootstrap:
    """The difference in pass rate, B minus A, over ``pairs``, resampled ``resamples`` times by
    clusters (scenarios) with replacement, each with all its pairs."""
    if not pairs:
        raise ValueError("no pairs to compare")
    clusters: dict[str, list[int]] = {}
    for pair in pairs:
        clusters.setdefault(pair.cluster, []).append(int(pair.b) - int(pair.a))
    names = sorted(clusters)
    sums = [sum(clusters[name]) for name in names]
    counts = [len(clusters[name]) for name in names]
    rng = random.Random(seed)
    k = len(names)
    draws: list[float] = []
    for _ in range(resamples):
        total = count = 0
        for _ in range(k):
            j = rng.randrange(k)
            total += sums[j]
            count += counts[j]
        draws.append(total / count)
    return Bootstrap(sum(sums) / sum(counts), tuple(sorted(draws)))


def cluster_bootstrap(pairs: Sequence[Pair], *, confidence: float = 0.95,
                      resamples: int = 2000, seed: int = 0) -> tuple[float, float, float]:
    """The difference in pass rate, B minus A, over ``pairs`` and its two-sided percentile
    interval at ``confidence`` from a bootstrap that resamples clusters (scenarios) with
    replacement (:func:`bootstrap`): ``(difference, low, high)``. One cluster gives a
    zero-width interval only when its pairs agree; callers should say how many clusters there
    were."""
    result = bootstrap(pairs, resamples=resamples, seed=seed)
    return (result.difference, *result.interval(confidence))


def mixture_e_value(a_only: int, b_only: int) -> float:
    """The e-value against "the two agents do not differ" after ``a_only`` + ``b_only``
    discordant pairs: the probability of the observed sequence under a uniform prior on the
    chance that a discordant pair favours B, divided by its probability under a fair coin,
    ``2**n * a! b! / (n + 1)!``. It is a nonnegative martingale under the null (Robbins'
    mixture), so stopping when it reaches ``1/alpha`` errs with probability at most
    ``alpha`` however often it is checked (Ville's inequality)."""
    n = a_only + b_only
    log_e = (n * math.log(2) + math.lgamma(a_only + 1) + math.lgamma(b_only + 1)
             - math.lgamma(n + 2))
    return math.exp(log_e)


def by_cluster(pairs: Sequence[Pair]) -> Mapping[str, list[Pair]]:
    """``pairs`` grouped by cluster, in the order given."""
    grouped: dict[str, list[Pair]] = {}
    for pair in pairs:
        grouped.setdefault(pair.cluster, []).append(pair)
    return grouped


# -- operating characteristics: how the tests behave on simulated agents of known pass rates
# (the figures docs/evaluation.md publishes; benchmarks/bench_paired.py prints them)

def simulated_pairs(rng: random.Random, pass_a: float, pass_b: float, count: int) -> list[Pair]:
    """``count`` pairs of one case whose agents pass with ``pass_a`` and ``pass_b``."""
    return [Pair("simulated", i, rng.random() < pass_a, rng.random() < pass_b)
            for i in range(count)]


def fixed_rejects(pairs: Sequence[Pair], alpha: float) -> bool:
    """Whether a fixed-size design (all ``pairs`` at once, exact McNemar) rejects at ``alpha``."""
    counts = discordance(pairs)
    return mcnemar_exact(counts.a_only, counts.b_only) < alpha


def sequential_stop(pairs: Sequence[Pair], alpha: float, batch: int) -> tuple[bool, int]:
    """A sequential design over ``pairs`` looked at after every ``batch``: (decided, pairs
    used) -- it stops at the first look whose mixture e-value reaches ``1/alpha``, else uses
    them all undecided."""
    a_only = b_only = 0
    for used, pair in enumerate(pairs, start=1):
        a_only += pair.a and not pair.b
        b_only += pair.b and not pair.a
        if (used % batch == 0 or used == len(pairs)) and \
                mixture_e_value(a_only, b_only) >= 1 / alpha:
            return True, used
    return False, len(pairs)
