"""The built-in agent types. Add your own with :func:`register_agent_type`, a
``[tool.agentkit.agent_types]`` table in pyproject.toml or an entry point
(:mod:`agentkit.scenario.agent_types`)."""

from __future__ import annotations

from agentkit.agent import (
    BaseAgent,
    FunctionCallingAgent,
    MultimodalReActAgentWorker,
    ReActAgent,
)
from agentkit.agent.coa import CoAAgentWorker
from agentkit.agent.llm_compiler import LLMCompilerAgentWorker
from agentkit.scenario.agent_types import (
    AGENT_TYPES,
    AgentContext,
    AgentFactory,
    AgentType,
    ChatAgent,
    register_agent_type,
    resolve_agent_type,
)

__all__ = ["AgentContext", "AgentFactory", "AGENT_TYPES", "register_agent_type", "build_agent"]


def _react(context: AgentContext) -> BaseAgent:
    return ReActAgent.from_tools(list(context.tools), llm=context.llm, **context.params)


def _function_calling(context: AgentContext) -> BaseAgent:
    return FunctionCallingAgent.from_tools(list(context.tools), llm=context.llm, **context.params)


def _react_multimodal(context: AgentContext) -> BaseAgent:
    return MultimodalReActAgentWorker.from_tools(list(context.tools), multi_modal_llm=context.llm,
                                                 **context.params).as_agent()


def _llm_compiler(context: AgentContext) -> BaseAgent:
    return LLMCompilerAgentWorker.from_tools(list(context.tools), llm=context.llm,
                                             **context.params).as_agent()


def _coa(context: AgentContext) -> BaseAgent:
    return CoAAgentWorker.from_tools(list(context.tools), llm=context.llm,
                                     **context.params).as_agent()


_BUILT_IN: dict[str, AgentFactory] = {
    "react": _react,
    "function_calling": _function_calling,
    "react_multimodal": _react_multimodal,
    "llm_compiler": _llm_compiler,
    "coa": _coa,
}
_TAKE_IMAGES = {"react_multimodal"}

for _name, _factory in _BUILT_IN.items():
    AGENT_TYPES[_name] = AgentType(_factory, images=_name in _TAKE_IMAGES, origin="built-in")


def build_agent(context: AgentContext) -> ChatAgent:
    """The agent of ``context.agent_type`` (:func:`resolve_agent_type`), built by its factory."""
    return resolve_agent_type(context.agent_type).factory(context)
