"""An agent type for "my agent, through the bridge": any agent that talks to an OpenAI-compatible
model, tested with scenarios, cassettes, snapshots and reports without agentkit seeing its code.

Declare it with :func:`bridged` -- an :class:`~agentkit.harness._agent_types.AgentType` like
any other, registered the same ways (``register_agent_type``, ``[tool.agentkit.agent_types]``
in pyproject.toml, an entry point)::

    from agentkit.bridge import BridgeContext, bridged

    def build(context: BridgeContext):
        return MyAgent(client=context.client, model=context.model)   # has chat(message)

    MY_AGENT = bridged(build)

The factory gets a :class:`BridgeContext`: the endpoint (``base_url``, ``api_key``), ready
``openai.OpenAI`` / ``AsyncOpenAI`` clients and httpx clients routed to it in-process, and the
scenario's context (``params``, ``tools``, ``state``...). It returns an object with
``chat(message)`` and nothing else: each scenario turn calls it, and the harness takes the
trace from the wire (:mod:`agentkit.bridge.wire_trace`): each model call a step, the tool calls
each reply asked for with their outputs as the next request carries them, the last reply the
answer. The model behind the endpoint is the scenario's: its script (or the one rendered from
its ``trajectory:``, in the tool-calls wire format), its cassette, or the live model while
``agentkit record`` records the cassette.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, cast

import httpx
import openai

from agentkit.bridge.endpoint import API_KEY, Bridge
from agentkit.bridge.transport import BridgeTransport, async_openai_client, openai_client
from agentkit.bridge.wire_trace import WireTurn
from agentkit.harness import AgentContext, AgentType
from agentkit.llms.agent_response import AgentChatResponse, StreamingAgentChatResponse
from agentkit.llms.types import ChatMessage
from agentkit.scenario._trajectory import TrajectoryRenderer
from agentkit.tools import BaseTool

if TYPE_CHECKING:
    from agentkit.scenario._model import Scenario

__all__ = ["BridgeContext", "BridgeFactory", "BridgedAgent", "WireAgent", "bridged"]

T = TypeVar("T")


class WireAgent(Protocol):
    """What a bridged agent's factory returns: anything with ``chat(message)``."""

    def chat(self, message: str) -> Any: ...


@dataclass(frozen=True, kw_only=True)
class BridgeContext:
    """What a bridged agent's factory gets (frozen, like :class:`AgentContext`).

    ``base_url`` and ``api_key`` are the OpenAI-compatible endpoint; ``client`` /
    ``async_client`` are ``openai`` clients already routed to it in-process (one attempt per
    call: retries are your agent's), and ``http_client`` / ``async_http_client`` the httpx
    clients to hand a framework that takes one (each client made when first asked for, then
    the same: an agent uses one or two of them, and every run builds its agent anew).
    ``model`` is the name to ask for (any name is answered). ``agent`` is the scenario's
    :class:`AgentContext`; its ``params``, ``tools``, ``state`` and ``scenario`` are here
    too."""

    agent: AgentContext
    bridge: Bridge = field(repr=False)
    base_url: str
    api_key: str
    model: str

    @classmethod
    def of(cls, bridge: Bridge, agent: AgentContext) -> BridgeContext:
        """The context of an agent whose model calls go to ``bridge``."""
        return cls(agent=agent, bridge=bridge, base_url=bridge.base_url, api_key=API_KEY,
                   model=bridge.model)

    @functools.cached_property
    def client(self) -> openai.OpenAI:
        return openai_client(self.bridge)

    @functools.cached_property
    def async_client(self) -> openai.AsyncOpenAI:
        return async_openai_client(self.bridge)

    @functools.cached_property
    def http_client(self) -> httpx.Client:
        return httpx.Client(transport=BridgeTransport(self.bridge))

    @functools.cached_property
    def async_http_client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(transport=BridgeTransport(self.bridge))

    @property
    def params(self) -> Mapping[str, Any]:
        """The scenario's ``agents.<type>.params``."""
        return self.agent.params

    @property
    def tools(self) -> tuple[BaseTool, ...]:
        """The scenario's tools (with their simulated latency and failures), should the agent
        want to call them rather than its own."""
        return self.agent.tools

    @property
    def state(self) -> Mapping[str, Any]:
        return self.agent.state

    @property
    def world(self) -> Any:
        """The scenario's world of this run (``world:``; None without one)."""
        return self.agent.world

    @property
    def scenario(self) -> Scenario | None:
        return self.agent.scenario

    def step_of(self, tool_call_id: str | None) -> AbstractContextManager[Any]:
        """A block for running a tool call of the agent's own so the trace shows what the wire
        cannot (its latency, its error, a tool the model never saw): run the tool inside
        through :func:`agentkit.llms.tool_calling.call_tool` / ``acall_tool`` with
        ``tool_id=tool_call_id`` (or emit the tool-call events yourself); the call goes into
        the step that asked for it and is not rebuilt from the wire."""
        manager: AbstractContextManager[Any] = self.bridge.wire.step_of(tool_call_id)
        return manager


BridgeFactory = Callable[[BridgeContext], WireAgent]


class BridgedAgent:
    """A bridged agent as the harness chats with it: each ``chat`` is a turn of the bridge's
    wire trace around the agent's own ``chat``; the answer and memory come from the wire.

    A request the harness could not answer fails the turn with that error (a cassette miss, a
    script that ran out: the same message agentkit's own agents get), whatever the agent did
    with the HTTP 400 it got; else an exception of the agent's is the turn's error."""

    traced_from_wire = True
    """Its trace is read from the wire: the tools it runs may be its own, not the scenario's
    (the harness then does not hold the scenario's latency or failures against it)."""

    def __init__(self, agent: WireAgent, bridge: Bridge) -> None:
        self.agent = agent
        self.bridge = bridge

    def chat(self, message: str, **options: Any) -> AgentChatResponse:
        """Run the agent's ``chat(message)`` as one turn (``options`` -- images, human answers
        -- are not the agent's to take and are ignored)."""
        turn, returned = self.run_turn(message, lambda: self.agent.chat(message))
        return AgentChatResponse(response=turn.answer(_text(returned)) or "")

    def run_turn(self, message: str, run: Callable[[], T]) -> tuple[WireTurn, T]:
        """``run()`` as the turn of user ``message`` on the wire, and what it returned. A
        request the harness could not answer fails the turn with that error, whatever ``run``
        made of it; else an exception of ``run`` is the turn's error."""
        returned: T | None = None
        raised: Exception | None = None
        with self.bridge.wire.turn(message) as turn:
            try:
                returned = run()
            except Exception as exc:  # noqa: BLE001 (the turn's error, unless the harness's is)
                raised = exc
        if turn.failure is not None:
            raise turn.failure
        if raised is not None:
            raise raised
        return turn, cast(T, returned)

    def stream_chat(self, message: str, **options: Any) -> StreamingAgentChatResponse:
        """The turn's answer as a stream (the agent itself has ``chat`` only)."""
        return StreamingAgentChatResponse.from_answer(self.chat(message, **options))

    @property
    def chat_history(self) -> list[ChatMessage]:
        """The latest turn's memory: its last request's messages and the reply to them."""
        return self.bridge.wire.memory

    @property
    def memory(self) -> Any:
        """The agent's own ``memory`` (for scenarios with ``history:``), if it has one."""
        return getattr(self.agent, "memory", None)


def _text(returned: Any) -> Any:
    """What a ``chat`` returned, as text when it has one (an ``AgentChatResponse``, a string)."""
    return getattr(returned, "response", returned)


class _BridgedFactory:
    """The agent type's factory: a bridge over the run's model, the user's factory given a
    :class:`BridgeContext` for it, the agent wrapped in a :class:`BridgedAgent`."""

    def __init__(self, factory: BridgeFactory) -> None:
        self.factory = factory
        # errors about the factory (a raising one, a bad signature) name the user's
        functools.update_wrapper(self, factory)

    def __call__(self, context: AgentContext) -> BridgedAgent:
        scenario = context.scenario.name if context.scenario is not None else None
        bridge = Bridge(context.llm, scenario=scenario)
        agent = self.factory(BridgeContext.of(bridge, context))
        if not callable(getattr(agent, "chat", None)):
            raise TypeError(f"{getattr(self.factory, '__qualname__', self.factory)} returned "
                            f"{type(agent).__name__}, which has no chat(message): a bridged "
                            "agent's factory returns an object whose chat(message) runs the "
                            "agent on a user message")
        return BridgedAgent(agent, bridge)


def bridged(factory: BridgeFactory, *,
            trajectory: TrajectoryRenderer | str | None = "tool_calls") -> AgentType:
    """The agent type of an agent tested through the bridge: ``factory(context:
    BridgeContext)`` returns an object with ``chat(message)`` (module docstring). Its
    trajectory scenarios render in the tool-calls wire format (``trajectory``: another wire
    format or renderer for an agent that speaks another, e.g. ``"react"``; None for none).
    Works as a decorator too."""
    return AgentType(_BridgedFactory(factory), trajectory=trajectory)

