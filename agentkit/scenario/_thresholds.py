"""A scenario's own cost-regression thresholds (``thresholds:``), per metric, against a
report's baseline (``agentkit report --baseline``)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["Threshold", "Thresholds"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Threshold(_Strict):
    """How much one cost may grow against a report's baseline before the report calls it a
    regression: by more than ``relative`` (a fraction of the baseline value; 0.1 is +10 %)
    and by more than ``absolute`` (in the metric's unit). Unset fields keep the defaults
    (:data:`agentkit.report.DEFAULT_THRESHOLDS`)."""

    relative: float | None = Field(default=None, ge=0, allow_inf_nan=False)
    absolute: float | None = Field(default=None, ge=0, allow_inf_nan=False)


class Thresholds(_Strict):
    """A scenario's own cost-regression thresholds, per metric (``agentkit report
    --baseline``): steps, LLM calls, tokens (in + out) and simulated wall time (seconds)."""

    steps: Threshold | None = None
    llm_calls: Threshold | None = None
    tokens: Threshold | None = None
    wall_time: Threshold | None = None
