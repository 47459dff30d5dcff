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

**Recording** (``mode`` other than ``none``, with a ``live`` model): the bridge answers through
the live model and records each exchange into the agent type's ``recording:`` cassette as it
is made (:class:`~agentkit.recording.RecordingLLM`, saved atomically after every exchange,
whichever API carried it), so the cassette is valid and holds everything recorded so far even
if the session is killed. Afterwards ``agentkit serve`` without ``--mode`` replays it offline
to the same agent. A live-model failure that is not the model's answer (the connection
dropped, mid-stream or before; the key refused) is not recorded and fails the run, naming it
and what the cassette keeps.
"""

from __future__ import annotations

import contextlib
import dataclasses
import threading
from collections.abc import Callable
from typing import Any

from agentkit.bridge.endpoint import Bridge
from agentkit.bridge.server import LoopbackServer
from agentkit.core.errors import AgentFailedError
from agentkit.core.secrets import Redactor
from agentkit.core.sim import real_time
from agentkit.harness import (
    AGENT_TYPES,
    AgentContext,
    AgentType,
    AgentTypeError,
    Case,
    CaseResult,
    RoleModels,
    ScenarioResult,
    mcp_servers,
    resolve_agent_type,
    run_case,
    with_limits,
)
from agentkit.llms.agent_response import AgentChatResponse, StreamingAgentChatResponse
from agentkit.llms.base import LLM
from agentkit.llms.types import ChatMessage
from agentkit.recording import RecordingLLM, RecordMode
from agentkit.scenario import Scenario, ScenarioError, cassette_path
from agentkit.verdict import Verdict, case_stats

__all__ = ["ServeSession", "FINISH_WAIT"]

FINISH_WAIT = 30.0
"""Seconds the run may take to finish after the session is stopped (it only builds the trace
of the last turn and judges it)."""


class ServeSession:
    """``scenario``'s model for ``agent_type`` served on ``127.0.0.1:port`` (module docstring);
    with ``mode`` other than ``none``, ``live`` answers and is recorded into the agent type's
    cassette. The port is bound when the session is made: a port in use is a
    :class:`~agentkit.bridge.server.PortInUseError` before anything runs."""

    def __init__(self, scenario: Scenario, agent_type: str, *, port: int = 0,
                 seed: int | str = 0, live: LLM | None = None,
                 mode: RecordMode = "none") -> None:
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
        self.live = live
        self.recorder = self._recorder(live, mode)
        self.server = LoopbackServer(port)
        self.bridge: Bridge | None = None
        self._ready = threading.Event()
        self._done = threading.Event()
        self._outcome: CaseResult | None = None

    def _recorder(self, live: LLM | None, mode: RecordMode) -> RecordingLLM | None:
        """The recording model of a session that records (None: it replays or scripts)."""
        if mode == "none":
            return None
        if live is None:
            raise ValueError(f"record mode {mode!r} needs a live model to record through")
        scenario, agent_type = self.scenario, self.agent_type
        if scenario.agents[agent_type].recording is None:
            raise ScenarioError(f"{scenario.where('agents', agent_type)}: agents.{agent_type} "
                                "has a `script`, not a `recording`; set `recording: cassettes/"
                                f"{scenario.name}.{agent_type}.yaml` (instead of `script`) to "
                                "record it")
        return RecordingLLM(with_limits(scenario, agent_type, live),
                            cassette_path(scenario, agent_type), mode, agent_type=agent_type,
                            scenario=scenario.name)

    @property
    def base_url(self) -> str:
        return self.server.base_url

    def recording_note(self) -> str | None:
        """What the session recorded, for its last line (None: it did not record)."""
        recorder = self.recorder
        if recorder is None:
            return None
        path = recorder.cassette.path
        if not recorder.recorded:
            return (f"{path}: nothing recorded: no request reached the live model (mode once "
                    "replays a cassette that exists; --mode rewrite records it again)")
        count = f"{recorder.recorded} exchange{'s' if recorder.recorded != 1 else ''}"
        return (f"recorded {count} into {path}; `agentkit serve` without --mode replays it "
                "offline")

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
        return self._unrecorded(self._outcome)

    def _unrecorded(self, outcome: CaseResult) -> CaseResult:
        """``outcome``, failed when the live model failed in a way a recording cannot keep:
        the recording is incomplete, whatever the agent made of it."""
        recorder = self.recorder
        if recorder is None or not recorder.unrecorded or outcome.result is None:
            return outcome
        error = recorder.unrecorded[0]
        count = f"{recorder.recorded} exchange{'s' if recorder.recorded != 1 else ''}"
        cause = (f"the live model failed while recording, so the recording is incomplete: "
                 f"{type(error).__name__}: {error} (not recorded: it is not the model's "
                 f"answer); {recorder.cassette.path} keeps the {count} recorded before it; "
                 "record again once the model answers")
        outcome.verdict = dataclasses.replace(outcome.verdict, outcome="fail", problems=(),
                                              stopped_by=cause, kind="infrastructure")
        outcome.runs[0] = dataclasses.replace(outcome.runs[0], verdict=outcome.verdict)
        return outcome

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
        roles = RoleModels(judge=self.live, user=self.live) if self.recorder else None
        try:
            # recording: a retry's back-off against the live server really waits
            with real_time() if self.recorder else contextlib.nullcontext():
                self._outcome = run_case(Case(self.scenario, self.agent_type, seed=self.seed,
                                              samples=False, llm=self.recorder, roles=roles))
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
