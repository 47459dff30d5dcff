"""A scenario served on a loopback URL: the session behind ``agentkit serve``.

An agent in another process -- any language, any framework, or ``curl`` -- is pointed at the
URL and driven by whoever runs it; the bridge answers its model calls with the scenario's model
for the given agent type (its script, the script rendered from its ``trajectory:``, or its
cassette) and builds the agent's trace from the wire (:mod:`agentkit.bridge.wire_trace`). When
the session is stopped, the run is judged as any run is (:func:`agentkit.harness.run_case`:
expectations, trajectory, unused script; no snapshot).

The run is the harness's own (a case of :func:`~agentkit.harness.run_case`, in a thread of
its own), under an agent type that stands in for the external agent: for the session, the
agent type's name means a remote agent that renders trajectories as the type does. Each
scenario turn waits for the agent: it begins with the agent's first request and ends when a
request begins the next turn (its last user message is another) or the session stops. A turn
the agent never began, or began without a model call, is the run's error.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from agentkit.bridge.endpoint import Bridge
from agentkit.bridge.server import LoopbackServer
from agentkit.core.errors import AgentFailedError
from agentkit.core.secrets import Redactor
from agentkit.harness import (
    AGENT_TYPES,
    AgentContext,
    AgentType,
    AgentTypeError,
    Case,
    CaseResult,
    ScenarioResult,
    mcp_servers,
    resolve_agent_type,
    run_case,
)
from agentkit.llms.agent_response import AgentChatResponse, StreamingAgentChatResponse
from agentkit.llms.types import ChatMessage
from agentkit.scenario._loader import ScenarioError
from agentkit.scenario._model import Scenario
from agentkit.verdict import Verdict, case_stats

__all__ = ["ServeSession", "FINISH_WAIT"]

FINISH_WAIT = 30.0
"""Seconds the run may take to finish after the session is stopped (it only builds the trace
of the last turn and judges it)."""


class ServeSession:
    """``scenario``'s model for ``agent_type`` served on ``127.0.0.1:port`` (module docstring).
    The port is bound when the session is made: a port in use is a
    :class:`~agentkit.bridge.server.PortInUseError` before anything runs."""

    def __init__(self, scenario: Scenario, agent_type: str, *, port: int = 0,
                 seed: int | str = 0) -> None:
        if agent_type not in scenario.agents:
            raise ScenarioError(f"{scenario.where()}: scenario `{scenario.name}` has no agent "
                                f"type `{agent_type}` (it has {', '.join(scenario.agents)})")
        if scenario.agents[agent_type].team:
            raise ScenarioError(f"{scenario.where('agents', agent_type, 'team')}: agents."
                                f"{agent_type}.team: a team has a model per agent; `agentkit "
                                "serve` serves one model (give an agent type with a script, a "
                                "trajectory or a recording)")
        try:
            self.kind = resolve_agent_type(agent_type)
        except AgentTypeError as exc:
            raise ScenarioError(f"{scenario.where('agents', agent_type)}: agents.{agent_type}: "
                                f"{exc}") from None
        self.scenario = scenario
        self.agent_type = agent_type
        self.seed = seed
        self.server = LoopbackServer(port)
        self.bridge: Bridge | None = None
        self._ready = threading.Event()
        self._done = threading.Event()
        self._outcome: CaseResult | None = None

    @property
    def base_url(self) -> str:
        return self.server.base_url

    def run(self, stop: threading.Event, on_ready: Callable[[str], None]) -> CaseResult:
        """Serve until ``stop`` is set (``on_ready(base_url)`` once the first turn waits for
        the agent), then judge the run; a run that cannot start ends the session at once."""
        stand_in = AgentType(self._factory, images=self.kind.images, human=self.kind.human,
                             trajectory=AGENT_TYPES.renderer(self.agent_type))
        with AGENT_TYPES.scoped():
            AGENT_TYPES[self.agent_type] = stand_in
            self.server.start()
            worker = threading.Thread(target=self._work, name="agentkit-serve-run", daemon=True)
            worker.start()
            while not (self._ready.is_set() or self._done.is_set()):
                self._ready.wait(0.05)
            if self._ready.is_set():
                on_ready(self.base_url)
            while not (stop.is_set() or self._done.is_set()):
                stop.wait(0.1)
            if self.bridge is not None:
                self.bridge.stop()
            self._done.wait(FINISH_WAIT)
        if self._outcome is None:
            late = Verdict("error", stopped_by=f"the run did not finish within {FINISH_WAIT:g} "
                                               "s of the stop", kind="agent")
            return CaseResult(Case(self.scenario, self.agent_type, seed=self.seed), [],
                              case_stats([]), late)
        return self._outcome

    def trace_text(self, result: ScenarioResult) -> str:
        """The run's trace as ``--trace-out`` writes it, redacted as a recording's is: a secret
        environment value (or an MCP server's credential) that a tool returned or the agent
        sent is written as ``<redacted:NAME>``."""
        secrets: dict[str, str] = {}
        for server in mcp_servers(self.scenario).values():
            secrets.update(server.secrets())
        return result.trace.to_json(Redactor(secrets=secrets))

    def close(self) -> None:
        """Stop serving and free the port."""
        self.server.close()

    def _work(self) -> None:
        try:
            self._outcome = run_case(Case(self.scenario, self.agent_type, seed=self.seed,
                                          samples=False))
        finally:
            self._done.set()

    def _factory(self, context: AgentContext) -> _RemoteAgent:
        bridge = Bridge(context.llm, scenario=self.scenario.name, external=True,
                        base_url=self.base_url)
        bridge.wire.expected_turns = len(self.scenario.turns)
        self.bridge = bridge
        self.server.attach(bridge)
        return _RemoteAgent(bridge, self._ready)


class _RemoteAgent:
    """The agent in another process, as the harness chats with it: a turn waits for it."""

    memory = None

    def __init__(self, bridge: Bridge, ready: threading.Event) -> None:
        self.bridge = bridge
        self.ready = ready

    def chat(self, message: str, **options: Any) -> AgentChatResponse:
        wire = self.bridge.wire
        if wire.stopped:
            raise AgentFailedError(f"the server stopped before the agent began turn "
                                   f"{len(wire.turns) + 1} ({message!r})")
        with wire.turn(message) as turn:
            self.ready.set()
            wire.wait_for_end(turn)
        if turn.failure is not None:
            raise turn.failure
        if not turn.exchanges:
            raise AgentFailedError(f"no model call reached the bridge in {turn.where} before "
                                   "the server stopped")
        return AgentChatResponse(response=turn.answer() or "")

    def stream_chat(self, message: str, **options: Any) -> StreamingAgentChatResponse:
        return StreamingAgentChatResponse.from_answer(self.chat(message, **options))

    @property
    def chat_history(self) -> list[ChatMessage]:
        return self.bridge.wire.memory
