"""pydantic-ai agents under the harness (``pip install 'agentkit[pydantic-ai]'``): an ``Agent``
over pydantic-ai's ``OpenAIChatModel`` routed through the bridge.

A factory returns the user's agent (``return support_agent``); each run is given an
``OpenAIChatModel`` on the bridge's async client as its ``model`` and a capability whose
``wrap_tool_execute`` runs the agent's own tools of the scenario's tools' names as the
scenario's. The built-in type builds the agent over the scenario's tools instead
(``context.tools``: pydantic-ai ``Tool`` objects with the scenario tools' own JSON schemas,
running them through agentkit)::

    @pydantic_ai_agent
    def framework_over_the_scenario(context):
        return Agent(context.model, tools=context.tools, **context.params)

Agent type: ``pydantic_ai`` (``params`` go to ``Agent``). Each turn is a run of the agent
(``agent.iter``) with the conversation so far as its ``message_history``; each model response
names its step's agent (the agent's ``name``, else ``Agent``), each tool call runs under the
model's ``tool_call_id``, and a streamed turn streams the model's responses
(``node.stream``). Every turn of a run gets the same ``deps``: the scenario's world when the
agent declares a ``deps_type``, or what ``pydantic_ai_agent(factory, deps=...)`` builds from
the context (around ``context.world``), so what its tools write through ``ctx.deps`` is what
the scenario's end-state checks read.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Sequence
from typing import Any

from agentkit.bridge.agent import BridgeContext
from agentkit.core.errors import AgentFailedError
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
    note_step,
)
from agentkit.llms.types import ChatMessage, MessageRole
from agentkit.scenario._trajectory import TrajectoryRenderer
from agentkit.tools import BaseTool

__all__ = ["FRAMEWORK", "pydantic_ai_agent", "PYDANTIC_AI", "Deps", "DepsError"]

FRAMEWORK = Framework("pydantic-ai", "pydantic-ai", (
    Requirement("pydantic-ai-slim", "pydantic_ai", "2.31.1", "3"),))
"""What ``agentkit[pydantic-ai]`` installs, and the versions it was tested with."""


def _model(bridge: BridgeContext) -> Any:
    models = load("pydantic_ai.models.openai")
    provider = load("pydantic_ai.providers.openai").OpenAIProvider(
        openai_client=bridge.async_client)
    return models.OpenAIChatModel(bridge.model, provider=provider)


def _tool(tool: BaseTool, tools: ScenarioTools) -> Any:
    metadata = tool.metadata

    async def run(ctx: Any, **arguments: Any) -> str:
        return (await tools.call(tool, arguments, ctx.tool_call_id)).content

    return load("pydantic_ai").Tool.from_schema(
        run, name=metadata.name, description=metadata.description,
        json_schema=metadata.get_parameters_dict(), takes_ctx=True)


@functools.cache
def _capability_type() -> type:
    """A pydantic-ai capability running the agent's own tools of the scenario's tools' names
    through :meth:`ScenarioTools.run_own` (``wrap_tool_execute``, per run)."""
    base: Any = load("pydantic_ai.capabilities").AbstractCapability

    class ScenarioToolWorld(base):  # type: ignore[misc]
        def __init__(self, tools: ScenarioTools) -> None:
            self.tools = tools

        async def wrap_tool_execute(self, ctx: Any, *, call: Any, tool_def: Any, args: Any,
                                    handler: Any) -> Any:
            if call.tool_name not in self.tools.own:
                return await handler(args)
            return await self.tools.run_own(call.tool_name, dict(call.args_as_dict()),
                                            call.tool_call_id, lambda: handler(args))

    return ScenarioToolWorld


def _tools(agent: Any) -> dict[str, Any] | None:
    """The agent's function tools by name (those of its function toolsets)."""
    if not isinstance(agent, load("pydantic_ai.agent").AbstractAgent):
        return None
    function_toolset = load("pydantic_ai.toolsets").FunctionToolset
    found: dict[str, Any] = {}

    def visit(toolset: Any) -> None:
        if isinstance(toolset, function_toolset):
            found.update(toolset.tools)

    for toolset in agent.toolsets:
        toolset.apply(visit)
    return found


Deps = Callable[[FrameworkContext], Any]
"""How a run's ``deps`` are built from the factory's context (its ``world``, ``state``,
``params``)."""


class DepsError(AgentFailedError):
    """A pydantic-ai agent declares a ``deps_type`` and the run has no deps of it: the scenario
    has no ``world:`` and the agent type builds none (``deps=``), or they are of another type.
    The case fails naming the agent, its ``deps_type`` and what the run has."""


def _world(context: FrameworkContext) -> Any:
    return context.world


_NO_DEPS = (type(None), object)
"""An agent's ``deps_type`` when it declares none (pydantic-ai's default: ``object`` in 2.x,
``NoneType`` in others)."""


def _deps_of(agent: Any, context: FrameworkContext, deps: Deps | None) -> Any:
    """The deps every turn of the run passes the agent: ``deps(context)``, else the scenario's
    world when the agent declares a ``deps_type`` (its tools' ``ctx.deps``), else none. Deps
    that cannot be the agent's ``deps_type`` are a :class:`DepsError`."""
    wanted = getattr(agent, "deps_type", object)
    takes = wanted not in _NO_DEPS
    if deps is None and not takes:
        return None
    made = (deps or _world)(context)
    where = (context.scenario.where("world") if context.scenario is not None
             else "the scenario")
    where += f": agent type `{context.bridge.agent.agent_type}`"
    name = getattr(wanted, "__qualname__", repr(wanted))
    if made is None and takes:
        raise DepsError(
            f"{where}: the pydantic-ai agent takes deps (deps_type={name}) and the run has "
            "none: give the scenario a `world:` whose factory builds them (the run's deps are "
            "its world), or build them around the world in the agent type: "
            "`@pydantic_ai_agent(deps=lambda context: ...(context.world))`")
    try:
        fits = made is None or not takes or isinstance(made, wanted)
    except TypeError:  # a generic or a protocol: pydantic-ai does not check either
        fits = True
    if not fits:
        source = "the agent type's deps=" if deps is not None else "the scenario's world"
        raise DepsError(
            f"{where}: the run's deps ({source}: {type(made).__name__}) are not a {name}, the "
            "pydantic-ai agent's deps_type; build them in the agent type: "
            f"`@pydantic_ai_agent(deps=lambda context: {name}(...context.world...))`")
    return made


class _Run:
    """A pydantic-ai agent run turn by turn on agentkit's model (the run's ``model``), the
    conversation carried in ``message_history``, its own tools run as the scenario's
    (a per-run capability), every turn given the run's ``deps``."""

    def __init__(self, agent: Any, tools: ScenarioTools, deps: Deps | None = None) -> None:
        self.agent = agent
        self.bridge = tools.bridge
        self.model = _model(tools.bridge)
        self.capabilities = [_capability_type()(tools)] if tools.own else []
        self.history: list[Any] = []
        context = FrameworkContext(model=self.model, bridge=tools.bridge,
                                   framework_tool=functools.partial(_tool, tools=tools))
        self.deps = _deps_of(agent, context, deps)

    async def arun(self, message: str, deltas: list[str] | None, human: HumanAnswers) -> str:
        try:
            return await self._arun(message, deltas)
        except RuntimeError as exc:
            if load("pydantic_ai.models").ALLOW_MODEL_REQUESTS:
                raise
            raise RuntimeError(_REQUESTS_NOT_ALLOWED) from exc

    async def _arun(self, message: str, deltas: list[str] | None) -> str:
        pai = load("pydantic_ai")
        messages = load("pydantic_ai.messages")
        name = self.agent.name or "Agent"
        streamed: list[str] = []
        async with self.agent.iter(message, message_history=self.history, model=self.model,
                                   capabilities=self.capabilities, deps=self.deps) as run:
            async for node in run:
                if deltas is not None and pai.Agent.is_model_request_node(node):
                    streamed = []
                    async with node.stream(run.ctx) as stream:
                        async for event in stream:
                            streamed += _text_delta(messages, event)
                elif pai.Agent.is_call_tools_node(node):
                    note_step(self.bridge, name, [
                        part.tool_call_id for part in node.model_response.parts
                        if isinstance(part, messages.ToolCallPart)])
            result = run.result
        self.history = list(result.all_messages())
        if deltas is not None:
            deltas.extend(streamed)
        return str(result.output)

    def set_history(self, messages: Sequence[ChatMessage]) -> None:
        parts = load("pydantic_ai.messages")
        history: list[Any] = []
        for message in messages:
            text = message.content or ""
            if message.role == MessageRole.ASSISTANT:
                history.append(parts.ModelResponse(parts=[parts.TextPart(content=text)]))
            elif message.role == MessageRole.SYSTEM:
                history.append(parts.ModelRequest(parts=[parts.SystemPromptPart(content=text)]))
            else:
                history.append(parts.ModelRequest(parts=[parts.UserPromptPart(content=text)]))
        self.history = history


_REQUESTS_NOT_ALLOWED = (
    "pydantic-ai refused the model request: pydantic_ai.models.ALLOW_MODEL_REQUESTS is False in "
    "this session, and agentkit's model (an OpenAIChatModel that agentkit answers in process "
    "from the script or cassette) counts as a request too. Leave it True where agentkit runs "
    "pydantic-ai agents -- agentkit's network guard keeps tests off live models -- or run them "
    "inside `with pydantic_ai.models.override_allow_model_requests(True):`")


def _text_delta(messages: Any, event: Any) -> list[str]:
    """The answer text an event of a streamed model response adds."""
    if isinstance(event, messages.PartStartEvent) and isinstance(event.part, messages.TextPart):
        return [event.part.content] if event.part.content else []
    if isinstance(event, messages.PartDeltaEvent) and isinstance(event.delta,
                                                                  messages.TextPartDelta):
        return [event.delta.content_delta] if event.delta.content_delta else []
    return []


INTEGRATION = Integration(FRAMEWORK, _model, _tool, _tools, _Run, "a pydantic-ai Agent")


def pydantic_ai_agent(factory: Callable[[FrameworkContext], Any] | None = None, *,
                      trajectory: TrajectoryRenderer | str | None = "tool_calls",
                      deps: Deps | None = None) -> Any:
    """The agent type of the pydantic-ai agent ``factory(context)`` returns (module
    docstring); each run's ``deps`` are ``deps(context)``, by default the scenario's world.
    Works as a decorator, with or without arguments."""
    if factory is None:
        return functools.partial(pydantic_ai_agent, trajectory=trajectory, deps=deps)
    integration = (INTEGRATION if deps is None else
                   dataclasses.replace(INTEGRATION, run=functools.partial(_Run, deps=deps)))
    return integration_type(integration, factory, trajectory=trajectory)


def _agent(context: FrameworkContext) -> Any:
    return load("pydantic_ai").Agent(context.model, tools=context.tools, **context.params)


PYDANTIC_AI: AgentType = pydantic_ai_agent(_agent)
"""``pydantic_ai``: a pydantic-ai ``Agent`` over the scenario's tools."""
