"""Shared by the ReAct tests: small deterministic tools."""

import pytest

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
