"""Shared by the agent tests: a chat turn run in each chat mode (sync, async, streamed)."""

from collections.abc import Callable
from typing import Any

import pytest

from agentkit.agent.types import AgentChatResponse, StreamingAgentChatResponse
from agentkit.core.sim import run_sync

CHAT_MODES = ["chat", "achat", "stream_chat", "astream_chat"]


async def _drained_astream(agent: Any, message: str) -> StreamingAgentChatResponse:
    response = await agent.astream_chat(message)
    async for _ in response.async_response_gen():
        pass
    return response


def _ask(agent: Any, message: str, mode: str) -> AgentChatResponse | StreamingAgentChatResponse:
    """One chat turn in ``mode``; a streamed answer is drained before it is returned."""
    if mode == "chat":
        return agent.chat(message)
    if mode == "achat":
        return run_sync(agent.achat(message))
    if mode == "stream_chat":
        response = agent.stream_chat(message)
        for _ in response.response_gen:
            pass
        return response
    return run_sync(_drained_astream(agent, message))


@pytest.fixture(params=CHAT_MODES)
def chat_mode(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def ask(chat_mode: str) -> Callable[[Any, str], AgentChatResponse | StreamingAgentChatResponse]:
    """``ask(agent, message)``: a chat turn in each of the four chat modes (sync, async, streamed)."""
    return lambda agent, message: _ask(agent, message, chat_mode)
