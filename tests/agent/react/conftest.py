"""Shared by the ReAct tests: small deterministic tools and a step runner for the three step
modes (the chat helper for the four chat modes is in ``tests/agent/conftest.py``)."""

from typing import Any

import pytest

from agentkit.agent.react import ReActAgentWorker
from agentkit.agent.types import StreamingAgentChatResponse, Task, TaskStepOutput
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
