"""The timeout is virtual time: a run that would take 100 simulated seconds fails at 10."""

import asyncio

import pytest

from agentkit.core.sim import UnmodelledLatencyWarning, asleep, now, run_sync, sleep
from agentkit.workflow import (
    Context,
    HumanResponseEvent,
    StartEvent,
    StopEvent,
    Workflow,
    WorkflowRuntimeError,
    WorkflowTimeoutError,
    step,
)


class Slow(Workflow):
    @step
    async def begin(self, ev: StartEvent) -> StopEvent:
        await asleep(100)
        return StopEvent(result="late")


def test_a_slow_step_fails_with_workflow_timeout_error():
    with pytest.raises(WorkflowTimeoutError, match=r"^Operation timed out after 10 seconds$"):
        Slow(timeout=10).run_sync()


def test_the_timeout_fires_at_virtual_ten_seconds_not_after_the_hundred():
    with pytest.raises(WorkflowTimeoutError):
        Slow(timeout=10).run_sync()
    assert now() == 10.0


def test_the_default_timeout_is_ten_seconds_as_upstream():
    assert Slow().timeout == 10.0


def test_a_run_within_the_timeout_finishes():
    assert Slow(timeout=100.5).run_sync() == "late"


def test_no_timeout_lets_a_long_run_finish():
    assert (Slow(timeout=None).run_sync(), now()) == ("late", 100.0)


class WaitsForever(Workflow):
    @step
    async def begin(self, ctx: Context, ev: StartEvent) -> StopEvent:
        await ctx.wait_for_event(HumanResponseEvent)
        return StopEvent()


def test_a_step_waiting_for_an_event_nobody_sends_ends_at_the_timeout():
    with pytest.raises(WorkflowTimeoutError):
        WaitsForever(timeout=30).run_sync()
    assert now() == 30.0


class WaitsBriefly(Workflow):
    @step
    async def begin(self, ctx: Context, ev: StartEvent) -> StopEvent:
        await ctx.wait_for_event(HumanResponseEvent, timeout=2)
        return StopEvent()


def test_wait_for_event_with_its_own_timeout_fails_the_step():
    with pytest.raises(WorkflowRuntimeError,
                       match=r"^Error in step 'begin': wait_for_event\(HumanResponseEvent\) got "
                             r"no event within 2 seconds$"):
        WaitsBriefly(timeout=30).run_sync()


class SyncSlow(Workflow):
    @step
    def begin(self, ev: StartEvent) -> StopEvent:
        sleep(50)  # sync simulated latency: the clock jumps without the loop's timer
        return StopEvent()


def test_a_step_that_overruns_the_deadline_without_yielding_times_out_when_it_returns():
    with pytest.raises(WorkflowTimeoutError):
        SyncSlow(timeout=10).run_sync()
    assert now() == 50.0


def test_on_a_plain_asyncio_loop_the_virtual_deadline_is_checked_when_a_step_returns():
    async def main():
        return await Slow(timeout=10).run()

    with (pytest.raises(WorkflowTimeoutError, match=r"^Operation timed out after 10 seconds$"),
          pytest.warns(UnmodelledLatencyWarning)):
        asyncio.run(main())
    assert now() == 100.0  # off agentkit's loop asleep jumps the clock in one go


def test_cancelling_the_code_that_awaits_a_run_pauses_the_run():
    async def main():
        handler = Slow(timeout=None).run()
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(handler, timeout=5)
        return handler.ctx.is_running, now()

    assert run_sync(main()) == (True, 5.0)


def test_a_run_paused_by_cancelling_its_awaiter_resumes_with_its_context():
    async def main():
        wf = Slow(timeout=None)
        handler = wf.run()
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(handler, timeout=5)
        return await wf.run(ctx=handler.ctx), now()

    assert run_sync(main()) == ("late", 105.0)
