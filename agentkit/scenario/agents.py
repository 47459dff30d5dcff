"""Agent types a scenario can run under, by name; extend with :func:`register_agent_type`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agentkit.agent import (
    BaseAgent,
    FunctionCallingAgent,
    MultimodalReActAgentWorker,
    ReActAgent,
)
from agentkit.agent.coa import CoAAgentWorker
from agentkit.agent.llm_compiler import LLMCompilerAgentWorker
from agentkit.llms.base import LLM
from agentkit.tools import BaseTool

__all__ = ["AgentFactory", "AGENT_TYPES", "IMAGE_AGENT_TYPES", "register_agent_type",
           "build_agent"]

AgentFactory = Callable[[LLM, list[BaseTool], dict[str, Any]], BaseAgent]


def _react(llm: LLM, tools: list[BaseTool], params: dict[str, Any]) -> BaseAgent:
    return ReActAgent.from_tools(tools, llm=llm, **params)


def _function_calling(llm: LLM, tools: list[BaseTool], params: dict[str, Any]) -> BaseAgent:
    return FunctionCallingAgent.from_tools(tools, llm=llm, **params)


def _react_multimodal(llm: LLM, tools: list[BaseTool], params: dict[str, Any]) -> BaseAgent:
    return MultimodalReActAgentWorker.from_tools(tools, multi_modal_llm=llm, **params).as_agent()


def _llm_compiler(llm: LLM, tools: list[BaseTool], params: dict[str, Any]) -> BaseAgent:
    return LLMCompilerAgentWorker.from_tools(tools, llm=llm, **params).as_agent()


def _coa(llm: LLM, tools: list[BaseTool], params: dict[str, Any]) -> BaseAgent:
    return CoAAgentWorker.from_tools(tools, llm=llm, **params).as_agent()


AGENT_TYPES: dict[str, AgentFactory] = {
    "react": _react,
    "function_calling": _function_calling,
    "react_multimodal": _react_multimodal,
    "llm_compiler": _llm_compiler,
    "coa": _coa,
}

IMAGE_AGENT_TYPES: set[str] = {"react_multimodal"}
"""Agent types whose agents take a turn's images: the harness calls their ``chat`` and
``stream_chat`` with ``image_docs=[ImageBlock, ...]`` on every turn (an empty list on a turn
without images). A scenario giving images to another agent type is an error."""


def register_agent_type(name: str, factory: AgentFactory, *, images: bool = False) -> None:
    """Make ``name`` usable under ``agents:`` in scenario files; ``images=True`` if its agents'
    chats take ``image_docs=`` (see :data:`IMAGE_AGENT_TYPES`)."""
    AGENT_TYPES[name] = factory
    if images:
        IMAGE_AGENT_TYPES.add(name)
    else:
        IMAGE_AGENT_TYPES.discard(name)


def build_agent(agent_type: str, llm: LLM, tools: list[BaseTool],
                params: dict[str, Any]) -> BaseAgent:
    try:
        factory = AGENT_TYPES[agent_type]
    except KeyError:
        raise ValueError(f"unknown agent type `{agent_type}` (known: "
                         f"{', '.join(sorted(AGENT_TYPES))})") from None
    return factory(llm, tools, dict(params))
