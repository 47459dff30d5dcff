"""Shared by the ReAct tests: small deterministic tools, a step runner for the three step
modes and a chat helper for the four chat modes."""

from collections.abc import Callable
from typing import Any

import pytest

from agentkit.agent.react import ReActAgentWorker
from agentkit.agent.types import AgentChatResponse, StreamingAgentChatResponse, Task, TaskStepOutput
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


@pytest.fixture(params=["run", "arun", "stream"])
def step_mode(request: pytest.FixtureRequest) -> str:
    return request.param


def run_one(worker: ReActAgentWorker, step: Any, task: Task, mode: str) -> TaskStepOutput:
    """One worker step in ``mode`` (``run_step``, ``arun_step``, ``stream_step`` drained)."""
    if mode == "run":
        return worker.run_step(step, task)
    if mode == "arun":
        return run_sync(worker.arun_step(step, task))
    output = worker.stream_step(step, task)
    if isinstance(output.output, StreamingAgentChatResponse):
        for _ in output.output.response_gen:
            pass
    return output


def run_task(worker: ReActAgentWorker, task: Task, mode: str) -> list[TaskStepOutput]:
    """Every step of ``task`` until the last one (streamed answers drained)."""
    outputs = [run_one(worker, worker.initialize_step(task), task, mode)]
    while not outputs[-1].is_last:
        (step,) = outputs[-1].next_steps
        outputs.append(run_one(worker, step, task, mode))
    return outputs
