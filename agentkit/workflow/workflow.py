"""``Workflow``: a set of ``@step`` methods wired together by the events they accept and return."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from pydantic import ValidationError

from agentkit.core.sim import run_sync
from agentkit.workflow.context import Context
from agentkit.workflow.decorators import step_mark
from agentkit.workflow.errors import WorkflowRuntimeError, WorkflowValidationError
from agentkit.workflow.events import StartEvent
from agentkit.workflow.graph import (
    WorkflowGraph,
    forget_graphs,
    free_steps,
    graph_of,
    step_functions,
)
from agentkit.workflow.handler import WorkflowHandler
from agentkit.workflow.runtime import Run

__all__ = ["Workflow"]

DEFAULT_TIMEOUT = 10.0  # upstream's default, in (virtual) seconds


class Workflow:
    """An event-driven workflow; subclass it and declare steps with ``@step``.

    ``timeout`` is in seconds of the running loop's clock, which is virtual time on
    agentkit's loop (``run_sync``, the harness); ``None`` means no limit, so a run that
    waits for an event nobody sends waits until the caller sends it or calls
    ``cancel_run()`` (under ``run_sync`` nobody can: it waits forever). ``verbose`` prints
    each step as it runs. The workflow is validated when it is built: a wrongly wired one
    raises WorkflowValidationError here.
    """

    def __init__(self, timeout: float | None = DEFAULT_TIMEOUT, verbose: bool = False) -> None:
        if timeout is not None and not timeout > 0:
            raise ValueError(f"Workflow timeout must be > 0 seconds or None, got {timeout!r}")
        self.timeout = timeout
        self.verbose = verbose
        self._graph = graph_of(type(self))

    @property
    def graph(self) -> WorkflowGraph:
        """The steps and the events they accept and return (what validation checked)."""
        return self._graph

    @classmethod
    def add_step(cls, func: Callable[..., Any]) -> None:
        """Add a free ``@step`` function to this workflow class (``@step(workflow=cls)``)."""
        if step_mark(func) is None:
            raise WorkflowValidationError(
                f"Step function {func.__name__} is missing the `@step` decorator")
        if func.__name__ in step_functions(cls):
            raise WorkflowValidationError(
                f"A step named '{func.__name__}' is already part of {cls.__name__}; choose "
                "another name")
        registry = free_steps(cls)
        registry[func.__name__] = func
        cls._free_steps = registry  # type: ignore[attr-defined]
        forget_graphs()

    def run(self, ctx: Context | None = None, start_event: StartEvent | None = None,
            **kwargs: Any) -> WorkflowHandler:
        """Start a run and return its handler (call it inside a running event loop).

        The start event is ``start_event`` or the workflow's StartEvent type built from
        ``kwargs``. With ``ctx``, the run shares that context's store; if the context holds
        a paused run (cancelled, or restored with ``Context.from_dict``), the run resumes it
        instead of starting anew.
        """
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            raise RuntimeError("Workflow.run() needs a running event loop: await it in async "
                               "code, or call run_sync()") from None
        ctx = ctx if ctx is not None else Context(self)
        if not isinstance(ctx, Context):
            raise TypeError(f"run(ctx=...) takes a Context, got {type(ctx).__name__}")
        if ctx._graph is not self._graph:
            raise WorkflowRuntimeError(
                f"This Context belongs to workflow {ctx._graph.workflow_name}, not "
                f"{type(self).__name__}")
        if ctx._run is not None:
            raise WorkflowRuntimeError("This Context is already running a workflow; await or "
                                       "cancel that run first")
        first = None
        if ctx.is_running:
            if start_event is not None or kwargs:
                raise WorkflowRuntimeError(
                    "This Context holds a paused run; resume it with run(ctx=ctx) and no start "
                    "event or keyword arguments")
        else:
            first = self._start_event(start_event, kwargs)
        run = Run(self, ctx, first)
        return WorkflowHandler(run, loop.create_task(run.main()))

    async def _on_run_end(self, ctx: Context, error: BaseException | None) -> None:
        """Subclass hook: a run ended (stopped, failed or timed out -- not paused), with
        ``error`` if it failed; the context keeps its store. The handler completes after it
        returns (agent workflows put back the memory a failed run changed)."""

    def run_sync(self, ctx: Context | None = None, start_event: StartEvent | None = None,
                 **kwargs: Any) -> Any:
        """``run`` from sync code: the StopEvent's result (or the run's error)."""
        async def _run() -> Any:
            return await self.run(ctx=ctx, start_event=start_event, **kwargs)

        return run_sync(_run())

    def _start_event(self, start_event: StartEvent | None, kwargs: dict[str, Any]) -> StartEvent:
        expected = self._graph.start_event_type
        if start_event is not None:
            if kwargs:
                raise WorkflowRuntimeError("run() takes a start_event or keyword arguments, not "
                                           f"both (got start_event and {sorted(kwargs)})")
            if not isinstance(start_event, expected):
                raise WorkflowRuntimeError(f"run(start_event=...) must be a {expected.__name__}, "
                                           f"got {type(start_event).__name__}")
            return start_event
        try:
            return expected(**kwargs)
        except ValidationError as exc:
            raise WorkflowRuntimeError(
                f"Failed creating a start event of type '{expected.__name__}' with the keyword "
                f"arguments {sorted(kwargs)}: {exc}") from None
