"""Retry policies for steps: ``@step(retry_policy=ConstantDelayRetryPolicy(delay=5))``.

When a step raises, the run asks its policy ``next(elapsed_time, attempts, error)``: a number
of seconds to wait before running the step again with the same event, or None to give up
(the run then fails with the step's error, as without a policy). ``attempts`` is how many
retries were made already (0 at the first failure, as upstream), ``elapsed_time`` the seconds
since the step's first attempt began (upstream passed a meaningless sum of two clock
readings). The wait is in seconds of the running loop's clock, like the workflow's timeout:
virtual on agentkit's loop, so a 10 s delay costs no real time and shows as 10 s in the
trace. Sync steps are retried too (upstream retried only ``async def`` steps).
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

__all__ = ["RetryPolicy", "ConstantDelayRetryPolicy"]


@runtime_checkable
class RetryPolicy(Protocol):
    """Decides whether a failed step runs again, and after how many seconds."""

    def next(self, elapsed_time: float, attempts: int, error: Exception) -> float | None:
        """Seconds to wait before the next attempt, or None to stop retrying."""


class ConstantDelayRetryPolicy:
    """Retry after ``delay`` seconds, at most ``maximum_attempts`` times after the first
    failure (so ``maximum_attempts=3`` runs the step up to four times, as upstream)."""

    def __init__(self, maximum_attempts: int = 3, delay: float = 5) -> None:
        if isinstance(maximum_attempts, bool) or not isinstance(maximum_attempts, int) \
                or maximum_attempts < 0:
            raise ValueError(f"maximum_attempts must be an int >= 0, got {maximum_attempts!r}")
        if isinstance(delay, bool) or not isinstance(delay, (int, float)) or not delay >= 0:
            raise ValueError(f"delay must be a number of seconds >= 0, got {delay!r}")
        self.maximum_attempts = maximum_attempts
        self.delay = delay

    def next(self, elapsed_time: float, attempts: int, error: Exception) -> float | None:
        """``delay`` while fewer than ``maximum_attempts`` retries were made, else None."""
        if attempts >= self.maximum_attempts:
            return None
        return self.delay

    def __repr__(self) -> str:
        return (f"ConstantDelayRetryPolicy(maximum_attempts={self.maximum_attempts}, "
                f"delay={self.delay})")
