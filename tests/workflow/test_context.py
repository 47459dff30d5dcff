"""Context: the store, collect_events fan-in, wait_for_event, the lock."""

import asyncio

import pytest

from agentkit.core.sim import asleep, run_sync
from agentkit.workflow import (
    Context,
    Event,
    HumanResponseEvent,
    StartEvent,
    StopEvent,
    Workflow,
    step,
)


class Tick(Event):
    n: int


class Tock(Event):
    n: int


class Minimal(Workflow):
    @step
    async def begin(self, ev: StartEvent) -> StopEvent:
        return StopEvent()


def _ctx() -> Context:
    return Context(Minimal())


def test_store_get_returns_what_set_stored():
    async def main():
        ctx = _ctx()
        await ctx.store.set("k", [1])
        return await ctx.store.get("k")

    assert run_sync(main()) == [1]


def test_store_get_returns_the_default_for_a_missing_key():
    assert run_sync(_ctx().store.get("k", default=None)) is None


def test_store_get_without_a_default_for_a_missing_key_is_a_value_error():
    with pytest.raises(ValueError, match=r"^Key 'k' not found in the context store"):
        run_sync(_ctx().store.get("k"))


def test_the_stores_sync_reads_and_writes_are_its_async_ones():
    ctx = _ctx()
    ctx.store.data["k"] = [1]

    assert run_sync(ctx.store.get("k")) == ctx.store.read("k") == ctx.store.data.get("k") == [1]
    with pytest.raises(ValueError, match=r"^Key 'j' not found in the context store"):
        ctx.store.read("j")


class Tally(Workflow):
    @step
    async def begin(self, ctx: Context, ev: StartEvent) -> StopEvent:
        count = await ctx.store.get("count", default=0) + 1
        await ctx.store.set("count", count)
        return StopEvent(result=count)


def test_a_context_reused_across_runs_keeps_its_store():
    wf = Tally()
    ctx = Context(wf)
    results = [wf.run_sync(ctx=ctx) for _ in range(3)]
    assert results == [1, 2, 3]


def test_a_new_context_per_run_starts_with_an_empty_store():
    wf = Tally()
    assert [wf.run_sync(), wf.run_sync()] == [1, 1]


def test_a_context_of_another_workflow_is_rejected_by_run():
    from agentkit.workflow import WorkflowRuntimeError

    with pytest.raises(WorkflowRuntimeError,
                       match=r"^This Context belongs to workflow Minimal, not Tally$"):
        Tally().run_sync(ctx=_ctx())


class FanIn(Workflow):
    @step
    async def begin(self, ctx: Context, ev: StartEvent) -> Tick | Tock:
        # Tock first: collect_events still returns them in the expected order
        ctx.send_event(Tock(n=1))
        ctx.send_event(Tick(n=2))
        ctx.send_event(Tick(n=3))
        return None

    @step(num_workers=1)
    async def join(self, ctx: Context, ev: Tick | Tock) -> StopEvent | None:
        collected = ctx.collect_events(ev, [Tick, Tick, Tock])
        calls = await ctx.store.get("calls", default=[])
        await ctx.store.set("calls", [*calls, collected is None])
        if collected is None:
            return None
        return StopEvent(result=([type(e).__name__ for e in collected], [e.n for e in collected],
                                 await ctx.store.get("calls")))


def test_collect_events_returns_none_until_every_expected_event_is_in():
    _, _, calls = FanIn().run_sync()
    assert calls == [True, True, False]


def test_collect_events_returns_the_events_in_the_expected_order():
    names, numbers, _ = FanIn().run_sync()
    assert (names, numbers) == (["Tick", "Tick", "Tock"], [2, 3, 1])


def test_collect_events_outside_a_step_uses_a_buffer_per_expected_types():
    ctx = _ctx()
    first = ctx.collect_events(Tick(n=1), [Tick, Tock])
    second = ctx.collect_events(Tock(n=2), [Tick, Tock])
    assert (first, [e.n for e in second]) == (None, [1, 2])


def test_collect_events_with_a_buffer_id_keeps_buffers_apart():
    ctx = _ctx()
    ctx.collect_events(Tick(n=1), [Tick, Tock], buffer_id="a")
    assert ctx.collect_events(Tock(n=2), [Tick, Tock], buffer_id="b") is None


class Asker(Workflow):
    @step
    async def begin(self, ctx: Context, ev: StartEvent) -> StopEvent:
        answer = await ctx.wait_for_event(HumanResponseEvent, requirements={"who": "ada"})
        return StopEvent(result=answer.response)


def test_wait_for_event_returns_the_first_event_meeting_the_requirements():
    async def main():
        handler = Asker().run()
        await asleep(1)
        handler.ctx.send_event(HumanResponseEvent(who="bob", response="no"))
        handler.ctx.send_event(HumanResponseEvent(who="ada", response="yes"))
        return await handler

    assert run_sync(main()) == "yes"


def test_a_human_response_sent_before_the_step_waits_is_kept_for_it():
    async def main():
        handler = Asker().run()
        handler.ctx.send_event(HumanResponseEvent(who="ada", response="early"))
        return await handler

    assert run_sync(main()) == "early"


def test_an_event_nobody_waits_for_is_rejected_by_send_event():
    from agentkit.workflow import WorkflowRuntimeError

    async def main():
        handler = Asker().run()
        await asleep(1)
        try:
            handler.ctx.send_event(Tick(n=1))
        finally:
            await handler.cancel_run()

    with pytest.raises(WorkflowRuntimeError, match=r"^No step accepts Tick and no wait_for_event"):
        run_sync(main())


class Shared(Workflow):
    @step
    async def begin(self, ctx: Context, ev: StartEvent) -> Tick:
        for n in range(3):
            ctx.send_event(Tick(n=n))
        return None

    @step
    async def add(self, ctx: Context, ev: Tick) -> StopEvent | None:
        async with ctx.lock:
            total = await ctx.store.get("total", default=0)
            await asleep(1)  # the others run meanwhile; the lock keeps the update whole
            await ctx.store.set("total", total + 1)
        return StopEvent(result=total + 1) if total + 1 == 3 else None


def test_the_lock_serialises_read_modify_write_of_the_store():
    assert Shared().run_sync() == 3


def test_send_event_takes_only_events():
    with pytest.raises(TypeError, match=r"^send_event takes an Event, got str$"):
        _ctx().send_event("hello")  # type: ignore[arg-type]


def test_wait_for_event_waits_only_for_event_types():
    with pytest.raises(TypeError, match=r"^wait_for_event waits for an Event type, got 'x'$"):
        run_sync(_ctx().wait_for_event("x"))  # type: ignore[arg-type]


def test_a_fresh_context_is_not_running():
    assert _ctx().is_running is False


def test_the_context_is_running_while_a_run_is_in_progress():
    async def main():
        handler = Asker().run()
        await asyncio.sleep(0)
        running = handler.ctx.is_running
        await handler.cancel_run()
        return running

    assert run_sync(main()) is True


class Job(Event):
    who: str


class Parallel(Workflow):
    @step
    async def begin(self, ctx: Context, ev: StartEvent) -> Job:
        for who in ev.people:
            ctx.send_event(Job(who=who))
        return None

    @step
    async def ask(self, ctx: Context, ev: Job) -> Tick:
        answer = await ctx.wait_for_event(HumanResponseEvent, requirements={"who": ev.who})
        ctx.send_event(Tick(n=answer.n))
        return None

    @step
    async def join(self, ctx: Context, ev: Tick) -> StopEvent | None:
        ticks = ctx.collect_events(ev, [Tick, Tick])
        return None if ticks is None else StopEvent(result=[t.n for t in ticks])


def test_parallel_waits_with_their_own_requirements_each_get_their_answer():
    async def main():
        handler = Parallel().run(people=["ada", "bob"])
        await asleep(1)
        handler.ctx.send_event(HumanResponseEvent(who="bob", n=2))
        handler.ctx.send_event(HumanResponseEvent(who="ada", n=1))
        return await handler

    assert run_sync(main()) == [2, 1]


class SharedKey(Parallel):
    @step
    async def ask(self, ctx: Context, ev: Job) -> Tick:
        answer = await ctx.wait_for_event(HumanResponseEvent, waiter_id="one-question")
        ctx.send_event(Tick(n=answer.n))
        return None


def test_parallel_waits_sharing_a_key_take_one_answer_each():
    async def main():
        handler = SharedKey().run(people=["ada", "bob"])
        await asleep(1)
        handler.ctx.send_event(HumanResponseEvent(n=1))
        handler.ctx.send_event(HumanResponseEvent(n=2))
        return await handler

    assert sorted(run_sync(main())) == [1, 2]
