"""How Chain-of-Abstraction events go into traces: a step's ``chain`` (the calls as parsed:
source, output placeholder, inputs, level, problem; and the levels by placeholder) and its
``chain_levels`` (per level run: its calls, those that failed, its simulated wall time)."""

from __future__ import annotations

from agentkit.agent.coa.events import ChainLevelEvent, ChainParsedEvent
from agentkit.scenario.trace import TurnBuilder, trace_handler

__all__: list[str] = []


@trace_handler(ChainParsedEvent)
def _chain_parsed(turn: TurnBuilder, event: ChainParsedEvent) -> None:
    turn.owner(event.span_id).details["chain"] = event.chain.to_dict()


@trace_handler(ChainLevelEvent)
def _chain_level(turn: TurnBuilder, event: ChainLevelEvent) -> None:
    levels = turn.owner(event.span_id).details.setdefault("chain_levels", [])
    levels.append({"level": event.level, "calls": event.calls, "failed": event.failed,
                   "wall": round(event.time - event.started, 6)})
