"""The harness: scenario files, runs under several agent types, traces and expectations."""

from agentkit.scenario import workflow_trace  # noqa: F401  (registers its trace handlers)
from agentkit.scenario.agents import AGENT_TYPES, register_agent_type
from agentkit.scenario.loader import ScenarioError, discover_scenarios, load_scenario
from agentkit.scenario.model import Scenario
from agentkit.scenario.runner import ScenarioResult, run_all, run_scenario
from agentkit.scenario.trace import Trace
# modules that register trace handlers for their agents' bus events
from agentkit.scenario import trace_coa, trace_llm_compiler  # noqa: F401

__all__ = [
    "AGENT_TYPES",
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
