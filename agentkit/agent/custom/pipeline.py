"""Run any pipeline object as an agent: :class:`QueryPipelineAgentWorker` (deprecated)."""

from __future__ import annotations

import inspect
import warnings
from typing import Any

from agentkit.agent.custom.simple import StateDictWorker
from agentkit.agent.types import Task, TaskStep, TaskStepOutput
from agentkit.instrumentation import CallbackManager

__all__ = ["QueryPipelineAgentWorker"]


class QueryPipelineAgentWorker(StateDictWorker):
    """Each step calls ``pipeline.run(state=..., task=...)`` (or ``arun``), which returns
    ``(response, is_done)``. If the pipeline has ``update_state(dict)``, it receives the
    step state first. State and memory work as in :class:`CustomSimpleAgentWorker`.

    Deprecated: use :class:`FnAgentWorker` (constructing this emits a DeprecationWarning).
    """

    def __init__(self, pipeline: Any, callback_manager: CallbackManager | None = None,
                 verbose: bool = False) -> None:
        warnings.warn("QueryPipelineAgentWorker is deprecated; use FnAgentWorker instead",
                      DeprecationWarning, stacklevel=2)
        if not (hasattr(pipeline, "run") or hasattr(pipeline, "arun")):
            raise TypeError(f"the pipeline must have a run(**kwargs) or arun(**kwargs) method, "
                            f"got {type(pipeline).__name__}")
        self.pipeline = pipeline
        self.callback_manager = callback_manager or CallbackManager()
        self.verbose = verbose

    def initialize_step(self, task: Task, **kwargs: Any) -> TaskStep:
        return self._first_step(task, {})

    def _share_state(self, step: TaskStep) -> None:
        update = getattr(self.pipeline, "update_state", None)
        if update is not None:
            update(step.step_state)

    def run_step(self, step: TaskStep, task: Task, **kwargs: Any) -> TaskStepOutput:
        if not hasattr(self.pipeline, "run"):
            return super().run_step(step, task, **kwargs)
        self._share_state(step)
        response, is_done = self.pipeline.run(state=step.step_state, task=task)
        return self._state_step_output(step, task, response, is_done)

    async def arun_step(self, step: TaskStep, task: Task, **kwargs: Any) -> TaskStepOutput:
        if not hasattr(self.pipeline, "arun"):
            return self.run_step(step, task, **kwargs)
        self._share_state(step)
        result = self.pipeline.arun(state=step.step_state, task=task)
        response, is_done = await result if inspect.isawaitable(result) else result
        return self._state_step_output(step, task, response, is_done)
