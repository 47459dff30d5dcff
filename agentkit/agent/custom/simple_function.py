"""An agent from a plain function: :class:`FnAgentWorker`."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from agentkit.agent.types import Task, TaskStep, TaskStepOutput
from agentkit.agent.worker import AgentWorker
from agentkit.core.ids import new_uuid
from agentkit.instrumentation import CallbackManager

__all__ = ["FnAgentWorker", "TASK_KEY", "OUTPUT_KEY"]

TASK_KEY = "__task__"
OUTPUT_KEY = "__output__"

StepFn = Callable[[dict[str, Any]], tuple[dict[str, Any], bool]]
AsyncStepFn = Callable[[dict[str, Any]], Awaitable[tuple[dict[str, Any], bool]]]


class FnAgentWorker(AgentWorker):
    """Each step calls ``fn(state) -> (state, is_done)``.

    The state starts as a copy of ``initial_state`` plus ``state["__task__"]`` (the task);
    the step's answer is ``state["__output__"]``. The state a step returns is the next
    step's state (``__task__`` is put back if the function dropped it). Like LlamaIndex,
    finalize writes nothing to memory. Fix: each task gets its own copy of
    ``initial_state`` (LlamaIndex mutated the shared dict across tasks).
    """

    def __init__(self, fn: StepFn, async_fn: AsyncStepFn | None = None,
                 initial_state: dict[str, Any] | None = None,
                 callback_manager: CallbackManager | None = None, verbose: bool = False) -> None:
        self.fn = fn
        self.async_fn = async_fn
        self.initial_state = dict(initial_state or {})
        self.callback_manager = callback_manager or CallbackManager()
        self.verbose = verbose

    def initialize_step(self, task: Task, **kwargs: Any) -> TaskStep:
        state = {**self.initial_state, TASK_KEY: task}
        return TaskStep(task_id=task.task_id, step_id=new_uuid(), input=task.input,
                        step_state=state)

    def _output(self, step: TaskStep, task: Task, result: Any) -> TaskStepOutput:
        if not (isinstance(result, tuple) and len(result) == 2 and isinstance(result[0], dict)):
            raise TypeError(f"FnAgentWorker: the step function must return a (state, is_done) "
                            f"tuple, got {type(result).__name__}")
        state, is_done = result
        if OUTPUT_KEY not in state:
            raise ValueError(f"FnAgentWorker: the step function must put its answer in "
                             f"state[{OUTPUT_KEY!r}]; the state it returned has keys "
                             f"{sorted(k for k in state if k != TASK_KEY)}")
        if state.get(TASK_KEY) is not task:
            state = {**state, TASK_KEY: task}
        return self._step_output(step, state[OUTPUT_KEY], is_done=is_done, next_state=state)

    def run_step(self, step: TaskStep, task: Task, **kwargs: Any) -> TaskStepOutput:
        return self._output(step, task, self.fn(step.step_state))

    async def arun_step(self, step: TaskStep, task: Task, **kwargs: Any) -> TaskStepOutput:
        if self.async_fn is None:
            return self.run_step(step, task, **kwargs)
        return self._output(step, task, await self.async_fn(step.step_state))

    def finalize_task(self, task: Task, **kwargs: Any) -> None:
        """Writes nothing (LlamaIndex's contract: the function owns what is remembered)."""
