"""LlamaIndex agents under the harness (``pip install 'agentkit[llama-index]'``):
``FunctionAgent``, ``ReActAgent`` and ``AgentWorkflow`` of llama-index-core, over
llama-index-llms-openai's ``OpenAI`` routed through the bridge.

A factory returns the user's agent (``return support_agent``); each run uses a copy of it (of
each agent of an ``AgentWorkflow``) whose ``llm`` is a LlamaIndex ``OpenAI`` talking to the
bridge in-process (``model_copy(update={"llm": ...})``) and whose own tools of the scenario's
tools' names are copies calling them as the scenario's. The built-in types build the agent
over the scenario's tools instead (``context.tools``: LlamaIndex ``FunctionTool`` objects
running them through agentkit)::

    @llama_index_agent
    def framework_over_the_scenario(context):
        return FunctionAgent(llm=context.llm, tools=context.tools, **context.params)

Agent types: ``li_function`` (a ``FunctionAgent``) and ``li_react`` (a ``ReActAgent``, whose
trajectories render as ReAct text); ``params`` go to the agent's constructor. Each turn is one
run of the agent (one ``Context`` and one memory for the whole scenario, so turns carry over);
each ``AgentOutput`` names the step's agent, and in an ``AgentWorkflow`` a hand-off is filed
when the next agent takes over. Every event the run streams is in the turn's ``events`` (with
the keys of the workflow's state that changed), and an ``InputRequiredEvent`` is answered
with a ``HumanResponseEvent`` carrying the turn's next ``human:`` answer.
The model is named ``gpt-4o-mini`` to LlamaIndex (it looks the
name up for its context window and tool calling; the bridge answers any name) and makes one
attempt per call: the openai SDK's back-off has random jitter, which would make a trace's
simulated times vary from run to run.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import json
from collections.abc import Callable, Sequence
from typing import Any

from agentkit.bridge.agent import BridgeContext
from agentkit.harness import AgentType
from agentkit.integrations._framework import (
    Framework,
    FrameworkContext,
    HumanAnswers,
    Integration,
    Requirement,
    ScenarioTools,
    integration_type,
    load,
    note_event,
    note_handoff,
    note_step,
)
from agentkit.llms.base import DEFAULT_MODEL
from agentkit.llms.types import ChatMessage
from agentkit.scenario._trajectory import TrajectoryRenderer
from agentkit.tools import BaseTool

__all__ = ["FRAMEWORK", "MODEL_NAME", "llama_index_agent", "LI_FUNCTION", "LI_REACT"]

FRAMEWORK = Framework("LlamaIndex", "llama-index", (
    Requirement("llama-index-core", "llama_index.core", "0.14.25", "0.15"),
    Requirement("llama-index-llms-openai", "llama_index.llms.openai", "0.8.3", "0.9")))
"""What ``agentkit[llama-index]`` installs, and the versions it was tested with."""

MODEL_NAME = DEFAULT_MODEL
"""The model name LlamaIndex is given: one it knows as a tool-calling chat model."""


def _model(bridge: BridgeContext) -> Any:
    llms = load("llama_index.llms.openai")
    return llms.OpenAI(model=MODEL_NAME, api_key=bridge.api_key, api_base=bridge.base_url,
                       http_client=bridge.http_client,
                       async_http_client=bridge.async_http_client, max_retries=0)


@functools.cache
def _metadata_type() -> type:
    """LlamaIndex's ``ToolMetadata`` with the scenario tool's own JSON schema, so the model is
    offered the same parameters whichever agent offers the tool."""
    base: Any = load("llama_index.core.tools").ToolMetadata

    @dataclasses.dataclass
    class ScenarioToolMetadata(base):  # type: ignore[misc]
        parameters: dict[str, Any] = dataclasses.field(default_factory=dict)

        def get_parameters_dict(self) -> dict[str, Any]:
            return copy.deepcopy(self.parameters)

    return ScenarioToolMetadata


def _tool(tool: BaseTool, tools: ScenarioTools) -> Any:
    metadata = tool.metadata

    async def run(**arguments: Any) -> str:
        return (await tools.call(tool, arguments)).content

    made = _metadata_type()(name=metadata.name, description=metadata.description,
                            fn_schema=metadata.fn_schema, return_direct=metadata.return_direct,
                            parameters=metadata.get_parameters_dict())
    return load("llama_index.core.tools").FunctionTool(async_fn=run, metadata=made)


def _agents(agent: Any) -> list[Any]:
    """The agents of an ``AgentWorkflow``, or the agent itself."""
    return list(agent.agents.values()) if hasattr(agent, "agents") else [agent]


def _tools(agent: Any) -> dict[str, Any] | None:
    """The tools of the agent (of every agent of an ``AgentWorkflow``) by name; an agent that
    finds its tools with a ``tool_retriever`` has none listed."""
    workflow = load("llama_index.core.agent.workflow")
    if not isinstance(agent, (workflow.BaseWorkflowAgent, workflow.AgentWorkflow)):
        return None
    return {tool.metadata.name: tool for member in _agents(agent)
            for tool in member.tools or ()}


def _own_tool(tool: Any, tools: ScenarioTools) -> Any:
    """A copy of the LlamaIndex tool ``tool`` whose calls (``acall``, how workflow agents call
    tools) run as the scenario's tool of its name; its exception is the agent's to catch."""
    own = copy.copy(tool)
    context = getattr(tool, "ctx_param_name", None)

    async def acall(*args: Any, **kwargs: Any) -> Any:
        arguments = {k: v for k, v in kwargs.items() if k != context}
        return await tools.run_own(tool.metadata.name, arguments, None,
                                   lambda: tool.acall(*args, **kwargs), paused=_waits)

    own.acall = acall
    return own


def _failing_tool(tool: Any, tools: ScenarioTools) -> Any:
    """A copy of the LlamaIndex tool ``tool`` (one the scenario does not name) whose call that
    raises is filed as that exception (:meth:`ScenarioTools.caught`) before the agent catches
    it; its other calls the wire files as they are."""
    own = copy.copy(tool)
    context = getattr(tool, "ctx_param_name", None)

    async def acall(*args: Any, **kwargs: Any) -> Any:
        try:
            return await tool.acall(*args, **kwargs)
        except Exception as exc:
            if not _waits(exc):
                arguments = {k: v for k, v in kwargs.items() if k != context}
                await tools.caught(tool.metadata.name, arguments, None, exc)
            raise

    own.acall = acall
    return own


def _waits(error: BaseException) -> bool:
    """Whether a tool's call stopped to wait for an event (``ctx.wait_for_event``: the
    workflow runs the call again when the event comes)."""
    waiting = getattr(load("workflows.runtime.types.results"), "WaitingForEvent", None)
    return waiting is not None and isinstance(error, waiting)


def _routed(agent: Any, llm: Any, tools: ScenarioTools) -> Any:
    """A copy of the agent (of each agent of an ``AgentWorkflow``) on agentkit's model, its
    own tools named in ``tools.own`` running as the scenario's, the others filing a call that
    raised as its error (the user's agents are not changed)."""
    def member(one: Any) -> Any:
        update: dict[str, Any] = {"llm": llm}
        if one.tools:
            update["tools"] = [_own_tool(t, tools) if t.metadata.name in tools.own
                               else _failing_tool(t, tools) for t in one.tools]
        return one.model_copy(update=update)

    if not hasattr(agent, "agents"):
        return member(agent)
    workflow = copy.copy(agent)
    workflow.agents = {name: member(one) for name, one in agent.agents.items()}
    return workflow


_UNTRACED = ("AgentStream", "AgentSetup", "StopEvent")
"""Streamed events the trace leaves out: each token of a reply, an agent's prepared input
(the LLM call in the step has it) and the run's end (the turn's answer)."""

_STARTS = ("AgentInput", "ToolCall")
"""Streamed events that announce work about to run: the state is read at the others, when
each reaches the stream (which lags the run: a change is filed on the first of them read
after it was made, by the time a result is read its work's changes are in)."""


def _jsonable(value: Any) -> Any:
    """``value`` as JSON data: an object JSON cannot hold is its type's name (never its
    ``repr``, which may hold an address that differs from run to run)."""
    return json.loads(json.dumps(value, default=lambda other: type(other).__name__))


def _fields(event: Any) -> dict[str, Any]:
    """The fields of a LlamaIndex workflow event that matter in a trace, by its kind: an
    agent's input and output, a tool call and its result, a request for input, a user's own
    event (all its fields)."""
    kind = type(event).__name__
    if kind == "AgentInput":
        return {"agent": event.current_agent_name}
    if kind == "AgentOutput":
        return {"agent": event.current_agent_name, "response": event.response.content,
                "tool_calls": [call.tool_name for call in event.tool_calls],
                **({"retry": True} if getattr(event, "retry_messages", None) else {})}
    if kind == "ToolCall":
        return {"tool": event.tool_name, "args": _jsonable(event.tool_kwargs)}
    if kind == "ToolCallResult":
        return {"tool": event.tool_name, "output": event.tool_output.content,
                "is_error": bool(event.tool_output.is_error),
                **({"return_direct": True} if event.return_direct else {})}
    fields: dict[str, Any] = _jsonable(_own_fields(event))
    return fields


def _own_fields(event: Any) -> dict[str, Any]:
    """All the fields of an event, declared or given (sorted by name)."""
    try:
        dumped = dict(event.model_dump())
    except Exception:  # noqa: BLE001 (a user's event that pydantic cannot dump: its name only)
        return {}
    dumped |= dumped.pop("_data", None) or {}
    return {key: dumped[key] for key in sorted(dumped)}


def _request(event: Any) -> Any:
    """What an ``InputRequiredEvent`` asks: its ``prefix``, or all its fields."""
    prefix = event.get("prefix")
    return prefix if isinstance(prefix, str) else _fields(event)


class _State:
    """The workflow's ``state`` in its ``Context`` (an ``AgentWorkflow``'s ``initial_state``,
    what tools edit with ``ctx.store.edit_state()``): which keys changed between two looks."""

    def __init__(self) -> None:
        self.seen: dict[str, str] = {}

    async def changed(self, context: Any) -> list[str]:
        state = await context.store.get("state", default=None)
        now = ({str(key): json.dumps(_jsonable(value), sort_keys=True)
                for key, value in state.items()} if isinstance(state, dict) else {})
        changed = sorted(key for key in self.seen.keys() | now.keys()
                         if self.seen.get(key) != now.get(key))
        self.seen = now
        return changed


class _Run:
    """A LlamaIndex workflow agent run turn by turn on agentkit's model (a copy of the agent
    with its ``llm`` replaced): one ``Context`` and one memory for the scenario; its stream's
    ``AgentOutput`` events name each step's agent, every event it streams is in the turn's
    ``events`` (those that tell of work done -- an output, a tool's result, a request, a
    user's own event -- with the state keys changed since the one before), and an
    ``InputRequiredEvent`` is answered with the turn's next ``human:`` answer (a
    ``HumanResponseEvent`` carrying the request's other fields, so a wait's
    ``requirements`` match)."""

    def __init__(self, agent: Any, tools: ScenarioTools) -> None:
        self.agent = _routed(agent, _model(tools.bridge), tools)
        self.bridge = tools.bridge
        self.context = load("llama_index.core.workflow").Context(self.agent)
        self.memory = load("llama_index.core.memory").ChatMemoryBuffer.from_defaults(
            llm=_agents(self.agent)[0].llm)
        self.state = _State()

    async def arun(self, message: str, deltas: list[str] | None, human: HumanAnswers) -> str:
        events = load("llama_index.core.agent.workflow")
        workflow = load("llama_index.core.workflow")
        handler = self.agent.run(user_msg=message, ctx=self.context, memory=self.memory)
        agent: str | None = None
        reason = ""
        streamed: list[str] = []
        last: list[str] = []
        async for event in handler.stream_events():
            kind = type(event).__name__
            if kind not in _UNTRACED:
                changed = [] if kind in _STARTS else await self.state.changed(self.context)
                note_event(kind, _fields(event), changed)
            if isinstance(event, events.AgentStream):
                streamed.append(event.delta)
            elif isinstance(event, events.AgentOutput):
                if agent is not None and event.current_agent_name != agent:
                    note_handoff(agent, event.current_agent_name, reason)
                agent = event.current_agent_name
                note_step(self.bridge, agent, [call.tool_id for call in event.tool_calls])
                last, streamed = streamed, []
            elif isinstance(event, events.ToolCallResult) and event.tool_name == "handoff":
                reason = str(event.tool_kwargs.get("reason", ""))
            elif isinstance(event, workflow.InputRequiredEvent):
                answer = human.answer(_request(event), "LlamaIndex InputRequiredEvent")
                carried = {key: value for key, value in _own_fields(event).items()
                           if key != "prefix"}
                handler.ctx.send_event(workflow.HumanResponseEvent(response=answer, **carried))
        output = await handler
        changed = await self.state.changed(self.context)
        if changed:  # after the last event
            note_event("StopEvent", {}, changed)
        if deltas is not None:
            deltas.extend(last)
        return str(output)

    def set_history(self, messages: Sequence[ChatMessage]) -> None:
        llms = load("llama_index.core.llms")
        self.memory.set([llms.ChatMessage(role=m.role.value, content=m.content)
                         for m in messages])


INTEGRATION = Integration(
    FRAMEWORK, _model, _tool, _tools, _Run,
    "a LlamaIndex agent (a FunctionAgent, ReActAgent or other BaseWorkflowAgent, or an "
    "AgentWorkflow)", human=True)


def llama_index_agent(factory: Callable[[FrameworkContext], Any] | None = None, *,
                      trajectory: TrajectoryRenderer | str | None = "tool_calls") -> Any:
    """The agent type of the LlamaIndex agent ``factory(context)`` returns (module docstring);
    ``trajectory="react"`` for a ``ReActAgent``. Works as a decorator, with or without
    arguments."""
    if factory is None:
        return functools.partial(llama_index_agent, trajectory=trajectory)
    return integration_type(INTEGRATION, factory, trajectory=trajectory)


def _function_agent(context: FrameworkContext) -> Any:
    agents = load("llama_index.core.agent.workflow")
    return agents.FunctionAgent(llm=context.llm, tools=context.tools, **context.params)


def _react_agent(context: FrameworkContext) -> Any:
    agents = load("llama_index.core.agent.workflow")
    return agents.ReActAgent(llm=context.llm, tools=context.tools, **context.params)


LI_FUNCTION: AgentType = llama_index_agent(_function_agent)
"""``li_function``: LlamaIndex's ``FunctionAgent`` over the scenario's tools."""

LI_REACT: AgentType = llama_index_agent(_react_agent, trajectory="react")
"""``li_react``: LlamaIndex's ``ReActAgent`` over the scenario's tools (ReAct text)."""
