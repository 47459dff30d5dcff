"""The ReAct family: agent type ``react`` (an ``AgentRunner`` over ``ReActAgentWorker``) and
the ReAct wire format.

A trajectory renders as ReAct text: one ``Thought / Action / Action Input`` reply per call (a
parallel group's calls one after another: ReAct makes one call per step), then
``Thought / Answer``. Thoughts the trajectory leaves out are filled in. Runner agents emit only
the core step, LLM and tool events, so the family has no trace handlers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agentkit.agent import BaseAgent, ReActAgent
from agentkit.agent.react.types import ActionReasoningStep, ResponseReasoningStep
from agentkit.harness._agent_types import AgentContext, AgentType
from agentkit.scenario._trajectory import DEFAULT_ANSWER_THOUGHT, RenderContext, TrajectoryCall

__all__ = ["REACT", "render_react"]


def _build(context: AgentContext) -> BaseAgent:
    return ReActAgent.from_tools(list(context.tools), llm=context.llm, **context.params)


def render_react(ctx: RenderContext) -> list[Any]:
    """ReAct text: an action per call, one after another, then the answer."""
    def action(call: TrajectoryCall) -> Callable[[], str]:
        return lambda: ActionReasoningStep(
            thought=call.thought or f"I need to use {call.name}.", action=call.name,
            action_input=call.arguments(ctx.outputs)).get_content()

    answer = ctx.trajectory.answer
    final = ctx.deferred(lambda: ResponseReasoningStep(
        thought=answer.thought or DEFAULT_ANSWER_THOUGHT, response=answer.render(ctx.outputs)
    ).get_content(), answer.refs)
    return [*(ctx.deferred(action(call), call.refs) for call in ctx.trajectory.calls), final]


REACT = AgentType(_build, trajectory=render_react)
"""``react``: ReAct over the scenario's tools; ``params`` go to ``ReActAgent.from_tools``."""
