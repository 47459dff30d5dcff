"""Agent types a scenario can run under, by name; extend with :func:`register_agent_type`."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

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
from agentkit.llms.base import LLM
from agentkit.scenario.loader import ScenarioError
from agentkit.scenario.model import AgentSpec
from agentkit.scenario.trajectory import TrajectoryRenderer, register_trajectory_renderer
from agentkit.scenario.workflow_agent import WorkflowChatAgent
from agentkit.tools import BaseTool

__all__ = ["AgentFactory", "AGENT_TYPES", "IMAGE_AGENT_TYPES", "TEAM_AGENT_TYPE",
           "register_agent_type", "build_agent", "build_team"]

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


_WORKFLOW_PARAMS = ("initial_state", "state_prompt", "timeout")
_AGENT_KINDS: dict[str, type[BaseWorkflowAgent]] = {"function": FunctionAgent,
                                                    "react": ReActWorkflowAgent}


def _one_agent_workflow(kind: str) -> AgentFactory:
    """A one-agent AgentWorkflow behind the chat interface. ``max_iterations`` goes to each
    run, ``initial_state``/``state_prompt``/``timeout`` to the workflow, the rest to the
    agent."""
    def build(llm: LLM, tools: list[BaseTool], params: dict[str, Any]) -> Any:
        max_iterations = params.pop("max_iterations", None)
        workflow_params = {k: params.pop(k) for k in _WORKFLOW_PARAMS if k in params}
        agent = _AGENT_KINDS[kind](tools=tools, llm=llm, **params)
        return WorkflowChatAgent(AgentWorkflow(agents=[agent], **workflow_params),
                                 max_iterations=max_iterations)
    return build


AGENT_TYPES: dict[str, AgentFactory] = {
    "react": _react,
    "function_calling": _function_calling,
    "react_multimodal": _react_multimodal,
    "llm_compiler": _llm_compiler,
    "coa": _coa,
    "function_agent": _one_agent_workflow("function"),
    "react_agent": _one_agent_workflow("react"),
}

TEAM_AGENT_TYPE = "agent_workflow"
"""The agent type of multi-agent scenarios: its spec declares a ``team`` and a ``root``."""


def _team_only(llm: LLM, tools: list[BaseTool], params: dict[str, Any]) -> Any:
    raise ValueError(f"agent type `{TEAM_AGENT_TYPE}` runs a team: declare `team:` (its agents, "
                     "each with a script) and `root:` instead of `script:`")


AGENT_TYPES[TEAM_AGENT_TYPE] = _team_only


IMAGE_AGENT_TYPES: set[str] = {"react_multimodal"}
"""Agent types whose agents take a turn's images: the harness calls their ``chat`` and
``stream_chat`` with ``image_docs=[ImageBlock, ...]`` on every turn (an empty list on a turn
without images). A scenario giving images to another agent type is an error."""


def register_agent_type(name: str, factory: AgentFactory, *, images: bool = False,
                        trajectory: TrajectoryRenderer | None = None) -> None:
    """Make ``name`` usable under ``agents:`` in scenario files; ``images=True`` if its agents'
    chats take ``image_docs=`` (see :data:`IMAGE_AGENT_TYPES`); ``trajectory`` renders its LLM
    script from a scenario's ``trajectory:`` (:mod:`agentkit.scenario.trajectory`)."""
    AGENT_TYPES[name] = factory
    if trajectory is not None:
        register_trajectory_renderer(name, trajectory)
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


def build_team(agent_type: str, spec: AgentSpec, llms: Mapping[str | None, LLM],
               tools: list[BaseTool], where: Callable[..., str]) -> WorkflowChatAgent:
    """The multi-agent workflow of a ``team`` spec: each team agent with its own LLM and the
    scenario tools it names. ``params`` of the agent type work as for ``function_agent``."""
    by_name = {tool.metadata.name: tool for tool in tools}
    agents: list[BaseWorkflowAgent] = []
    for index, member in enumerate(spec.team or ()):
        unknown = [n for n in member.tools or () if n not in by_name]
        if unknown:
            raise ScenarioError(
                f"{where('team', index, 'tools')}: agents.{agent_type}.team.{index}.tools: "
                f"unknown tool(s) {', '.join(unknown)} (the scenario's tools: "
                f"{', '.join(by_name) or 'none'})")
        chosen = tools if member.tools is None else [by_name[n] for n in member.tools]
        try:
            agents.append(_AGENT_KINDS[member.kind](
                name=member.name, description=member.description,
                system_prompt=member.system_prompt, tools=chosen,
                can_handoff_to=member.can_handoff_to, llm=llms[member.name], **member.params))
        except (TypeError, ValueError) as exc:
            raise ScenarioError(f"{where('team', index, 'params')}: agents.{agent_type}.team."
                                f"{index}.params: {exc}") from None
    params = dict(spec.params)
    max_iterations = params.pop("max_iterations", None)
    workflow = AgentWorkflow(agents=agents, root_agent=spec.root, **params)
    return WorkflowChatAgent(workflow, max_iterations=max_iterations)
