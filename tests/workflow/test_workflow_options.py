"""Workflow options and workflow-level API: num_concurrent_runs, disable_validation,
is_done(), the workflow-level event stream, nested workflows, runs that cannot progress."""

import asyncio

import pytest

from agentkit.core.sim import asleep, now, run_sync
from agentkit.workflow import (
    Context,
    Event,
    StartEvent,
    StopEvent,
    Workflow,
    WorkflowRuntimeError,
    WorkflowValidationError,
    step,
)


class Ping(Event):
    n: int = 0


class Slow(Workflow):
    @step
    async def begin(self, ev: StartEvent) -> StopEvent:
        started = now()
        await asleep(5)
        return StopEvent(result=started)


# ---------------------------------------------------------------------- num_concurrent_runs
def test_num_concurrent_runs_makes_later_runs_wait_for_a_slot():
    async def main():
        workflow = Slow(num_concurrent_runs=2)
        return await asyncio.gather(*(workflow.run() for _ in range(5)))

    assert run_sync(main()) == [0.0, 0.0, 5.0, 5.0, 10.0]


def test_without_num_concurrent_runs_all_runs_go_at_once():
    async def main():
        workflow = Slow()
        return await asyncio.gather(*(workflow.run() for _ in range(3)))

    assert run_sync(main()) == [0.0, 0.0, 0.0]


def test_a_run_cancelled_while_waiting_for_a_slot_gives_its_turn_away():
    async def main():
        workflow = Slow(num_concurrent_runs=1)
        first, waiting, third = workflow.run(), workflow.run(), workflow.run()
        await waiting.cancel_run()
        return await first, await third

    assert run_sync(main()) == (0.0, 5.0)


@pytest.mark.parametrize("value", [0, -1, 1.5, True])
def test_num_concurrent_runs_must_be_a_positive_int(value):
    with pytest.raises(ValueError, match=r"^num_concurrent_runs must be an int >= 1 or None"):
        Slow(num_concurrent_runs=value)


# ---------------------------------------------------------------------- disable_validation
class Unconsumed(Workflow):
    @step
    async def begin(self, ev: StartEvent) -> Ping | StopEvent:
        return StopEvent(result="done")


def test_a_wrongly_wired_workflow_is_rejected_when_built():
    with pytest.raises(WorkflowValidationError, match="returns Ping, but no step accepts Ping"):
        Unconsumed()


def test_disable_validation_builds_and_runs_it():
    assert Unconsumed(disable_validation=True).run_sync() == "done"


def test_validation_is_checked_again_for_a_later_validated_instance():
    Unconsumed(disable_validation=True)
    with pytest.raises(WorkflowValidationError):
        Unconsumed()


# ---------------------------------------------------------------------- is_done
def test_is_done_is_false_while_a_run_is_in_progress():
    async def main():
        workflow = Slow()
        before = workflow.is_done()
        handler = workflow.run()
        during = workflow.is_done()
        await handler
        return before, during, workflow.is_done()

    assert run_sync(main()) == (True, False, True)


# ---------------------------------------------------------------------- workflow-level stream
class Chatty(Workflow):
    @step
    async def begin(self, ctx: Context, ev: StartEvent) -> StopEvent:
        ctx.write_event_to_stream(Ping(n=1))
        ctx.write_event_to_stream(Ping(n=2))
        return StopEvent(result="ok")


def test_the_workflow_streams_its_one_runs_events_without_the_stop_event():
    async def main():
        workflow = Chatty()
        handler = workflow.run()
        events = [e.n async for e in workflow.stream_events()]
        return events, await handler

    assert run_sync(main()) == ([1, 2], "ok")


def test_the_workflow_stream_refuses_to_choose_between_concurrent_runs():
    async def main():
        workflow = Chatty()
        handlers = [workflow.run(), workflow.run()]
        try:
            async for _ in workflow.stream_events():
                pass
        finally:
            await asyncio.gather(*handlers)

    with pytest.raises(WorkflowRuntimeError, match=r"^This workflow has multiple concurrent runs"):
        run_sync(main())


def test_the_workflow_stream_without_a_run_says_so():
    async def main():
        async for _ in Chatty().stream_events():
            pass

    with pytest.raises(WorkflowRuntimeError, match=r"^This workflow has no run to stream"):
        run_sync(main())


# ---------------------------------------------------------------------- nested workflows
class Doubler(Workflow):
    @step
    async def double(self, ev: StartEvent) -> StopEvent:
        return StopEvent(result=ev.n * 2)


class Outer(Workflow):
    @step
    async def begin(self, ev: StartEvent, doubler: Doubler) -> StopEvent:
        return StopEvent(result=await doubler.run(n=ev.n) + 1)


class Tripler(Doubler):
    @step
    async def double(self, ev: StartEvent) -> StopEvent:
        return StopEvent(result=ev.n * 3)


def test_a_step_receives_the_nested_workflow_added_under_its_parameter_name():
    async def main():
        outer = Outer()
        outer.add_workflows(doubler=Doubler())
        return await outer.run(n=5)

    assert run_sync(main()) == 11


def test_another_nested_workflow_can_stand_in():
    async def main():
        outer = Outer()
        outer.add_workflows(doubler=Tripler())
        return await outer.run(n=5)

    assert run_sync(main()) == 16


def test_a_missing_nested_workflow_is_a_validation_error_at_run():
    async def main():
        await Outer().run(n=1)

    with pytest.raises(WorkflowValidationError,
                       match=r"^The following services are not available: doubler"):
        run_sync(main())


_DEFAULT_DOUBLER = Doubler()


def test_a_nested_workflow_parameter_with_a_default_needs_none_added():
    class WithDefault(Workflow):
        @step
        async def begin(self, ev: StartEvent, doubler: Doubler = _DEFAULT_DOUBLER) -> StopEvent:
            return StopEvent(result=await doubler.run(n=2))

    assert WithDefault().run_sync() == 4


def test_add_workflows_takes_workflows_only():
    with pytest.raises(TypeError, match=r"^add_workflows\(doubler=...\) takes a Workflow"):
        Outer().add_workflows(doubler="nope")  # type: ignore[arg-type]


# ---------------------------------------------------------------------- progress
def test_a_run_that_cannot_progress_ends_with_a_clear_error_at_once():
    class Dead(Workflow):
        @step
        async def begin(self, ev: StartEvent) -> Ping | None:
            return None

        @step
        async def end(self, ev: Ping) -> StopEvent:
            return StopEvent()

    with pytest.raises(WorkflowRuntimeError,
                       match=r"^Workflow Dead cannot progress after step 'begin' emitted no event: "
                             r"no step is running and no event is waiting for a step"):
        Dead(timeout=None).run_sync()
    assert now() == 0.0
