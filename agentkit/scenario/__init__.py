"""The harness: scenario files, runs under several agent types, traces and expectations."""

from agentkit.scenario.agent_types import (
    AGENT_TYPES,
    AgentContext,
    AgentType,
    register_agent_type,
)
from agentkit.scenario.loader import ScenarioError, discover_scenarios, load_scenario
from agentkit.scenario.model import Scenario
from agentkit.scenario.runner import ScenarioResult, run_all, run_scenario
from agentkit.scenario.trace import Trace

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
