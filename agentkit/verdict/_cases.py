"""A case (scenario × agent type × model) judged on its samples: counts, pass rate with its
interval, pass@k and pass^k, a class, the ``min_pass_rate`` gate, and the words a report uses
to say whether a change of pass rate is real.

Infrastructure errors (a timeout, a 5xx, a rate limit: :class:`~agentkit.core.errors.
InfrastructureError`) are counted apart: a sample that hit one says nothing about the agent,
so it is in neither the passes nor the failures, and a case with nothing else is
``infra_error``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Literal

from agentkit.verdict._stats import (
    DEFAULT_CONFIDENCE,
    fisher_lower,
    pass_all_k,
    pass_at_k,
    wilson_interval,
)

__all__ = ["SampleOutcome", "CaseClass", "CASE_CLASSES", "CaseStats", "case_stats",
           "PassRateChange", "compare_pass_rates", "percent", "samples_needed", "gate_warning",
           "GateWarning", "samples_to_fail_gate", "samples_to_separate", "SAMPLES_LIMIT"]

SampleOutcome = Literal["pass", "fail", "infra"]
CaseClass = Literal["stable_pass", "flaky", "stable_fail", "infra_error"]
CASE_CLASSES: tuple[CaseClass, ...] = ("stable_pass", "flaky", "stable_fail", "infra_error")


def percent(value: float) -> str:
    """A rate as a whole percentage (``83 %`` style without the space: ``83%``)."""
    return f"{value * 100:.0f}%"


@dataclass(frozen=True)
class CaseStats:
    """What the samples of one case say: ``passed`` and ``failed`` judged runs,
    ``infra_errors`` apart, at ``confidence`` for the interval and the tests."""

    passed: int
    failed: int
    infra_errors: int = 0
    confidence: float = DEFAULT_CONFIDENCE

    @property
    def samples(self) -> int:
        """Every sample with a result, infrastructure errors included."""
        return self.passed + self.failed + self.infra_errors

    @property
    def judged(self) -> int:
        """The samples that say something about the agent (passes and failures)."""
        return self.passed + self.failed

    @property
    def pass_rate(self) -> float | None:
        return self.passed / self.judged if self.judged else None

    @property
    def interval(self) -> tuple[float, float] | None:
        """The Wilson interval of the pass rate at ``confidence``."""
        if not self.judged:
            return None
        low, high = wilson_interval(self.passed, self.judged, self.confidence)
        return round(low, 6), round(high, 6)

    @property
    def pass_at_k(self) -> dict[int, float]:
        """pass@k for every k from 1 to the judged samples."""
        return {k: round(pass_at_k(self.judged, self.passed, k), 6)
                for k in range(1, self.judged + 1)}

    @property
    def pass_all_k(self) -> dict[int, float]:
        """pass^k (all k of k pass) for every k from 1 to the judged samples."""
        return {k: round(pass_all_k(self.judged, self.passed, k), 6)
                for k in range(1, self.judged + 1)}

    @property
    def case_class(self) -> CaseClass:
        if not self.judged:
            return "infra_error"
        if self.failed == 0:
            return "stable_pass"
        return "stable_fail" if self.passed == 0 else "flaky"

    def describe(self) -> str:
        """``60% (6/10, 95% interval 31-83%)``, or why there is no rate."""
        if not self.samples:
            return "no pass rate: no sample was judged"
        if self.pass_rate is None or self.interval is None:
            return f"no pass rate: all {self.samples} samples hit infrastructure errors"
        low, high = self.interval
        return (f"{percent(self.pass_rate)} ({self.passed}/{self.judged}, "
                f"{percent(self.confidence)} interval {low * 100:.0f}-{high * 100:.0f}%)")

    def gate(self, min_pass_rate: float | None) -> str | None:
        """Why the case misses its ``min_pass_rate`` (None: it does not). Without one, every
        judged sample must pass; with one, the upper end of the interval must reach it -- a
        rate below it only by noise passes -- and at least one sample must pass (0/N never
        does, however few the samples: see :func:`gate_warning`)."""
        if not self.judged:
            return None
        if min_pass_rate is None:
            if self.failed:
                return (f"{self.failed} of {self.judged} samples failed; the scenario sets no "
                        "`min_pass_rate`, so every sample must pass")
            return None
        assert self.interval is not None
        if self.passed == 0 and min_pass_rate > 0:
            return (f"no sample passed (0/{self.judged}): a case meets min_pass_rate "
                    f"{percent(min_pass_rate)} only with passes")
        if self.interval[1] < min_pass_rate:
            return (f"pass rate {self.describe()} is below min_pass_rate "
                    f"{percent(min_pass_rate)} beyond noise: even the top of the interval is "
                    "below it")
        return None


class GateWarning(UserWarning):
    """A sampled case's ``min_pass_rate`` cannot fail at its sample count (pytest shows it in
    the warnings summary)."""


def samples_needed(min_pass_rate: float, confidence: float = DEFAULT_CONFIDENCE) -> int:
    """The fewest samples at which ``min_pass_rate`` can fail on its interval: where even
    0 passes has an interval whose top is below it."""
    if not 0 < min_pass_rate <= 1:
        raise ValueError(f"min_pass_rate must be in (0, 1], got {min_pass_rate}")
    count = 1
    while wilson_interval(0, count, confidence)[1] >= min_pass_rate:
        count += 1
    return count


#: Beyond this many samples per case, "how many samples would decide" answers "more than it".
SAMPLES_LIMIT = 1000


def _fewest(decides: Callable[[int], bool], start: int) -> int | None:
    """The fewest n from ``start`` up to :data:`SAMPLES_LIMIT` for which ``decides(n)``, found
    by doubling then halving (``decides`` grows true with n, up to rounding: an estimate)."""
    high = max(start, 1)
    while not decides(high):
        if high >= SAMPLES_LIMIT:
            return None
        high = min(high * 2, SAMPLES_LIMIT)
    low = max(start, 1)
    while low < high:
        middle = (low + high) // 2
        if decides(middle):
            high = middle
        else:
            low = middle + 1
    return high


def samples_to_fail_gate(passed: int, judged: int, min_pass_rate: float,
                         confidence: float = DEFAULT_CONFIDENCE) -> int | None:
    """The samples at which a pass rate under ``min_pass_rate`` only within noise would be
    under it beyond noise, if the observed rate held (None: not under it, or more than
    :data:`SAMPLES_LIMIT`)."""
    if not judged or passed / judged >= min_pass_rate:
        return None
    rate = passed / judged
    return _fewest(lambda n: wilson_interval(round(rate * n), n, confidence)[1] < min_pass_rate,
                   judged)


def samples_to_separate(high: tuple[int, int], low: tuple[int, int],
                        confidence: float = DEFAULT_CONFIDENCE) -> int | None:
    """The samples per side at which two pass rates (``(passed, judged)`` each, ``high`` the
    higher) would differ beyond noise (Fisher's exact test, one-sided), if the observed rates
    held; None when they are equal or it takes more than :data:`SAMPLES_LIMIT`."""
    top, bottom = high[0] / high[1], low[0] / low[1]
    if top <= bottom:
        return None
    return _fewest(lambda n: fisher_lower(round(top * n), n, round(bottom * n), n)
                   < 1 - confidence, max(high[1], low[1]))


def gate_warning(min_pass_rate: float | None, judged: int,
                 confidence: float = DEFAULT_CONFIDENCE) -> str | None:
    """What every output says when ``min_pass_rate`` cannot fail on its interval at
    ``judged`` samples -- only 0 passes fails it then (:meth:`CaseStats.gate`) -- naming the
    samples needed; None when it can (or there is no gate, or no judged sample)."""
    if min_pass_rate is None or min_pass_rate <= 0 or judged < 1:
        return None
    top = wilson_interval(0, judged, confidence)[1]
    if top < min_pass_rate:
        return None
    return (f"min_pass_rate {percent(min_pass_rate)} cannot fail at {judged} samples unless "
            f"none passes (even 0/{judged} has a {percent(confidence)} interval up to "
            f"{percent(top)}); give at least {samples_needed(min_pass_rate, confidence)} "
            "samples for a pass rate below it to fail")


def case_stats(outcomes: Iterable[SampleOutcome],
               confidence: float = DEFAULT_CONFIDENCE) -> CaseStats:
    """The :class:`CaseStats` of a case's sample outcomes."""
    seen = list(outcomes)
    return CaseStats(passed=seen.count("pass"), failed=seen.count("fail"),
                     infra_errors=seen.count("infra"), confidence=confidence)


@dataclass(frozen=True)
class PassRateChange:
    """A case's pass rate before and after, and whether the drop is beyond noise."""

    before: CaseStats
    after: CaseStats
    p_value: float
    confidence: float

    @property
    def regressed(self) -> bool:
        """The pass rate fell by more than chance explains (Fisher's exact test, one-sided,
        p below ``1 - confidence``)."""
        return self.p_value < 1 - self.confidence

    def describe(self) -> str:
        """The change in words: the two rates, the chance of a drop this large by luck alone,
        and what that means."""
        before, after = self.before, self.after
        assert before.pass_rate is not None and after.pass_rate is not None
        rates = (f"pass rate {percent(before.pass_rate)} ({before.passed}/{before.judged}) -> "
                 f"{percent(after.pass_rate)} ({after.passed}/{after.judged})")
        if after.pass_rate >= before.pass_rate:
            return f"{rates}: no drop"
        chance = (f"a drop this large happens by chance {self.p_value * 100:.1f}% of the time "
                  f"(Fisher's exact test, one-sided)")
        if self.regressed:
            return f"{rates}: {chance}, under {percent(1 - self.confidence)}, so it is real"
        return (f"{rates}: within noise ({chance}; a regression needs under "
                f"{percent(1 - self.confidence)}); more samples would tell")


def compare_pass_rates(before: CaseStats, after: CaseStats,
                       confidence: float = DEFAULT_CONFIDENCE) -> PassRateChange | None:
    """The change from ``before`` to ``after`` (None when either has no judged sample)."""
    if not before.judged or not after.judged:
        return None
    p = fisher_lower(before.passed, before.judged, after.passed, after.judged)
    return PassRateChange(before, after, round(p, 6), confidence)
