"""The retry policy of agentkit's model backends, on the openai SDK's rules: which failed call
is tried again, and after how long.

A call that failed with a typed error (:mod:`agentkit.llms.errors`) is retried when the error
is ``retryable`` (429, 5xx, 408, 409, a dropped connection; not a read timeout, which the
server may still be serving) and fewer than ``max_retries`` retries were made. The wait is the
server's ``retry_after`` when it asks for more than 0 and at most :data:`RETRY_AFTER_MAX`
seconds, else ``BACKOFF_INITIAL * 2**n`` capped at :data:`BACKOFF_MAX`; a server asking for
longer is not retried at all. docs/reliability.md says where this differs from the SDK.

One policy for every backend: the OpenAI backend applies it to what the server answered
(:mod:`agentkit.llms.openai`), the scripted doubles to the errors of their scripts
(:mod:`agentkit.llms.mock`), so a scripted 429 is retried as a live one is.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Awaitable, Callable
from typing import TypeVar

from agentkit.llms.errors import LLMError

__all__ = ["BACKOFF_INITIAL", "BACKOFF_MAX", "DEFAULT_MAX_RETRIES", "RETRY_AFTER_MAX",
           "check_max_retries", "log_retry", "retry_delay", "retrying"]

logger = logging.getLogger(__name__)

DEFAULT_MAX_RETRIES = 3
"""Retries after the first attempt (the SDK's default is 2)."""
BACKOFF_INITIAL = 0.5
BACKOFF_MAX = 8.0
RETRY_AFTER_MAX = 120.0
"""The longest ``retry-after`` waited (the SDK's two minutes); a longer one is not retried."""

_T = TypeVar("_T")


def check_max_retries(owner: str, max_retries: object) -> None:
    """A :class:`ValueError` naming ``owner`` unless ``max_retries`` is an integer >= 0."""
    if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
        raise ValueError(f"{owner} max_retries must be an integer >= 0, got {max_retries!r}")


def retry_delay(error: LLMError, retries: int, max_retries: int) -> float | None:
    """Seconds to wait before retry number ``retries + 1`` of a call that failed with
    ``error``; ``None`` to give up."""
    if not error.retryable or retries >= max_retries:
        return None
    if error.retry_after is not None and error.retry_after > RETRY_AFTER_MAX:
        return None  # the server asks for more patience than a call should have
    if error.retry_after is not None and error.retry_after > 0:
        return error.retry_after
    return min(BACKOFF_INITIAL * 2.0 ** retries, BACKOFF_MAX)


def log_retry(error: LLMError, retries: int, max_retries: int, delay: float) -> None:
    """The INFO line of a retry (the error's message is the backend's, never a secret)."""
    logger.info("%s; retry %d of %d in %.3g s", error.message, retries + 1, max_retries, delay)


async def retrying(attempt: Callable[[], Awaitable[_T]], max_retries: int,
                   wait: Callable[[float], Awaitable[None]]) -> _T:
    """``await attempt()`` until it succeeds or the policy gives up (its last error raised,
    its ``attempts`` set); ``wait(seconds)`` waits between attempts."""
    for retries in itertools.count():
        try:
            return await attempt()
        except LLMError as error:
            delay = retry_delay(error, retries, max_retries)
            if delay is None:
                error.attempts = retries + 1
                raise
            log_retry(error, retries, max_retries, delay)
        await wait(delay)
    raise AssertionError("unreachable")
