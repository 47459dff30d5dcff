"""Runners: :class:`AgentRunner`, and :class:`ParallelAgentRunner` on first use (it imports
asyncio; :mod:`agentkit.core.lazy`)."""

from typing import TYPE_CHECKING

from agentkit.agent.runner.base import AgentRunner, AgentState, TaskState
from agentkit.core.lazy import lazy_names

if TYPE_CHECKING:
    from agentkit.agent.runner.parallel import ParallelAgentRunner

__all__ = ["AgentRunner", "AgentState", "ParallelAgentRunner", "TaskState"]

__getattr__, __dir__ = lazy_names(__name__, {
    "ParallelAgentRunner": "agentkit.agent.runner.parallel"})
