"""Stepwise runs: ``run(stepwise=True)``, then ``handler.run_step()`` runs one step and hands
the caller what it emitted; the caller delivers it with ``handler.ctx.send_event``."""

import pytest

from agentkit.core.sim import run_sync
from agentkit.workflow import (
    Context,
    Event,
    HumanResponseEvent,
    InputRequiredEvent,
    StartEvent,
    StopEvent,
    Workflow,
    WorkflowRuntimeError,
    step,
)


class Draft(Event):
    text: str


class Note(Event):
    text: str


class Writer(Workflow):
    @step
    async def draft(self, ctx: Context, ev: StartEvent) -> Draft:
        await ctx.set("drafted", True)
        return Draft(text=ev.topic)

    @step
    async def polish(self, ev: Draft) -> StopEvent:
        return StopEvent(result=ev.text.upper())


class FanOut(Workflow):
    @step
    async def split(self, ctx: Context, ev: StartEvent) -> Note | None:
        ctx.send_event(Note(text="a"))
        ctx.send_event(Note(text="b"))
        return None

    @step
    async def join(self, ctx: Context, ev: Note) -> StopEvent | None:
        notes = ctx.collect_events(ev, [Note, Note])
        return None if notes is None else StopEvent(result="".join(n.text for n in notes))


def _drive(workflow, **kwargs):
    async def main():
        handler = workflow.run(stepwise=True, **kwargs)
        rounds = []
        while (produced := await handler.run_step()) is not None:  # [] is a step, None the end
            rounds.append([type(e).__name__ for e in produced])
            for event in produced:
                handler.ctx.send_event(event)
        return rounds, await handler

    return run_sync(main())


def test_each_run_step_runs_one_step_and_returns_what_it_emitted():
    assert _drive(Writer(), topic="hi") == ([["Draft"], ["StopEvent"]], "HI")


def test_events_a_step_sends_are_handed_to_the_caller_not_delivered_twice():
    # upstream delivered sent events at once *and* handed them out: the driver doubled them
    assert _drive(FanOut()) == ([["Note", "Note"], [], ["StopEvent"]], "ab")


def test_nothing_runs_until_run_step_is_called():
    async def main():
        handler = Writer().run(stepwise=True, topic="x")
        await handler.ctx.get("drafted", default=False)
        before = await handler.ctx.get("drafted", default=False)
        await handler.run_step()
        after = await handler.ctx.get("drafted")
        await handler.cancel_run()
        return before, after

    assert run_sync(main()) == (False, True)


def test_run_step_after_the_run_ended_returns_none_and_the_handler_is_done():
    async def main():
        handler = Writer().run(stepwise=True, topic="x")
        for event in await handler.run_step():
            handler.ctx.send_event(event)
        for event in await handler.run_step():
            handler.ctx.send_event(event)
        ended = await handler.run_step()
        return ended, handler.is_done(), handler.result()

    assert run_sync(main()) == (None, True, "X")


def test_run_step_with_nothing_delivered_says_so_instead_of_hanging():
    async def main():
        handler = Writer().run(stepwise=True, topic="x")
        try:
            await handler.run_step()  # its Draft is not delivered
            await handler.run_step()
        finally:
            await handler.cancel_run()

    with pytest.raises(WorkflowRuntimeError,
                       match=r"^run_step\(\): no step has an event to handle; deliver the events"):
        run_sync(main())


def test_a_failing_step_raises_from_run_step():
    class Failing(Workflow):
        @step
        async def begin(self, ev: StartEvent) -> StopEvent:
            raise RuntimeError("boom")

    async def main():
        handler = Failing().run(stepwise=True)
        try:
            await handler.run_step()
        finally:
            assert handler.is_done()

    with pytest.raises(WorkflowRuntimeError, match=r"^Error in step 'begin': boom$"):
        run_sync(main())


def test_run_step_on_a_run_that_is_not_stepwise_is_an_error():
    async def main():
        handler = Writer().run(topic="x")
        try:
            await handler.run_step()
        finally:
            await handler

    with pytest.raises(ValueError, match=r"^Workflow must be created passing stepwise=True"):
        run_sync(main())


def test_a_human_in_the_loop_workflow_cannot_run_stepwise_as_upstream():
    class Asking(Workflow):
        @step
        async def ask(self, ev: StartEvent) -> InputRequiredEvent:
            return InputRequiredEvent()

        @step
        async def answer(self, ev: HumanResponseEvent) -> StopEvent:
            return StopEvent()

    async def main():
        Asking().run(stepwise=True)

    with pytest.raises(WorkflowRuntimeError,
                       match=r"^Human-in-the-loop is not supported with stepwise execution$"):
        run_sync(main())


def test_wait_for_event_in_a_stepwise_run_fails_instead_of_deadlocking():
    class Waiting(Workflow):
        @step
        async def begin(self, ctx: Context, ev: StartEvent) -> StopEvent:
            await ctx.wait_for_event(Note)
            return StopEvent()

    async def main():
        await Waiting().run(stepwise=True).run_step()

    with pytest.raises(WorkflowRuntimeError, match=r"Human-in-the-loop is not supported with "
                                                   r"stepwise execution \(wait_for_event"):
        run_sync(main())
