"""Shared by the agent tests: a chat turn run in each chat mode (sync, async, streamed)."""

from collections.abc import Callable
from typing import Any

import pytest

from agentkit.agent.types import AgentChatResponse, StreamingAgentChatResponse
from agentkit.core.sim import run_sync

CHAT_MODES = ["chat", "achat", "stream_chat", "astream_chat"]


async def _drained_astream(agent: Any, message: str, **kwargs: Any) -> StreamingAgentChatResponse:
    response = await agent.astream_chat(message, **kwargs)
    async for _ in response.async_response_gen():
        pass
    return response


def _ask(agent: Any, message: str, mode: str,
         **kwargs: Any) -> AgentChatResponse | StreamingAgentChatResponse:
    """One chat turn in ``mode`` (``kwargs`` go to the chat call); a streamed answer is drained
    before it is returned."""
    if mode == "chat":
        return agent.chat(message, **kwargs)
    if mode == "achat":
        return run_sync(agent.achat(message, **kwargs))
    if mode == "stream_chat":
        response = agent.stream_chat(message, **kwargs)
        for _ in response.response_gen:
            pass
        return response
    return run_sync(_drained_astream(agent, message, **kwargs))


@pytest.fixture(params=CHAT_MODES)
def chat_mode(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def ask(chat_mode: str) -> Callable[..., AgentChatResponse | StreamingAgentChatResponse]:
    """``ask(agent, message, **chat_kwargs)``: a chat turn in each of the four chat modes (sync,
    async, streamed)."""
    return lambda agent, message, **kwargs: _ask(agent, message, chat_mode, **kwargs)
