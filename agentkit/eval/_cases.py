"""Moved to :mod:`agentkit.verdict` (a case judged on its samples)."""

from agentkit.verdict._cases import (
    CASE_CLASSES,
    CaseClass,
    CaseStats,
    GateWarning,
    PassRateChange,
    SampleOutcome,
    case_stats,
    compare_pass_rates,
    gate_warning,
    percent,
    samples_needed,
)

__all__ = ["SampleOutcome", "CaseClass", "CASE_CLASSES", "CaseStats", "case_stats",
           "PassRateChange", "compare_pass_rates", "percent", "samples_needed", "gate_warning",
           "GateWarning"]
