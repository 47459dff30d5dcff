"""Shared by the ReAct tests: small deterministic tools and a chat helper run in every mode."""

from collections.abc import Callable
from typing import Any

import pytest

from agentkit.agent.types import AgentChatResponse, StreamingAgentChatResponse
from agentkit.core.sim import run_sync
from agentkit.tools import FunctionTool


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


def divide(a: int, b: int) -> float:
    """Divide a by b."""
    return a / b


@pytest.fixture
def add_tool() -> FunctionTool:
    return FunctionTool.from_defaults(add)


@pytest.fixture
def multiply_tool() -> FunctionTool:
    return FunctionTool.from_defaults(multiply)


@pytest.fixture
def divide_tool() -> FunctionTool:
    return FunctionTool.from_defaults(divide)


@pytest.fixture
def tools(add_tool: FunctionTool, multiply_tool: FunctionTool) -> list[FunctionTool]:
    return [add_tool, multiply_tool]


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
