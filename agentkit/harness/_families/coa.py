"""The Chain-of-Abstraction family: agent type ``coa`` (``CoAAgentWorker`` as an agent), its
chain wire format, and how its chains go into traces.

A trajectory renders as one chain with a ``[FUNC name(args) = yN]`` per call (call N defines
``yN``; ``$N`` is written ``yN``), then the refine reply: the answer. A trajectory without
calls renders as the answer alone (a reply without ``[FUNC`` is CoA's direct answer).

In traces the step that ran the chain gets its ``chain`` (the calls as parsed: source, output
placeholder, inputs, level, problem; and the levels by placeholder) and its ``chain_levels``
(per level run: its calls, those that failed, its simulated wall time).
"""

from __future__ import annotations

from typing import Any

from agentkit.agent import BaseAgent
from agentkit.agent.coa import CoAAgentWorker
from agentkit.agent.coa.chain import Ref as ChainRef
from agentkit.agent.coa.chain import format_call
from agentkit.agent.coa.events import ChainLevelEvent, ChainParsedEvent
from agentkit.harness._agent_types import AgentContext, AgentType
from agentkit.scenario._trajectory import RenderContext, TrajectoryError, map_refs
from agentkit.trace._trace import TurnBuilder

__all__ = ["COA", "render_coa"]


def _build(context: AgentContext) -> BaseAgent:
    return CoAAgentWorker.from_tools(list(context.tools), llm=context.llm,
                                     **context.params).as_agent()


def render_coa(ctx: RenderContext) -> list[Any]:
    """A chain with a ``[FUNC ...]`` per call (call N defines ``yN``), then the answer; with
    no calls, the answer alone (a reply without ``[FUNC`` is CoA's direct answer)."""
    trajectory = ctx.trajectory
    if not trajectory.calls:
        if "[FUNC" in trajectory.answer.text:
            raise TrajectoryError([(trajectory.answer.loc, "coa reads `[FUNC` in a direct "
                                                           "answer as a call; reword it")])
        return [ctx.answer_item()]
    lines = []
    for call in trajectory.calls:
        def chained(value: Any) -> Any:
            return map_refs(value, lambda ref: ChainRef(f"y{ref.number}"))
        args = ctx.positional(call)
        text = (format_call(call.name, chained(args), f"y{call.number}") if args is not None
                else format_call(call.name, (), f"y{call.number}", chained(dict(call.args))))
        lines.append(f"{call.thought} {text}" if call.thought else text)
    return ["\n".join(lines), ctx.answer_item()]


def _chain_parsed(turn: TurnBuilder, event: ChainParsedEvent) -> None:
    turn.owner(event.span_id).details["chain"] = event.chain.to_dict()


def _chain_level(turn: TurnBuilder, event: ChainLevelEvent) -> None:
    levels = turn.owner(event.span_id).details.setdefault("chain_levels", [])
    levels.append({"level": event.level, "calls": event.calls, "failed": event.failed,
                   "wall": round(event.time - event.started, 6)})


COA = AgentType(_build, trajectory=render_coa,
                trace_handlers={ChainParsedEvent: _chain_parsed, ChainLevelEvent: _chain_level})
"""``coa``: an abstract chain of calls, then a refine call; ``params`` go to
``CoAAgentWorker.from_tools``."""
