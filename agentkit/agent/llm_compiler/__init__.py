"""LLMCompiler (``llama_index.agent.llm_compiler`` shape): plan a DAG of tool calls, run
independent calls at once, join, replan. See :class:`LLMCompilerAgentWorker`."""

from agentkit.agent.llm_compiler.events import JoinerDecisionEvent, PlanEvent, PlanTaskEvent
from agentkit.agent.llm_compiler.joiner import JoinerOutput, JoinerParseError, parse_joiner_output
from agentkit.agent.llm_compiler.plan import Plan, PlanParseError, PlanTask, parse_plan
from agentkit.agent.llm_compiler.prompts import (
    END_OF_PLAN,
    JOINER_PROMPT,
    PLANNER_EXAMPLE_PROMPT,
)
from agentkit.agent.llm_compiler.scheduler import TaskResult, run_plan
from agentkit.agent.llm_compiler.step import DEFAULT_MAX_REPLANS, LLMCompilerAgentWorker

__all__ = [
    "DEFAULT_MAX_REPLANS",
    "END_OF_PLAN",
    "JOINER_PROMPT",
    "JoinerDecisionEvent",
    "JoinerOutput",
    "JoinerParseError",
    "LLMCompilerAgentWorker",
    "PLANNER_EXAMPLE_PROMPT",
    "Plan",
    "PlanEvent",
    "PlanParseError",
    "PlanTask",
    "PlanTaskEvent",
    "TaskResult",
    "parse_joiner_output",
    "parse_plan",
    "run_plan",
]
