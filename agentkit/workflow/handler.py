"""``WorkflowHandler``: what ``Workflow.run()`` returns while the run goes on.

As upstream, the handler is an ``asyncio.Future`` of the run's result: ``await handler``,
``handler.result()``, ``handler.done()``, ``str(handler)`` (the result's text once it is
done) and ``add_done_callback`` behave as a future's. ``WorkflowHandler(ctx=ctx)`` builds
one around a context (a restored one, say) without a run, as upstream allows; such a
handler has no event stream and no steps to run until ``set_result``/``set_exception``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from agentkit.workflow.context import Context, stream_end
from agentkit.workflow.errors import WorkflowRuntimeError
from agentkit.workflow.events import Event, StopEvent
from agentkit.workflow.runtime import Run

__all__ = ["WorkflowHandler"]


class WorkflowHandler(asyncio.Future[Any]):
    """A running workflow: ``await`` it for the result, read its event stream, or cancel it."""

    def __init__(self, *args: Any, ctx: Context | None = None, run_id: str | None = None,
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._ctx = ctx
        self._run_id = run_id
        self._run: Run | None = None
        self._task: asyncio.Task[Any] | None = None

    @classmethod
    def _of(cls, run: Run, task: asyncio.Task[Any]) -> WorkflowHandler:
        """The handler of a run that ``Workflow.run`` started: it completes as ``task`` does,
        and cancelling it (or whoever awaits it) cancels the run."""
        handler = cls(ctx=run.ctx, run_id=run.run_id, loop=task.get_loop())
        handler._run, handler._task = run, task
        task.add_done_callback(handler._settle)
        return handler

    def _settle(self, task: asyncio.Task[Any]) -> None:
        if self.done():
            if not task.cancelled():
                task.exception()  # reached the caller through the cancelled handler
            return
        if task.cancelled():
            super().cancel()
        elif (error := task.exception()) is not None:
            self.set_exception(error)
        else:
            self.set_result(task.result())

    def cancel(self, msg: Any | None = None) -> bool:
        """Cancel the run (as when whoever awaits the handler is cancelled): it pauses in its
        context, and the handler is cancelled once the run has stopped, so the context is free
        for ``run(ctx=handler.ctx)`` as soon as the cancelled awaiter resumes."""
        if self._task is not None and not self._task.done():
            return self._task.cancel(msg)
        return super().cancel(msg)

    @property
    def ctx(self) -> Context:
        """The run's context: send events to it (``handler.ctx.send_event``) or save it.
        Typed as always there: a handler built with no context raises upstream's "Context is
        not set!" (a ValueError) here rather than returning None."""
        if self._ctx is None:
            raise ValueError("Context is not set!")
        return self._ctx

    @property
    def run_id(self) -> str | None:
        return self._run_id

    def __str__(self) -> str:
        """The result's text, as upstream (InvalidStateError while the run goes on)."""
        return str(self.result())

    def is_done(self) -> bool:
        """``done()``, upstream's other name for it."""
        return self.done()

    def _live_run(self, what: str) -> tuple[Run, asyncio.Task[Any]]:
        if self._run is None or self._task is None:
            raise WorkflowRuntimeError(f"{what}: this handler was built around a context, not "
                                       "returned by Workflow.run(), so it has no run")
        return self._run, self._task

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
        run, task = self._live_run("run_step()")
        if not run.stepwise:
            raise ValueError("Workflow must be created passing stepwise=True to call this method.")
        await asyncio.wait([run.started, task], return_when=asyncio.FIRST_COMPLETED)
        if not run.finishing and not task.done():
            started = run.step_once()
            if started is None:
                raise WorkflowRuntimeError(
                    "run_step(): no step has an event to handle; deliver the events the last "
                    "step produced with handler.ctx.send_event(...) before the next run_step()")
            invocation, frame = started
            await asyncio.wait([invocation, task], return_when=asyncio.FIRST_COMPLETED)
            if not run.finishing and not task.done():
                return run.ctx._hand_out(frame.emitted)
        await asyncio.wait([task])
        task.result()  # the run's error, if it failed
        return None

    async def stream_events(self) -> AsyncIterator[Any]:
        """What the steps wrote with ``ctx.write_event_to_stream`` (any object, as upstream),
        in order, then the StopEvent. As upstream, a run that fails or times out ends the
        stream with a plain ``StopEvent()`` and ``await handler`` raises its error; a
        cancelled run's stream ends without one (its context keeps the unread events for a
        resume)."""
        run, _ = self._live_run("stream_events()")
        stream = run.stream
        unread = stream.items
        while True:
            # what is there already is taken without a wait (a streamed reply is dozens)
            event = unread.popleft() if unread else await stream.get()
            if event is stream_end:
                return
            yield event
            if isinstance(event, StopEvent):
                return

    async def cancel_run(self) -> None:
        """Stop the run; its context keeps what a resume needs (``run(ctx=handler.ctx)``, or
        save it first with ``to_dict``). Awaiting the handler then raises
        WorkflowCancelledByUser."""
        run, task = self._live_run("cancel_run()")
        run.cancel()
        await asyncio.wait([task])
        self._mark_retrieved()

    def _mark_retrieved(self) -> None:
        # a caller that cancels need not await the handler too; asyncio would otherwise log
        # "exception was never retrieved"
        if self.done() and not self.cancelled():
            self.exception()
