"""The built-in agent types. Add your own with :func:`register_agent_type`, a
``[tool.agentkit.agent_types]`` table in pyproject.toml or an entry point
(:mod:`agentkit.scenario.agent_types`)."""

from __future__ import annotations

from typing import cast

from agentkit.agent import (
    BaseAgent,
    FunctionCallingAgent,
    MultimodalReActAgentWorker,
    ReActAgent,
)
from agentkit.agent.coa import CoAAgentWorker
from agentkit.agent.llm_compiler import LLMCompilerAgentWorker
from agentkit.agent.workflow import AgentWorkflow, BaseWorkflowAgent, FunctionAgent
from agentkit.agent.workflow import ReActAgent as ReActWorkflowAgent
from agentkit.llms.base import FunctionCallingLLM
from agentkit.scenario.agent_types import (
    AGENT_TYPES,
    AgentContext,
    AgentFactory,
    AgentType,
    ChatAgent,
    register_agent_type,
    resolve_agent_type,
)
from agentkit.scenario.loader import ScenarioError
from agentkit.scenario.workflow_agent import WorkflowChatAgent

__all__ = ["AgentContext", "AgentFactory", "AGENT_TYPES", "TEAM_AGENT_TYPE",
           "register_agent_type", "build_agent"]


def _react(context: AgentContext) -> BaseAgent:
    return ReActAgent.from_tools(list(context.tools), llm=context.llm, **context.params)


def _function_calling(context: AgentContext) -> BaseAgent:
    llm = cast(FunctionCallingLLM, context.llm)  # the worker rejects a model that cannot call tools
    return FunctionCallingAgent.from_tools(list(context.tools), llm=llm, **context.params)


def _react_multimodal(context: AgentContext) -> BaseAgent:
    return MultimodalReActAgentWorker.from_tools(list(context.tools), multi_modal_llm=context.llm,
                                                 **context.params).as_agent()


def _llm_compiler(context: AgentContext) -> BaseAgent:
    return LLMCompilerAgentWorker.from_tools(list(context.tools), llm=context.llm,
                                             **context.params).as_agent()


def _coa(context: AgentContext) -> BaseAgent:
    return CoAAgentWorker.from_tools(list(context.tools), llm=context.llm,
                                     **context.params).as_agent()


_WORKFLOW_PARAMS = ("initial_state", "state_prompt", "timeout")
_AGENT_KINDS: dict[str, type[BaseWorkflowAgent]] = {"function": FunctionAgent,
                                                    "react": ReActWorkflowAgent}


def _one_agent_workflow(kind: str) -> AgentFactory:
    """A one-agent AgentWorkflow behind the chat interface. ``max_iterations`` goes to each
    run, ``initial_state``/``state_prompt``/``timeout`` to the workflow, the rest to the
    agent."""
    def build(context: AgentContext) -> WorkflowChatAgent:
        params = dict(context.params)
        max_iterations = params.pop("max_iterations", None)
        workflow_params = {k: params.pop(k) for k in _WORKFLOW_PARAMS if k in params}
        agent = _AGENT_KINDS[kind](tools=list(context.tools), llm=context.llm, **params)
        return WorkflowChatAgent(AgentWorkflow(agents=[agent], **workflow_params),
                                 max_iterations=max_iterations)
    return build


TEAM_AGENT_TYPE = "agent_workflow"
"""The agent type of multi-agent scenarios: its spec declares a ``team`` and a ``root``."""


def _agent_workflow(context: AgentContext) -> WorkflowChatAgent:
    """The multi-agent workflow of a ``team`` spec: each team agent with its own LLM
    (``context.llms``) and the scenario tools it names. ``params`` of the agent type work as
    for ``function_agent``."""
    scenario = context.scenario
    assert scenario is not None  # the harness always gives it

    def where(*field: str | int) -> str:
        return scenario.where("agents", context.agent_type, *field)

    spec = scenario.agents[context.agent_type]
    by_name = {tool.metadata.name: tool for tool in context.tools}
    agents: list[BaseWorkflowAgent] = []
    for index, member in enumerate(spec.team or ()):
        unknown = [n for n in member.tools or () if n not in by_name]
        if unknown:
            raise ScenarioError(
                f"{where('team', index, 'tools')}: agents.{context.agent_type}.team.{index}."
                f"tools: unknown tool(s) {', '.join(unknown)} (the scenario's tools: "
                f"{', '.join(by_name) or 'none'})")
        chosen = list(context.tools) if member.tools is None else [by_name[n]
                                                                   for n in member.tools]
        try:
            agents.append(_AGENT_KINDS[member.kind](
                name=member.name, description=member.description,
                system_prompt=member.system_prompt, tools=chosen,
                can_handoff_to=member.can_handoff_to, llm=context.llms[member.name],
                **member.params))
        except (TypeError, ValueError) as exc:
            raise ScenarioError(f"{where('team', index, 'params')}: agents.{context.agent_type}"
                                f".team.{index}.params: {exc}") from None
    params = dict(context.params)
    max_iterations = params.pop("max_iterations", None)
    workflow = AgentWorkflow(agents=agents, root_agent=spec.root, **params)
    return WorkflowChatAgent(workflow, max_iterations=max_iterations)


AGENT_TYPES.update({
    "react": AgentType(_react, origin="built-in"),
    "function_calling": AgentType(_function_calling, origin="built-in"),
    "react_multimodal": AgentType(_react_multimodal, images=True, origin="built-in"),
    "llm_compiler": AgentType(_llm_compiler, origin="built-in"),
    "coa": AgentType(_coa, origin="built-in"),
    "function_agent": AgentType(_one_agent_workflow("function"), origin="built-in"),
    "react_agent": AgentType(_one_agent_workflow("react"), origin="built-in"),
    TEAM_AGENT_TYPE: AgentType(_agent_workflow, team=True, origin="built-in"),
})


def build_agent(context: AgentContext) -> ChatAgent:
    """The agent of ``context.agent_type`` (:func:`resolve_agent_type`), built by its factory."""
    return resolve_agent_type(context.agent_type).factory(context)
