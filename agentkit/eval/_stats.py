"""Moved to :mod:`agentkit.verdict` (the statistics a sampled case is judged by)."""

from agentkit.verdict._stats import (
    DEFAULT_CONFIDENCE,
    Spread,
    check_confidence,
    fisher_lower,
    pass_all_k,
    pass_at_k,
    spread,
    wilson_interval,
)

__all__ = ["DEFAULT_CONFIDENCE", "wilson_interval", "pass_at_k", "pass_all_k", "fisher_lower",
           "Spread", "spread", "check_confidence"]
