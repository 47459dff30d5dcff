"""Which is best, and how sure are we: the head-to-head table of a report.

Only the scenarios every compared agent type (× model) ran count (:meth:`Comparison.compared`),
so each column is measured on the same tasks. A line per scenario gives each one's pass rate;
then the pass rate pooled over those scenarios and the mean cost per run (tokens, LLM calls,
simulated latency).

In each line the best value is marked, and so is every value not worse than it beyond noise,
which makes a **tie**: for pass rates, a value is tied with the best when Fisher's exact test
(one-sided) does not call it lower at the scenario's confidence level (95 % by default); for a
mean cost, when it is within the margin of the two means' standard errors (from each case's
spread over its samples; a single recorded run has none, so only equal values tie).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any, Literal

from agentkit.eval.cases import percent
from agentkit.eval.stats import DEFAULT_CONFIDENCE, fisher_lower, wilson_interval
from agentkit.report.model import Comparison, Contender, Row, contender_label

__all__ = ["Value", "Line", "HeadToHead", "head_to_head", "COST_LINES"]

#: The cost lines: (label, the cost key of a sampled row's spread, how a row gives it).
COST_LINES: tuple[tuple[str, str], ...] = (
    ("Tokens per run", "tokens"),
    ("LLM calls per run", "llm_calls"),
    ("Simulated latency per run", "wall_time"),
)


@dataclass(frozen=True)
class Value:
    """One contender's value in a line: a pass rate (``passes`` of ``judged``, with its
    interval) or a mean cost (with its standard error); None when it has none (the run
    could not run)."""

    value: float | None
    passes: int = 0
    judged: int = 0
    interval: tuple[float, float] | None = None
    se: float = 0.0

    def text(self, kind: str) -> str:
        if self.value is None:
            return "error"
        if kind == "pass_rate":
            assert self.interval is not None
            low, high = self.interval
            return (f"{percent(self.value)} ({self.passes}/{self.judged}; "
                    f"{low * 100:.0f}-{high * 100:.0f}%)")
        if kind == "seconds":
            return f"{self.value:,.2f}s"
        return f"{self.value:,.0f}" if float(self.value).is_integer() else f"{self.value:,.1f}"


@dataclass(frozen=True)
class Line:
    """A row of the head-to-head table: a scenario's pass rates, the pooled pass rate, or a
    mean cost; ``best`` holds every contender tied for the best value."""

    label: str
    kind: Literal["pass_rate", "count", "seconds"]
    values: dict[Contender, Value]
    best: list[Contender]

    @property
    def tie(self) -> bool:
        return len(self.best) > 1

    def to_dict(self) -> dict[str, Any]:
        return {"label": self.label, "kind": self.kind,
                "values": {contender_label(c): _value_dict(v) for c, v in self.values.items()},
                "best": [contender_label(c) for c in self.best], "tie": self.tie}


def _value_dict(value: Value) -> dict[str, Any]:
    if value.value is None:
        return {"value": None}
    data: dict[str, Any] = {"value": round(value.value, 6)}
    if value.interval is not None:
        data.update(passes=value.passes, judged=value.judged,
                    interval=[round(value.interval[0], 6), round(value.interval[1], 6)])
    elif value.se:
        data["se"] = round(value.se, 6)
    return data


@dataclass(frozen=True)
class HeadToHead:
    """The head-to-head table (module docstring)."""

    contenders: list[Contender]
    scenarios: list[str]
    left_out: list[tuple[Contender, str]]
    lines: list[Line]
    confidence: float

    def to_dict(self) -> dict[str, Any]:
        return {"contenders": [contender_label(c) for c in self.contenders],
                "scenarios": list(self.scenarios), "confidence": self.confidence,
                "lines": [line.to_dict() for line in self.lines]}


def _rate(passes: int, judged: int, confidence: float) -> Value:
    if not judged:
        return Value(None)
    return Value(passes / judged, passes, judged, wilson_interval(passes, judged, confidence))


def _best_rate(values: dict[Contender, Value], confidence: float) -> list[Contender]:
    rated = {c: v for c, v in values.items() if v.value is not None}
    if not rated:
        return []
    top = max(rated.values(), key=lambda v: (v.value or 0.0, v.judged))
    return [c for c, v in rated.items()
            if v is top or fisher_lower(top.passes, top.judged, v.passes, v.judged)
            >= 1 - confidence]


def _best_cost(values: dict[Contender, Value], confidence: float) -> list[Contender]:
    costed = {c: v for c, v in values.items() if v.value is not None}
    if not costed:
        return []
    low = min(costed.values(), key=lambda v: v.value or 0.0)
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    assert low.value is not None
    return [c for c, v in costed.items()
            if (v.value or 0.0) - low.value <= z * math.hypot(v.se, low.se) + 1e-9]


def _row_cost(row: Row, key: str) -> tuple[float, float]:
    """A row's mean cost and the standard error of that mean (0 for one recorded run)."""
    spread = (row.cost or {}).get(key)
    if spread is not None:
        return spread.mean, spread.sd / math.sqrt(max(row.judged_runs, 1))
    if key == "tokens":
        return float((row.prompt_tokens or 0) + (row.completion_tokens or 0)), 0.0
    return float(row.metric(key) or 0), 0.0


def head_to_head(comparison: Comparison) -> HeadToHead:
    """The head-to-head table of ``comparison`` (module docstring)."""
    compared = comparison.compared()
    contenders, scenarios = compared.contenders, compared.scenarios
    rows = {(r.scenario, r.contender): r for r in comparison.rows if r.agent_type is not None}
    confidences = {r.confidence for r in comparison.rows if r.confidence is not None}
    pooled_confidence = min(confidences) if confidences else DEFAULT_CONFIDENCE
    lines: list[Line] = []
    for scenario in scenarios:
        here = [rows[(scenario, c)] for c in contenders]
        confidence = next((r.confidence for r in here if r.confidence is not None),
                          DEFAULT_CONFIDENCE)
        values = {c: _rate(row.passed_runs, row.judged_runs, confidence)
                  for c, row in zip(contenders, here, strict=True)}
        lines.append(Line(scenario, "pass_rate", values, _best_rate(values, confidence)))
    if len(scenarios) > 1 or any(rows[(s, c)].sampled for s in scenarios for c in contenders):
        values = {c: _rate(sum(rows[(s, c)].passed_runs for s in scenarios),
                           sum(rows[(s, c)].judged_runs for s in scenarios), pooled_confidence)
                  for c in contenders}
        lines.append(Line(f"All {len(scenarios)} compared scenarios", "pass_rate", values,
                          _best_rate(values, pooled_confidence)))
    for label, key in COST_LINES if scenarios else ():
        values = {}
        for contender in contenders:
            ran = [rows[(s, contender)] for s in scenarios if rows[(s, contender)].has_metrics]
            if len(ran) < len(scenarios):
                values[contender] = Value(None)
                continue
            costs = [_row_cost(row, key) for row in ran]
            mean = math.fsum(c for c, _ in costs) / len(costs)
            se = math.sqrt(math.fsum(e * e for _, e in costs)) / len(costs)
            values[contender] = Value(mean, se=se)
        kind: Literal["count", "seconds"] = "seconds" if key == "wall_time" else "count"
        lines.append(Line(label, kind, values, _best_cost(values, pooled_confidence)))
    return HeadToHead(contenders, scenarios, compared.left_out, lines, pooled_confidence)
