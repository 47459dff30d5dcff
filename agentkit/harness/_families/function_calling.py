"""The function-calling family: agent type ``function_calling`` (an ``AgentRunner`` over
``FunctionCallingAgentWorker``) and the tool-calls wire format (also named ``tool_calls``).

A trajectory renders as one reply per step -- a parallel group's calls as one reply's parallel
tool calls -- then the answer as text. Runner agents emit only the core step, LLM and tool
events, so the family has no trace handlers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, cast

from agentkit.agent import BaseAgent, FunctionCallingAgent
from agentkit.harness._agent_types import AgentContext, AgentType
from agentkit.llms.base import FunctionCallingLLM
from agentkit.llms.mock import ScriptedResponse, tool_call
from agentkit.scenario._trajectory import RenderContext, TrajectoryCall

__all__ = ["FUNCTION_CALLING", "render_tool_calls"]


def _build(context: AgentContext) -> BaseAgent:
    llm = cast(FunctionCallingLLM, context.llm)  # the worker rejects a model that cannot call tools
    return FunctionCallingAgent.from_tools(list(context.tools), llm=llm, **context.params)


def render_tool_calls(ctx: RenderContext) -> list[Any]:
    """Tool calls: one reply per step (a parallel group's calls together), then the answer."""
    def reply(group: Sequence[TrajectoryCall]) -> Callable[[], ScriptedResponse]:
        return lambda: ScriptedResponse(tool_calls=[tool_call(c.name, **c.arguments(ctx.outputs))
                                                    for c in group])

    return [*(ctx.deferred(reply(group), [r for c in group for r in c.refs])
              for group in ctx.trajectory.groups), ctx.answer_item()]


FUNCTION_CALLING = AgentType(_build, trajectory=render_tool_calls)
"""``function_calling``: tool calling over the scenario's tools; ``params`` go to
``FunctionCallingAgent.from_tools``."""
