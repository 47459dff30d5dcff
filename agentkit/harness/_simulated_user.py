"""Simulated users: a scenario's turns written, one at a time, by an LLM playing a persona
toward a goal (``user: {simulate: ..., goal: ..., max_turns: 6, stop_when: ...}``), instead of
fixed text -- for agents whose next user message depends on what they said.

Each turn the simulated user writes the next message from the conversation so far: with its
``script`` (messages in order), its ``ref`` (a function of a :class:`SimulatedUserContext`
returning the message) or a model -- the recording's, keyed like a judge's by the persona's
and goal's hashes and the conversation it saw. The model gets :data:`USER_PROMPT` as its
system message and the conversation with the roles turned round (its own messages are the
assistant's, the agent's answers the user's), so any chat model can play it. ``opening`` gives
a fixed first message.

After each answer of the agent the goal is checked: ``stop_when`` is a text match on that
answer, or a rubric an LLM judge decides on the conversation (:mod:`~.llm_judge`); by
default the ``goal`` itself, judged. When it holds the conversation ends; when ``max_turns``
turns ran without it, it ends too and the run fails, naming ``user.max_turns``. Traces show,
per turn, who wrote the message (``simulated_user``), and on the last turn how the
conversation ended (``goal``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from agentkit.core.errors import AgentFailedError, InfrastructureError
from agentkit.core.events import dispatcher
from agentkit.harness._llm_judge import Judge
from agentkit.harness._roles import RoleEvent, RoleSource, file_calls
from agentkit.llms.types import ChatMessage, MessageRole
from agentkit.recording import RoleKey, text_hash
from agentkit.scenario._model import Judged, Scenario, SimulatedUser, TextMatch, Turn
from agentkit.trace._trace import RoleCallTrace, Trace, TurnBuilder, TurnTrace, trace_handler

__all__ = ["USER_PROMPT", "FIRST_MESSAGE", "SimulatedUserContext", "SimulatedTurnEvent",
           "ConversationEndEvent", "EmptyMessageError", "Conversation", "FixedTurns",
           "SimulatedConversation", "user_messages"]

USER_PROMPT = (
    "You are playing a user who talks to an AI assistant, to test it. Stay in character; "
    "never say that you are an AI or that this is a test.\n"
    "Who you are: {persona}\n"
    "What you want: {goal}\n"
    "Write only your next message to the assistant: one or two short sentences, without "
    "quotes and without a name in front.")
"""The simulated user's system message; ``{persona}`` and ``{goal}`` are filled in."""

FIRST_MESSAGE = "Write your first message to the assistant."
"""What the simulated user's model is asked before the conversation has begun."""


@dataclass(frozen=True)
class SimulatedUserContext:
    """What a simulated user's ``ref`` function gets to write the next message: the persona,
    the goal, the number of the turn to write (1-based) and the conversation so far (user and
    assistant messages, as the agent saw them)."""

    persona: str
    goal: str
    turn: int
    messages: tuple[ChatMessage, ...] = ()


class EmptyMessageError(InfrastructureError):
    """The simulated user's model wrote an empty message: the role failed, not the agent."""


@dataclass(kw_only=True, slots=True)
class SimulatedTurnEvent(RoleEvent):
    """The simulated user wrote turn ``turn``'s message (``by``: a model's name, ``script``,
    ``opening`` or the ``ref``)."""

    turn: int
    by: str


@dataclass(kw_only=True, slots=True)
class ConversationEndEvent(RoleEvent):
    """A simulated conversation ended after ``turns`` turns: its goal ``reached`` (by
    ``check``), or not (``max_turns`` ran out)."""

    turns: int
    reached: bool
    check: str


@trace_handler(SimulatedTurnEvent)
def _file_message(turn: TurnBuilder, event: SimulatedTurnEvent) -> None:
    turn.details["simulated_user"] = {"by": event.by}
    file_calls(turn, event)


@trace_handler(ConversationEndEvent)
def _file_end(turn: TurnBuilder, event: ConversationEndEvent) -> None:
    turn.details["goal"] = {"reached": event.reached, "check": event.check,
                            "turns": event.turns}
    file_calls(turn, event)


def _conversation(turns: Sequence[TurnTrace]) -> list[tuple[str, str | None]]:
    return [(turn.user, turn.response) for turn in turns]


def user_messages(persona: str, goal: str, turns: Sequence[TurnTrace]) -> list[ChatMessage]:
    """The simulated user's request: :data:`USER_PROMPT`, then the conversation with the
    roles turned round (its own messages as the assistant's, the agent's as the user's)."""
    messages = [ChatMessage(role=MessageRole.SYSTEM,
                            content=USER_PROMPT.format(persona=persona, goal=goal)),
                ChatMessage(role=MessageRole.USER, content=FIRST_MESSAGE)]
    for said, answered in _conversation(turns):
        messages.append(ChatMessage(role=MessageRole.ASSISTANT, content=said))
        if answered is not None:
            messages.append(ChatMessage(role=MessageRole.USER, content=answered))
    return messages


class Conversation(Protocol):
    """Where a run's user messages come from: fixed turns, or a simulated user."""

    problems: list[str]
    speaks: bool
    """Whether finding the turns may call a model or emit events (a simulated user's, a
    judge's): what it emits is collected into the trace; fixed turns emit none."""

    def next_turn(self, trace: Trace) -> Turn | None:
        """The next user turn given the turns so far (None: the conversation is over)."""
        ...

    def after_turn(self, trace: Trace) -> None:
        """Called after each turn the agent answered (a simulated user checks its goal)."""
        ...


@dataclass
class FixedTurns:
    """The scenario's ``turns``, in order."""

    turns: Sequence[Turn]
    problems: list[str] = field(default_factory=list)
    speaks = False

    def next_turn(self, trace: Trace) -> Turn | None:
        index = len(trace.turns)
        return self.turns[index] if index < len(self.turns) else None

    def after_turn(self, trace: Trace) -> None:
        return None


class SimulatedConversation:
    """A simulated user's conversation with the agent (module docstring). ``source`` gives its
    model's answers (None with a ``ref``), ``write`` is its ``ref`` function, ``judge``
    decides a judged goal."""

    def __init__(self, scenario: Scenario, spec: SimulatedUser, *,
                 source: RoleSource | None = None,
                 write: Callable[[SimulatedUserContext], Any] | None = None,
                 judge: Judge | None = None) -> None:
        self.scenario = scenario
        self.spec = spec
        self.source = source
        self.write = write
        self.judge = judge
        self.ended = False
        self.problems: list[str] = []
        self.speaks = True

    @property
    def goal(self) -> str:
        return self.spec.goal or ""

    @property
    def stop(self) -> tuple[TextMatch | Judged, str]:
        """The goal check and its field: ``stop_when``, or the goal judged."""
        if isinstance(self.spec.stop_when, Judged):
            return self.spec.stop_when, "user.stop_when.judge"
        if self.spec.stop_when is not None:
            return self.spec.stop_when, "user.stop_when"
        return Judged(judge=self.goal), "user.goal"

    def next_turn(self, trace: Trace) -> Turn | None:
        number = len(trace.turns) + 1
        if self.ended or number > self.spec.max_turns:
            return None
        calls: list[RoleCallTrace] = []
        if number == 1 and self.spec.opening is not None:
            message, by = self.spec.opening, "opening"
        elif self.write is not None:
            message, by = self._written(number, trace.turns), f"ref {self.spec.ref}"
        else:
            assert self.source is not None, "a simulated user without a ref has a source"
            seen = "\n".join(f"{said}\n{answered}" for said, answered
                             in _conversation(trace.turns))
            key = RoleKey("user", "user", {"persona": text_hash(self.spec.simulate),
                                           "goal": text_hash(self.goal)}, text_hash(seen),
                          where=self.scenario.where("user"))
            answer = self.source.ask(key, user_messages(self.spec.simulate, self.goal,
                                                        trace.turns), self.spec.params)
            message, by = answer.text.strip(), answer.by
            calls.append(answer.call)
        dispatcher.emit(SimulatedTurnEvent(turn=number, by=by, calls=calls))
        if not message.strip():
            raise EmptyMessageError(f"{self.scenario.where('user')}: user: the simulated user "
                                    f"({by}) wrote an empty message for turn {number}")
        return Turn(user=message)

    def _written(self, number: int, turns: Sequence[TurnTrace]) -> str:
        messages = tuple(message for said, answered in _conversation(turns)
                         for message in (ChatMessage(role=MessageRole.USER, content=said),
                                         *([ChatMessage(role=MessageRole.ASSISTANT,
                                                        content=answered)]
                                           if answered is not None else [])))
        context = SimulatedUserContext(self.spec.simulate, self.goal, number, messages)
        assert self.write is not None
        try:
            written = self.write(context)
        except Exception as exc:  # noqa: BLE001 (a user's function may raise anything)
            raise AgentFailedError(f"{self.scenario.where('user', 'ref')}: user.ref: "
                                   f"{self.spec.ref} raised {type(exc).__name__}: {exc}") from None
        if not isinstance(written, str):
            raise AgentFailedError(f"{self.scenario.where('user', 'ref')}: user.ref: "
                                   f"{self.spec.ref} returned {type(written).__name__}, not the "
                                   "message (a str)")
        return written

    def after_turn(self, trace: Trace) -> None:
        number = len(trace.turns)
        check, at = self.stop
        if isinstance(check, TextMatch):
            reached = check.matches(trace.turns[-1].response)
            shown = f"stop_when {check.describe()}"
        else:
            assert self.judge is not None, "a judged goal has a judge (checked before the run)"
            where = self.scenario.where(*at.split("."), kept=True)
            reached = self.judge.decide(check, at=at, where=where, subject="conversation",
                                        turns=trace.turns, upto=number).passed
            shown = f"{at.removeprefix('user.').removesuffix('.judge')} judged"
        if not reached and number < self.spec.max_turns:
            return
        self.ended = True
        dispatcher.emit(ConversationEndEvent(turns=number, reached=reached, check=shown))
        if not reached:
            self.problems.append(
                f"{self.scenario.where('user', 'max_turns')}: user.max_turns: the simulated "
                f"conversation reached max_turns {self.spec.max_turns} without the goal "
                f"({self.goal!r}; {shown}, never held)")
