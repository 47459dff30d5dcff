"""``agentkit eval --compare A B``: two agent types (or two models) on the same cases, sample
by sample -- sample i of a case under A and sample i under B drew the same seed, so they form
a pair -- and a verdict from paired statistics (:mod:`agentkit.verdict._paired`):

- per case, the exact McNemar test on the discordant pairs, Holm-adjusted over the cases;
- for the suite, the difference in pass rate (B minus A) with a paired bootstrap interval
  that resamples scenarios, so extra seeds of one scenario cannot manufacture significance;
- with a margin, a non-inferiority verdict: B is no worse than A by more than the margin when
  the one-sided lower bound of that interval is above minus the margin;
- sequentially (:func:`decided`), each case's mixture e-value against the Bonferroni
  threshold ``cases / alpha``: a case is decided once it crosses, however often it was
  looked at.

A pair counts only when both samples say something about the agent (a pass or a failure);
a sample that hit an infrastructure error, or is not recorded yet, leaves its pair out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from agentkit.core.errors import BadInputError
from agentkit.eval._matrix import CaseResult
from agentkit.verdict._paired import (
    Discordance,
    Pair,
    bootstrap,
    discordance,
    holm,
    mcnemar_exact,
    mixture_e_value,
)

__all__ = ["Dimension", "CasePairs", "PairedComparison", "compare", "dimension_of"]

Dimension = Literal["agent type", "model"]


@dataclass
class CasePairs:
    """One case under both sides: ``scenario`` with the other dimension fixed at ``shared``
    (the model when agent types are compared, the agent type when models are)."""

    scenario: str
    shared: str
    pairs: list[Pair]
    p_value: float = 1.0
    adjusted: float = 1.0
    e_value: float = 1.0

    @property
    def key(self) -> str:
        return f"{self.scenario}[{self.shared}]"

    @property
    def counts(self) -> Discordance:
        return discordance(self.pairs)


@dataclass
class PairedComparison:
    """The paired verdict of ``a`` against ``b`` along ``dimension`` over ``cases``."""

    a: str
    b: str
    dimension: Dimension
    cases: list[CasePairs]
    confidence: float = 0.95
    margin: float | None = None
    """Non-inferiority margin, as a fraction (0.05: five points)."""
    difference: float | None = None
    interval: tuple[float, float] | None = None
    lower_one_sided: float | None = None
    clusters: int = 0
    unpaired: list[str] = field(default_factory=list)
    """Cases only one side ran (or with no pair that both sides judged), with why."""

    @property
    def alpha(self) -> float:
        return 1 - self.confidence

    @property
    def pairs(self) -> list[Pair]:
        return [pair for case in self.cases for pair in case.pairs]

    def significant(self, case: CasePairs) -> bool:
        """Whether ``case``'s sides differ beyond chance (Holm-adjusted McNemar)."""
        return case.adjusted < self.alpha

    def decided(self, case: CasePairs) -> bool:
        """Whether a sequential evaluation may stop drawing samples for ``case``: its
        e-value reached ``cases / alpha`` (Bonferroni over the cases; anytime-valid)."""
        return case.e_value >= len(self.cases) / self.alpha if self.cases else True

    def flips(self) -> list[tuple[str, int, int]]:
        """Per scenario: pairs where A passed and B failed (pass -> fail), and the reverse."""
        table: dict[str, list[int]] = {}
        for case in self.cases:
            row = table.setdefault(case.scenario, [0, 0])
            row[0] += case.counts.a_only
            row[1] += case.counts.b_only
        return [(name, row[0], row[1]) for name, row in sorted(table.items())]

    def verdict(self) -> str:
        """The suite's verdict in one sentence."""
        if self.difference is None or self.interval is None:
            return (f"no verdict: no case has a pair of samples both {self.a} and {self.b} "
                    "judged")
        points = self.difference * 100
        low, high = (v * 100 for v in self.interval)
        where = (f"B - A = {points:+.0f} points ({self.confidence:.0%} interval {low:+.0f} to "
                 f"{high:+.0f}, paired bootstrap over {self.clusters} scenario"
                 f"{'s' if self.clusters != 1 else ''}, {len(self.pairs)} pairs)")
        # one scenario: resampling it gives back its own pairs, an interval that describes
        # it and decides nothing; its cases' McNemar tests decide
        tested = self.clusters > 1 or any(self.significant(case) for case in self.cases)
        if low > 0 and tested:
            said = f"{self.b} is better than {self.a}"
        elif high < 0 and tested:
            said = f"{self.b} is worse than {self.a}"
        else:
            said = f"no difference shown between {self.a} and {self.b}"
        sentence = f"{said}: {where}"
        if self.margin is not None and self.lower_one_sided is not None:
            margin = self.margin * 100
            bound = self.lower_one_sided * 100
            if self.lower_one_sided > -self.margin:
                sentence += (f"; {self.b} is no worse than {self.a} by more than {margin:g} "
                             f"points (one-sided {self.confidence:.0%} lower bound {bound:+.0f})")
            else:
                sentence += (f"; {self.b} is not shown to be within {margin:g} points of "
                             f"{self.a} (one-sided {self.confidence:.0%} lower bound "
                             f"{bound:+.0f})")
        return sentence

    def lines(self) -> list[str]:
        """The comparison as text: the setting, a row per case, the flip table, the verdict."""
        shared = "model" if self.dimension == "agent type" else "agent type"
        out = [f"paired comparison by {self.dimension}: A = {self.a}, B = {self.b} (sample i of "
               f"each case drew the same seed; per {shared})",
               f"  {'case':<40} {'pairs':>5} {'both':>5} {'A only':>6} {'B only':>6} "
               f"{'neither':>7} {'McNemar p':>9} {'Holm p':>7}  e-value  verdict"]
        for case in self.cases:
            c = case.counts
            verdict = ("differs" if self.significant(case) else "no difference shown")
            if self.significant(case):
                verdict += f" ({self.b if c.b_only > c.a_only else self.a} passes more)"
            out.append(f"  {case.key:<40} {c.pairs:>5} {c.both:>5} {c.a_only:>6} "
                       f"{c.b_only:>6} {c.neither:>7} {case.p_value:>9.3f} "
                       f"{case.adjusted:>7.3f}  {case.e_value:>7.2f}  {verdict}")
        out.append("  flips by scenario (A pass -> B fail / A fail -> B pass): " + (", ".join(
            f"{name} {lost}/{won}" for name, lost, won in self.flips()) or "none"))
        for key in self.unpaired:
            out.append(f"  not paired: {key}")
        out.append(f"verdict: {self.verdict()}")
        return out


def dimension_of(a: str, b: str, agent_types: Sequence[str],
                 models: Sequence[str]) -> Dimension:
    """Which dimension ``--compare A B`` compares: both agent types of ``--agents`` or both
    models of ``--models`` (a :class:`BadInputError` otherwise)."""
    if a == b:
        raise BadInputError(f"--compare: A and B are both {a!r}; name two different ones")
    if a in agent_types and b in agent_types:
        return "agent type"
    if a in models and b in models:
        return "model"
    raise BadInputError(f"--compare {a} {b}: name two agent types of --agents "
                        f"({', '.join(agent_types)}) or two models of --models "
                        f"({', '.join(models)})")


def compare(results: Sequence[CaseResult], a: str, b: str, dimension: Dimension, *,
            confidence: float = 0.95, margin: float | None = None,
            seed: int = 0) -> PairedComparison:
    """The paired comparison of ``a`` and ``b`` over the evaluation's ``results``."""
    def side(result: CaseResult) -> str:
        return result.case.agent_type if dimension == "agent type" else result.case.model

    def other(result: CaseResult) -> str:
        return result.case.model if dimension == "agent type" else result.case.agent_type

    found: dict[tuple[str, str], dict[str, CaseResult]] = {}
    for result in results:
        if side(result) in (a, b):
            found.setdefault((result.case.scenario.name, other(result)), {})[side(result)] = result
    cases: list[CasePairs] = []
    unpaired: list[str] = []
    for (scenario, shared), sides in sorted(found.items()):
        pairs = _pairs(scenario, sides.get(a), sides.get(b))
        if pairs:
            cases.append(CasePairs(scenario, shared, pairs))
        else:
            ran = [name for name in (a, b) if name in sides]
            why = (f"only {ran[0]} ran it" if len(ran) == 1
                   else "no sample index judged on both sides")
            unpaired.append(f"{scenario}[{shared}]: {why}")
    comparison = PairedComparison(a, b, dimension, cases, confidence, margin,
                                  unpaired=unpaired)
    for case in cases:
        counts = case.counts
        case.p_value = mcnemar_exact(counts.a_only, counts.b_only)
        case.e_value = mixture_e_value(counts.a_only, counts.b_only)
    for case, adjusted in zip(cases, holm([c.p_value for c in cases]), strict=True):
        case.adjusted = adjusted
    pairs = comparison.pairs
    if pairs:
        resampled = bootstrap(pairs, seed=seed)  # one set of draws, read at both levels
        comparison.difference = resampled.difference
        comparison.interval = resampled.interval(confidence)
        comparison.lower_one_sided = resampled.interval(1 - 2 * (1 - confidence))[0]
        comparison.clusters = len({pair.cluster for pair in pairs})
    return comparison


def _pairs(scenario: str, a: CaseResult | None, b: CaseResult | None) -> list[Pair]:
    if a is None or b is None:
        return []
    outcomes_b = {run.index: run.outcome for run in b.sampled.runs}
    pairs = []
    for run in a.sampled.runs:
        other = outcomes_b.get(run.index)
        if run.outcome in ("pass", "fail") and other in ("pass", "fail"):
            pairs.append(Pair(scenario, run.index, run.outcome == "pass", other == "pass"))
    return pairs
