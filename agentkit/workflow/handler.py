"""``WorkflowHandler``: what ``Workflow.run()`` returns while the run goes on."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Generator
from typing import Any

from agentkit.workflow.context import Context
from agentkit.workflow.errors import WorkflowRuntimeError
from agentkit.workflow.events import Event, StopEvent
from agentkit.workflow.runtime import Run

__all__ = ["WorkflowHandler"]


class WorkflowHandler:
    """A running workflow: ``await`` it for the result, read its event stream, or cancel it."""

    def __init__(self, run: Run, task: asyncio.Task[Any]) -> None:
        self._run = run
        self._task = task

    @property
    def ctx(self) -> Context:
        """The run's context: send events to it (``handler.ctx.send_event``) or save it."""
        return self._run.ctx

    @property
    def run_id(self) -> str:
        return self._run.run_id

    def __await__(self) -> Generator[Any, None, Any]:
        """The StopEvent's result; raises the run's error (WorkflowRuntimeError,
        WorkflowTimeoutError, WorkflowCancelledByUser)."""
        return self._task.__await__()

    def done(self) -> bool:
        """True once the run ended (the result or error is there)."""
        return self._task.done()

    def is_done(self) -> bool:
        """``done()``, upstream's other name for it."""
        return self._task.done()

    async def run_step(self) -> list[Event] | None:
        """Stepwise runs (``workflow.run(stepwise=True)``): run one step and return the events
        it emitted (returned or sent), which the caller delivers with
        ``handler.ctx.send_event``; None once the run has ended (then ``await handler``
        gives the result). Raises the run's error if it fails, and a WorkflowRuntimeError
        when no step has an event to handle (the caller delivered nothing) instead of
        waiting forever, as upstream would.

        ::

            handler = workflow.run(stepwise=True)
            while produced := await handler.run_step():
                for ev in produced:
                    handler.ctx.send_event(ev)
            result = await handler
        """
        run = self._run
        if not run.stepwise:
            raise ValueError("Workflow must be created passing stepwise=True to call this method.")
        await asyncio.wait([run.started, self._task], return_when=asyncio.FIRST_COMPLETED)
        if not run.finishing and not self._task.done():
            started = run.step_once()
            if started is None:
                raise WorkflowRuntimeError(
                    "run_step(): no step has an event to handle; deliver the events the last "
                    "step produced with handler.ctx.send_event(...) before the next run_step()")
            invocation, frame = started
            await asyncio.wait([invocation, self._task], return_when=asyncio.FIRST_COMPLETED)
            if not run.finishing and not self._task.done():
                produced = list(frame.emitted)
                run.ctx._held.clear()  # handed to the caller, who delivers them
                return produced
        await asyncio.wait([self._task])
        self._task.result()  # the run's error, if it failed
        return None

    def result(self) -> Any:
        """The result of a finished run (asyncio.InvalidStateError while it runs)."""
        return self._task.result()

    def exception(self) -> BaseException | None:
        return self._task.exception()

    async def stream_events(self) -> AsyncIterator[Event]:
        """Events the steps wrote to the stream, in order, then the StopEvent. Raises the
        run's error after the events written before it; ends quietly after a cancel."""
        while True:
            try:
                event = await self._run.stream.get()
            except BaseException:
                self._mark_retrieved()
                raise
            if event is None:
                return
            yield event
            if isinstance(event, StopEvent):
                return

    async def cancel_run(self) -> None:
        """Stop the run; its context keeps what a resume needs (``run(ctx=handler.ctx)``, or
        save it first with ``to_dict``). Awaiting the handler then raises
        WorkflowCancelledByUser."""
        self._run.cancel()
        await asyncio.wait([self._task])
        self._mark_retrieved()

    def _mark_retrieved(self) -> None:
        # a caller that reads the error from the stream, or cancels, need not await the
        # handler too; asyncio would otherwise log "exception was never retrieved"
        if self._task.done() and not self._task.cancelled():
            self._task.exception()
