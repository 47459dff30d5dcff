"""The harness: scenario files, runs under several agent types, traces and expectations.

The runner's names (``run_scenario``, ``run_all``, ``ScenarioResult``) are imported when first
asked for: the runner judges through :mod:`agentkit.verdict`, which reads this package's
file-format modules, so importing any of them must not import the runner."""

from typing import TYPE_CHECKING, Any

from agentkit.scenario.agent_types import (
    AGENT_TYPES,
    AgentContext,
    AgentType,
    register_agent_type,
)
from agentkit.scenario.loader import ScenarioError, discover_scenarios, load_scenario
from agentkit.scenario.model import Scenario
from agentkit.scenario.trace import Trace

if TYPE_CHECKING:
    from agentkit.scenario.runner import ScenarioResult, run_all, run_scenario

__all__ = [
    "AGENT_TYPES",
    "AgentContext",
    "AgentType",
    "Scenario",
    "ScenarioError",
    "ScenarioResult",
    "Trace",
    "discover_scenarios",
    "load_scenario",
    "register_agent_type",
    "run_all",
    "run_scenario",
]

_RUNNER = ("ScenarioResult", "run_all", "run_scenario")


def __getattr__(name: str) -> Any:
    if name in _RUNNER:
        from agentkit.scenario import runner

        return getattr(runner, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
