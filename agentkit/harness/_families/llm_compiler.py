"""The LLMCompiler family: agent type ``llm_compiler`` (``LLMCompilerAgentWorker`` as an
agent), its plan-and-join wire format, and how its rounds go into traces.

A trajectory renders as one plan with every call (``$N`` for the references, ``join()`` last),
then the joiner's ``Thought: ...`` / ``Action: Finish(<answer>)``. Plans take positional
arguments in schema order, so a call must give every parameter up to the last it gives.

In traces each step gets its ``plan`` and the ``joiner``'s decision. ``plan``: ``round``,
``tasks`` (id, tool, args as planned with ``$N`` kept, deps, thought, the normalised id of its
tool call, and once it ended: ``start``/``end`` in virtual seconds since the plan began
running, ``outcome`` ok | error | not_run, ``error`` when the plan already said why it cannot
run), ``notes`` on what was ignored, or ``error`` when the text was not a usable plan.
``joiner``: ``decision`` finish | replan, ``thought``, ``answer`` (or ``reason`` for a
replan), ``forced`` when a last-round replan was taken as final, ``error`` when the joiner's
text could not be read.
"""

from __future__ import annotations

import json
from typing import Any

from agentkit.agent import BaseAgent
from agentkit.agent.llm_compiler import (
    JoinerDecisionEvent,
    LLMCompilerAgentWorker,
    PlanEvent,
    PlanTaskEvent,
)
from agentkit.agent.llm_compiler.prompts import END_OF_PLAN
from agentkit.harness._agent_types import AgentContext, AgentType
from agentkit.scenario._trajectory import (
    DEFAULT_ANSWER_THOUGHT,
    Ref,
    RenderContext,
    TrajectoryError,
)
from agentkit.trace._trace import TurnBuilder, _round

__all__ = ["LLM_COMPILER", "render_llm_compiler"]


def _build(context: AgentContext) -> BaseAgent:
    return LLMCompilerAgentWorker.from_tools(list(context.tools), llm=context.llm,
                                             **context.params).as_agent()


# ---------------------------------------------------------------------------- rendering
def _plan_literal(value: Any) -> str:
    """A Python literal for a plan argument; ``$N`` bare."""
    if isinstance(value, Ref):
        return f"${value.number}"
    if isinstance(value, list):
        return "[" + ", ".join(map(_plan_literal, value)) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)}: {_plan_literal(v)}"
                               for k, v in value.items()) + "}"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return repr(value)


def _balanced(text: str) -> bool:
    depth = 0
    for char in text:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth < 0:
            return False
    return depth == 0


def _finish(ctx: RenderContext) -> Any:
    """The joiner's reply: ``Thought: ...`` and ``Action: Finish(<answer>)``."""
    answer = ctx.trajectory.answer
    thought = answer.thought or DEFAULT_ANSWER_THOUGHT

    def checked(text: str, shown: str | None = None) -> str:
        if not _balanced(text):
            raise TrajectoryError([(answer.loc, f"the answer {(shown or text)!r} has unbalanced "
                                                "parentheses: LLMCompiler's `Finish(...)` "
                                                "cannot carry it")])
        return text

    checked(answer.fixed_text, answer.text)  # the outputs' part is checked when known
    return ctx.deferred(lambda: f"Thought: {thought}\nAction: Finish("
                                f"{checked(answer.render(ctx.outputs))})", answer.refs)


def render_llm_compiler(ctx: RenderContext) -> list[Any]:
    """One plan of every call (``$N`` references, ``join()`` last), then ``Finish(answer)``."""
    calls = ctx.trajectory.calls
    lines = []
    for call in calls:
        args = ctx.positional(call)
        if args is None:
            order = ", ".join(ctx.parameters(call.name))
            raise TrajectoryError([((*call.loc, "args"), f"llm_compiler plans pass arguments by "
                                                         f"position ({order}): give every "
                                                         "parameter up to the last one you give")])
        if call.thought:
            lines.append(f"Thought: {call.thought}")
        lines.append(f"{call.number}. {call.name}({', '.join(map(_plan_literal, args))})")
    lines.append(f"{len(calls) + 1}. join(){END_OF_PLAN}")
    return ["\n".join(lines), _finish(ctx)]


# ---------------------------------------------------------------------------- traces
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


def _task_ended(turn: TurnBuilder, event: PlanTaskEvent) -> None:
    plan = turn.owner(event.span_id).details.get("plan", {})
    for task in plan.get("tasks", ()):
        if task["id"] == event.task_id:
            task.update(start=_round(event.start), end=_round(event.end), outcome=event.outcome)


def _joiner(turn: TurnBuilder, event: JoinerDecisionEvent) -> None:
    decision: dict[str, Any] = {"decision": "replan" if event.is_replan else "finish",
                                "thought": event.thought,
                                "reason" if event.is_replan else "answer": event.answer}
    if event.forced:
        decision["forced"] = True
    if event.error is not None:
        decision["error"] = event.error
    turn.owner(event.span_id).details["joiner"] = decision


LLM_COMPILER = AgentType(_build, trajectory=render_llm_compiler,
                         trace_handlers={PlanEvent: _plan, PlanTaskEvent: _task_ended,
                                         JoinerDecisionEvent: _joiner})
"""``llm_compiler``: plans run as a DAG, then joined; ``params`` go to
``LLMCompilerAgentWorker.from_tools`` (``max_replans``...)."""
