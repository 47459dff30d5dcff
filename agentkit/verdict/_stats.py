"""Statistics of repeated runs: how often a case passes, and how sure we are.

Everything here is a pure function of counts, so reports computed from the same samples are
identical wherever they are computed (a shard, a merge, a re-run offline).

* :func:`wilson_interval` -- the Wilson score interval of a pass rate (two-sided, at a
  confidence level; 95 % by default). Unlike the textbook ``p ± z·√(p(1-p)/n)`` it stays
  inside [0, 1] and is not zero-width at 0/n or n/n, which matters with the 5-20 samples a
  live evaluation affords: 10 passes of 10 give [0.72, 1.00], not "certainly 100 %".
* :func:`pass_at_k` -- the chance that at least one of k runs passes, estimated without bias
  from n samples with c passes (Chen et al. 2021: ``1 - C(n-c, k) / C(n, k)``).
* :func:`pass_all_k` -- pass^k: the chance that all k of k runs pass (``C(c, k) / C(n, k)``),
  the reliability a user who retries nothing sees.
* :func:`fisher_lower` -- Fisher's exact test, one-sided: the probability of seeing a pass
  count this low (or lower) in the new samples if both sets came from the same pass rate.
  The baseline comparison and the head-to-head table call a difference real only when this
  is below ``1 - confidence``; an exact test, because the normal approximation of the
  two-proportion z-test is poor at these sample sizes.
* :func:`spread` -- mean, standard deviation (n - 1), min and max of a cost.
* :func:`cohen_kappa` -- how far two raters (an LLM judge and people) agree on pass/fail
  beyond what their base rates give by chance: ``(po - pe) / (1 - pe)``; None when it is
  undefined (both gave one and the same verdict to every item: chance explains everything).
* :func:`kappa_interval` -- a percentile bootstrap interval of kappa over the labelled items,
  seeded, so the same labels give the same interval everywhere.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

__all__ = ["DEFAULT_CONFIDENCE", "wilson_interval", "pass_at_k", "pass_all_k", "fisher_lower",
           "Spread", "spread", "check_confidence", "cohen_kappa", "kappa_interval",
           "BOOTSTRAP_RESAMPLES"]

DEFAULT_CONFIDENCE = 0.95


def check_confidence(confidence: float) -> float:
    """``confidence`` if it is a usable confidence level (strictly between 0 and 1)."""
    if not 0 < confidence < 1:
        raise ValueError(f"a confidence level is between 0 and 1 (e.g. 0.95), got {confidence!r}")
    return confidence


def _z(confidence: float) -> float:
    return NormalDist().inv_cdf(0.5 + check_confidence(confidence) / 2)


def wilson_interval(passed: int, total: int,
                    confidence: float = DEFAULT_CONFIDENCE) -> tuple[float, float]:
    """The two-sided Wilson score interval of ``passed / total`` at ``confidence``."""
    if total < 1 or not 0 <= passed <= total:
        raise ValueError(f"need 0 <= passed <= total and total >= 1, got {passed}/{total}")
    z = _z(confidence)
    p = passed / total
    denominator = 1 + z * z / total
    centre = (p + z * z / (2 * total)) / denominator
    half = z * math.sqrt(p * (1 - p) / total + z * z / (4 * total * total)) / denominator
    # the exact ends: no floating-point dust below 0 or above 1, and n/n reaches 1.0
    low = 0.0 if passed == 0 else max(0.0, centre - half)
    high = 1.0 if passed == total else min(1.0, centre + half)
    return low, high


def _check_k(total: int, passed: int, k: int) -> None:
    if not 0 <= passed <= total or not 1 <= k <= total:
        raise ValueError(f"need 0 <= passed <= total and 1 <= k <= total, got passed={passed}, "
                         f"total={total}, k={k}")


def pass_at_k(total: int, passed: int, k: int) -> float:
    """The unbiased estimate of pass@k from ``total`` samples with ``passed`` passes."""
    _check_k(total, passed, k)
    return 1.0 - math.comb(total - passed, k) / math.comb(total, k)


def pass_all_k(total: int, passed: int, k: int) -> float:
    """The unbiased estimate of pass^k (all k of k runs pass)."""
    _check_k(total, passed, k)
    return math.comb(passed, k) / math.comb(total, k)


def fisher_lower(before_passed: int, before_total: int, after_passed: int,
                 after_total: int) -> float:
    """One-sided p-value of Fisher's exact test that the ``after`` pass rate is lower than
    the ``before`` one: the chance of ``after_passed`` or fewer passes among the ``after``
    samples when the passes of both were dealt at random between them."""
    for passed, total in ((before_passed, before_total), (after_passed, after_total)):
        if total < 1 or not 0 <= passed <= total:
            raise ValueError(f"need 0 <= passed <= total and total >= 1, got {passed}/{total}")
    passes = before_passed + after_passed
    everything = before_total + after_total
    ways = math.comb(everything, passes)
    lowest = max(0, passes - before_total)
    return sum(math.comb(after_total, x) * math.comb(before_total, passes - x)
               for x in range(lowest, after_passed + 1)) / ways


@dataclass(frozen=True)
class Spread:
    """How a cost varies over samples: mean, standard deviation (0 for one value), extremes."""

    mean: float
    sd: float
    low: float
    high: float

    def to_dict(self) -> dict[str, float]:
        return {"mean": self.mean, "sd": self.sd, "min": self.low, "max": self.high}


def spread(values: Sequence[float]) -> Spread:
    """The :class:`Spread` of ``values`` (at least one), rounded to 6 decimals."""
    if not values:
        raise ValueError("spread() needs at least one value")
    mean = math.fsum(values) / len(values)
    sd = (math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (len(values) - 1))
          if len(values) > 1 else 0.0)
    return Spread(round(mean, 6), round(sd, 6), round(min(values), 6), round(max(values), 6))


def cohen_kappa(pairs: Sequence[tuple[bool, bool]]) -> float | None:
    """Cohen's kappa of two raters' pass/fail verdicts on the same items (``(first, second)``
    per item, True for pass): 1 for perfect agreement, 0 for agreement no better than their
    base rates give by chance, below 0 for worse. None when it is undefined: no items, or
    both raters gave every item the same one verdict (chance agreement is then 1)."""
    if not pairs:
        return None
    n = len(pairs)
    observed = sum(a == b for a, b in pairs) / n
    first = sum(a for a, _ in pairs) / n
    second = sum(b for _, b in pairs) / n
    chance = first * second + (1 - first) * (1 - second)
    if math.isclose(chance, 1.0):
        return None
    return (observed - chance) / (1 - chance)


BOOTSTRAP_RESAMPLES = 2000
"""How many resamples :func:`kappa_interval` draws."""


def kappa_interval(pairs: Sequence[tuple[bool, bool]], confidence: float = DEFAULT_CONFIDENCE,
                   *, seed: int = 0, resamples: int = BOOTSTRAP_RESAMPLES
                   ) -> tuple[float, float] | None:
    """The percentile bootstrap interval of :func:`cohen_kappa` at ``confidence``: the
    items are drawn with replacement ``resamples`` times (a :class:`random.Random` seeded
    with ``seed``), kappa computed on each draw, and the interval is the middle
    ``confidence`` of those kappas. Draws on which kappa is undefined (every drawn item
    rated alike by both) are left out; None when every draw is."""
    check_confidence(confidence)
    if not pairs:
        return None
    draw = random.Random(seed)
    n = len(pairs)
    found = sorted(k for k in (cohen_kappa([pairs[draw.randrange(n)] for _ in range(n)])
                               for _ in range(resamples)) if k is not None)
    if not found:
        return None
    tail = (1 - confidence) / 2
    low = found[min(len(found) - 1, math.floor(tail * len(found)))]
    high = found[max(0, math.ceil((1 - tail) * len(found)) - 1)]
    return round(low, 6), round(high, 6)
