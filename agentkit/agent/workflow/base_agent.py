"""``BaseWorkflowAgent``: an agent that is also a workflow you can run on its own.

``FunctionAgent(tools=[...], llm=llm).run(user_msg="...")`` runs the agent loop
(:mod:`agentkit.agent.workflow.loop`) with this one agent; in an ``AgentWorkflow`` the
workflow runs the same loop over several agents and calls the agent's three hooks:

* ``take_step(ctx, llm_input, tools, memory) -> AgentOutput``: one LLM call; write an
  ``AgentInput`` (and ``AgentStream`` deltas when ``streaming``) to the stream; keep what the
  step produced in the agent's scratch in ``ctx.store``;
* ``handle_tool_call_results(ctx, results, memory)``: record the tool results in the scratch;
* ``finalize(ctx, output, memory) -> AgentOutput``: move the scratch into memory (at the end
  of the run, and before a hand-off).

Agents are pydantic models, as upstream's: their settings are fields (``model_dump(exclude=
{"llm"})``, ``model_copy(update={"system_prompt": ...})`` work; a copy gets its own run
bookkeeping). An agent can be built without an ``llm`` -- code that builds agents first and
gives only some of them a model works -- and the first step that needs the model says which
agent lacks it. There is no global default model (upstream's ``Settings.llm``), so nothing can
reach a paid API by accident.
"""

from __future__ import annotations

import copy
from abc import abstractmethod
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any, ClassVar, TypedDict

from pydantic import BaseModel, ConfigDict, Field

from agentkit.agent.workflow.events import (
    HANDOFF_TOOL_NAME,
    AgentOutput,
    AgentStream,
    StreamText,
    ToolCallResult,
)
from agentkit.agent.workflow.loop import AgentLoop
from agentkit.agent.workflow.prompts import DEFAULT_STATE_PROMPT, checked_prompt
from agentkit.llms.base import LLM
from agentkit.llms.prompts import PromptTemplate
from agentkit.llms.types import ChatMessage, ChatResponse, MessageRole, ToolSelection
from agentkit.memory import BaseMemory
from agentkit.tools import BaseTool, FunctionTool, ObjectRetriever
from agentkit.workflow import Context

__all__ = ["BaseWorkflowAgent", "WorkflowAgentOptions", "DEFAULT_AGENT_NAME",
           "DEFAULT_AGENT_DESCRIPTION"]

DEFAULT_AGENT_NAME = "Agent"
DEFAULT_AGENT_DESCRIPTION = "An agent that can perform a task"


def _as_tools(tools: Sequence[BaseTool | Callable[..., Any]] | None) -> list[BaseTool] | None:
    """Tools as given, functions wrapped as FunctionTools; "handoff" is the workflow's own."""
    if tools is None:
        return None
    converted = [t if isinstance(t, BaseTool) else FunctionTool.from_defaults(t) for t in tools]
    for tool in converted:
        if tool.metadata.name == HANDOFF_TOOL_NAME:
            raise ValueError("'handoff' is a reserved tool name. Please use a different name.")
    return converted


_WORKFLOW_STATE = frozenset({
    "_timeout", "_verbose", "_disable_validation", "_num_concurrent_runs", "_graph", "_services",
    "_registered_types", "_resource_manager", "_slots", "_live", "_streamable", "_runners"})
"""The attributes the workflow half of an agent (``Workflow``, ``AgentLoop``) keeps on it:
pydantic sets such a name (no field, no private attribute) as a plain attribute."""


class WorkflowAgentOptions(TypedDict, total=False):
    """The keywords of ``BaseWorkflowAgent.__init__``, typed for a subclass that adds its own
    (``def __init__(self, *, mine=..., **options: Unpack[WorkflowAgentOptions])``)."""

    name: str
    description: str
    system_prompt: str | None
    tools: Sequence[BaseTool | Callable[..., Any]] | None
    tool_retriever: ObjectRetriever[BaseTool] | None
    can_handoff_to: list[str] | None
    llm: LLM | None
    initial_state: dict[str, Any] | None
    state_prompt: str | PromptTemplate | None
    streaming: bool
    timeout: float | None
    verbose: bool
    num_concurrent_runs: int | None


def _empty_reply() -> ChatResponse:
    """The reply of a stream that gave no chunk: an empty assistant message (built only then:
    every step streams)."""
    return ChatResponse(message=ChatMessage(role=MessageRole.ASSISTANT))


class BaseWorkflowAgent(AgentLoop, BaseModel):
    """An agent of an agent workflow (see the module docstring); run alone, it is the only
    agent of its own loop (no hand-offs)."""

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    name: str = DEFAULT_AGENT_NAME
    description: str = DEFAULT_AGENT_DESCRIPTION
    system_prompt: str | None = None
    tools: list[BaseTool] | None = None
    tool_retriever: Any = None
    can_handoff_to: list[str] | None = None
    llm: LLM | None = None
    initial_state: dict[str, Any] = Field(default_factory=dict)
    state_prompt: PromptTemplate = Field(
        default_factory=lambda: checked_prompt("state_prompt", DEFAULT_STATE_PROMPT))
    streaming: bool = True

    # the store keys an agent keeps its scratch under (``context_store_schema``), and the
    # classes its scratch holds (restorable from a saved context)
    context_types: ClassVar[tuple[type, ...]] = ()

    def __init__(self, name: str = DEFAULT_AGENT_NAME,
                 description: str = DEFAULT_AGENT_DESCRIPTION, system_prompt: str | None = None,
                 tools: Sequence[BaseTool | Callable[..., Any]] | None = None,
                 tool_retriever: ObjectRetriever[BaseTool] | None = None,
                 can_handoff_to: list[str] | None = None, llm: LLM | None = None,
                 initial_state: dict[str, Any] | None = None,
                 state_prompt: str | PromptTemplate | None = None, streaming: bool = True,
                 timeout: float | None = None, verbose: bool = False,
                 num_concurrent_runs: int | None = None, **fields: Any) -> None:
        if tool_retriever is not None and not hasattr(tool_retriever, "aretrieve"):
            raise TypeError(f"tool_retriever must be an ObjectRetriever, got "
                            f"{type(tool_retriever).__name__}")
        BaseModel.__init__(
            self, name=name, description=description, system_prompt=system_prompt,
            tools=_as_tools(tools), tool_retriever=tool_retriever,
            can_handoff_to=list(can_handoff_to) if can_handoff_to is not None else None,
            llm=llm, initial_state=dict(initial_state or {}),
            state_prompt=checked_prompt("state_prompt", state_prompt or DEFAULT_STATE_PROMPT),
            streaming=streaming, **fields)
        # model_post_init built the workflow half with the defaults: built again only when
        # the run options differ from them
        if timeout is not None or verbose or num_concurrent_runs is not None:
            AgentLoop.__init__(self, timeout=timeout, verbose=verbose,
                               num_concurrent_runs=num_concurrent_runs)

    def __setattr__(self, name: str, value: Any) -> None:
        # the workflow half's state (``Workflow.__init__`` sets a dozen of these for every
        # agent built): a plain attribute, set as pydantic sets it, without its handler lookup
        if name in _WORKFLOW_STATE and name not in type(self).__private_attributes__:
            object.__setattr__(self, name, value)
        else:
            super().__setattr__(name, value)

    def model_post_init(self, context: Any, /) -> None:
        """The workflow half of the agent, with the default run options (also for
        ``model_validate``, which skips ``__init__``); ``__init__`` builds it again when given
        others (a timeout...)."""
        AgentLoop.__init__(self)

    def __copy__(self) -> BaseWorkflowAgent:
        copied = super().__copy__()
        copied._copy_runtime_from(self)
        return copied

    def __deepcopy__(self, memo: dict[int, Any] | None = None) -> BaseWorkflowAgent:
        copied = self.__copy__()
        for name in type(self).model_fields:  # the settings, not the run bookkeeping
            copied.__dict__[name] = copy.deepcopy(self.__dict__[name], memo)
        return copied

    def _require_llm(self) -> LLM:
        """The agent's model; the error names the agent when it has none."""
        if self.llm is None:
            raise ValueError(f"{type(self).__name__} {self.name!r} needs an llm: it was built "
                             "without one (pass llm=... when building it, or set agent.llm)")
        return self.llm

    @property
    def handoff_output_prompt(self) -> PromptTemplate:  # type: ignore[override]
        """Empty: an agent alone hands off to nobody."""
        return PromptTemplate("")

    def context_store_schema(self) -> dict[str, Any]:
        """The types of the scratch this agent keeps in the store (none by default)."""
        return {}

    # the loop's view: this agent alone
    @property
    def agents(self) -> dict[str, BaseWorkflowAgent]:  # type: ignore[override]
        return {self.name: self}

    @property
    def root_agent(self) -> str:  # type: ignore[override]
        return self.name

    async def get_tools(self, input_str: str | None = None) -> list[BaseTool]:
        """The agent's tools, plus those its retriever picks for ``input_str``."""
        tools = list(_as_tools(self.tools) or [])
        if self.tool_retriever is not None:
            tools.extend(await self.tool_retriever.aretrieve(input_str or ""))
        return tools

    # ------------------------------------------------------------------ the hooks
    @abstractmethod
    async def take_step(self, ctx: Context, llm_input: list[ChatMessage], tools: Sequence[Any],
                        memory: BaseMemory) -> AgentOutput:
        """One LLM call on ``llm_input`` with ``tools``: the agent's output."""

    @abstractmethod
    async def handle_tool_call_results(self, ctx: Context, results: list[ToolCallResult],
                                       memory: BaseMemory) -> None:
        """Record the results of the tool calls of the last step."""

    @abstractmethod
    async def finalize(self, ctx: Context, output: AgentOutput,
                       memory: BaseMemory) -> AgentOutput:
        """Move what the agent did into ``memory``; returns the output to hand out."""

    async def discard_scratch(self, ctx: Context) -> None:
        """Forget unfinished work (a failed run); agents with scratch override this."""

    # ------------------------------------------------------------------ streaming
    async def _streamed(self, ctx: Context, stream: AsyncIterator[ChatResponse]) -> ChatResponse:
        """Hand each chunk to the caller as an AgentStream; the last chunk is the reply. What
        every chunk needs (the agent's name, how to read a chunk's tool calls) is looked up
        once per stream: a reply streams in dozens of chunks."""
        last: ChatResponse | None = None
        if not ctx.stream_reads(AgentStream):  # the caller ignores the deltas: none is built
            async for last in stream:  # noqa: B007 (the last chunk is the reply)
                pass
            return last if last is not None else _empty_reply()
        text = StreamText()
        add, event_of, write = text.add, AgentStream.of_stream, ctx.write_event_to_stream
        calls_of, name = self._chunk_tool_calls(), self.name
        async for last in stream:
            write(event_of(text, add(last.message.content or ""), delta=last.delta or "",
                           tool_calls=calls_of(last) if calls_of is not None else [],
                           raw=last.raw, current_agent_name=name))
        return last if last is not None else _empty_reply()

    def _tool_calls_of(self, response: ChatResponse) -> list[ToolSelection]:
        """The tool-calling API calls in ``response`` (none for an agent that asks in text)."""
        return []

    def _chunk_tool_calls(self) -> Callable[[ChatResponse], list[ToolSelection]] | None:
        """How :meth:`_streamed` reads each chunk's tool calls: ``_tool_calls_of``, or None
        when the agent's class asks in text (every chunk's calls are ``[]``)."""
        if type(self)._tool_calls_of is BaseWorkflowAgent._tool_calls_of:
            return None
        return self._tool_calls_of

    # ------------------------------------------------------------------ prompts
    def get_prompts(self) -> dict[str, PromptTemplate]:
        """The agent's prompts by name (none by default)."""
        return {}

    def update_prompts(self, prompts: dict[str, str | PromptTemplate]) -> None:
        """Replace prompts by name; unknown names are ignored, as upstream."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"

