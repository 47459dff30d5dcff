"""``AgentWorkflow``: several agents taking turns in one conversation, handing it to each other.

Each agent is offered a ``handoff(to_agent, reason)`` tool (when there are at least two agents
and it may hand off to one of them) whose description lists the agents it may choose. A
hand-off is ``return_direct`` but does not end the run: the current agent finalizes (its
scratch goes into memory) and the next agent goes on from the shared memory, reading the
hand-off message as a tool result.

Fixes over LlamaIndex: a refused hand-off says "Agent {current} cannot hand off to
{to_agent}..." (upstream swapped the names) and, like a hand-off to an unknown agent, is an
``is_error`` result (so it never ends a step as a ``return_direct`` would); handing off to
oneself is refused; the valid agents listed are those the current agent may hand off to; a
``root_agent`` not among the agents is an error even with one agent; ``can_handoff_to``
naming an unknown agent and two agents with one name are errors.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from agentkit.agent.workflow.base_agent import (
    DEFAULT_AGENT_DESCRIPTION,
    DEFAULT_AGENT_NAME,
    BaseWorkflowAgent,
)
from agentkit.agent.workflow.events import HANDOFF_TOOL_NAME
from agentkit.agent.workflow.function_agent import FunctionAgent
from agentkit.agent.workflow.loop import AgentLoop
from agentkit.agent.workflow.prompts import (
    DEFAULT_HANDOFF_OUTPUT_PROMPT,
    DEFAULT_HANDOFF_PROMPT,
    DEFAULT_STATE_PROMPT,
    checked_prompt,
)
from agentkit.agent.workflow.react_agent import ReActAgent
from agentkit.llms.base import LLM
from agentkit.llms.prompts import PromptTemplate
from agentkit.llms.types import ToolOutput
from agentkit.tools import BaseTool, FunctionTool
from agentkit.workflow import Context

__all__ = ["AgentWorkflow", "handoff"]


def _refusal(to_agent: str, reason: str, message: str) -> ToolOutput:
    return ToolOutput(content=message, tool_name=HANDOFF_TOOL_NAME,
                      raw_input={"args": (), "kwargs": {"to_agent": to_agent, "reason": reason}},
                      raw_output=message, is_error=True)


async def handoff(ctx: Context, to_agent: str, reason: str) -> str | ToolOutput:
    """Handoff control of that chat to the given agent."""
    agents: list[str] = await ctx.store.get("agents")
    current: str = await ctx.store.get("current_agent_name")
    allowed: list[str] | None = (await ctx.store.get("can_handoff_to")).get(current)
    valid = [name for name in agents if name != current and (allowed is None or name in allowed)]
    if to_agent not in agents:
        return _refusal(to_agent, reason,
                        f"Agent {to_agent} not found. Please select a valid agent to hand off "
                        f"to. Valid agents: {', '.join(valid)}")
    if to_agent not in valid:
        return _refusal(to_agent, reason,
                        f"Agent {current} cannot hand off to {to_agent}. Please select a valid "
                        "agent to hand off to.")
    await ctx.store.set("next_agent", to_agent)
    template: str = await ctx.store.get("handoff_output_prompt",
                                        default=DEFAULT_HANDOFF_OUTPUT_PROMPT)
    return PromptTemplate(template).format(to_agent=to_agent, reason=reason)


class AgentWorkflow(AgentLoop):
    """Several workflow agents sharing one memory and one state (``ctx.store["state"]``).

    ``agents`` is a dict by name once built; ``root_agent`` the name of the agent that
    starts a run. ``run(user_msg=, chat_history=, memory=, ctx=, max_iterations=20)``.
    """

    def __init__(self, agents: Sequence[BaseWorkflowAgent],
                 initial_state: dict[str, Any] | None = None, root_agent: str | None = None,
                 handoff_prompt: str | PromptTemplate | None = None,
                 handoff_output_prompt: str | PromptTemplate | None = None,
                 state_prompt: str | PromptTemplate | None = None, timeout: float | None = None,
                 verbose: bool = False, num_concurrent_runs: int | None = None) -> None:
        super().__init__(timeout=timeout, verbose=verbose, num_concurrent_runs=num_concurrent_runs)
        agents = list(agents)
        if not agents:
            raise ValueError("At least one agent must be provided")
        if len(agents) > 1 and any(a.name == DEFAULT_AGENT_NAME for a in agents):
            raise ValueError("All agents must have a name in a multi-agent workflow")
        if len(agents) > 1 and any(a.description == DEFAULT_AGENT_DESCRIPTION for a in agents):
            raise ValueError("All agents must have a description in a multi-agent workflow")
        if any(a.initial_state for a in agents):
            raise ValueError("Initial state is not supported per-agent in AgentWorkflow")
        self.agents = {}
        for agent in agents:
            if agent.name in self.agents:
                raise ValueError(f"Agent names must be unique: two agents are named "
                                 f"{agent.name!r}")
            self.agents[agent.name] = agent
        for agent in agents:
            unknown = [n for n in agent.can_handoff_to or () if n not in self.agents]
            if unknown:
                raise ValueError(f"Agent {agent.name} can hand off to unknown agent(s) "
                                 f"{', '.join(unknown)} (agents: {', '.join(self.agents)})")
        if root_agent is None:
            if len(agents) > 1:
                raise ValueError("Exactly one root agent must be provided")
            root_agent = agents[0].name
        if root_agent not in self.agents:
            raise ValueError(f"Root agent {root_agent} not found in provided agents")
        self.root_agent = root_agent
        self.initial_state = dict(initial_state or {})
        self._handoff_tools: dict[str, BaseTool | None] = {}
        self.update_prompts({
            "handoff_prompt": handoff_prompt or DEFAULT_HANDOFF_PROMPT,
            "handoff_output_prompt": handoff_output_prompt or DEFAULT_HANDOFF_OUTPUT_PROMPT,
            "state_prompt": state_prompt or DEFAULT_STATE_PROMPT})

    # ------------------------------------------------------------------ hand-off tool
    def _handoff_tool(self, agent: BaseWorkflowAgent) -> BaseTool | None:
        if agent.name not in self._handoff_tools:
            self._handoff_tools[agent.name] = self._build_handoff_tool(agent)
        return self._handoff_tools[agent.name]

    def _build_handoff_tool(self, agent: BaseWorkflowAgent) -> BaseTool | None:
        if len(self.agents) == 1:
            return None
        agent_info = {name: other.description for name, other in self.agents.items()
                      if name != agent.name
                      and (agent.can_handoff_to is None or name in agent.can_handoff_to)}
        if not agent_info:
            return None
        return FunctionTool.from_defaults(
            async_fn=handoff, name=HANDOFF_TOOL_NAME,
            description=self.handoff_prompt.format(agent_info=str(agent_info)), return_direct=True)

    async def get_tools(self, agent_name: str, input_str: str | None = None) -> list[BaseTool]:
        """What ``agent_name`` is offered for ``input_str``: its tools, its retriever's pick,
        and the hand-off tool."""
        agent = self.agents[agent_name]
        return list((await self._runner(agent, input_str or "")).tools)

    # ------------------------------------------------------------------ prompts
    def get_prompts(self) -> dict[str, PromptTemplate]:
        """The workflow's prompts, then each agent's as ``"<agent>:<prompt>"``."""
        prompts = {"handoff_prompt": self.handoff_prompt,
                   "handoff_output_prompt": self.handoff_output_prompt,
                   "state_prompt": self.state_prompt}
        for name, agent in self.agents.items():
            prompts.update({f"{name}:{key}": value for key, value in agent.get_prompts().items()})
        return prompts

    def update_prompts(self, prompts: dict[str, str | PromptTemplate]) -> None:
        """Replace prompts by the names ``get_prompts`` gives (each checked for its placeholders;
        the constructor sets its prompts through here)."""
        if "handoff_prompt" in prompts:
            self.handoff_prompt = checked_prompt("handoff_prompt", prompts["handoff_prompt"])
            self._handoff_tools.clear()
        if "handoff_output_prompt" in prompts:
            self.handoff_output_prompt = checked_prompt("handoff_output_prompt",
                                                        prompts["handoff_output_prompt"])
        if "state_prompt" in prompts:
            self.state_prompt = checked_prompt("state_prompt", prompts["state_prompt"])
        for name, agent in self.agents.items():
            own = {key.split(":", 1)[1]: value for key, value in prompts.items()
                   if key.startswith(f"{name}:")}
            if own:
                agent.update_prompts(own)

    # ------------------------------------------------------------------ building
    @classmethod
    def from_tools_or_functions(cls, tools_or_functions: Sequence[BaseTool | Callable[..., Any]],
                                llm: LLM | None = None, system_prompt: str | None = None,
                                state_prompt: str | PromptTemplate | None = None,
                                initial_state: dict[str, Any] | None = None,
                                timeout: float | None = None,
                                verbose: bool = False) -> AgentWorkflow:
        """A one-agent workflow: a FunctionAgent for a function-calling LLM, else a
        ReActAgent."""
        if llm is None:
            raise ValueError("AgentWorkflow.from_tools_or_functions needs an llm (pass llm=...)")
        agent_cls: type[BaseWorkflowAgent] = (
            FunctionAgent if llm.metadata.is_function_calling_model else ReActAgent)
        agent = agent_cls(name="Agent",
                          description="A single agent that uses the provided tools or functions.",
                          tools=list(tools_or_functions), llm=llm, system_prompt=system_prompt)
        return cls(agents=[agent], state_prompt=state_prompt, initial_state=initial_state,
                   timeout=timeout, verbose=verbose)
