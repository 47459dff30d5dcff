"""Compare a run with a baseline run: per-row metric deltas, new and removed rows, regressions.

A row **regresses** when it passed in the baseline and now fails, errors, or is missing, or
when one of its costs (steps, LLM calls, tokens, simulated wall time) grew past its threshold
(:mod:`agentkit.report._thresholds`: +10 % by default, per scenario in its file). A sampled
case (on either side) regresses on its pass rate only when the drop is beyond noise: Fisher's
exact test, one-sided, at the scenario's confidence level
(:func:`agentkit.eval._cases.compare_pass_rates`); a drop within noise is reported in words,
not flagged. A missing
row counts because a scenario (or agent type) that silently drops out of the run is lost
coverage; when the removal is intended, write a new baseline. Other metric changes are
reported as deltas only, and new failing rows are failures of the current run, not
regressions against the baseline.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from agentkit.eval._cases import CaseStats, PassRateChange, compare_pass_rates
from agentkit.eval._stats import DEFAULT_CONFIDENCE
from agentkit.report._model import METRICS, Comparison, Contender, Row
from agentkit.report._thresholds import CostRegression, cost_regressions

__all__ = ["RowDelta", "BaselineDiff", "compare_to_baseline"]

Change = Literal["same", "new", "removed"]


def _delta(after: float, before: float) -> float | int:
    value = after - before
    return round(value, 6) if isinstance(value, float) else value


@dataclass(frozen=True)
class RowDelta:
    """One row key in the current run and/or the baseline, with what changed."""

    scenario: str
    agent_type: str | None
    current: Row | None
    baseline: Row | None
    deltas: dict[str, float | int] = field(default_factory=dict)
    regression: str | None = None
    """Why a row that passed in the baseline does not pass now (None: it does)."""
    costs: tuple[CostRegression, ...] = ()
    """The costs that grew past their thresholds."""
    pass_rate: PassRateChange | None = None
    """A sampled case's pass rate before and after (regressed or within noise)."""

    @property
    def regressed(self) -> bool:
        """It fails where it passed, or costs more than its thresholds allow."""
        return self.regression is not None or bool(self.costs)

    @property
    def reasons(self) -> list[str]:
        """Each way it regressed, one line each."""
        return ([self.regression] if self.regression else []) + [c.describe() for c in self.costs]

    @property
    def key(self) -> str:
        row = self.current or self.baseline
        return row.key if row is not None else self.scenario

    @property
    def change(self) -> Change:
        if self.baseline is None:
            return "new"
        return "removed" if self.current is None else "same"

    @property
    def fixed(self) -> bool:
        """Failed (or errored) in the baseline and passes now."""
        return (self.baseline is not None and not self.baseline.passed
                and self.current is not None and self.current.passed)

    def to_dict(self) -> dict[str, Any]:
        return {"scenario": self.scenario, "agent_type": self.agent_type,
                "change": self.change,
                "status": {"baseline": self.baseline.status if self.baseline else None,
                           "current": self.current.status if self.current else None},
                "deltas": dict(self.deltas), "regression": self.regression,
                "cost_regressions": [c.to_dict() for c in self.costs],
                **({"pass_rate_change": _change_dict(self.pass_rate)}
                   if self.pass_rate is not None else {})}


def _change_dict(change: PassRateChange) -> dict[str, Any]:
    before, after = change.before, change.after
    return {"before": {"passes": before.passed, "judged": before.judged},
            "after": {"passes": after.passed, "judged": after.judged},
            "p_value": change.p_value, "confidence": change.confidence,
            "regressed": change.regressed, "text": change.describe()}


@dataclass(frozen=True)
class BaselineDiff:
    """Every row of the current run (in its order), then the rows only the baseline has."""

    baseline_version: str
    rows: list[RowDelta]
    _by_row: dict[tuple[str, Contender], RowDelta] = field(init=False, repr=False,
                                                          compare=False)

    def __post_init__(self) -> None:
        by_row: dict[tuple[str, Contender], RowDelta] = {}
        for delta in self.rows:
            other = delta.current or delta.baseline
            if other is not None:
                by_row.setdefault((other.scenario, other.contender), delta)
        object.__setattr__(self, "_by_row", by_row)

    @property
    def regressions(self) -> list[RowDelta]:
        """Rows that fail where they passed, or cost more than their thresholds allow."""
        return [d for d in self.rows if d.regressed]

    @property
    def cost_regressions(self) -> list[RowDelta]:
        return [d for d in self.rows if d.costs]

    @property
    def has_regressions(self) -> bool:
        """True when a row that passed in the baseline fails, errors or is missing now, or a
        row's cost grew past its threshold."""
        return bool(self.regressions)

    @property
    def new(self) -> list[RowDelta]:
        return [d for d in self.rows if d.change == "new"]

    @property
    def removed(self) -> list[RowDelta]:
        return [d for d in self.rows if d.change == "removed"]

    @property
    def fixed(self) -> list[RowDelta]:
        return [d for d in self.rows if d.fixed]

    def for_row(self, row: Row) -> RowDelta | None:
        """The change of ``row``'s scenario × agent type (× model): looked up in an index of
        :attr:`rows` made once, not by a scan of them."""
        return self._by_row.get((row.scenario, row.contender))

    def to_dict(self) -> dict[str, Any]:
        return {"agentkit_version": self.baseline_version,
                "has_regressions": self.has_regressions,
                "regressions": [d.key for d in self.regressions],
                "new": [d.key for d in self.new], "removed": [d.key for d in self.removed],
                "fixed": [d.key for d in self.fixed],
                "rows": [d.to_dict() for d in self.rows]}


def _regression(current: Row | None, baseline: Row, load_error: Row | None) -> str | None:
    if not baseline.passed:
        return None
    if current is None:
        if load_error is not None:
            return "passed in the baseline; missing now: the scenario file fails to load"
        return "passed in the baseline; missing now"
    if current.passed:
        return None
    what = "fails" if current.status == "fail" else "cannot run"
    first = current.problems[0].splitlines()[0] if current.problems else ""
    return f"passed in the baseline; {what} now" + (f": {first}" if first else "")


def _counts(row: Row) -> CaseStats:
    return CaseStats(row.passed_runs, row.judged_runs - row.passed_runs)


def _pass_rate_change(current: Row, baseline: Row) -> PassRateChange | None:
    """The pass-rate change of a sampled case (either side sampled), else None."""
    if not (current.sampled or baseline.sampled):
        return None
    confidence = current.confidence or baseline.confidence or DEFAULT_CONFIDENCE
    return compare_pass_rates(_counts(baseline), _counts(current), confidence)


def compare_to_baseline(current: Comparison, baseline: Comparison) -> BaselineDiff:
    """Pair the rows of ``current`` and ``baseline`` by scenario × agent type.

    ``deltas`` (current minus baseline, per metric) are given when both rows ran.
    """
    before = {(r.scenario, r.agent_type, r.model): r for r in baseline.rows}
    now = {(r.scenario, r.agent_type, r.model): r for r in current.rows}
    load_errors = {r.scenario: r for r in current.rows if r.agent_type is None}
    diffs = []
    for key, row in now.items():
        old = before.get(key)
        deltas: dict[str, float | int] = {}
        if old is not None and old.has_metrics and row.has_metrics:
            deltas = {m.key: _delta(row.metric(m.key), old.metric(m.key))  # type: ignore[arg-type]
                      for m in METRICS}
        change = _pass_rate_change(row, old) if old is not None else None
        if change is not None:
            regression = change.describe() if change.regressed else None
        else:
            regression = _regression(row, old, None) if old is not None else None
        costs = tuple(cost_regressions(row, old)) if old is not None else ()
        diffs.append(RowDelta(row.scenario, row.agent_type, row, old, deltas, regression, costs,
                              change))
    for key, old in before.items():
        if key not in now:
            regression = _regression(None, old, load_errors.get(old.scenario))
            diffs.append(RowDelta(old.scenario, old.agent_type, None, old, {}, regression))
    return BaselineDiff(baseline_version=baseline.agentkit_version, rows=diffs)
