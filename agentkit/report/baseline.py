"""Compare a run with a baseline run: per-row metric deltas, new and removed rows, regressions.

A **regression** is a row that passed in the baseline and now fails, errors, or is missing.
A missing row counts because a scenario (or agent type) that silently drops out of the run
is lost coverage; when the removal is intended, write a new baseline. Metric changes (more
steps, tokens, latency) are reported as deltas but are not regressions, and new failing rows
are failures of the current run, not regressions against the baseline.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from agentkit.report.model import METRICS, Comparison, Row

__all__ = ["RowDelta", "BaselineDiff", "compare_to_baseline"]

Change = Literal["same", "new", "removed"]


def _delta(after: float | int, before: float | int) -> float | int:
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

    @property
    def key(self) -> str:
        return self.scenario if self.agent_type is None else f"{self.scenario}[{self.agent_type}]"

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
                "deltas": dict(self.deltas), "regression": self.regression}


@dataclass(frozen=True)
class BaselineDiff:
    """Every row of the current run (in its order), then the rows only the baseline has."""

    baseline_version: str
    rows: list[RowDelta]

    @property
    def regressions(self) -> list[RowDelta]:
        return [d for d in self.rows if d.regression is not None]

    @property
    def has_regressions(self) -> bool:
        """True when a row that passed in the baseline fails, errors or is missing now."""
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
        return next((d for d in self.rows
                     if d.scenario == row.scenario and d.agent_type == row.agent_type), None)

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


def compare_to_baseline(current: Comparison, baseline: Comparison) -> BaselineDiff:
    """Pair the rows of ``current`` and ``baseline`` by scenario × agent type.

    ``deltas`` (current minus baseline, per metric) are given when both rows ran.
    """
    before = {(r.scenario, r.agent_type): r for r in baseline.rows}
    now = {(r.scenario, r.agent_type): r for r in current.rows}
    load_errors = {r.scenario: r for r in current.rows if r.agent_type is None}
    diffs = []
    for key, row in now.items():
        old = before.get(key)
        deltas: dict[str, float | int] = {}
        if old is not None and old.has_metrics and row.has_metrics:
            deltas = {m.key: _delta(row.metric(m.key), old.metric(m.key))  # type: ignore[arg-type]
                      for m in METRICS}
        regression = _regression(row, old, None) if old is not None else None
        diffs.append(RowDelta(row.scenario, row.agent_type, row, old, deltas, regression))
    for key, old in before.items():
        if key not in now:
            regression = _regression(None, old, load_errors.get(old.scenario))
            diffs.append(RowDelta(old.scenario, old.agent_type, None, old, {}, regression))
    return BaselineDiff(baseline_version=baseline.agentkit_version, rows=diffs)
