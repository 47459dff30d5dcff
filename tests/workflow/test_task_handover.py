"""A step that its predecessor's returned output starts runs in that predecessor's task when
it would start there anyway (issue 36): nothing tells the two apart -- same bus events, same
order, same clock, same stream -- and a chain of steps needs no task per step."""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Callable
from typing import Any

import pytest

from agentkit.core.events import dispatcher
from agentkit.core.sim import asleep, run_sync, simulation
from agentkit.instrumentation import collect_events
from agentkit.workflow import (
    Context,
    Event,
    HumanResponseEvent,
    InputRequiredEvent,
    StartEvent,
    StopEvent,
    Workflow,
    WorkflowStepEndEvent,
    step,
)
from agentkit.workflow.runtime import Run
from tests.python_calls import python_calls, spawned_tasks


class Hop(Event):
    n: int


class Job(Event):
    n: int


class Done(Event):
    n: int


class Chain(Workflow):
    """Six steps, each one's output the next one's input."""

    @step
    async def begin(self, ev: StartEvent) -> Hop:
        return Hop(n=0)

    @step
    async def hop(self, ev: Hop) -> Hop | StopEvent:
        return Hop(n=ev.n + 1) if ev.n < 4 else StopEvent(result=ev.n)


class Fan(Workflow):
    """Jobs sent mid-step to concurrent workers, each sleeping, gathered by one step."""

    @step
    async def begin(self, ctx: Context, ev: StartEvent) -> Job | None:
        for n in range(4):
            ctx.send_event(Job(n=n))
            ctx.write_event_to_stream(Job(n=n))

    @step(num_workers=2)
    async def work(self, ctx: Context, ev: Job) -> Done:
        await asleep(ev.n % 2)
        ctx.write_event_to_stream(Done(n=ev.n))
        return Done(n=ev.n)

    @step
    async def gather(self, ctx: Context, ev: Done) -> StopEvent | None:
        done = ctx.collect_events(ev, [Done] * 4)
        return None if done is None else StopEvent(result=[d.n for d in done])


class Ask(Workflow):
    """A step waiting for the caller's answer between two plain steps."""

    @step
    async def begin(self, ev: StartEvent) -> Hop:
        return Hop(n=1)

    @step
    async def ask(self, ctx: Context, ev: Hop) -> StopEvent:
        answer = await ctx.wait_for_event(HumanResponseEvent,
                                          waiter_event=InputRequiredEvent(prefix="n?"))
        return StopEvent(result=answer.response)


async def _read_all(handler: Any) -> list[str]:
    """What a caller reading every streamed event sees (it pauses after each one)."""
    seen = []
    async for event in handler.stream_events():
        seen.append(type(event).__name__)
        if isinstance(event, InputRequiredEvent):
            handler.ctx.send_event(HumanResponseEvent(response="7"))
        await asleep(0.5)
    seen.append(repr(await handler))
    return seen


async def _chain_alone() -> list[str]:
    return [repr(await Chain().run())]


async def _chain_read() -> list[str]:
    return await _read_all(Chain().run())


async def _fan_read() -> list[str]:
    return await _read_all(Fan().run())


async def _two_runs() -> list[str]:
    workflow = Chain()
    first, second = workflow.run(), Fan().run()
    return [repr(await first), *await _read_all(second)]


async def _asked() -> list[str]:
    return await _read_all(Ask().run())


async def _chain_with_a_scheduling_listener() -> list[str]:
    """A bus listener that queues a loop callback as each step ends: a step due after that
    callback must run after it."""
    seen: list[str] = []

    def listener(event: Any) -> None:
        if isinstance(event, WorkflowStepEndEvent):
            asyncio.get_running_loop().call_soon(seen.append, f"after {event.step}")

    class Noted(Chain):
        @step
        async def hop(self, ev: Hop) -> Hop | StopEvent:
            seen.append(f"hop {ev.n}")
            return Hop(n=ev.n + 1) if ev.n < 4 else StopEvent(result=ev.n)

    with dispatcher.listen(listener):
        seen.append(repr(await Noted().run()))
    return seen


def _observed(scenario: Callable[[], Any]) -> tuple[list[str], list[tuple[Any, ...]]]:
    with simulation(), collect_events() as events:
        seen = run_sync(scenario())
    return seen, [(type(e).__name__, getattr(e, "step", None), e.span_id, e.parent_id, e.time)
                  for e in events]


def _no_handover(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every invocation gets a task of its own, as before the handover."""
    monkeypatch.setattr(Run, "_tail", property(lambda run: False, lambda run, value: None),
                        raising=False)


@pytest.mark.parametrize("scenario", [_chain_alone, _chain_read, _fan_read, _two_runs, _asked,
                                      _chain_with_a_scheduling_listener],
                         ids=["chain", "chain read", "fan out read", "two runs", "human input",
                              "a listener queues callbacks"])
def test_handed_over_steps_run_exactly_as_steps_with_tasks_of_their_own(
        scenario: Callable[[], Any], monkeypatch: pytest.MonkeyPatch) -> None:
    handed_over = _observed(scenario)
    _no_handover(monkeypatch)
    own_tasks = _observed(scenario)

    assert handed_over == own_tasks
    assert len(handed_over[1]) >= 6  # (run start and end, a start and end per step)


def test_a_chain_of_steps_runs_in_the_task_of_its_first_step(
        monkeypatch: pytest.MonkeyPatch) -> None:
    spawned = spawned_tasks(monkeypatch)

    assert Chain().run_sync() == 4
    assert spawned == ["begin"]  # 6 steps, 1 task (besides the run's own)


def test_a_step_waits_for_what_was_queued_before_it_then_runs_in_the_same_task(
        monkeypatch: pytest.MonkeyPatch) -> None:
    spawned = spawned_tasks(monkeypatch)

    seen, _ = _observed(_chain_read)

    assert seen[-1] == "4" and spawned == ["begin"]


def test_steps_sent_mid_step_get_tasks_of_their_own(monkeypatch: pytest.MonkeyPatch) -> None:
    spawned = spawned_tasks(monkeypatch)

    assert Fan().run_sync() == [0, 2, 1, 3]  # the even jobs sleep 0 s, the odd ones 1 s
    # the two workers begin sends jobs to start at once, each in a task of its own; the jobs
    # waiting for a worker run in the task of the job before them (each was the last thing its
    # predecessor's end started), so 9 invocations need 5 tasks
    assert spawned[:3] == ["begin", "work", "work"]
    assert len(spawned) == 5


_LEFT: contextvars.ContextVar[str] = contextvars.ContextVar("left_by_a_step", default="unset")


class Leaky(Workflow):
    @step
    async def begin(self, ev: StartEvent) -> Hop:
        _LEFT.set("set by begin")
        return Hop(n=1)

    @step
    async def end(self, ev: Hop) -> StopEvent:
        return StopEvent(result=_LEFT.get())


def test_a_step_that_leaves_a_context_variable_set_hands_over_to_a_task_of_its_own(
        monkeypatch: pytest.MonkeyPatch) -> None:
    spawned = spawned_tasks(monkeypatch)

    assert Leaky().run_sync() == "unset"  # each step sees the run's context, not the last one's
    assert spawned == ["begin", "end"]


def test_a_stepwise_run_gives_every_step_a_task_of_its_own(
        monkeypatch: pytest.MonkeyPatch) -> None:
    spawned = spawned_tasks(monkeypatch)

    async def drive() -> Any:
        handler = Chain().run(stepwise=True)
        while produced := await handler.run_step():
            for event in produced:
                handler.ctx.send_event(event)
        return await handler

    assert run_sync(drive()) == 4
    assert spawned == ["begin", "hop", "hop", "hop", "hop", "hop"]


def _hops(last: int) -> Workflow:
    class Hops(Workflow):
        @step
        async def begin(self, ev: StartEvent) -> Hop:
            return Hop(n=0)

        @step
        async def hop(self, ev: Hop) -> Hop | StopEvent:
            return Hop(n=ev.n + 1) if ev.n < last else StopEvent(result=ev.n)

    return Hops()


@pytest.mark.parametrize(("listened", "most"), [(False, 22), (True, 28)],
                         ids=["nobody listens", "a trace listens"])
def test_a_step_of_a_chain_costs_a_few_dozen_python_calls(listened: bool, most: int) -> None:
    """What one more step of a run costs: the step's span and bus events, its call, its
    output's delivery and the next step's start (46 calls, 50 listened, with a task each)."""
    counts = []
    with simulation():
        for last in (5, 15):
            workflow = _hops(last)
            workflow.run_sync()  # (first use: nothing per step)
            if listened:
                with collect_events():
                    _, called = python_calls(workflow.run_sync)
            else:
                _, called = python_calls(workflow.run_sync)
            counts.append(len(called))

    assert (counts[1] - counts[0]) / 10 <= most


def test_a_loop_with_a_task_factory_gives_every_step_a_task_of_its_own(
        monkeypatch: pytest.MonkeyPatch) -> None:
    spawned = spawned_tasks(monkeypatch)

    async def main() -> Any:
        loop = asyncio.get_running_loop()
        # (a factory may start a task eagerly: where its first step runs is its to say)
        loop.set_task_factory(lambda loop, coro, **options: asyncio.Task(coro, loop=loop,
                                                                          **options))
        try:
            return await Chain().run()
        finally:
            loop.set_task_factory(None)

    assert run_sync(main()) == 4
    assert spawned == ["begin", "hop", "hop", "hop", "hop", "hop"]
