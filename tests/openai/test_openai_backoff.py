"""Retry back-off against a real (loopback) HTTP server: real outside a simulation."""

from __future__ import annotations

import contextvars

import pytest

from agentkit.llms import ChatMessage
from agentkit.llms.openai import OpenAI
from mocks.loopback_server import LoopbackServer, Reply, completion

pytestmark = pytest.mark.agentkit_allow_loopback

USER = [ChatMessage(role="user", content="hi")]
RETRY_AFTER = 0.3


def test_sync_chat_outside_a_simulation_really_waits_retry_after_between_attempts() -> None:
    with LoopbackServer([Reply(429, {"error": {"message": "slow down"}},
                               headers={"retry-after": str(RETRY_AFTER)}),
                         Reply(200, completion("done"))]) as server:
        llm = OpenAI(base_url=server.url, max_retries=1)

        # a fresh context: none of this test's simulation (tests/conftest.py) is active
        response = contextvars.Context().run(llm.chat, USER)

    first, second = server.requests
    assert response.message.content == "done"
    assert second.at - first.at >= RETRY_AFTER


def test_sync_chat_inside_a_simulation_waits_retry_after_on_the_virtual_clock(sim) -> None:
    with LoopbackServer([Reply(429, {"error": {"message": "slow down"}},
                               headers={"retry-after": "30"}),
                         Reply(200, completion("done"))]) as server:
        llm = OpenAI(base_url=server.url, max_retries=1)

        response = llm.chat(USER)

    assert response.message.content == "done"
    assert len(server.requests) == 2 and sim.clock.now() >= 30.0
