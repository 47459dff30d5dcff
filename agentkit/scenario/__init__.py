"""The harness: scenario files, runs under several agent types, traces and expectations."""

# modules that register trace handlers for their agents' bus events
from agentkit.scenario import (  # noqa: F401
    trace_coa,
    trace_llm_compiler,
    workflow_trace,
)
from agentkit.scenario.agent_types import AgentContext, AgentType
from agentkit.scenario.agents import AGENT_TYPES, register_agent_type
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
