"""What every framework integration shares: the extra and its tested range, the agent type that
runs a framework's agent through the bridge, the scenario's tools run by agentkit, and the
framework's agents and hand-offs in the trace.

A framework module supplies an :class:`Integration` -- how to make the framework's model over
a :class:`~agentkit.bridge.BridgeContext`, how to wrap a scenario tool as the framework's tool,
and how to run the framework's agent for one turn (a :class:`FrameworkRun`) -- and
:func:`integration_type` turns a user's factory into an
:class:`~agentkit.scenario.agent_types.AgentType`:

* the factory gets a :class:`FrameworkContext` (``model``/``llm``, ``tools``, ``params``...)
  and returns the framework's agent (the user's own, or one built over ``context.tools``);
  anything else is a :class:`FactoryResultError` naming the factory and what it returned;
* an extra that is not installed is a :class:`MissingFrameworkError` (bad input, exit 2) saying
  which ``pip install`` brings it; a version outside the tested range is one
  :class:`FrameworkVersionWarning` naming the range;
* each turn runs the framework's coroutine on agentkit's virtual-time loop inside a turn of the
  bridge's wire trace (:class:`FrameworkAgent`); the tools' simulated latencies overlap as the
  framework runs them;
* the scenario's tools apply to the agent's own tools by name (:attr:`Integration.tools` finds
  them; a scenario tool the agent does not have is a :class:`MissingToolError`), and every tool
  call -- of the agent's own tools or of the scenario tools a factory built an agent from --
  runs through :func:`agentkit.llms.tool_calling.acall_tool` in the step that asked for it
  (:class:`ScenarioTools`), so its latency, errors and scheduled failures are in the trace even
  when the model never sees the output;
* :func:`note_step` files which framework agent took a step (``agent`` on the step, ``agents``
  on the turn) and :func:`note_handoff` a hand-off (the turn's ``handoffs``), the same fields
  agentkit's own multi-agent workflow writes; :func:`note_node` a node of the framework's
  graph that ran (the turn's ``nodes``: name, state keys written, the edge taken);
  :func:`note_guardrail` a guardrail's check (the turn's ``guardrails``: name, input or
  output, the agent, whether it tripped, its output info when small) and
  :func:`note_event` an event the framework's workflow streamed (the turn's ``events``);
* a framework whose agents ask a human for input mid-run (LangGraph's ``interrupt()``,
  LlamaIndex's ``InputRequiredEvent``; :attr:`Integration.human`) gets the turn's scripted
  ``human:`` answers in order (:class:`HumanAnswers`), each filed into the turn's ``human``
  as the workflow family files them; a request with no answer left, or an answer never asked
  for, is a :class:`HumanAnswerError`.
"""

from __future__ import annotations

import functools
import importlib
import importlib.metadata
import json
import re
import warnings
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from agentkit.agent.workflow import AgentHandoffEvent
from agentkit.bridge.agent import BridgeContext, BridgedAgent
from agentkit.bridge.endpoint import Bridge
from agentkit.core.errors import AgentFailedError, HarnessError
from agentkit.core.events import Event as BusEvent
from agentkit.core.events import dispatcher
from agentkit.core.sim import run_sync
from agentkit.harness import (
    AgentContext,
    AgentType,
    AgentTypeError,
    CallPaused,
    HumanInputEvent,
    SimulatedTool,
    file_human,
)
from agentkit.llms.agent_response import AgentChatResponse, StreamingAgentChatResponse
from agentkit.llms.tool_calling import acall_tool
from agentkit.llms.types import ChatMessage, ToolOutput
from agentkit.scenario._trajectory import TrajectoryRenderer
from agentkit.tools import AsyncBaseTool, BaseTool, ToolMetadata
from agentkit.trace import TraceHandler, TurnBuilder, state_data

if TYPE_CHECKING:
    from agentkit.scenario._model import Scenario

__all__ = ["Requirement", "Framework", "MissingFrameworkError", "FactoryResultError",
           "FrameworkToolError", "MissingToolError", "HumanAnswerError", "HumanAnswers",
           "FrameworkStreamEvent", "note_event",
           "FrameworkVersionWarning", "FrameworkContext", "FrameworkRun", "FrameworkAgent",
           "ScenarioTools", "Integration", "integration_type", "FrameworkStepEvent",
           "FrameworkNodeEvent", "FrameworkGuardrailEvent", "note_step", "note_node",
           "note_handoff", "note_guardrail", "TRACE_HANDLERS"]


# ---------------------------------------------------------------------------- extras
class MissingFrameworkError(AgentTypeError):
    """An agent type's framework is not installed; the message says which extra brings it."""


class FactoryResultError(AgentTypeError):
    """A framework agent type's factory returned something that is not the framework's agent."""


class MissingToolError(AgentFailedError):
    """A scenario tool the framework's agent does not have (by name): the agent lost a tool
    the scenario gives it latency, failures or calls for. The run fails naming the tool and
    the agent's tools."""


class FrameworkToolError(AgentTypeError):
    """A scenario tool the framework cannot make its own tool of (``context.tools``, which a
    factory builds an agent from): the message names the tool's entry of the scenario's
    ``tools:`` and what the framework said."""


class HumanAnswerError(AgentFailedError):
    """The agent's requests for human input and the turn's scripted ``human:`` answers do not
    match: it asked with no answer left, or an answer was never asked for."""


class FrameworkVersionWarning(UserWarning):
    """An installed framework's version is outside the range agentkit was tested with."""


@dataclass(frozen=True)
class Requirement:
    """A distribution an integration needs: the module it is imported as and the versions it
    was tested with (``minimum`` <= version < ``below``)."""

    distribution: str
    module: str
    minimum: str
    below: str

    @property
    def tested(self) -> str:
        """The tested range as pip writes it: ``>=0.14.5,<0.15``."""
        return f">={self.minimum},<{self.below}"


def _version(text: str) -> tuple[int, ...]:
    """The release numbers of a version (``"0.14.25"`` -> (0, 14, 25); ``"1.0rc1"`` -> (1, 0))."""
    numbers = []
    for part in text.split("."):
        digits = re.match(r"\d+", part)
        if digits is None:
            break
        numbers.append(int(digits.group()))
        if digits.end() < len(part):
            break
    return tuple(numbers)


_warned: set[str] = set()


@dataclass(frozen=True)
class Framework:
    """A framework as an optional extra of agentkit: its name, the extra, what it needs."""

    name: str
    extra: str
    requirements: tuple[Requirement, ...]

    def require(self, agent_type: str) -> None:
        """Import the framework for ``agent_type``: a :class:`MissingFrameworkError` if a
        requirement is not installed, one :class:`FrameworkVersionWarning` per distribution
        whose version is outside its tested range."""
        for requirement in self.requirements:
            try:
                importlib.import_module(requirement.module)
            except ImportError:
                raise MissingFrameworkError(
                    f"agent type '{agent_type}' needs {requirement.distribution}: pip install "
                    f"'agentkit[{self.extra}]'") from None
            self._check_version(requirement)

    def _check_version(self, requirement: Requirement) -> None:
        try:
            installed = importlib.metadata.version(requirement.distribution)
        except importlib.metadata.PackageNotFoundError:  # imported from elsewhere: no version
            return
        if requirement.distribution in _warned:
            return
        if _version(requirement.minimum) <= _version(installed) < _version(requirement.below):
            return
        _warned.add(requirement.distribution)
        warnings.warn(FrameworkVersionWarning(
            f"{requirement.distribution} {installed} is outside the range agentkit's "
            f"{self.name} integration was tested with ({requirement.distribution}"
            f"{requirement.tested}); it may work -- `pip install 'agentkit[{self.extra}]'` "
            "installs a tested version"), stacklevel=2)


def load(module: str) -> Any:
    """A framework module, imported when an integration first needs it (never at import time
    of agentkit, so its types do not leak below :mod:`agentkit.integrations`)."""
    return importlib.import_module(module)


# ---------------------------------------------------------------------------- the trace
@dataclass(kw_only=True, slots=True)
class FrameworkStepEvent(BusEvent):
    """The framework's agent ``agent`` made the model call of the step this is emitted in."""

    agent: str


def _file_step(turn: TurnBuilder, event: FrameworkStepEvent) -> None:
    step = turn.owner(event.span_id)
    if step is turn.orphans:
        return
    step.details["agent"] = event.agent
    agents: list[str] = turn.details.setdefault("agents", [])
    if not agents or agents[-1] != event.agent:
        agents.append(event.agent)


@dataclass(kw_only=True, slots=True)
class FrameworkNodeEvent(BusEvent):
    """A node of the framework's graph ran (a LangGraph node): its name, the keys of the
    graph's state it wrote, and where the run went next (the edge taken: the nodes of the
    next superstep, ``__end__`` when the graph finished, none when it raised)."""

    node: str
    changed: list[str]
    to: list[str]


def _file_node(turn: TurnBuilder, event: FrameworkNodeEvent) -> None:
    turn.details.setdefault("nodes", []).append(
        {"node": event.node, "changed": event.changed, "to": event.to})


@dataclass(kw_only=True, slots=True)
class FrameworkGuardrailEvent(BusEvent):
    """A guardrail of the framework's agent ``agent`` checked the run's input or an answer
    (``kind``: ``input`` or ``output``): whether its tripwire ``tripped`` (which stops the
    run) and what it found (``info``, as plain data)."""

    guardrail: str
    kind: str
    agent: str
    tripped: bool
    info: Any = None


GUARDRAIL_INFO = 300
"""The longest guardrail output info (as JSON) a trace keeps; a longer one is left out."""


def _file_guardrail(turn: TurnBuilder, event: FrameworkGuardrailEvent) -> None:
    entry: dict[str, Any] = {"guardrail": event.guardrail, "kind": event.kind,
                             "agent": event.agent, "tripped": event.tripped}
    info = state_data(event.info)
    if info is not None and len(json.dumps(info, sort_keys=True)) <= GUARDRAIL_INFO:
        entry["info"] = info
    turn.details.setdefault("guardrails", []).append(entry)


@dataclass(kw_only=True, slots=True)
class FrameworkStreamEvent(BusEvent):
    """The framework's workflow streamed an event (a LlamaIndex workflow event): its class
    name, the fields of it that matter (``fields``) and the keys of the workflow's state that
    changed since the event before it (``changed``)."""

    event: str
    fields: dict[str, Any]
    changed: list[str]


def _file_event(turn: TurnBuilder, event: FrameworkStreamEvent) -> None:
    entry: dict[str, Any] = {"event": event.event, **event.fields}
    if event.changed:
        entry["state_changed"] = event.changed
    turn.details.setdefault("events", []).append(entry)


TRACE_HANDLERS: Mapping[type[BusEvent], TraceHandler] = {
    FrameworkStepEvent: _file_step, FrameworkNodeEvent: _file_node,
    FrameworkGuardrailEvent: _file_guardrail, FrameworkStreamEvent: _file_event,
    HumanInputEvent: file_human}
"""The trace handlers every integration's agent types declare (hand-offs are the workflow
family's :class:`~agentkit.agent.workflow.AgentHandoffEvent`, filed into ``handoffs``; human
answers its :class:`~agentkit.harness.HumanInputEvent`, filed into ``human``)."""


def note_step(bridge: BridgeContext, agent: str, tool_ids: Sequence[str] = ()) -> None:
    """File that ``agent`` made a model call: the call that asked for ``tool_ids[0]``, or with
    no tool call, the turn's latest one (a framework tells of a step after its model call)."""
    bridge.bridge.wire.name_agent(tool_ids, agent)
    with bridge.step_of(tool_ids[0] if tool_ids else None):
        dispatcher.emit(FrameworkStepEvent(agent=agent))


def note_node(node: str, changed: Sequence[str], to: Sequence[str]) -> None:
    """File that graph node ``node`` ran, wrote the state keys ``changed`` and was followed
    by ``to`` (the turn's ``nodes``)."""
    dispatcher.emit(FrameworkNodeEvent(node=node, changed=list(changed), to=list(to)))


def note_guardrail(guardrail: str, kind: str, agent: str, tripped: bool,
                   info: Any = None) -> None:
    """File that guardrail ``guardrail`` of ``agent`` checked the run's ``kind`` (``input``,
    ``output``) and whether it tripped (the turn's ``guardrails``, ``info`` kept when small)."""
    dispatcher.emit(FrameworkGuardrailEvent(guardrail=guardrail, kind=kind, agent=agent,
                                            tripped=tripped, info=info))


def note_handoff(from_agent: str, to_agent: str, reason: str = "") -> None:
    """File a hand-off of the conversation from ``from_agent`` to ``to_agent``."""
    dispatcher.emit(AgentHandoffEvent(from_agent=from_agent, to_agent=to_agent, reason=reason))


def note_event(event: str, fields: Mapping[str, Any], changed: Sequence[str] = ()) -> None:
    """File that the framework's workflow streamed ``event`` (its class name) with ``fields``,
    the state keys ``changed`` since the event before it (the turn's ``events``)."""
    dispatcher.emit(FrameworkStreamEvent(event=event, fields=dict(fields), changed=list(changed)))


def request_text(request: Any) -> str:
    """What an agent asked a human, as the trace shows it: the text it asked, or its payload
    as JSON (keys sorted)."""
    if isinstance(request, str):
        return request
    return json.dumps(request, sort_keys=True, default=str)


class HumanAnswers:
    """A turn's scripted ``human:`` answers, given in order to the agent's requests for input
    (:meth:`answer`); each one given is filed into the turn's ``human``."""

    def __init__(self, answers: Sequence[str] = ()) -> None:
        self.left = list(answers)

    def answer(self, request: Any, framework: str) -> str:
        """The next answer to ``request`` (the payload the agent asked with; ``framework``
        names the mechanism it asked by, for the error when no answer is left)."""
        asked = request_text(request)
        if not self.left:
            raise HumanAnswerError(
                f"the agent asked a human for input ({framework}: {asked!r}) but the turn has "
                "no scripted `human:` answer left; give the turn one more `human:` answer, or "
                "fix the agent if it should not ask")
        answer = self.left.pop(0)
        dispatcher.emit(HumanInputEvent(request=asked, response=answer))
        return answer

    def finish(self) -> None:
        """After the turn: an answer the agent never asked for is a :class:`HumanAnswerError`."""
        if self.left:
            unasked = ", ".join(repr(answer) for answer in self.left)
            raise HumanAnswerError(
                f"{len(self.left)} scripted `human:` answer(s) of the turn were never asked for "
                f"({unasked}): the agent did not ask a human for input as often as the turn "
                "expects")


# ---------------------------------------------------------------------------- tools
class ScenarioTools:
    """The scenario's tool world of one run of a framework's agent, applied in the step that
    asked for each call: simulated latency on the virtual clock, ``failures:`` schedules,
    call accounting, errors in the trace.

    * :meth:`call` runs a scenario tool itself (the tools of ``context.tools``, which a factory
      rebuilds an agent from): its error is the output the framework gets, never raised;
    * :meth:`run_own` runs the agent's own tool of a scenario tool's name (``own``: those the
      integration wraps in place): the framework's own call, with the scenario tool's latency
      and failure schedule around it, its result or exception the framework's to handle."""

    def __init__(self, bridge: BridgeContext,
                 own: Mapping[str, SimulatedTool] | None = None) -> None:
        self.bridge = bridge
        self.own: Mapping[str, SimulatedTool] = own or {}

    @property
    def tools(self) -> tuple[BaseTool, ...]:
        return self.bridge.tools

    async def call(self, tool: BaseTool, arguments: dict[str, Any],
                   tool_id: str | None = None, *, agent: str | None = None,
                   arguments_error: str | None = None) -> ToolOutput:
        """Run ``tool`` on ``arguments`` as call ``tool_id`` of the model (found among the calls
        the model asked for when the framework does not say); ``arguments_error``: the
        arguments could not be read, so the call fails with that message without running."""
        wire = self.bridge.bridge.wire
        claimed = tool_id is None
        if tool_id is None:
            tool_id = wire.claim(tool.metadata.name, arguments)
        if agent is None:
            agent = wire.agent_of(tool_id)
        with self.bridge.step_of(tool_id):
            try:
                return await acall_tool(tool, arguments, tool_id=tool_id, agent=agent,
                                        arguments_error=arguments_error)
            except CallPaused:
                if claimed and tool_id is not None:
                    wire.unclaim(tool_id)
                raise

    async def run_own(self, name: str, arguments: dict[str, Any], tool_id: str | None,
                      run: Callable[[], Awaitable[Any]], *,
                      failed: Callable[[Any], bool | BaseException] | None = None,
                      paused: Callable[[BaseException], bool] | None = None) -> Any:
        """The agent's own tool ``name`` called on ``arguments`` by the framework (``run()``
        calls it as the framework would have) as call ``tool_id`` of the model, as the
        scenario's tool of that name: its latency first, then its scheduled failure raised
        instead of running, else ``run()``. The call is in the trace (an exception is its
        ``is_error`` output, as is a returned value ``failed`` says is a failure the framework
        caught -- by default LangChain's ``ToolMessage`` with status ``error`` or LlamaIndex's
        ``ToolOutput`` with ``is_error``; when ``failed`` gives the exception the framework
        caught, that is the call's error); what ``run()`` returned is returned and what it
        raised -- or the scheduled failure -- raised, for the framework to handle as it handles
        its tools'. An exception ``paused`` says is the framework pausing the call (a LangGraph
        ``interrupt()``) is raised as it is, the call not in the trace
        (:class:`~agentkit.harness.CallPaused`): the framework runs it again on resuming."""
        returned: list[Any] = []
        ran = _Ran(self.own[name].metadata, run, returned, failed or _failed,
                   paused or (lambda exc: False))
        try:
            output = await self.call(_OwnCall(self.own[name], ran), arguments, tool_id)
        except CallPaused as pause:
            assert pause.__cause__ is not None
            raise pause.__cause__ from None
        if returned:
            return returned[0]
        if isinstance(output.raw_output, BaseException):
            raise output.raw_output
        raise RuntimeError(output.content)  # pragma: no cover (acall_tool keeps the exception)

    async def caught(self, name: str, arguments: dict[str, Any], tool_id: str | None,
                     raised: BaseException) -> None:
        """File call ``tool_id`` of the agent's own tool ``name`` (one the scenario does not
        name, which the wire files from what the model was told; found among the calls the
        model asked for when None) as failing with ``raised``, the exception the tool raised and
        its framework caught -- the model told in its words."""
        await self.call(_Raising(name, raised), arguments, tool_id)


class _Raising(AsyncBaseTool):
    """A call of the agent's own tool that raised ``raised`` (its framework caught it)."""

    def __init__(self, name: str, raised: BaseException) -> None:
        self._metadata = ToolMetadata(description=name, name=name)
        self.raised = raised

    @property
    def metadata(self) -> ToolMetadata:
        return self._metadata

    async def acall(self, *args: Any, **kwargs: Any) -> ToolOutput:
        raise self.raised

    def call(self, *args: Any, **kwargs: Any) -> ToolOutput:
        raise self.raised


class _OwnCall(AsyncBaseTool):
    """One call of the agent's own tool, as the scenario tool of its name runs it (its
    latency, failure schedule and call count: :meth:`SimulatedTool.acall_with`)."""

    def __init__(self, scenario: SimulatedTool, inner: AsyncBaseTool) -> None:
        self.scenario = scenario
        self.inner = inner

    @property
    def metadata(self) -> ToolMetadata:
        return self.scenario.metadata

    async def acall(self, *args: Any, **kwargs: Any) -> ToolOutput:
        return await self.scenario.acall_with(self.inner, *args, **kwargs)

    def call(self, *args: Any, **kwargs: Any) -> ToolOutput:
        return run_sync(self.acall(*args, **kwargs))


class _Ran(AsyncBaseTool):
    """The framework's call of the agent's own tool (the arguments are in it already)."""

    def __init__(self, metadata: ToolMetadata, run: Callable[[], Awaitable[Any]],
                 returned: list[Any], failed: Callable[[Any], bool | BaseException],
                 paused: Callable[[BaseException], bool]) -> None:
        self._metadata = metadata
        self.run = run
        self.returned = returned
        self.failed = failed
        self.paused = paused

    @property
    def metadata(self) -> ToolMetadata:
        return self._metadata

    async def acall(self, *args: Any, **kwargs: Any) -> ToolOutput:
        try:
            value = await self.run()
        except Exception as exc:
            if self.paused(exc):
                raise CallPaused() from exc
            raise
        self.returned.append(value)
        failure = self.failed(value)
        if isinstance(failure, BaseException):
            raise failure  # the framework caught it: the call's error, its output the framework's
        return ToolOutput(content=_text(value), tool_name=self._metadata.name,
                          raw_input={"args": (), "kwargs": kwargs}, raw_output=_raw(value),
                          is_error=failure)

    def call(self, *args: Any, **kwargs: Any) -> ToolOutput:
        return run_sync(self.acall(*args, **kwargs))


def _text(value: Any) -> str:
    """What a framework's tool returned, as the trace's output: its ``content`` (LangChain's
    ``ToolMessage``, LlamaIndex's ``ToolOutput``) or the value, JSON unless text."""
    content = getattr(value, "content", value)
    if isinstance(content, str):
        return content
    try:
        return json.dumps(content, default=str)
    except ValueError:
        return str(content)


def _raw(value: Any) -> Any:
    """What a framework's tool returned, as the value it stands for (a trajectory's ``$N``):
    LlamaIndex's ``ToolOutput``'s ``raw_output``, the JSON value of a LangChain
    ``ToolMessage``'s text (the text when it is none), else the value."""
    if hasattr(value, "raw_output"):
        return value.raw_output
    content = getattr(value, "content", None)
    if not isinstance(content, str):
        return value
    try:
        return json.loads(content)
    except ValueError:
        return content


def _failed(value: Any) -> bool:
    """Whether a framework's tool reported a failure in what it returned (LangChain's
    ``ToolMessage`` with status ``error``, LlamaIndex's ``ToolOutput`` with ``is_error``)."""
    return getattr(value, "status", None) == "error" or getattr(value, "is_error", False) is True


# ---------------------------------------------------------------------------- the agent
@dataclass(frozen=True, kw_only=True)
class FrameworkContext:
    """What a framework agent type's factory gets: the framework's ``model`` (also ``llm``)
    routed through the bridge, the scenario's tools as the framework's own tool objects
    (``tools``; ``tools_by_name``), the scenario's ``params`` and the :class:`BridgeContext`
    (``bridge``: clients, base URL, the scenario). ``framework_tool`` makes a scenario tool
    the framework's tool; ``tools`` are made on first use, so a factory returning its own
    agent never has the scenario's tools described to its framework."""

    model: Any
    framework_tool: Callable[[BaseTool], Any] = field(repr=False)
    bridge: BridgeContext = field(repr=False)

    @functools.cached_property
    def tools(self) -> list[Any]:
        """The scenario's tools as the framework's tool objects (their ``ref:``s run by
        agentkit); one the framework cannot make is a :class:`FrameworkToolError` at its
        entry of the scenario's ``tools:``."""
        return [self._made(tool) for tool in self.bridge.tools]

    @property
    def tools_made(self) -> bool:
        """Whether :attr:`tools` were made (the factory asked for them)."""
        return "tools" in self.__dict__

    def _made(self, tool: BaseTool) -> Any:
        try:
            return self.framework_tool(tool)
        except HarnessError:
            raise
        except Exception as exc:  # the framework's own checks: any exception
            entry = getattr(tool, "entry", None)
            scenario = self.scenario
            where = ("the scenario" if scenario is None else scenario.where() if entry is None
                     else f"{scenario.where('tools', entry)}: tools.{entry}")
            said = " ".join(f"{type(exc).__name__}: {exc}".split())
            raise FrameworkToolError(
                f"{where}: agent type `{self.bridge.agent.agent_type}`: the scenario's tool "
                f"`{tool.metadata.name}` cannot be made a tool of the factory's framework "
                f"(`context.tools`), which said {said}") from exc

    @property
    def llm(self) -> Any:
        """The model, by the name LlamaIndex gives it."""
        return self.model

    @property
    def params(self) -> Mapping[str, Any]:
        """The scenario's ``agents.<type>.params``."""
        return self.bridge.params

    @property
    def tools_by_name(self) -> dict[str, Any]:
        """The framework tools by the scenario tool's name."""
        return {tool.metadata.name: made for tool, made in zip(self.bridge.tools, self.tools,
                                                                strict=True)}

    @property
    def state(self) -> Mapping[str, Any]:
        return self.bridge.state

    @property
    def world(self) -> Any:
        """The scenario's world of this run (``world:``; None without one): the object its
        state checks read."""
        return self.bridge.world

    @property
    def scenario(self) -> Scenario | None:
        return self.bridge.scenario


class FrameworkRun(Protocol):
    """A framework's agent run turn by turn (what an :class:`Integration` makes of it)."""

    async def arun(self, message: str, deltas: list[str] | None, human: HumanAnswers) -> str:
        """Run one turn on user ``message`` and return the answer; with ``deltas`` (a streamed
        turn) stream it from the framework, appending the answer's text deltas; ``human``
        answers the agent's requests for input (a framework that has none ignores it)."""
        ...

    def set_history(self, messages: Sequence[ChatMessage]) -> None:
        """Put a scenario's ``history:`` into the framework's memory before the first turn."""
        ...


class _History:
    """The ``memory`` the harness sets a scenario's ``history:`` on."""

    def __init__(self, run: FrameworkRun) -> None:
        self._run = run

    def set(self, messages: list[ChatMessage]) -> None:
        self._run.set_history(messages)


class FrameworkAgent(BridgedAgent):
    """A framework's agent as the harness chats with it: each turn runs the framework on the
    virtual-time loop inside a turn of the bridge's wire trace; the answer is the framework's,
    memory the wire's (the last request and its reply)."""

    def __init__(self, run: FrameworkRun, bridge: Bridge) -> None:
        super().__init__(_NoChat(), bridge)
        self.run = run

    def chat(self, message: str, *, human: Sequence[str] = (),
             **options: Any) -> AgentChatResponse:
        """Run one turn, ``human`` answering the agent's requests for input in order (other
        ``options`` -- images -- are not the framework's)."""
        answer = self._turn(message, None, HumanAnswers(human))
        return AgentChatResponse(response=answer)

    def stream_chat(self, message: str, *, human: Sequence[str] = (),
                    **options: Any) -> StreamingAgentChatResponse:
        """Run one turn streamed from the framework: the answer's deltas as it streamed them."""
        deltas: list[str] = []
        answer = self._turn(message, deltas, HumanAnswers(human))
        return StreamingAgentChatResponse.from_answer(AgentChatResponse(response=answer),
                                                      deltas)

    def _turn(self, message: str, deltas: list[str] | None, human: HumanAnswers) -> str:
        """The turn's answer. A turn that failed before any model call reached agentkit asked
        another model: an :class:`AgentFailedError` saying so, with what that model raised."""
        async def turn() -> str:
            answer = await self.run.arun(message, deltas, human)
            human.finish()
            return answer

        try:
            _, answer = self.run_turn(message, lambda: run_sync(turn()))
        except HarnessError:
            raise
        except Exception as exc:
            turns = self.bridge.wire.turns
            if not turns or turns[-1].exchanges:
                raise
            raise AgentFailedError(
                f"no model call reached agentkit in {turns[-1].where}: the agent called a "
                "model of its own (a graph or agent built on its production model: give it "
                "the factory's `context.model`), which raised "
                f"{type(exc).__name__}: {' '.join(str(exc).split())}") from exc
        return answer

    @property
    def memory(self) -> Any:
        return _History(self.run)


class _NoChat:
    """The wire agent slot of a :class:`FrameworkAgent` (it runs the framework itself)."""

    def chat(self, message: str) -> Any:
        raise NotImplementedError("a framework agent runs through FrameworkAgent.chat")


# ---------------------------------------------------------------------------- the agent type
@dataclass(frozen=True)
class Integration:
    """One framework's side of its agent types (see the module docstring): ``model`` makes its
    model over the bridge, ``tool`` wraps a scenario tool as its tool, ``tools`` lists the
    tools of an agent of the framework by name (those of every agent of a team; None when
    the factory returned no agent of the framework, which ``expects`` describes), ``run``
    makes a :class:`FrameworkRun` of its agent -- which wraps the agent's own tools named in
    :attr:`ScenarioTools.own` in place, through the framework's tool mechanism, so that each
    call goes through :meth:`ScenarioTools.run_own`; ``human``: its agents ask a human for
    input mid-run, answered by the turns' ``human:`` answers."""

    framework: Framework
    model: Callable[[BridgeContext], Any]
    tool: Callable[[BaseTool, ScenarioTools], Any]
    tools: Callable[[Any], Mapping[str, Any] | None]
    run: Callable[[Any, ScenarioTools], FrameworkRun]
    expects: str
    human: bool = False


FrameworkFactory = Callable[[FrameworkContext], Any]


class _IntegrationFactory:
    """The agent type's factory: the framework imported, a bridge over the run's model, the
    user's factory given the framework's model and tools, its agent run by the framework with
    the scenario's tool world applied to its own tools."""

    def __init__(self, integration: Integration, factory: FrameworkFactory) -> None:
        self.integration = integration
        self.factory = factory
        # errors about the factory (a raising one, a bad signature) name the user's
        functools.update_wrapper(self, factory)

    def __call__(self, context: AgentContext) -> FrameworkAgent:
        integration = self.integration
        integration.framework.require(context.agent_type)
        scenario = context.scenario.name if context.scenario is not None else None
        bridge = Bridge(context.llm, scenario=scenario)
        bridge_context = BridgeContext.of(bridge, context)
        tools = ScenarioTools(bridge_context)
        made = FrameworkContext(model=integration.model(bridge_context),
                                framework_tool=lambda tool: integration.tool(tool, tools),
                                bridge=bridge_context)
        agent = self.factory(made)
        own = integration.tools(agent)
        if own is None:
            raise FactoryResultError(
                f"agent type `{context.agent_type}`: factory {self._name()} returned "
                f"{type(agent).__name__} ({_short_repr(agent)}), not {integration.expects}")
        tools.own = self._own(context, own, made)
        return FrameworkAgent(integration.run(agent, tools), bridge)

    def _own(self, context: AgentContext, own: Mapping[str, Any],
             made: FrameworkContext) -> dict[str, SimulatedTool]:
        """The scenario tools the agent has its own tool of (by name; not one rebuilt from
        ``context.tools``); a scenario tool it does not have is a :class:`MissingToolError`."""
        missing = [tool for tool in context.tools if tool.metadata.name not in own]
        if missing:
            entry = getattr(missing[0], "entry", None)
            where = ("the scenario" if context.scenario is None
                     else context.scenario.where("tools") if entry is None
                     else context.scenario.where("tools", entry))
            names = ", ".join(f"`{tool.metadata.name}`" for tool in missing)
            has = ", ".join(f"`{name}`" for name in own) or "none"
            raise MissingToolError(
                f"{where}: agent type `{context.agent_type}`: the agent ({self._name()}) has "
                f"no tool {names}, which the scenario's tools give it (the agent's tools: "
                f"{has}); the scenario's tools apply to the agent's own by name -- give the "
                "agent the tool, or take it out of the scenario's `tools:`")
        rebuilt = {id(tool) for tool in made.tools} if made.tools_made else set()
        return {tool.metadata.name: tool for tool in context.tools
                if isinstance(tool, SimulatedTool) and id(own[tool.metadata.name]) not in rebuilt}

    def _name(self) -> str:
        return (f"{getattr(self.factory, '__module__', '?')}:"
                f"{getattr(self.factory, '__qualname__', self.factory)}")


def _short_repr(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def integration_type(integration: Integration, factory: FrameworkFactory, *,
                     trajectory: TrajectoryRenderer | str | None = "tool_calls") -> AgentType:
    """The agent type of a framework's agent built by ``factory(context: FrameworkContext)``;
    its trajectory scenarios render in ``trajectory``'s wire format (the tool calls the
    framework's model makes, unless it speaks another)."""
    return AgentType(_IntegrationFactory(integration, factory), human=integration.human,
                     trajectory=trajectory, trace_handlers=TRACE_HANDLERS)

