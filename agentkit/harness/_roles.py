"""The harness's own LLM roles -- an LLM judge (:mod:`agentkit.harness._llm_judge`) and a
simulated user (:mod:`agentkit.harness._simulated_user`) -- and what they share: where a role's
model comes from in a run, the transcript it reads, and the event base class that puts what
it did into traces.

A role's answers come, in this order of precedence, from

1. its ``script`` (a :class:`~agentkit.llms.mock.ScriptedLLM`: offline, no model);
2. the agent type's recording (:meth:`agentkit.recording.CassetteLLM.role`): replayed by
   the role's key -- the scenario field it serves, its model, the hashes of its rubric or
   persona and goal, and of the transcript it saw -- and, while recording, recorded through
   the role's live model (:class:`RoleModels`) into the same cassette as the agent's calls;
3. a live model given to the run (:class:`RoleModels`), not recorded (a scripted agent type
   judged by a live model in a test).

Otherwise the run cannot start: a :class:`~agentkit.scenario._loader.ScenarioError` names the
field that needs the role. A role's calls are LLM calls on agentkit's protocol, but they are
not the agent's: a trace counts them apart (``totals.roles``), and they never reach the
agent's steps.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from agentkit.core.events import Event
from agentkit.llms.base import LLM
from agentkit.llms.mock import ScriptedLLM
from agentkit.llms.types import ChatMessage
from agentkit.recording import RoleChannel, RoleKey
from agentkit.trace._trace import RoleCallTrace, TurnBuilder

__all__ = ["RoleEvent", "RoleModels", "RoleAnswer", "RoleSource", "Channel", "transcript",
           "role_events", "TranscriptTurn"]

Channel = RoleChannel
"""A model that keeps a scenario's recording: the roles' calls go into its cassette too."""

LiveModel = LLM | Callable[[str | None], LLM]
"""A role's live model: one LLM, or a function of the model the scenario names (None: it names
none) giving one."""


@dataclass(kw_only=True, slots=True)
class RoleEvent(Event):
    """Base of the events a harness role emits (a verdict, a simulated message, the end of a
    simulated conversation): what a trace files into the turn it concerns. ``calls`` are the
    role's model calls it took (counted apart from the agent's)."""

    calls: list[RoleCallTrace] = field(default_factory=list)


def file_calls(turn: TurnBuilder, event: RoleEvent) -> None:
    """Count a role event's model calls into the turn (for ``totals.roles``)."""
    turn.role_calls.extend(event.calls)


def role_events(events: Sequence[Event]) -> list[Event]:
    """The role events among ``events`` (the roles' own LLM-call events are left out: they
    are not the agent's calls)."""
    return [event for event in events if isinstance(event, RoleEvent)]


@dataclass(frozen=True)
class RoleModels:
    """The live models the harness's roles talk to while a run records (or, for an agent type
    without a recording, unrecorded): ``judge`` and ``user``, each an LLM or a function from
    the model the scenario names (None: it names none) to an LLM."""

    judge: LiveModel | None = None
    user: LiveModel | None = None

    def live(self, role: str, model: str | None) -> LLM | None:
        """The live model of ``role`` for the model the scenario names, if one was given."""
        given: LiveModel | None = self.judge if role == "judge" else self.user
        if given is None or isinstance(given, LLM):
            return given
        return given(model)


@dataclass(frozen=True)
class RoleAnswer:
    """What one call of a role's model answered, by whom (a model's name, ``script``), and
    the call's token usage."""

    text: str
    by: str
    call: RoleCallTrace


class RoleSource:
    """Where one role (a judge of a panel, the simulated user) gets its answers in one run:
    its script, the run's recording (``channel``) or a live model (see the module
    docstring)."""

    def __init__(self, role: str, *, script: ScriptedLLM | None = None,
                 channel: Channel | None = None, live: LLM | None = None,
                 model: str | None = None) -> None:
        self.role = role
        self.script = script
        self.channel = channel
        self.live = live
        self.model = model

    @property
    def available(self) -> bool:
        """Whether it can answer at all (a script, a recording or a live model)."""
        return self.script is not None or self.channel is not None or self.live is not None

    def ask(self, key: RoleKey, messages: list[ChatMessage],
            params: Mapping[str, Any]) -> RoleAnswer:
        """One call of the role's model with ``messages`` (``params`` as request keywords)."""
        if self.script is not None:
            response, by = self.script.chat(messages, **params), "script"
        elif self.channel is not None:
            recorded = self.channel.role(RoleKey(key.role, key.at, key.subject, key.transcript,
                                                 self.model, key.where), self.live)
            response = recorded.chat(messages, **params)
            by = recorded.answered_by or "unknown"
        else:
            assert self.live is not None, "RoleSource.available was checked"
            response, by = self.live.chat(messages, **params), self.live.metadata.model_name
        usage = response.usage.model_dump() if response.usage is not None else None
        return RoleAnswer(response.message.content or "", by,
                          RoleCallTrace(role=self.role, usage=usage))


def _call_line(call: Any) -> str:
    args = json.dumps(call.args, sort_keys=True, ensure_ascii=False, default=str)
    outcome = "failed" if call.is_error else "returned"
    return f"Tool call: {call.name}({args}) {outcome}: {call.output}"


class TranscriptTurn(Protocol):
    """What a transcript reads of a turn: a run's :class:`~agentkit.trace.TurnTrace`, or a
    turn of a judge's labels file (:mod:`agentkit.quality`)."""

    @property
    def user(self) -> str: ...

    @property
    def tool_calls(self) -> Sequence[Any]: ...

    @property
    def response(self) -> str | None: ...

    @property
    def error(self) -> str | None: ...


def transcript(turns: Sequence[TranscriptTurn], upto: int | None = None) -> str:
    """The conversation of ``turns`` (up to turn ``upto``, 1-based, inclusive) as a judge or
    a simulated user reads it: each user message, the agent's tool calls with what they
    returned, and its answer -- plain text, the same for the same run."""
    lines: list[str] = []
    for turn in turns[:upto]:
        lines.append(f"User: {turn.user}")
        lines += [_call_line(call) for call in turn.tool_calls]
        if turn.response is not None:
            lines.append(f"Assistant: {turn.response}")
        elif turn.error is not None:
            lines.append(f"Assistant: (no answer: {turn.error})")
    return "\n".join(lines)
