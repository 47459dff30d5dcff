"""Agent types a scenario can run under, by name; extend with :func:`register_agent_type`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agentkit.agent import BaseAgent, FunctionCallingAgent, ReActAgent
from agentkit.agent.coa import CoAAgentWorker
from agentkit.llms.base import LLM
from agentkit.tools import BaseTool

__all__ = ["AgentFactory", "AGENT_TYPES", "register_agent_type", "build_agent"]

AgentFactory = Callable[[LLM, list[BaseTool], dict[str, Any]], BaseAgent]


def _react(llm: LLM, tools: list[BaseTool], params: dict[str, Any]) -> BaseAgent:
    return ReActAgent.from_tools(tools, llm=llm, **params)


def _function_calling(llm: LLM, tools: list[BaseTool], params: dict[str, Any]) -> BaseAgent:
    return FunctionCallingAgent.from_tools(tools, llm=llm, **params)


def _coa(llm: LLM, tools: list[BaseTool], params: dict[str, Any]) -> BaseAgent:
    return CoAAgentWorker.from_tools(tools, llm=llm, **params).as_agent()


AGENT_TYPES: dict[str, AgentFactory] = {
    "react": _react,
    "function_calling": _function_calling,
    "coa": _coa,
}


def register_agent_type(name: str, factory: AgentFactory) -> None:
    """Make ``name`` usable under ``agents:`` in scenario files."""
    AGENT_TYPES[name] = factory


def build_agent(agent_type: str, llm: LLM, tools: list[BaseTool],
                params: dict[str, Any]) -> BaseAgent:
    try:
        factory = AGENT_TYPES[agent_type]
    except KeyError:
        raise ValueError(f"unknown agent type `{agent_type}` (known: "
                         f"{', '.join(sorted(AGENT_TYPES))})") from None
    return factory(llm, tools, dict(params))
