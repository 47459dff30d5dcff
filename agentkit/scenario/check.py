"""Moved to :mod:`agentkit.verdict` (the expectations are checks of a run's verdict)."""

from agentkit.verdict._expectations import ExpectationResult, check_expectations, expectation_results

__all__ = ["check_expectations", "expectation_results", "ExpectationResult"]
