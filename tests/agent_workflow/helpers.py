"""Shared tools and runners for the agent-workflow tests."""

from __future__ import annotations

from typing import Any

from agentkit.agent.workflow import AgentStream, ToolCallResult
from agentkit.core.sim import run_sync
from agentkit.workflow import Context, Event


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


def explode(x: int) -> int:
    """Always fails."""
    raise RuntimeError("kaboom")


async def increment_counter(ctx: Context) -> str:
    """Add one to the shared counter."""
    state = await ctx.store.get("state")
    state["counter"] += 1
    await ctx.store.set("state", state)
    return f"counter is {state['counter']}"


REACT_ADD = 'Thought: I need to add.\nAction: add\nAction Input: {"a": 5, "b": 3}'
REACT_DONE = "Thought: I can answer.\nAnswer: The sum is 8"


async def run_collect(workflow: Any, **kwargs: Any) -> tuple[Any, list[Event], Any]:
    """Run to the end: (result, stream events without AgentStream deltas, handler)."""
    handler = workflow.run(**kwargs)
    events = [e async for e in handler.stream_events() if not isinstance(e, AgentStream)]
    return await handler, events, handler


def run_one_tool_call(workflow: Any, **kwargs: Any) -> tuple[Any, ToolCallResult]:
    """Run to the end: (result, the run's only ToolCallResult; unpacking fails on more)."""
    result, events, _ = run_sync(run_collect(workflow, **kwargs))
    (tool_result,) = [e for e in events if isinstance(e, ToolCallResult)]
    return result, tool_result


def roles(messages: list[Any]) -> list[tuple[str, str | None]]:
    return [(m.role.value, m.content) for m in messages]
