"""One run of a workflow: starts step invocations as events arrive, ends on StopEvent, error,
timeout or cancellation.

There are no idle worker tasks: each delivered event waits in its step's queue until the step
has fewer than ``num_workers`` invocations running, then gets a task of its own. Tasks run in
the order events were delivered (asyncio is FIFO), so a run is deterministic.

The timeout is virtual time on a virtual-time loop (``agentkit.core.sim``): a step awaiting
100 simulated seconds under ``timeout=10`` fails at virtual 10 s, in no real time. On any
other loop the clock only moves with simulated latency (``asleep`` jumps it), so the virtual
deadline is also checked whenever a step returns, while the loop's own timer (real seconds
there) stops a run that hangs.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agentkit.core.events import dispatcher
from agentkit.core.ids import current_ids
from agentkit.core.sim import now
from agentkit.workflow.bus import (
    WorkflowRunEndEvent,
    WorkflowRunStartEvent,
    WorkflowStepEndEvent,
    WorkflowStepStartEvent,
)
from agentkit.workflow.context import Context, StepFrame, current_step
from agentkit.workflow.decorators import StepSpec
from agentkit.workflow.errors import (
    WorkflowCancelledByUser,
    WorkflowRuntimeError,
    WorkflowTimeoutError,
)
from agentkit.workflow.events import Event, InputRequiredEvent, StartEvent, StopEvent

if TYPE_CHECKING:
    from agentkit.workflow.workflow import Workflow

__all__ = ["Run"]


@dataclass(frozen=True)
class _Outcome:
    stop: StopEvent | None = None
    error: BaseException | None = None
    paused: bool = False  # cancelled: the context keeps what it needs to resume

    @property
    def name(self) -> str:
        if self.stop is not None:
            return "stopped"
        if isinstance(self.error, WorkflowCancelledByUser):
            return "cancelled"
        if isinstance(self.error, WorkflowTimeoutError):
            return "timed_out"
        return "failed"


class Run:
    """The live part of a run (tasks, the end signal); its state lives in the Context."""

    def __init__(self, workflow: Workflow, ctx: Context, start_event: StartEvent | None) -> None:
        self._loop = asyncio.get_running_loop()
        self.workflow = workflow
        self.ctx = ctx
        self.run_id = f"run-{current_ids().counter('workflow_run')}"
        self.resumed = ctx._begin(self, start_event)
        self.stream = ctx._stream
        self._done: asyncio.Future[_Outcome] = self._loop.create_future()
        self._running = dict.fromkeys(ctx._graph.steps, 0)
        self._tasks: set[asyncio.Task[None]] = set()
        self._base: contextvars.Context | None = None  # set inside the run's span
        self._deadline: float | None = None

    @property
    def _name(self) -> str:
        return type(self.workflow).__name__

    # ------------------------------------------------------------------ ending
    def stop(self, event: StopEvent) -> None:
        self._finish(_Outcome(stop=event))

    def cancel(self) -> None:
        self._finish(_Outcome(error=WorkflowCancelledByUser("Workflow run was cancelled by "
                                                            "cancel_run()"), paused=True))

    def _finish(self, outcome: _Outcome) -> None:
        if not self._done.done():
            self._done.set_result(outcome)

    def _check_deadline(self) -> None:
        if self._deadline is not None and now() > self._deadline:
            self._finish(_Outcome(error=self._timeout_error()))

    def _timeout_error(self) -> WorkflowTimeoutError:
        return WorkflowTimeoutError(f"Operation timed out after {self.workflow.timeout} seconds")

    # ------------------------------------------------------------------ scheduling
    def pump(self) -> None:
        """Start an invocation for every queued event whose step has a free worker."""
        if self._base is None or self._done.done():
            return
        for spec in self.ctx._graph.steps.values():
            queue = self.ctx._queues[spec.name]
            while queue and self._running[spec.name] < spec.num_workers:
                event = queue.popleft()
                self.ctx._in_progress[spec.name].append(event)
                self._running[spec.name] += 1
                # each invocation gets a copy of the run's context: the run's span as parent,
                # never the span of whichever step happened to deliver the event
                task = self._loop.create_task(self._invoke(spec, event),
                                              context=self._base.copy())
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)

    async def _invoke(self, spec: StepSpec, event: Event) -> None:
        frame = StepFrame(spec.name)
        current_step.set(frame)
        try:
            with dispatcher.span():
                dispatcher.emit(WorkflowStepStartEvent(workflow=self._name, run_id=self.run_id,
                                                       step=spec.name, input_event=event))
                if self.workflow.verbose:
                    print(f"Running step {spec.name}")
                try:
                    result = await self._call(spec, event)
                    self._check_deadline()
                    _remove(self.ctx._in_progress[spec.name], event)
                    self._emit(result)
                except asyncio.CancelledError:
                    self._step_end(spec, event, frame, error="cancelled")
                    raise
                except Exception as exc:  # noqa: BLE001 (a failing step ends the run with its error)
                    self._step_end(spec, event, frame, error=f"{type(exc).__name__}: {exc}")
                    error = WorkflowRuntimeError(f"Error in step '{spec.name}': {exc}")
                    error.__cause__ = exc
                    self._finish(_Outcome(error=error))
                    return
                self._step_end(spec, event, frame)
                if self.workflow.verbose:
                    produced = ", ".join(type(e).__name__ for e in frame.emitted)
                    print(f"Step {spec.name} produced event {produced}" if produced
                          else f"Step {spec.name} produced no event")
        finally:
            self._running[spec.name] -= 1
            self.pump()

    async def _call(self, spec: StepSpec, event: Event) -> Any:
        kwargs: dict[str, Any] = {spec.event_param: event}
        if spec.ctx_param is not None:
            kwargs[spec.ctx_param] = self.ctx
        fn = spec.fn.__get__(self.workflow) if spec.is_method else spec.fn
        result = fn(**kwargs)
        if inspect.isawaitable(result):
            result = await result
        return result

    def _emit(self, result: Any) -> None:
        if result is None:
            return
        if not isinstance(result, Event):
            raise WorkflowRuntimeError(f"the step returned {type(result).__name__}, not an Event "
                                       "(return an Event, or None to emit nothing)")
        if isinstance(result, InputRequiredEvent):  # for the caller, as upstream
            self.ctx._note_emitted(result)
            self.ctx.write_event_to_stream(result)
        else:
            self.ctx.send_event(result)

    def _step_end(self, spec: StepSpec, event: Event, frame: StepFrame,
                  error: str | None = None) -> None:
        dispatcher.emit(WorkflowStepEndEvent(
            workflow=self._name, run_id=self.run_id, step=spec.name, input_event=event,
            output_events=list(frame.emitted), error=error))

    # ------------------------------------------------------------------ the run
    async def main(self) -> Any:
        """Run until the end; return the StopEvent's result or raise the run's error."""
        with dispatcher.span():
            self._base = contextvars.copy_context()
            dispatcher.emit(WorkflowRunStartEvent(workflow=self._name, run_id=self.run_id,
                                                  resumed=self.resumed))
            timeout = self.workflow.timeout
            if timeout is not None:
                self._deadline = now() + timeout
            self.pump()
            try:
                outcome = await self._wait(timeout)
            except asyncio.CancelledError:  # whoever awaited the handler was cancelled
                await self._shutdown(_Outcome(error=WorkflowCancelledByUser(
                    "Workflow run was cancelled"), paused=True))
                raise
            await self._shutdown(outcome)
        if outcome.error is not None:
            raise outcome.error
        assert outcome.stop is not None
        return _result_of(outcome.stop)

    async def _wait(self, timeout: float | None) -> _Outcome:  # noqa: ASYNC109 (the run's timeout)
        try:
            async with asyncio.timeout(timeout):
                return await asyncio.shield(self._done)
        except TimeoutError:
            self._finish(_Outcome(error=self._timeout_error()))
            return self._done.result()

    async def _shutdown(self, outcome: _Outcome) -> None:
        self._finish(outcome)
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self.ctx._end(paused=outcome.paused)
        if not outcome.paused:
            await self.workflow._on_run_end(self.ctx, outcome.error)
        if outcome.stop is not None:
            self.stream.put(outcome.stop)
        stream_error = None if outcome.paused else outcome.error
        self.stream.close(stream_error)
        dispatcher.emit(WorkflowRunEndEvent(
            workflow=self._name, run_id=self.run_id, outcome=outcome.name,
            result=None if outcome.stop is None else _result_of(outcome.stop),
            error=None if outcome.error is None
            else f"{type(outcome.error).__name__}: {outcome.error}"))


def _result_of(stop: StopEvent) -> Any:
    """As upstream: a plain StopEvent gives its ``result``, a subclass is the result itself."""
    return stop.result if type(stop) is StopEvent else stop


def _remove(events: list[Event], event: Event) -> None:
    """Remove ``event`` itself (not an equal one) from ``events``."""
    for index, candidate in enumerate(events):
        if candidate is event:
            del events[index]
            return
