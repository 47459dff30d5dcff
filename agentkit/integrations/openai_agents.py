"""OpenAI Agents SDK agents under the harness (``pip install 'agentkit[openai-agents]'``): an
``Agent`` run by ``Runner``, hand-offs included, over the SDK's default model -- the Responses
API (``OpenAIResponsesModel``) -- routed through the bridge.

A factory returns the user's starting agent (``return support_agent``); each run uses a clone
of it and of the agents it hands off to, whose own ``FunctionTool``s of the scenario's tools'
names are copies calling them as the scenario's, on an ``OpenAIResponsesModel`` over the
bridge's async client (``RunConfig.model``): the agent speaks to the model as it does in
production. ``openai_agents_agent(factory, api="chat_completions")`` runs it on the SDK's
``OpenAIChatCompletionsModel`` instead, for an agent that uses that one. The built-in type
builds the agent over the scenario's tools instead (``context.tools``: ``FunctionTool`` objects
with the scenario tools' own JSON schemas, running them through agentkit)::

    @openai_agents_agent
    def framework_over_the_scenario(context):
        return Agent(name="Assistant", model=context.model, tools=context.tools)

Agent type: ``openai_agents`` (an ``Agent`` named ``Agent``; ``params`` go to it). Each turn is
a ``Runner.run`` -- ``Runner.run_streamed`` for a streamed turn -- with the conversation so far
(``to_input_list()``) and the agent the last turn ended with, so a hand-off carries over. Every
agent of the run uses the bridge's model (the run's ``RunConfig.model``), tracing to OpenAI is
off, and the run's hooks file each model call's agent and each hand-off (``from`` -> ``to``;
the SDK's hand-offs carry no reason). A tool call runs under the model's ``tool_call_id``.
The copies' input and output guardrails file each check in the turn's ``guardrails``, and a
tripwire that stops the run is a :class:`GuardrailTrippedError` naming the guardrail; while a
turn runs the SDK's default client is the bridge's, so a guardrail that runs an agent of its
own (``Runner.run`` without a model) asks agentkit's model too. Every turn of a run gets the
same run context (``Runner.run(..., context=)``, the tools' ``RunContextWrapper.context``): the
scenario's world, or what ``openai_agents_agent(factory, context=...)`` builds from the factory's
context (around ``context.world``), so what the tools write through it is what the scenario's
end-state checks read. A call of the agent's tool that raised is the call's error in the trace,
the exception itself (its type, message and where it was raised), though the model is told the
SDK's default message.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import inspect
import json
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Literal

from agentkit.bridge.agent import BridgeContext
from agentkit.core.errors import AgentFailedError
from agentkit.core.textdiff import short
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
    note_guardrail,
    note_handoff,
    note_step,
)
from agentkit.llms.types import ChatMessage
from agentkit.scenario._trajectory import TrajectoryRenderer
from agentkit.tools import BaseTool
from agentkit.trace import SimulatedToolError, state_data

__all__ = ["FRAMEWORK", "openai_agents_agent", "OPENAI_AGENTS", "GuardrailTrippedError",
           "RunContextFactory"]

FRAMEWORK = Framework("OpenAI Agents SDK", "openai-agents", (
    Requirement("openai-agents", "agents", "0.20.0", "1"),))
"""What ``agentkit[openai-agents]`` installs, and the versions it was tested with."""


API = Literal["responses", "chat_completions"]
"""The API an agent's model speaks to the bridge: the SDK's default (``responses``), or chat
completions."""


def _model(bridge: BridgeContext) -> Any:
    """The SDK's default model (the Responses API) over the bridge."""
    models = load("agents.models.openai_responses")
    return models.OpenAIResponsesModel(model=bridge.model, openai_client=bridge.async_client)


def _chat_model(bridge: BridgeContext) -> Any:
    """The SDK's chat-completions model over the bridge."""
    models = load("agents.models.openai_chatcompletions")
    return models.OpenAIChatCompletionsModel(model=bridge.model,
                                             openai_client=bridge.async_client)


def _tool(tool: BaseTool, tools: ScenarioTools) -> Any:
    metadata = tool.metadata

    async def invoke(context: Any, arguments: str) -> str:
        try:
            parsed = json.loads(arguments or "{}")
        except ValueError as exc:
            return (await tools.call(tool, {}, context.tool_call_id,
                                     arguments_error=f"arguments are not JSON: {exc}")).content
        return (await tools.call(tool, parsed, context.tool_call_id)).content

    return load("agents").FunctionTool(
        name=metadata.name, description=metadata.description,
        params_json_schema=metadata.get_parameters_dict(), on_invoke_tool=invoke,
        strict_json_schema=False)


@functools.cache
def _hooks_type() -> type:
    """The SDK's ``RunHooks`` filing each model call's agent and each hand-off."""
    base: Any = load("agents").RunHooks

    class TraceHooks(base):  # type: ignore[misc]
        def __init__(self, bridge: BridgeContext) -> None:
            super().__init__()
            self.bridge = bridge

        async def on_llm_end(self, context: Any, agent: Any, response: Any) -> None:
            note_step(self.bridge, agent.name, [
                item.call_id for item in response.output
                if getattr(item, "type", None) == "function_call"])

        async def on_handoff(self, context: Any, from_agent: Any, to_agent: Any) -> None:
            note_handoff(from_agent.name, to_agent.name)

    return TraceHooks


def _team(agent: Any) -> list[Any]:
    """The agent and every agent its hand-offs reach as agents (a ``Handoff`` object's agent
    is not reachable), each once."""
    sdk_agent = load("agents").Agent
    found: dict[int, Any] = {}
    waiting = [agent]
    while waiting:
        member = waiting.pop(0)
        if id(member) not in found:
            found[id(member)] = member
            waiting += [h for h in member.handoffs if isinstance(h, sdk_agent)]
    return list(found.values())


def _tools(agent: Any) -> dict[str, Any] | None:
    """The tools of the agent and of the agents it hands off to, by name."""
    if not isinstance(agent, load("agents").Agent):
        return None
    return {tool.name: tool for member in _team(agent) for tool in member.tools}


def _own_tool(tool: Any, tools: ScenarioTools) -> Any:
    """A copy of the SDK ``FunctionTool`` ``tool`` whose calls run as the scenario's tool of
    its name. A scheduled failure reaches the model as the SDK's default tool error message,
    as a ``@function_tool``'s exception does; an exception the tool's own failure handling
    turned into its output is the call's error in the trace (the exception itself, where
    :func:`_keeping` kept it)."""
    sdk = load("agents")
    invoke = _keeping(tool).on_invoke_tool

    async def run(context: Any, arguments: str) -> Any:
        try:
            parsed = json.loads(arguments or "{}")
        except ValueError:
            parsed = {}
        try:
            return await tools.run_own(tool.name, parsed, context.tool_call_id,
                                       lambda: invoke(context, arguments),
                                       failed=lambda _: _raised(context) or
                                       _handled_failure(context))
        except SimulatedToolError as exc:
            return sdk.default_tool_error_function(context, exc)

    return dataclasses.replace(tool, on_invoke_tool=run)


def _failing_tool(tool: Any, tools: ScenarioTools) -> Any:
    """A copy of the SDK ``FunctionTool`` ``tool`` (one the scenario does not name) whose call
    that raised -- the model told so by the tool's failure handling -- is filed as that
    exception (:meth:`ScenarioTools.caught`); its other calls the wire files as they are."""
    kept = _keeping(tool)
    if kept is tool:
        return tool
    invoke = kept.on_invoke_tool

    async def run(context: Any, arguments: str) -> Any:
        output = await invoke(context, arguments)
        raised = _raised(context)
        if raised is not None:
            try:
                parsed = json.loads(arguments or "{}")
            except ValueError:
                parsed = {}
            await tools.caught(tool.name, parsed if isinstance(parsed, dict) else {},
                               context.tool_call_id, raised)
        return output

    return dataclasses.replace(tool, on_invoke_tool=run)


_RAISED = "_agentkit_raised"
"""Where :func:`_keeping` keeps, on a call's tool context, the exception the tool raised."""

_DEFAULT_HANDLED = "_function_tool_default_failure_handled"
"""The flag the SDK's default failure handling leaves on a call's tool context (private; it
lets the SDK's error text past a tool's output schema)."""


def _keeping(tool: Any) -> Any:
    """A copy of the SDK ``FunctionTool`` ``tool`` whose failure handling first keeps the
    exception the tool raised on the call's tool context (:func:`_raised`), then answers the
    model as the tool's own handling does -- the SDK's default message (since 0.24 without the
    exception's text) or the tool's ``failure_error_function``. The SDK has no public hook for
    it: its private failure-handling fields (0.20 to 0.24); a tool without them, or whose
    exceptions are not handled (``failure_error_function=None``), is left as it is."""
    resolve = getattr(load("agents.tool"), "resolve_function_tool_failure_error_function", None)
    if (resolve is None or not hasattr(tool, "_use_default_failure_error_function")
            or resolve(tool) is None):
        return tool
    by_default = tool._use_default_failure_error_function

    def keep(context: Any, error: Exception) -> Any:
        setattr(context, _RAISED, error)
        handle = resolve(tool, context)
        if handle is None:  # a hosted program's call of a tool with an output schema
            raise error
        if by_default:
            setattr(context, _DEFAULT_HANDLED, True)
        return handle(context, error)

    return dataclasses.replace(tool, _failure_error_function=keep,
                               _use_default_failure_error_function=False)


def _raised(context: Any) -> BaseException | None:
    """The exception :func:`_keeping` kept for this call (taken: None afterwards)."""
    raised = getattr(context, _RAISED, None)
    if raised is not None:
        setattr(context, _RAISED, None)
    return raised if isinstance(raised, BaseException) else None


def _handled_failure(context: Any) -> bool:
    """Whether the SDK's default failure handling made the tool's output of an exception (the
    flag it leaves on the tool context; absent from releases that do not set it)."""
    return bool(getattr(context, _DEFAULT_HANDLED, False))


def _guarded(guardrail: Any, kind: str) -> Any:
    """A copy of the SDK guardrail ``guardrail`` (an ``InputGuardrail`` or ``OutputGuardrail``)
    filing each check it makes in the trace (:func:`note_guardrail`) under its own name."""
    check = guardrail.guardrail_function
    name = guardrail.get_name()

    async def run(context: Any, agent: Any, value: Any) -> Any:
        output = check(context, agent, value)
        if inspect.isawaitable(output):
            output = await output
        note_guardrail(name, kind, agent.name, bool(output.tripwire_triggered),
                       output.output_info)
        return output

    return dataclasses.replace(guardrail, guardrail_function=run, name=name)


def _copy_tool(tool: Any, tools: ScenarioTools) -> Any:
    """The run's copy of a tool of the agent's: a ``FunctionTool`` of a scenario tool's name
    runs as that one, any other files a call that raised as its error; other tools (hosted
    ones, MCP servers' tools) are as they are."""
    if not hasattr(tool, "on_invoke_tool"):
        return tool
    if getattr(tool, "name", None) in tools.own:
        return _own_tool(tool, tools)
    return _failing_tool(tool, tools)


def _traced_team(agent: Any, tools: ScenarioTools) -> Any:
    """Copies of the agent and of the agents it hands off to (``Agent.clone``: the user's
    agents are not changed), each with its guardrails filing their checks in the trace and its
    own tools copied (:func:`_copy_tool`): those named in ``tools.own`` running as the
    scenario's, the others filing a call that raised as its error."""
    sdk_agent = load("agents").Agent
    team = _team(agent)
    copies = {id(member): member.clone(
        tools=[_copy_tool(tool, tools) for tool in member.tools],
        input_guardrails=[_guarded(g, "input") for g in member.input_guardrails],
        output_guardrails=[_guarded(g, "output") for g in member.output_guardrails])
        for member in team}
    for member in team:
        copies[id(member)].handoffs = [copies[id(h)] if isinstance(h, sdk_agent) else h
                                       for h in member.handoffs]
    return copies[id(agent)]


class GuardrailTrippedError(AgentFailedError):
    """A guardrail of the Agents SDK agent tripped its wire and the SDK stopped the run: the
    turn fails naming the guardrail, the agent and what the guardrail found (a scenario that
    wants the trip expects it with ``expect.error``)."""


def _tripped(sdk: Any, exc: Exception, agent: Any) -> GuardrailTrippedError:
    result = exc.guardrail_result  # type: ignore[attr-defined]
    kind = ("input" if isinstance(exc, sdk.InputGuardrailTripwireTriggered)
            else "output")
    owner = getattr(result, "agent", agent)
    info = state_data(result.output.output_info)
    found = f" (it found: {short(info, 200)})" if info else ""
    stopped = ("before the agent answered" if kind == "input"
               else "and the agent's answer is not given")
    return GuardrailTrippedError(
        f"{kind} guardrail `{result.guardrail.get_name()}` of agent `{owner.name}` tripped"
        f"{found}: the Agents SDK stopped the run {stopped}")


@contextlib.contextmanager
def _default_client(client: Any) -> Iterator[None]:
    """The SDK's default OpenAI client is ``client`` inside: a run an agent's code starts
    itself (a guardrail asking an agent of its own, as the SDK's guardrail guide does) asks
    agentkit's model too. The SDK has no public getter of the default: its private one."""
    shared = load("agents.models._openai_shared")
    before = shared.get_default_openai_client()
    load("agents").set_default_openai_client(client, use_for_tracing=False)
    try:
        yield
    finally:
        shared.set_default_openai_client(before)


RunContextFactory = Callable[[FrameworkContext], Any]
"""How a run's context (``Runner.run(..., context=)``, what tools read as
``RunContextWrapper.context``) is built from the factory's context (its ``world``, ``state``,
``params``)."""


def _world(context: FrameworkContext) -> Any:
    return context.world


class _Run:
    """An Agents SDK agent run turn by turn on agentkit's model (``RunConfig.model``): the
    input list and the current agent carry over; every turn gets the same run ``context``
    (``context(...)`` of the factory's context, by default the scenario's world)."""

    def __init__(self, agent: Any, tools: ScenarioTools,
                 model: Callable[[BridgeContext], Any] = _model,
                 context: RunContextFactory | None = None) -> None:
        self.agent = _traced_team(agent, tools)
        self.bridge = tools.bridge
        self.model = model(tools.bridge)
        self.items: list[Any] = []
        made = FrameworkContext(model=self.model, bridge=tools.bridge,
                                framework_tool=functools.partial(_tool, tools=tools))
        self.context = (context or _world)(made)

    async def arun(self, message: str, deltas: list[str] | None, human: HumanAnswers) -> str:
        sdk = load("agents")
        try:
            with _default_client(self.bridge.async_client):
                return await self._arun(message, deltas)
        except (sdk.InputGuardrailTripwireTriggered,
                sdk.OutputGuardrailTripwireTriggered) as exc:
            raise _tripped(sdk, exc, self.agent) from None

    async def _arun(self, message: str, deltas: list[str] | None) -> str:
        sdk = load("agents")
        run_input = [*self.items, {"role": "user", "content": message}]
        options = {"hooks": _hooks_type()(self.bridge), "context": self.context,
                   "run_config": sdk.RunConfig(model=self.model, tracing_disabled=True)}
        if deltas is None:
            result = await sdk.Runner.run(self.agent, run_input, **options)
        else:
            result = sdk.Runner.run_streamed(self.agent, run_input, **options)
            streamed: list[str] = []
            async for event in result.stream_events():
                if event.type != "raw_response_event":
                    continue
                kind = getattr(event.data, "type", None)
                if kind == "response.created":
                    streamed = []
                elif kind == "response.output_text.delta":
                    streamed.append(event.data.delta)
            deltas.extend(streamed)
        self.items = list(result.to_input_list())
        self.agent = result.last_agent
        return str(result.final_output)

    def set_history(self, messages: Sequence[ChatMessage]) -> None:
        self.items = [{"role": m.role.value, "content": m.content or ""} for m in messages]


INTEGRATION = Integration(FRAMEWORK, _model, _tool, _tools, _Run,
                          "an OpenAI Agents SDK Agent (the run's starting agent)")
_MODELS: dict[str, Callable[[BridgeContext], Any]] = {
    "responses": _model, "chat_completions": _chat_model}


def openai_agents_agent(factory: Callable[[FrameworkContext], Any] | None = None, *,
                        trajectory: TrajectoryRenderer | str | None = "tool_calls",
                        api: API = "responses", context: RunContextFactory | None = None) -> Any:
    """The agent type of the Agents SDK agent ``factory(context)`` returns (module docstring),
    its model speaking ``api`` to the bridge (the SDK's default, the Responses API; or
    ``"chat_completions"``); each run's context (``RunContextWrapper.context``) is
    ``context(factory_context)``, by default the scenario's world. Works as a decorator, with
    or without arguments."""
    if api not in _MODELS:
        raise ValueError(f"api must be one of {', '.join(_MODELS)}, not {api!r}")
    if factory is None:
        return functools.partial(openai_agents_agent, trajectory=trajectory, api=api,
                                 context=context)
    model = _MODELS[api]
    integration = (INTEGRATION if model is _model and context is None else dataclasses.replace(
        INTEGRATION, model=model, run=functools.partial(_Run, model=model, context=context)))
    return integration_type(integration, factory, trajectory=trajectory)


def _agent(context: FrameworkContext) -> Any:
    params: dict[str, Any] = {"name": "Agent", **context.params}
    direct = [tool.metadata.name for tool in context.bridge.tools if tool.metadata.return_direct]
    if direct:  # the SDK's return_direct is the agent's, not the tool's
        params.setdefault("tool_use_behavior", {"stop_at_tool_names": direct})
    return load("agents").Agent(model=context.model, tools=context.tools, **params)


OPENAI_AGENTS: AgentType = openai_agents_agent(_agent)
"""``openai_agents``: an Agents SDK ``Agent`` over the scenario's tools."""
