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

A run that can no longer progress ends with a WorkflowRuntimeError instead of waiting for a
timeout that may never come: no step is running, no event is waiting for a step, and no step
takes input from the caller (a ``HumanResponseEvent``). A stepwise run is driven by its caller
(``handler.run_step()``) and never ends that way.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from types import CoroutineType
from typing import TYPE_CHECKING, Any, NoReturn

from agentkit.core.events import dispatcher
from agentkit.core.ids import current_ids
from agentkit.core.sim import now
from agentkit.workflow.bus import (
    WorkflowRunEndEvent,
    WorkflowRunStartEvent,
    WorkflowStepEndEvent,
    WorkflowStepRetryEvent,
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

__all__ = ["Run", "RunSlots", "CheckpointCallback"]

CheckpointCallback = Callable[..., Awaitable[None]]
"""``await callback(run_id=, last_completed_step=, input_ev=, output_ev=, ctx=)`` after each
completed step, before its returned event is delivered (LlamaIndex's signature)."""


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


class RunSlots:
    """``Workflow(num_concurrent_runs=N)``: at most N runs of one workflow at a time; the
    others wait, in the order they were started, before their first step (and before their
    timeout starts, as upstream). Loop-independent, unlike an asyncio.Semaphore made once."""

    def __init__(self, limit: int | None) -> None:
        self.limit = limit
        self._used = 0
        self._waiting: deque[asyncio.Future[None]] = deque()

    async def acquire(self, give_up: asyncio.Future[Any]) -> bool:
        """Take a slot; False when ``give_up`` completed first (the run was cancelled)."""
        if self.limit is None:
            return True
        while self._used >= self.limit:
            wakeup = asyncio.get_running_loop().create_future()
            self._waiting.append(wakeup)
            await asyncio.wait([wakeup, give_up], return_when=asyncio.FIRST_COMPLETED)
            if give_up.done():
                if wakeup.done():
                    self._wake_next()  # pass on the turn this run no longer wants
                else:
                    self._waiting.remove(wakeup)
                return False
        self._used += 1
        return True

    def release(self) -> None:
        if self.limit is None:
            return
        self._used -= 1
        self._wake_next()

    def _wake_next(self) -> None:
        while self._waiting:
            wakeup = self._waiting.popleft()
            if not wakeup.done():
                wakeup.set_result(None)
                return


class Run:
    """The live part of a run (tasks, the end signal); its state lives in the Context."""

    def __init__(self, workflow: Workflow, ctx: Context, start_event: StartEvent | None, *,
                 stepwise: bool = False,
                 checkpoint_callback: CheckpointCallback | None = None) -> None:
        self._loop = asyncio.get_running_loop()
        self.workflow = workflow
        self._name = type(workflow).__name__  # as the bus events name the workflow
        self.ctx = ctx
        self.stepwise = stepwise
        self._checkpoint = checkpoint_callback
        self.run_id = f"run-{current_ids().counter('workflow_run')}"
        self.resumed = ctx._begin(self, start_event)
        self.stream = ctx._stream
        self._done: asyncio.Future[_Outcome] = self._loop.create_future()
        self.started: asyncio.Future[None] = self._loop.create_future()
        self._running = dict.fromkeys(ctx._graph.steps, 0)
        self._tasks: set[asyncio.Task[None]] = set()
        self._base: contextvars.Context | None = None  # set inside the run's span
        self._deadline: float | None = None
        self.task: asyncio.Task[Any] | None = None  # main(), set by Workflow.run
        self.ended = False
        # a run whose caller can send input (HITL) may sit idle; any other idle run is stuck
        self._caller_feeds = ctx._graph.takes_caller_input


    # ------------------------------------------------------------------ ending
    def stop(self, event: StopEvent) -> None:
        self._finish(_Outcome(stop=event))

    def cancel(self) -> None:
        self._finish(_Outcome(error=WorkflowCancelledByUser("Workflow run was cancelled by "
                                                            "cancel_run()"), paused=True))

    def _finish(self, outcome: _Outcome) -> None:
        if not self._done.done():
            self._done.set_result(outcome)

    @property
    def finishing(self) -> bool:
        """The run's outcome is decided (it may still be shutting down)."""
        return self._done.done()

    def _check_deadline(self) -> None:
        if self._deadline is not None and now() > self._deadline:
            self._finish(_Outcome(error=self._timeout_error()))

    def _timeout_error(self) -> WorkflowTimeoutError:
        return WorkflowTimeoutError(f"Operation timed out after {self.workflow.timeout} seconds")

    def _check_progress(self, last_step: str | None) -> None:
        """End a run that nothing can move any more (see the module docstring)."""
        if (self.stepwise or self._caller_feeds or self._done.done() or self._base is None
                or any(self._running.values()) or any(self.ctx._queues.values())):
            return
        after = f"after step '{last_step}' emitted no event" if last_step else "when it resumed"
        self._finish(_Outcome(error=WorkflowRuntimeError(
            f"Workflow {self._name} cannot progress {after}: no step is running and no event "
            "is waiting for a step (nothing will ever send one), so the run ends here instead "
            "of waiting forever")))

    # ------------------------------------------------------------------ scheduling
    def pump(self) -> None:
        """Start an invocation for every queued event whose step has a free worker (a
        stepwise run starts one per ``run_step()`` instead)."""
        if self._base is None or self._done.done() or self.stepwise:
            return
        for spec in self.ctx._graph.steps.values():
            queue = self.ctx._queues[spec.name]
            while queue and self._running[spec.name] < spec.num_workers:
                self._start(spec, queue.popleft())

    def step_once(self) -> tuple[asyncio.Task[None], StepFrame] | None:
        """Stepwise: start one invocation, for the first step (in definition order) with an
        event waiting; None when no event is waiting."""
        for spec in self.ctx._graph.steps.values():
            queue = self.ctx._queues[spec.name]
            if queue:
                return self._start(spec, queue.popleft())
        return None

    def _start(self, spec: StepSpec, event: Event) -> tuple[asyncio.Task[None], StepFrame]:
        assert self._base is not None
        self.ctx._in_progress[spec.name].append(event)
        self._running[spec.name] += 1
        frame = StepFrame(spec.name, self.ctx)
        # each invocation gets a copy of the run's context: the run's span as parent, never
        # the span of whichever step happened to deliver the event
        task = self._loop.create_task(self._invoke(spec, event, frame), context=self._base.copy())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task, frame

    async def _invoke(self, spec: StepSpec, event: Event, frame: StepFrame) -> None:
        """Run the step (again, as its retry policy says, if it fails), one bus span per
        attempt; then checkpoint and deliver its output. A failure ends the run."""
        current_step.set(frame)
        verbose = self.workflow.verbose
        try:
            if verbose:
                print(f"Running step {spec.name}")
            # when the first attempt started: a retry policy is told the time since
            started = now() if spec.retry_policy is not None else 0.0
            attempts = 0
            while True:
                with dispatcher.span():
                    if dispatcher.wants(WorkflowStepStartEvent):  # else not built
                        dispatcher.emit(WorkflowStepStartEvent(
                            workflow=self._name, run_id=self.run_id, step=spec.name,
                            input_event=event))
                    try:
                        output = await self._call(spec, event)
                        if output is not None and not isinstance(output, Event):
                            raise _StepFailed(WorkflowRuntimeError(
                                f"Step function {spec.name} returned {type(output).__name__} "
                                "instead of an Event instance."))
                    except asyncio.CancelledError:
                        self._step_end(spec, event, frame, error="cancelled")
                        raise
                    except _StepFailed as failed:
                        self._fail(spec, event, frame, failed.error)
                    except Exception as exc:  # noqa: BLE001 (the step's error: retry, or end the run)
                        error_text = f"{type(exc).__name__}: {exc}"
                        self._step_end(spec, event, frame, error=error_text)
                        delay = self._retry_delay(spec, now() - started, attempts, exc)
                        if delay is None:
                            self._fail(spec, event, frame, self._step_error(spec, exc),
                                       report=False)
                    else:
                        if self._deadline is not None:
                            self._check_deadline()
                        _remove(self.ctx._in_progress[spec.name], event)
                        try:
                            if self._checkpoint is not None:
                                await self._checkpoint(run_id=self.run_id,
                                                       last_completed_step=spec.name,
                                                       input_ev=event, output_ev=output,
                                                       ctx=self.ctx)
                            self._emit(output)
                        except Exception as exc:  # noqa: BLE001 (undeliverable output, failed checkpoint)
                            self._fail(spec, event, frame, self._step_error(spec, exc))
                        self._step_end(spec, event, frame)
                        break
                attempts += 1
                dispatcher.emit(WorkflowStepRetryEvent(
                    workflow=self._name, run_id=self.run_id, step=spec.name, input_event=event,
                    attempt=attempts, delay=delay, error=error_text))
                if verbose:
                    print(f"Step {spec.name} produced an error, retry in {delay} seconds")
                await asyncio.sleep(delay)
        except _StepFailed:
            return
        finally:
            self._running[spec.name] -= 1
            self.pump()
            self._check_progress(spec.name)
        if verbose:
            produced = ", ".join(type(e).__name__ for e in frame.emitted)
            print(f"Step {spec.name} produced event {produced}" if produced
                  else f"Step {spec.name} produced no event")

    def _step_error(self, spec: StepSpec, exc: Exception) -> WorkflowRuntimeError:
        error = WorkflowRuntimeError(f"Error in step '{spec.name}': {exc}")
        error.__cause__ = exc
        return error

    def _fail(self, spec: StepSpec, event: Event, frame: StepFrame, error: WorkflowRuntimeError,
              report: bool = True) -> NoReturn:
        """End the run with ``error`` (reporting the step's end with it unless reported)."""
        if report:
            cause = error.__cause__ if isinstance(error.__cause__, Exception) else error
            self._step_end(spec, event, frame, error=f"{type(cause).__name__}: {cause}")
        self._finish(_Outcome(error=error))
        raise _StepFailed(error)

    def _retry_delay(self, spec: StepSpec, elapsed: float, attempts: int,
                     error: Exception) -> float | None:
        policy = spec.retry_policy
        if policy is None:
            return None
        delay = policy.next(elapsed, attempts, error)
        if delay is not None and (isinstance(delay, bool) or not isinstance(delay, (int, float))
                                  or not delay >= 0):
            failure = WorkflowRuntimeError(
                f"The retry policy of step '{spec.name}' ({policy!r}) returned {delay!r}; next() "
                "returns seconds to wait (a number >= 0) or None to stop retrying")
            self._finish(_Outcome(error=failure))
            raise _StepFailed(failure)
        return delay

    async def _call(self, spec: StepSpec, event: Event) -> Any:
        kwargs: dict[str, Any] = {spec.event_param: event}
        if spec.ctx_param is not None:
            kwargs[spec.ctx_param] = self.ctx
        for service in spec.services:
            kwargs[service.name] = self.workflow._service(service)
        for resource in spec.resources:
            kwargs[resource.name] = await self.workflow.resource_manager.get(resource.resource)
        fn = spec.fn.__get__(self.workflow) if spec.is_method else spec.fn
        result = fn(**kwargs)
        # an `async def` step's coroutine: known without inspect's checks
        if type(result) is CoroutineType or inspect.isawaitable(result):
            result = await result
        return result

    def _emit(self, output: Event | None) -> None:
        if output is None:
            return
        if self.stepwise:  # the caller gets it from run_step() and delivers it
            self.ctx._hold(output)
        elif isinstance(output, InputRequiredEvent):  # for the caller, as upstream
            self.ctx._note_emitted(output)
            self.ctx.write_event_to_stream(output)
        else:
            self.ctx.send_event(output)

    def _step_end(self, spec: StepSpec, event: Event, frame: StepFrame,
                  error: str | None = None) -> None:
        if not dispatcher.wants(WorkflowStepEndEvent):  # an event nobody takes is not built
            return
        dispatcher.emit(WorkflowStepEndEvent(
            workflow=self._name, run_id=self.run_id, step=spec.name, input_event=event,
            output_events=list(frame.emitted), error=error))

    # ------------------------------------------------------------------ the run
    async def main(self) -> Any:
        """Run until the end; return the StopEvent's result or raise the run's error."""
        slots = self.workflow._slots
        if not await slots.acquire(self._done):  # cancelled while waiting for a slot
            self.started.set_result(None)
            await self._shutdown(self._done.result())
            raise self._done.result().error or WorkflowCancelledByUser()
        try:
            return await self._main()
        finally:
            slots.release()

    async def _main(self) -> Any:
        with dispatcher.span():
            self._base = contextvars.copy_context()
            dispatcher.emit(WorkflowRunStartEvent(workflow=self._name, run_id=self.run_id,
                                                  resumed=self.resumed))
            timeout = self.workflow.timeout
            if timeout is not None:
                self._deadline = now() + timeout
            self.started.set_result(None)
            self.pump()
            self._check_progress(None)
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
        if timeout is None:  # no timer to set (asyncio.timeout(None) would set none either)
            return await asyncio.shield(self._done)
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
        self.ended = True
        self.workflow._run_ended(self)
        if not outcome.paused:
            await self.workflow._on_run_end(self.ctx, outcome.error)
        if outcome.stop is not None:
            self.ctx._retval = _result_of(outcome.stop)
            self.stream.put(outcome.stop)
        elif not outcome.paused:  # failed or timed out: as upstream, the stream ends with a
            self.stream.put(StopEvent())  # plain StopEvent and the handler has the error
        self.stream.close()
        if self._base is None:  # cancelled before it started: nothing was reported
            return
        dispatcher.emit(WorkflowRunEndEvent(
            workflow=self._name, run_id=self.run_id, outcome=outcome.name,
            result=None if outcome.stop is None else _result_of(outcome.stop),
            error=None if outcome.error is None
            else f"{type(outcome.error).__name__}: {outcome.error}"))


class _StepFailed(Exception):
    """A step invocation ended the run with ``error`` (already reported)."""

    def __init__(self, error: WorkflowRuntimeError) -> None:
        super().__init__(str(error))
        self.error = error


def _result_of(stop: StopEvent) -> Any:
    """As upstream: a plain StopEvent gives its ``result``, a subclass is the result itself."""
    return stop.result if type(stop) is StopEvent else stop


def _remove(events: list[Event], event: Event) -> None:
    """Remove ``event`` itself (not an equal one) from ``events``."""
    for index, candidate in enumerate(events):
        if candidate is event:
            del events[index]
            return
