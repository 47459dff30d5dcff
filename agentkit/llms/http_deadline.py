"""A total deadline for an HTTP call, on top of httpx's per-read timeouts.

httpx's ``timeout`` bounds each read, so a server that trickles one byte every half second
never times out. :func:`deadline` marks a block with a moment (``time.monotonic()``) by which
every answer received inside it must be complete; a client :func:`install`-ed with the hook
below wraps each response's byte stream so that reading past that moment raises
:class:`DeadlineExceeded` (an ``httpx.ReadTimeout``). The check runs as bytes arrive; a
server that stalls completely is cut by the per-read timeout, which callers cap at the time
left (see :class:`agentkit.llms.openai.OpenAI`).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import httpx

__all__ = ["DeadlineExceeded", "after", "deadline", "install", "time_left"]

_deadline: ContextVar[float | None] = ContextVar("agentkit_http_deadline", default=None)


class DeadlineExceeded(httpx.ReadTimeout):
    """An answer was still arriving when the total deadline passed."""


@contextmanager
def deadline(at: float | None) -> Iterator[None]:
    """Answers received in this block must be complete by ``at`` (monotonic seconds);
    ``None`` sets no deadline."""
    token = _deadline.set(at)
    try:
        yield
    finally:
        _deadline.reset(token)


def after(seconds: float | None) -> float | None:
    """The deadline ``seconds`` from now (``None`` for none)."""
    return None if seconds is None else time.monotonic() + seconds


def time_left(at: float | None) -> float | None:
    """Seconds until ``at`` (negative once passed), or ``None`` for no deadline."""
    return None if at is None else at - time.monotonic()


class _DeadlineStream(httpx.SyncByteStream, httpx.AsyncByteStream):
    def __init__(self, stream: Any, at: float, request: httpx.Request) -> None:
        self._stream = stream
        self._at = at
        self._request = request

    def _check(self) -> None:
        if time.monotonic() > self._at:
            raise DeadlineExceeded("the answer was not complete by the total deadline",
                                   request=self._request)

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self._stream:
            self._check()
            yield chunk

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._stream:
            self._check()
            yield chunk

    def close(self) -> None:
        if hasattr(self._stream, "close"):
            self._stream.close()

    async def aclose(self) -> None:
        if hasattr(self._stream, "aclose"):
            await self._stream.aclose()


def _wrap(response: httpx.Response) -> None:
    at = _deadline.get()
    if at is not None:
        response.stream = _DeadlineStream(response.stream, at, response.request)


def _sync_hook(response: httpx.Response) -> None:
    _wrap(response)


async def _async_hook(response: httpx.Response) -> None:
    _wrap(response)


def install(client: Any) -> None:
    """Make an ``httpx`` client honour :func:`deadline` (idempotent; other clients are left
    alone: their own timeouts apply)."""
    if isinstance(client, httpx.AsyncClient):
        hook: Any = _async_hook
    elif isinstance(client, httpx.Client):
        hook = _sync_hook
    else:
        return
    hooks = client.event_hooks
    if hook not in hooks.get("response", []):
        client.event_hooks = {**hooks, "response": [*hooks.get("response", []), hook]}
