"""Runs a plan's tasks as a DAG: each task starts the moment its last dependency finishes.

Every task is an asyncio task awaiting its dependencies' tasks, so there are no rounds and no
polling (LlamaIndex's fetching unit re-checked every 10 ms): on the virtual clock a plan's
wall time is exactly its critical path. Calls go through the worker core's
:class:`~agentkit.tools.ToolRunner`, so each emits its tool-call events and never raises.

A task that cannot run -- its parse ``error``, an unknown tool, too many arguments, or an
input that failed -- still makes a tool call, with ``arguments_error`` (the tool does not
run; its observation is ``Error: ...``), so it shows in traces and its dependents see the
failure. A task that does not need to wait (its problem is known from the plan) fails at
once instead of waiting for its inputs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agentkit.agent.llm_compiler.events import PlanTaskEvent, TaskOutcome
from agentkit.agent.llm_compiler.plan import Plan, PlanTask, substitute
from agentkit.core.events import dispatcher
from agentkit.core.sim import now
from agentkit.tools import ToolOutput, ToolRunner

__all__ = ["TaskResult", "run_plan"]


@dataclass(frozen=True)
class TaskResult:
    """A finished task: the arguments it was called with (references filled in; as planned
    if it did not run), its output, and when it ran (virtual seconds since the plan began)."""

    task: PlanTask
    args: tuple[Any, ...]
    output: ToolOutput
    start: float
    end: float
    outcome: TaskOutcome

    @property
    def action(self) -> str:
        """The call as the model reads it: ``search('cheetah')``."""
        return f"{self.task.tool}({', '.join(repr(arg) for arg in self.args)})"

    def transcript(self, *, numbered: bool = False) -> str:
        """``Thought: ...`` (if any), the call (``N.``-numbered for a replan context) and
        ``Observation: ...``, one per line."""
        thought = f"Thought: {self.task.thought}\n" if self.task.thought else ""
        number = f"{self.task.idx}. " if numbered else ""
        return f"{thought}{number}{self.action}\nObservation: {self.output.content}\n"


def _value(output: ToolOutput) -> Any:
    """What a whole ``$N`` argument becomes: the value the tool returned (its text if it
    returned none)."""
    return output.raw_output if output.raw_output is not None else output.content


def _failed_inputs(inputs: Sequence[TaskResult]) -> str | None:
    failed = [f"${r.task.idx} ({r.task.tool})" for r in inputs if r.output.is_error]
    if not failed:
        return None
    listed = ", ".join(failed[:-1]) + f" and {failed[-1]}" if len(failed) > 1 else failed[0]
    return f"not run: its input{'s' if len(failed) > 1 else ''} {listed} failed"


async def _run_task(task: PlanTask, dependencies: Sequence[Awaitable[TaskResult]],
                    runner: ToolRunner, tool_id: str, began: float, round: int) -> TaskResult:
    args, arguments = task.args, {}
    error = task.error
    if error is None:
        try:
            arguments = runner.bind(task.tool, args)
        except ValueError as exc:
            error = str(exc)
    if error is None:
        inputs = [await dependency for dependency in dependencies]
        error = _failed_inputs(inputs)
        if error is None:
            outputs: Mapping[int, ToolOutput] = {r.task.idx: r.output for r in inputs}
            args = substitute(task.args, lambda n: _value(outputs[n]),
                              lambda n: outputs[n].content)
            arguments = runner.bind(task.tool, args)
    start = now() - began
    outcome = await runner.acall(task.tool, arguments, tool_id=tool_id, arguments_error=error)
    end = now() - began
    output = outcome.output
    status: TaskOutcome = ("not_run" if error is not None or runner.get(task.tool) is None
                           else "error" if output.is_error else "ok")
    dispatcher.emit(PlanTaskEvent(round=round, task_id=task.idx, tool=task.tool,
                                  tool_id=tool_id, start=start, end=end, outcome=status))
    return TaskResult(task, tuple(args), output, start, end, status)


async def run_plan(plan: Plan, runner: ToolRunner, call_ids: Mapping[int, str], *,
                   round: int = 1) -> list[TaskResult]:
    """Run every action of ``plan`` (each as soon as its inputs are ready); results in id
    order. ``call_ids`` gives each task's tool-call id."""
    began = now()
    running: dict[int, asyncio.Future[TaskResult]] = {}
    for task in plan.actions:
        running[task.idx] = asyncio.ensure_future(_run_task(
            task, [running[dep] for dep in task.deps], runner, call_ids[task.idx], began,
            round))
    return list(await asyncio.gather(*running.values()))
