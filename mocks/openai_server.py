"""The fake OpenAI endpoint for tests: :mod:`agentkit.recording` plus a pytest fixture.

``fake_openai(script, **options)`` starts a respx-backed :class:`FakeOpenAIServer` serving
``/chat/completions`` (JSON and SSE) from a ScriptedLLM-style script; ``server.llm()`` is an
``agentkit.llms.openai.OpenAI`` wired to it. Every server is stopped and checked for unused
script items at teardown.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

import pytest

from agentkit.recording import (
    DEFAULT_BASE_URL,
    EPOCH,
    TEST_API_KEY,
    FakeOpenAIServer,
    HTTPError,
    RawToolCall,
)

__all__ = ["FakeOpenAIServer", "HTTPError", "RawToolCall", "fake_openai", "EPOCH",
           "DEFAULT_BASE_URL", "TEST_API_KEY"]


@pytest.fixture
def fake_openai() -> Iterator[Callable[..., FakeOpenAIServer]]:
    """``serve(script, **options)`` starts a :class:`FakeOpenAIServer`; at teardown every
    server is stopped and checked for unused script items."""
    servers: list[FakeOpenAIServer] = []

    def serve(script: Iterable[Any] = (), **options: Any) -> FakeOpenAIServer:
        server = FakeOpenAIServer(script, **options).start()
        servers.append(server)
        return server

    yield serve
    for server in servers:
        server.stop()
    for server in servers:
        server.assert_complete()
