"""Cost regressions: a run that costs more than its baseline run by more than a threshold.

Four costs are watched -- steps, LLM calls, tokens (in + out) and simulated wall time. A cost
regresses when it grows by more than ``relative`` × its baseline value **and** by more than
``absolute`` (whichever is more), so a small scenario does not flag noise and a large one
does not hide a real jump. The defaults (:data:`DEFAULT_THRESHOLDS`) apply unless the
scenario file overrides them per metric::

    thresholds:
      tokens: {relative: 0.25, absolute: 200}   # prompts here vary: allow +25 %
      wall_time: {absolute: 0}                  # any slowdown beyond 10 % counts
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agentkit.core.fmt import (
    count,
    percent,
    seconds,
    signed_count,
    signed_seconds,
)
from agentkit.report._model import Row
from agentkit.scenario._model import Threshold, Thresholds

__all__ = ["CostMetric", "COST_METRICS", "DEFAULT_THRESHOLDS", "CostRegression",
           "cost_regressions", "threshold_for"]


@dataclass(frozen=True)
class CostMetric:
    """A watched cost: its name in scenario files, how to read it from a row, how to show it."""

    key: str
    label: str
    value: Callable[[Row], float]
    seconds: bool = False

    def show(self, value: float) -> str:
        return seconds(value) if self.seconds else count(int(value))

    def show_change(self, value: float) -> str:
        return signed_seconds(value) if self.seconds else signed_count(int(value))


COST_METRICS: tuple[CostMetric, ...] = (
    CostMetric("steps", "steps", lambda r: r.steps or 0),
    CostMetric("llm_calls", "LLM calls", lambda r: r.llm_calls or 0),
    CostMetric("tokens", "tokens", lambda r: (r.prompt_tokens or 0) + (r.completion_tokens or 0)),
    CostMetric("wall_time", "wall time", lambda r: r.wall_time or 0.0, seconds=True),
)

DEFAULT_THRESHOLDS: dict[str, Threshold] = {
    "steps": Threshold(relative=0.10, absolute=0),
    "llm_calls": Threshold(relative=0.10, absolute=0),
    "tokens": Threshold(relative=0.10, absolute=50),
    "wall_time": Threshold(relative=0.10, absolute=0.25),
}
"""+10 % on every cost; below that floor a change never counts: any extra step or LLM call
on a short run, 50 tokens, a quarter of a simulated second."""


def threshold_for(metric: str, overrides: Thresholds | None) -> Threshold:
    """The threshold of ``metric``: the scenario's own values where it gives them, else the
    defaults."""
    default = DEFAULT_THRESHOLDS[metric]
    own: Threshold | None = getattr(overrides, metric, None) if overrides is not None else None
    if own is None:
        return default
    return Threshold(relative=default.relative if own.relative is None else own.relative,
                     absolute=default.absolute if own.absolute is None else own.absolute)


@dataclass(frozen=True)
class CostRegression:
    """One cost that grew past its threshold."""

    metric: CostMetric
    before: float
    after: float
    threshold: Threshold

    @property
    def increase(self) -> float:
        return round(self.after - self.before, 6)

    def describe(self) -> str:
        """``tokens 1,200 → 2,029 (+829, +69%; allowed: +10% or +50, whichever is more)``."""
        metric = self.metric
        change = metric.show_change(self.increase)
        if self.before:
            change += f", {percent(self.increase / self.before)}"
        allowed = (f"{percent(self.threshold.relative or 0)} or "
                   f"{metric.show_change(self.threshold.absolute or 0)}, whichever is more")
        return (f"{metric.label} {metric.show(self.before)} → {metric.show(self.after)} "
                f"({change}; allowed: {allowed})")

    def to_dict(self) -> dict[str, Any]:
        return {"metric": self.metric.key, "baseline": self.before, "current": self.after,
                "relative": self.threshold.relative, "absolute": self.threshold.absolute}


def cost_regressions(current: Row, baseline: Row) -> list[CostRegression]:
    """The costs of ``current`` that grew past their thresholds since ``baseline`` (the
    thresholds are the current row's: its scenario file as it is now)."""
    if not (current.has_metrics and baseline.has_metrics):
        return []
    found = []
    for metric in COST_METRICS:
        before, after = metric.value(baseline), metric.value(current)
        threshold = threshold_for(metric.key, current.thresholds)
        allowed = max((threshold.relative or 0) * before, threshold.absolute or 0)
        if after - before > allowed + 1e-9:
            found.append(CostRegression(metric, before, after, threshold))
    return found
