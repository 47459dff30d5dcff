"""Bus events of the Chain-of-Abstraction worker: the chain it read, and each level it ran.

Traces turn them into a step's ``chain`` and ``chain_levels`` (see
``agentkit.harness._families.coa``); like every event they carry the span they were emitted in,
so they belong to the step that ran the chain.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agentkit.core.events import Event

__all__ = ["ChainParsedEvent", "ChainLevelEvent"]


@dataclass(kw_only=True, slots=True)
class ChainParsedEvent(Event):
    """The model wrote a chain: ``chain`` is the :class:`~agentkit.agent.coa.chain.Chain`
    (calls, placeholders, levels, problems)."""

    chain: Any


@dataclass(kw_only=True, slots=True)
class ChainLevelEvent(Event):
    """A level of the chain finished (emitted at its end): its number, its calls (labels,
    e.g. ``y1``), which of them failed, and when it started (virtual time)."""

    level: int
    calls: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    started: float = 0.0
