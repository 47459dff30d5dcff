"""LLMCompiler rounds in traces: each step gets its ``plan`` and the ``joiner``'s decision.

``plan``: ``round``, ``tasks`` (id, tool, args as planned with ``$N`` kept, deps, thought,
the normalised id of its tool call, and once it ended: ``start``/``end`` in virtual seconds
since the plan began running, ``outcome`` ok | error | not_run, ``error`` when the plan
already said why it cannot run), ``notes`` on what was ignored, or ``error`` when the text
was not a usable plan. ``joiner``: ``decision`` finish | replan, ``thought``, ``answer`` (or
``reason`` for a replan), ``forced`` when a last-round replan was taken as final, ``error``
when the joiner's text could not be read.
"""

from __future__ import annotations

from typing import Any

from agentkit.agent.llm_compiler import JoinerDecisionEvent, PlanEvent, PlanTaskEvent
from agentkit.scenario.trace import TurnBuilder, _round, trace_handler

__all__: list[str] = []


@trace_handler(PlanEvent)
def _plan(turn: TurnBuilder, event: PlanEvent) -> None:
    plan: dict[str, Any] = {"round": event.round}
    if event.error is not None:
        plan["error"] = event.error
    else:
        plan["tasks"] = [_task(turn, task, event.call_ids.get(task.idx)) for task in event.tasks]
    if event.notes:
        plan["notes"] = list(event.notes)
    turn.owner(event.span_id).details["plan"] = plan


def _task(turn: TurnBuilder, task: Any, call_id: str | None) -> dict[str, Any]:
    data: dict[str, Any] = {"id": task.idx, "tool": task.tool, "args": list(task.args),
                            "deps": list(task.deps)}
    if task.thought:
        data["thought"] = task.thought
    if call_id is not None:
        data["call"] = turn.ids(call_id)
    if task.error is not None:
        data["error"] = task.error
    return data


@trace_handler(PlanTaskEvent)
def _task_ended(turn: TurnBuilder, event: PlanTaskEvent) -> None:
    plan = turn.owner(event.span_id).details.get("plan", {})
    for task in plan.get("tasks", ()):
        if task["id"] == event.task_id:
            task.update(start=_round(event.start), end=_round(event.end), outcome=event.outcome)


@trace_handler(JoinerDecisionEvent)
def _joiner(turn: TurnBuilder, event: JoinerDecisionEvent) -> None:
    decision: dict[str, Any] = {"decision": "replan" if event.is_replan else "finish",
                                "thought": event.thought,
                                "reason" if event.is_replan else "answer": event.answer}
    if event.forced:
        decision["forced"] = True
    if event.error is not None:
        decision["error"] = event.error
    turn.owner(event.span_id).details["joiner"] = decision
