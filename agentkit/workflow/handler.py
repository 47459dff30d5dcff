"""``WorkflowHandler``: what ``Workflow.run()`` returns while the run goes on."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Generator
from typing import Any

from agentkit.workflow.context import Context
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
        return self._task.done()

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
