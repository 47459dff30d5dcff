"""Traces from the wire: an agent seen only through its model calls, as bus events.

The bridge knows an agent only by the chat.completions requests it sends. :class:`WireTrace`
turns them into the events every agentkit agent emits (:mod:`agentkit.core.events`), so the
trace builder (:mod:`agentkit.trace._trace`) builds the agent's trace as it builds any other:

* **a step per model call**: an agent-step start event, the model's LLM-call events inside it
  (the model emits those itself), an agent-step end event with the reply's text as the step's
  output (``is_last`` when the reply asks for no tool); the first step of a turn has the turn's
  user message as its input;
* **the step's tool calls**: the calls the reply asked for, each with its output as a later
  request carries it (the ``tool`` message with its ``tool_call_id``), filed under the step
  that asked -- when that request arrives, so a trajectory's ``$N`` values are known before the
  model is asked again. A call whose output never comes back is filed when the turn ends, with
  an empty output. Times are virtual: a call starts when the reply asked for it and ends when
  the request carrying its output arrived (the time the agent spent between the two, on the
  virtual clock);
* **the answer** is the turn's last reply (what its ``chat()`` returned, when the turn made no
  model call), and **memory** is the last request's messages plus that reply.

What the wire cannot show -- how long each tool ran, whether it failed, tools the model never
hears of -- an integration adds by running its tool calls inside :meth:`WireTrace.step_of`
through agentkit's tool calling (:func:`agentkit.llms.tool_calling.acall_tool`), or by emitting
the tool-call events itself there: a call it reports under the model's ``tool_call_id`` is
taken from its events, not built from the wire. A framework that runs a tool without telling
it the call's id finds the id with :meth:`WireTrace.claim` (the call the model asked for by
that name with those arguments).

A turn (:meth:`WireTrace.turn`) is a block in which the agent talks to the model: the harness
opens one per scenario turn around the agent's ``chat()``. Its context (virtual clock, id
source, event listeners) is what every exchange of the turn runs in, whichever thread or event
loop the agent's HTTP client uses. For an agent in another process (``agentkit serve``,
``external=True``) the turn also ends when a request begins the next one: a request whose last
user message is not the one the turn began with.
"""

from __future__ import annotations

import contextvars
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from typing import Any

from agentkit.core.events import (
    AgentStepEndEvent,
    AgentStepStartEvent,
    Event,
    Span,
    ToolCallEndEvent,
    ToolCallStartEvent,
    dispatcher,
)
from agentkit.core.ids import current_ids
from agentkit.core.sim import now
from agentkit.core.textdiff import short
from agentkit.core.textfiles import loads_json
from agentkit.llms.openai_wire import RequestError, WireRequest
from agentkit.llms.types import ChatMessage, MessageRole, ToolOutput

__all__ = ["WireTrace", "WireTurn", "WireStep", "TURN_WAIT"]

TURN_WAIT = 30.0
"""Seconds a request of an agent in another process waits for the harness to begin its turn,
before it is answered 503 (never a hang)."""


@dataclass(frozen=True)
class WireStep:
    """A model call as a step: what the step events carry (``input``) and its span."""

    span: Span
    step_id: str
    input: str | None
    turn: WireTurn = field(repr=False)


@dataclass(frozen=True)
class _StepInput:
    """The ``step`` of a step-start event, as the trace builder reads it (not the
    :class:`WireStep`, which holds its turn: the events a listener keeps would hold the turn,
    whose context holds the listener -- a cycle only the garbage collector frees)."""

    input: str | None


@dataclass(frozen=True)
class _StepOutput:
    """The ``output`` of a step-end event, as the trace builder reads it."""

    output: str


@dataclass
class _Asked:
    """A tool call a reply asked for, not yet filed."""

    tool_id: str
    name: str
    arguments: dict[str, Any]
    step: Span
    asked_at: float
    claimed: bool = False
    offered: bool = True
    """Whether the request the model answered offered a tool of this name: a call of any
    other is filed as failed, whatever the agent answered it with."""
    agent: str | None = None
    """The agent of a multi-agent framework whose reply asked for it (:meth:`WireTrace.name_agent`)."""


@dataclass
class WireTurn:
    """One turn of the agent's conversation as the wire shows it (module docstring)."""

    number: int
    user: str
    context: contextvars.Context = field(repr=False)
    exchanges: int = 0
    failure: BaseException | None = None
    """The first request the harness could not answer (a cassette miss, a script that ran
    out...): the run fails with it."""
    opened_by: str | None = None
    ending: bool = False
    closed: bool = False
    _asked: dict[str, _Asked] = field(default_factory=dict, repr=False)
    _asked_by: dict[str, Span] = field(default_factory=dict, repr=False)
    """The step that asked for each tool call of the turn (filed or not)."""
    _steps: list[Span] = field(default_factory=list, repr=False)
    _request: list[ChatMessage] = field(default_factory=list, repr=False)
    _reply: ChatMessage | None = field(default=None, repr=False)

    @property
    def where(self) -> str:
        """The turn in a few words, for messages: ``turn 2 ('What is 2 + 3?')``."""
        return f"turn {self.number} ({short(self.user, 60)})"

    @property
    def memory(self) -> list[ChatMessage]:
        """The last request's messages and the reply to it."""
        return [*self._request, *([self._reply] if self._reply is not None else [])]

    def answer(self, returned: Any = None) -> str | None:
        """The turn's last reply; with no model call, what the agent's ``chat()`` returned."""
        if self._reply is not None:
            return self._reply.content or ""
        return None if returned is None else str(returned)


class WireTrace:
    """The turns of one agent's conversation through a bridge, emitted as bus events (module
    docstring). Thread-safe: an agent's requests may come from any thread."""

    def __init__(self, *, scenario: str | None = None, external: bool = False) -> None:
        self.scenario = scenario
        self.external = external
        self.turns: list[WireTurn] = []
        self.expected_turns: int | None = None
        """How many turns the harness will open (an agent in another process: a request
        beginning one more is refused)."""
        self._current: WireTurn | None = None
        self._stopped = False
        # the condition's own lock, taken directly where nothing waits or is woken (the
        # condition's __enter__ is a Python call around it)
        self._lock = threading.RLock()
        self._cond = threading.Condition(self._lock)

    # ------------------------------------------------------------------ turns
    @property
    def current(self) -> WireTurn | None:
        return self._current

    @property
    def memory(self) -> list[ChatMessage]:
        """The latest turn's memory (empty before the first)."""
        return self.turns[-1].memory if self.turns else []

    def where(self, turn: WireTurn) -> str:
        """``scenario `x`, turn 2 ('...')`` for messages."""
        scenario = f"scenario `{self.scenario}`, " if self.scenario else ""
        return scenario + turn.where

    @contextmanager
    def turn(self, user: str) -> Iterator[WireTurn]:
        """A turn: the agent's requests inside are its exchanges, run in this block's context;
        on exit the calls whose output never came back are filed."""
        context = contextvars.copy_context()
        with self._cond:
            if self._current is not None:
                raise RuntimeError(f"{self._current.where} is still running")
            turn = WireTurn(len(self.turns) + 1, user, context)
            self.turns.append(turn)
            self._current = turn
            self._cond.notify_all()
        try:
            with dispatcher.listen(self._reported):
                yield turn
        finally:
            with self._cond:
                turn.closed = True
                self._current = None
                unanswered = list(turn._asked.values())
                turn._asked.clear()
                self._cond.notify_all()
            for asked in unanswered:
                self._file_call(asked, "")

    def wait_for_end(self, turn: WireTurn) -> None:
        """Block until a request begins the next turn, or :meth:`stop` (an agent in another
        process: nothing else says its turn is over)."""
        with self._cond:
            self._cond.wait_for(lambda: turn.ending or self._stopped)

    def stop(self) -> None:
        """Refuse further requests and end the turn waiting in :meth:`wait_for_end`."""
        with self._cond:
            self._stopped = True
            self._cond.notify_all()

    @property
    def stopped(self) -> bool:
        return self._stopped

    def turn_for(self, request: WireRequest) -> WireTurn:
        """The turn ``request`` belongs to (waiting, for an agent in another process, while the
        harness ends one turn and begins the next); a :class:`RequestError` when there is
        none."""
        text: str | None = None  # the last user message's, read when it is needed
        deadline = time.monotonic() + TURN_WAIT
        with self._cond:
            while True:
                if self._stopped:
                    raise RequestError("the agentkit bridge is stopping: it answers no more "
                                       "requests", status=503, type="server_error",
                                       code="bridge_stopping")
                turn = self._current
                if turn is None and not self.external:
                    raise RequestError(
                        "no turn is running: the agentkit bridge answers model calls only while "
                        "the harness runs the agent's chat() (a scenario turn)", status=409,
                        code="no_turn")
                if turn is not None and not turn.ending:
                    if self.external or turn.opened_by is None:
                        text = _last_user_text(request.messages) if text is None else text
                    if not self.external or turn.opened_by in (None, text):
                        if turn.opened_by is None:
                            turn.opened_by = text
                        return turn
                    self._check_another_turn(turn, text or "")
                    turn.ending = True
                    self._cond.notify_all()
                left = deadline - time.monotonic()
                if left <= 0:
                    raise RequestError(f"no turn of the scenario began within {TURN_WAIT:g} s",
                                       status=503, type="server_error", code="no_turn")
                self._cond.wait(left)

    def _check_another_turn(self, turn: WireTurn, text: str) -> None:
        if self.expected_turns is not None and turn.number >= self.expected_turns:
            scenario = f"scenario `{self.scenario}`" if self.scenario else "the scenario"
            raise RequestError(
                f"{scenario} has {self.expected_turns} turn(s), and this request begins another: "
                f"its last user message {short(text, 80)} is not the one {turn.where} began "
                f"with ({short(turn.opened_by or '', 80)})", code="no_more_turns")

    # ------------------------------------------------------------------ exchanges
    def begin(self, turn: WireTurn, request: WireRequest) -> WireStep:
        """A model call of ``turn`` begins (run in the turn's context): the tool calls whose
        outputs ``request`` carries are filed, then the step opens."""
        with self._lock:
            if turn.closed:
                raise RequestError(f"{self.where(turn)} has ended: the harness took the answer "
                                   "already", status=409, code="turn_ended")
            outputs = _outputs(request.messages, turn._asked)
            # in the order the model asked for them, whatever order the agent sends them in
            answered = [(asked, outputs[tool_id]) for tool_id, asked in turn._asked.items()
                        if tool_id in outputs]
            for asked, _ in answered:
                del turn._asked[asked.tool_id]
            turn.exchanges += 1
            first = turn.exchanges == 1
        for asked, output in answered:
            self._file_call(asked, output)
        span = dispatcher.new_span()
        step = WireStep(span, f"wire-step-{current_ids().counter('wire_step')}",
                        _last_user_text(request.messages) if first else None, turn)
        with self._lock:
            turn._steps.append(span)
        with dispatcher.resume(span):
            dispatcher.emit(AgentStepStartEvent(task_id=f"wire-turn-{turn.number}",
                                                step_id=step.step_id,
                                                step=_StepInput(step.input)))
        return step

    def answered(self, step: WireStep, request: WireRequest, reply: ChatMessage) -> None:
        """The model answered ``request`` with ``reply``: the step ends; its tool calls wait
        for their outputs."""
        calls = reply.tool_calls
        with dispatcher.resume(step.span):
            dispatcher.emit(AgentStepEndEvent(task_id=f"wire-turn-{step.turn.number}",
                                              step_id=step.step_id,
                                              output=_StepOutput(reply.content or ""),
                                              is_last=not calls))
        at = now()
        with self._lock:
            turn = step.turn
            turn._request = list(request.messages)
            turn._reply = reply
            # a request offering no tools says nothing of the agent's (a client may keep its
            # tool list to itself): only a listed set makes another name a missing tool
            offered = {tool.metadata.name for tool in request.tools or ()} if calls else set()
            for call in calls:
                turn._asked[call.tool_id] = _Asked(
                    call.tool_id, call.tool_name, dict(call.tool_kwargs), step.span, at,
                    offered=not offered or call.tool_name in offered)
                turn._asked_by[call.tool_id] = step.span

    def failed(self, step: WireStep, error: BaseException, *, fails_run: bool) -> None:
        """The model call failed; ``fails_run`` when the harness could not answer (the run
        fails with the turn's first such error)."""
        with dispatcher.resume(step.span):
            dispatcher.emit(AgentStepEndEvent(task_id=f"wire-turn-{step.turn.number}",
                                              step_id=step.step_id,
                                              error=f"{type(error).__name__}: {error}"))
        if fails_run:
            with self._lock:
                if step.turn.failure is None:
                    step.turn.failure = error

    # ------------------------------------------------------------------ tool calls
    def step_of(self, tool_call_id: str | None) -> Any:
        """A block whose bus events go into the step that asked for tool call
        ``tool_call_id`` (the current turn's latest step for another id, or None): where an
        integration reports a tool call of its own (module docstring)."""
        with self._lock:
            turn = self._current
            asker = turn._asked_by.get(tool_call_id or "") if turn is not None else None
            span = asker if asker is not None else (
                turn._steps[-1] if turn is not None and turn._steps else None)
        return dispatcher.resume(span) if span is not None else nullcontext()

    def claim(self, name: str, arguments: dict[str, Any]) -> str | None:
        """The id of the current turn's first call, not claimed before, that the model asked
        for by ``name`` with ``arguments`` (None if there is none): for an integration whose
        framework runs a tool without handing it the call's id. Claiming it is what keeps two
        identical calls of one reply apart."""
        with self._lock:
            turn = self._current
            for asked in turn._asked.values() if turn is not None else ():
                if not asked.claimed and asked.name == name and asked.arguments == arguments:
                    asked.claimed = True
                    return asked.tool_id
        return None

    def unclaim(self, tool_call_id: str) -> None:
        """Give back a call :meth:`claim` gave (its run paused before it ended, to run again
        when the framework resumes: that run claims it anew)."""
        with self._lock:
            turn = self._current
            asked = turn._asked.get(tool_call_id) if turn is not None else None
            if asked is not None:
                asked.claimed = False

    def name_agent(self, tool_call_ids: Sequence[str], agent: str) -> None:
        """Note that ``agent`` (of a framework's multi-agent run) asked for these calls of the
        current turn: each is filed with it, by the wire or by :meth:`agent_of`'s caller."""
        with self._lock:
            turn = self._current
            for tool_call_id in tool_call_ids:
                asked = turn._asked.get(tool_call_id) if turn is not None else None
                if asked is not None:
                    asked.agent = agent

    def agent_of(self, tool_call_id: str | None) -> str | None:
        """The agent :meth:`name_agent` named for a call of the current turn (None if none)."""
        with self._lock:
            turn = self._current
            asked = turn._asked.get(tool_call_id or "") if turn is not None else None
            return asked.agent if asked is not None else None

    def _reported(self, event: Event) -> None:
        """A tool call the agent's own code reported (an integration): not built from the
        wire."""
        if isinstance(event, ToolCallEndEvent) and event.tool_id is not None:
            with self._lock:
                turn = self._current
                if turn is not None:
                    turn._asked.pop(event.tool_id, None)

    def _file_call(self, asked: _Asked, output: str) -> None:
        """The tool-call events of ``asked``, under the step that asked for it."""
        # built without validating it: each field is of its type already
        result = ToolOutput.model_construct(content=output, tool_name=asked.name,
                                            raw_input={"args": (), "kwargs": asked.arguments},
                                            raw_output=_value(output), is_error=not asked.offered)
        if not asked.offered:  # what the agent answered is kept, after the reason
            result.content = f"the model asked for tool '{asked.name}', which the agent did " \
                             f"not offer; the agent answered: {output}"
        with dispatcher.resume(asked.step), dispatcher.span():
            dispatcher.emit(ToolCallStartEvent(tool_name=asked.name, tool_id=asked.tool_id,
                                               arguments=asked.arguments))
            dispatcher.emit(ToolCallEndEvent(tool_name=asked.name, tool_id=asked.tool_id,
                                             arguments=asked.arguments, output=result,
                                             latency=max(now() - asked.asked_at, 0.0),
                                             is_error=result.is_error, agent=asked.agent))


def _outputs(messages: list[ChatMessage], asked: dict[str, _Asked]) -> dict[str, str]:
    """The output ``messages`` carry for each call in ``asked``: its last ``tool`` message's
    text (looked for from the end, where a request carries the outputs it adds)."""
    found: dict[str, str] = {}
    if not asked:
        return found
    for message in reversed(messages):
        if message.role == MessageRole.TOOL:
            tool_id = message.additional_kwargs.get("tool_call_id")
            if tool_id in asked and tool_id not in found:
                found[tool_id] = message.content or ""
                if len(found) == len(asked):
                    break
    return found


def _last_user_text(messages: list[ChatMessage]) -> str:
    return next((m.content or "" for m in reversed(messages) if m.role == MessageRole.USER), "")


def _value(output: str) -> Any:
    """What a ``$N`` argument takes from a tool's output on the wire: the JSON value it
    spells (``"42"`` -> 42), else the text."""
    if output.lstrip(" \t\n\r")[:1] not in _JSON_STARTS:
        return output  # no JSON value begins so (the decoder would refuse it at once)
    try:
        return loads_json(output)
    except ValueError:  # not JSON, or JSON past agentkit's limits (JsonLimitError)
        return output


_JSON_STARTS = frozenset('"{[-0123456789tfnNI')
"""The first characters of the texts ``json.loads`` decodes (after whitespace): a string, an
object, an array, a number, true, false, null, NaN, Infinity."""
