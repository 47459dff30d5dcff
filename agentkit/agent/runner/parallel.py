"""A runner whose tasks are DAGs of steps: every ready step of a round runs concurrently."""

from __future__ import annotations

import asyncio
from typing import Any

from agentkit.agent.runner.base import AgentRunner, StepMode, TaskState
from agentkit.agent.types import TaskStep, TaskStepOutput
from agentkit.core.sim import run_sync

__all__ = ["ParallelAgentRunner"]


class ParallelAgentRunner(AgentRunner):
    """Runs all queued steps of a task at once, round after round.

    A next step joins the queue once it is ``is_ready`` and every step linked before it
    (``prev_steps``) has completed; until then it waits. A round whose outputs include the
    last step must consist of that step alone.
    """

    _keeps_undo = False  # the steps of a round run concurrently: no "before the last step"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._waiting: dict[str, list[TaskStep]] = {}

    def _queue_next_steps(self, state: TaskState, output: TaskStepOutput) -> None:
        waiting = self._waiting.setdefault(state.task.task_id, [])
        waiting.extend(s for s in output.next_steps if all(s is not w for w in waiting))
        done = {o.task_step.step_id for o in state.completed_steps}
        done.add(output.task_step.step_id)
        queue = state.step_queue
        for step in list(waiting):
            if step.is_ready and all(prev in done for prev in step.prev_steps):
                waiting.remove(step)
                queue.append(step)

    def undo_step(self, task_id: str) -> TaskStepOutput:
        """Not for DAG tasks: a round's steps run at once, so no state is "before the last
        step" of them."""
        raise NotImplementedError(
            "ParallelAgentRunner.undo_step: the steps of a round run concurrently, so there "
            "is no state before the last of them to go back to; use AgentRunner to undo steps")

    def delete_task(self, task_id: str) -> None:
        super().delete_task(task_id)
        self._waiting.pop(task_id, None)

    def reset(self) -> None:
        super().reset()
        self._waiting = {}

    async def arun_steps_in_queue(self, task_id: str, mode: StepMode = "run",
                                  **kwargs: Any) -> list[TaskStepOutput]:
        """Pop every queued step and run them concurrently; outputs in queue order.

        If a step fails, the others are cancelled (and end with an error event) before the
        error propagates, so no step of a failed round keeps running on the loop.
        """
        queue = self.state.get_step_queue(task_id)
        steps = list(queue)
        queue.clear()
        runs = [asyncio.ensure_future(self._arun_step(task_id, step=s, mode=mode, **kwargs))
                for s in steps]
        try:
            return list(await asyncio.gather(*runs))
        except BaseException:
            for run in runs:
                run.cancel()
            await asyncio.gather(*runs, return_exceptions=True)
            raise

    def run_steps_in_queue(self, task_id: str, mode: StepMode = "run",
                           **kwargs: Any) -> list[TaskStepOutput]:
        return run_sync(self.arun_steps_in_queue(task_id, mode, **kwargs))

    async def _arun_task(self, task_id: str, mode: StepMode,
                         tool_choice: str | dict[str, Any]) -> TaskStepOutput:
        """Run rounds until one ends the task; ``tool_choice`` applies to the first round only."""
        while True:
            outputs = await self.arun_steps_in_queue(task_id, mode=mode, tool_choice=tool_choice)
            tool_choice = "auto"
            if not outputs:
                raise ValueError(f"Task {task_id} has no steps left to run and no step ended it")
            if any(o.is_last for o in outputs):
                if len(outputs) > 1:
                    raise ValueError("More than one step output returned in final step.")
                return outputs[0]
