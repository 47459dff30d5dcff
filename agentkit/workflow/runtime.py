"""One run of a workflow: starts step invocations as events arrive, ends on StopEvent, error,
timeout or cancellation.

There are no idle worker tasks: each delivered event waits in its step's queue until the step
has fewer than ``num_workers`` invocations running, then gets a task of its own. Tasks run in
the order events were delivered (asyncio is FIFO), so a run is deterministic.

An invocation that a step's returned output starts (the last one the step's end starts) is the
exception: the step's task runs it next instead of ending, after letting what was queued on
the loop before it run (a yield, when something was). It starts at the very point of the
loop's order where a task of its own would have started, in the same context (the run's,
checked unchanged), so nothing can tell; and a chain of steps (init, setup, the agent's
step, ...) costs no task, no done callback and mostly no loop iteration per step. When
something was queued after it was due (a bus listener queued a callback) or the step left a
context variable set, it gets its own task after all, its start moved to where it was due.
A stepwise run, whose caller waits for each invocation's task, a loop without asyncio's ready
queue (``BaseEventLoop._ready``) and one with a task factory (an eager task starts at once)
give every invocation its own task.

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
from collections.abc import Awaitable, Callable, Iterable
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
        self._steps = ctx._graph.steps
        self._queues = ctx._queues
        self._running = dict.fromkeys(self._steps, 0)
        self._busy = 0  # invocations running, all steps together
        self._tasks: set[asyncio.Task[None]] = set()
        self._base: contextvars.Context | None = None  # set inside the run's span
        self._deadline: float | None = None
        self.task: asyncio.Task[Any] | None = None  # main(), set by Workflow.run
        self.ended = False
        # a run whose caller can send input (HITL) may sit idle; any other idle run is stuck
        self._caller_feeds = ctx._graph.takes_caller_input
        # the loop's queue of ready callbacks (asyncio's BaseEventLoop keeps one), when an
        # invocation may be handed over to the task of the step before it (module docstring)
        ready = getattr(self._loop, "_ready", None)
        self._ready: deque[Any] | None = (
            ready if isinstance(ready, deque) and not stepwise
            and self._loop.get_task_factory() is None else None)  # (an eager task starts at once)
        self._tail = False  # an invocation delivers its output: no await left before its end
        self._next: _Handover | None = None  # what the tail started last, for its task to run


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
        if (self._busy or self.stepwise or self._caller_feeds or self._done.done()
                or self._base is None or any(self._queues.values())):
            return
        after = f"after step '{last_step}' emitted no event" if last_step else "when it resumed"
        self._finish(_Outcome(error=WorkflowRuntimeError(
            f"Workflow {self._name} cannot progress {after}: no step is running and no event "
            "is waiting for a step (nothing will ever send one), so the run ends here instead "
            "of waiting forever")))

    # ------------------------------------------------------------------ scheduling
    def pump(self, steps: Iterable[StepSpec] | None = None) -> None:
        """Start an invocation for every queued event whose step has a free worker (a
        stepwise run starts one per ``run_step()`` instead). ``steps``: only those, in
        definition order (the steps an event was just queued for, or whose worker was just
        freed: every other queue was emptied, as far as its workers allow, by an earlier
        pump)."""
        if self._base is None or self._done.done() or self.stepwise:
            return
        for spec in self._steps.values() if steps is None else steps:
            queue = self._queues[spec.name]
            while queue and self._running[spec.name] < spec.num_workers:
                event = queue.popleft()
                frame = self._claim(spec, event)
                if self._tail:  # the delivering task may run it (see _work)
                    self._next = (spec, event, frame, len(self._ready))  # type: ignore[arg-type]
                else:
                    self._spawn(spec, event, frame)

    def step_once(self) -> tuple[asyncio.Task[None], StepFrame] | None:
        """Stepwise: start one invocation, for the first step (in definition order) with an
        event waiting; None when no event is waiting."""
        for spec in self._steps.values():
            queue = self._queues[spec.name]
            if queue:
                event = queue.popleft()
                frame = self._claim(spec, event)
                return self._spawn(spec, event, frame), frame
        return None

    def _claim(self, spec: StepSpec, event: Event) -> StepFrame:
        """Book an invocation of ``spec`` on ``event`` (a worker taken, the event in progress);
        what the tail started before it gets its task now, to run before it."""
        if self._next is not None:
            self._spawn_due(self._next)
            self._next = None
        self.ctx._in_progress[spec.name].append(event)
        self._running[spec.name] += 1
        self._busy += 1
        return StepFrame(spec.name, self.ctx)

    def _spawn(self, spec: StepSpec, event: Event, frame: StepFrame) -> asyncio.Task[None]:
        assert self._base is not None
        # each invocation gets a copy of the run's context: the run's span as parent, never
        # the span of whichever step happened to deliver the event
        task = self._loop.create_task(self._work(spec, event, frame), context=self._base.copy())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def _spawn_due(self, handover: _Handover) -> None:
        """Give a handed-over invocation its own task after all, starting where it was due:
        its first step moved before whatever was queued on the loop since."""
        spec, event, frame, queued = handover
        self._spawn(spec, event, frame)
        ready = self._ready
        assert ready is not None
        if len(ready) > queued + 1:  # (create_task queued the task's first step last)
            ready.insert(queued, ready.pop())

    async def _work(self, spec: StepSpec, event: Event, frame: StepFrame) -> None:
        """A task's invocations: its own, then each one the last invocation's end started last
        (module docstring), while nothing was queued on the loop after it was due (what was
        queued before it runs first) and the context is the run's again."""
        while True:
            token = current_step.set(frame)
            try:
                await self._invoke(spec, event, frame)
            except BaseException:  # (a bus listener failed in the tail): the next one goes on
                self._tail = False
                if self._next is not None:
                    self._spawn_due(self._next)
                    self._next = None
                raise
            self._tail = False
            handover, self._next = self._next, None
            if handover is None:
                return
            current_step.reset(token)
            assert self._ready is not None
            if len(self._ready) != handover[3] or contextvars.copy_context() != self._base:
                self._spawn_due(handover)  # a listener queued a callback, or a step left a
                return  # context variable set: a task of its own, as the tail would have made
            spec, event, frame, queued = handover
            if queued:
                await asyncio.sleep(0)  # to the end of the queue: where its task would be

    async def _invoke(self, spec: StepSpec, event: Event, frame: StepFrame) -> None:
        """Run the step (again, as its retry policy says, if it fails), one bus span per
        attempt; then checkpoint and deliver its output. A failure ends the run."""
        verbose = self.workflow._verbose
        ctx = self.ctx
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
                        kwargs = self._arguments(spec, event)
                        for resource in spec.resources:
                            kwargs[resource.name] = await self.workflow.resource_manager.get(
                                resource.resource)
                        output = (spec.fn.__get__(self.workflow) if spec.is_method
                                  else spec.fn)(**kwargs)
                        # an `async def` step's coroutine: known without inspect's checks
                        if type(output) is CoroutineType or inspect.isawaitable(output):
                            output = await output
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
                        _remove(ctx._in_progress[spec.name], event)
                        try:
                            if self._checkpoint is not None:
                                await self._checkpoint(run_id=self.run_id,
                                                       last_completed_step=spec.name,
                                                       input_ev=event, output_ev=output,
                                                       ctx=ctx)
                            self._tail = self._ready is not None
                            if output is not None:
                                self._emit(output)
                        except Exception as exc:  # noqa: BLE001 (undeliverable output, failed checkpoint)
                            self._fail(spec, event, frame, self._step_error(spec, exc))
                        if dispatcher.wants(WorkflowStepEndEvent):  # else not built
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
            self._ended(spec)
        if verbose:
            produced = ", ".join(type(e).__name__ for e in frame.emitted)
            print(f"Step {spec.name} produced event {produced}" if produced
                  else f"Step {spec.name} produced no event")

    def _ended(self, spec: StepSpec) -> None:
        """An invocation of ``spec`` ended: its worker takes the step's next event, if any;
        a run with nothing left running may be stuck."""
        self._running[spec.name] -= 1
        self._busy -= 1
        if self._queues[spec.name]:
            self.pump((spec,))
        if not self._busy:
            self._check_progress(spec.name)

    def _arguments(self, spec: StepSpec, event: Event) -> dict[str, Any]:
        """The step function's arguments but its resources (awaited by the caller)."""
        kwargs: dict[str, Any] = {spec.event_param: event}
        if spec.ctx_param is not None:
            kwargs[spec.ctx_param] = self.ctx
        for service in spec.services:
            kwargs[service.name] = self.workflow._service(service)
        return kwargs

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

    def _emit(self, output: Event) -> None:
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
            return  # (the step's normal end checks before it calls)
        dispatcher.emit(WorkflowStepEndEvent(
            workflow=self._name, run_id=self.run_id, step=spec.name, input_event=event,
            output_events=list(frame.emitted), error=error))

    # ------------------------------------------------------------------ the run
    async def main(self) -> Any:
        """Run until the end; return the StopEvent's result or raise the run's error."""
        slots = self.workflow._slots
        if slots.limit is None:  # (no slot to take or give back)
            return await self._main()
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
        """The outcome once it is decided, or the timeout's. What ``shield(self._done)`` gives,
        at the same point (a callback of the decided outcome wakes this task), without
        shield's second future and its two callbacks: ``_done`` is never cancelled with us."""
        done = self._done
        if done.done():
            return done.result()
        waiter = self._loop.create_future()

        def wake(_: object) -> None:
            if not waiter.done():
                waiter.set_result(None)

        done.add_done_callback(wake)
        try:
            if timeout is None:  # no timer to set (asyncio.timeout(None) would set none either)
                await waiter
            else:
                async with asyncio.timeout(timeout):
                    await waiter
        except TimeoutError:
            done.remove_done_callback(wake)
            self._finish(_Outcome(error=self._timeout_error()))
        except asyncio.CancelledError:
            done.remove_done_callback(wake)
            raise
        return done.result()

    async def _shutdown(self, outcome: _Outcome) -> None:
        self._finish(outcome)
        if self._tasks:  # (a gather of nothing is done at once: no wait either way)
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


_Handover = tuple[StepSpec, Event, StepFrame, int]
"""An invocation a tail started: its step, event and frame, and the length of the loop's ready
queue when it was started (where its task's first step would have been queued)."""


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
    if events and events[-1] is event:  # the usual place (the same object wherever it is)
        del events[-1]
        return
    for index, candidate in enumerate(events):
        if candidate is event:
            del events[index]
            return
