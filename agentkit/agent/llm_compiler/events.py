"""What an LLMCompiler round reports to the bus (besides its LLM and tool-call events).

A round is one step: the planner's plan (:class:`PlanEvent`), each task as it ends
(:class:`PlanTaskEvent`, with its start and end in virtual seconds since the plan began
running), and the joiner's decision (:class:`JoinerDecisionEvent`). The scenario layer turns
them into the step's ``plan`` and ``joiner`` in traces.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from agentkit.agent.llm_compiler.plan import PlanTask
from agentkit.core.events import Event

__all__ = ["PlanEvent", "PlanTaskEvent", "JoinerDecisionEvent", "TaskOutcome"]

TaskOutcome = Literal["ok", "error", "not_run"]


@dataclass(kw_only=True, slots=True)
class PlanEvent(Event):
    """The planner answered: the parsed tasks (``join`` last) with the tool-call id each
    task's call will have, notes on what was ignored; or ``error`` if the text is not a
    usable plan (then ``tasks`` is empty and nothing runs)."""

    round: int
    tasks: list[PlanTask] = field(default_factory=list)
    call_ids: dict[int, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    error: str | None = None


@dataclass(kw_only=True, slots=True)
class PlanTaskEvent(Event):
    """A task of the plan ended: ``ok``, ``error`` (the tool failed) or ``not_run`` (its
    call was refused: bad arguments, unknown tool, or an input that failed). ``start`` and
    ``end`` are virtual seconds since the plan began running."""

    round: int
    task_id: int
    tool: str
    tool_id: str
    start: float
    end: float
    outcome: TaskOutcome


@dataclass(kw_only=True, slots=True)
class JoinerDecisionEvent(Event):
    """The joiner decided: finish with ``answer``, or replan (``answer`` is the reason).
    ``final`` is whether the task ends here: a replan in the last round is taken as final
    (``forced``). ``error`` is set when the joiner's text could not be read (it then counts
    as a replan; in the last round its raw text is the answer)."""

    round: int
    thought: str
    answer: str
    is_replan: bool
    final: bool
    forced: bool = False
    error: str | None = None
