"""Running a workflow: routing, results, step errors."""

import asyncio
import logging

import pytest

from agentkit.core.sim import run_sync
from agentkit.workflow import (
    Context,
    Event,
    HumanResponseEvent,
    StartEvent,
    StopEvent,
    Workflow,
    WorkflowRuntimeError,
    step,
)


class Ping(Event):
    n: int = 0


class LoudPing(Ping):
    pass


class Pong(Event):
    n: int = 0


class Relay(Workflow):
    @step
    async def begin(self, ev: StartEvent) -> Ping:
        return Ping(n=ev.n)

    @step
    async def end(self, ev: Ping) -> StopEvent:
        return StopEvent(result=ev.n + 1)


def test_awaiting_the_handler_gives_the_stop_event_result():
    async def main():
        return await Relay().run(n=1)

    assert run_sync(main()) == 2


def test_run_sync_gives_the_stop_event_result():
    assert Relay().run_sync(n=41) == 42


def test_run_outside_an_event_loop_says_to_use_run_sync():
    with pytest.raises(RuntimeError, match=r"^Workflow.run\(\) needs a running event loop"):
        Relay().run(n=1)


def test_a_start_event_can_be_passed_directly():
    assert Relay().run_sync(start_event=StartEvent(n=9)) == 10


def test_keywords_beside_a_start_event_are_ignored_with_upstreams_warning(caplog):
    # upstream 0.12.42 logs this warning and runs with the start event
    with caplog.at_level(logging.WARNING, logger="agentkit.workflow.workflow"):
        assert Relay().run_sync(start_event=StartEvent(n=9), n=1) == 10
    assert [r.getMessage() for r in caplog.records] == [
        "Keyword arguments are not supported when 'run()' is invoked with the 'start_event' "
        "parameter. These keyword arguments will be ignored: {'n': 1}"]


def test_a_start_event_of_the_wrong_type_is_rejected():
    with pytest.raises(WorkflowRuntimeError,
                       match=r"^run\(start_event=...\) must be a StartEvent, got Ping"):
        Relay().run_sync(start_event=Ping())


class Topic(StartEvent):
    topic: str


class TopicFlow(Workflow):
    @step
    async def begin(self, ev: Topic) -> StopEvent:
        return StopEvent(result=ev.topic.upper())


def test_keywords_build_the_workflows_own_start_event_type():
    assert TopicFlow().run_sync(topic="tea") == "TEA"


def test_keywords_that_do_not_fit_the_start_event_type_are_rejected():
    with pytest.raises(WorkflowRuntimeError,
                       match=r"^Failed creating a start event of type 'Topic' with the keyword "
                             r"arguments \['wrong'\]"):
        TopicFlow().run_sync(wrong=1)


class Fork(Workflow):
    @step
    async def begin(self, ev: StartEvent) -> Ping | Pong:
        return LoudPing(n=1) if ev.loud else Pong(n=2)

    @step
    async def end(self, ev: Ping | Pong) -> StopEvent:
        return StopEvent(result=type(ev).__name__)


def test_a_union_parameter_receives_each_member_type():
    assert Fork().run_sync(loud=False) == "Pong"


def test_a_subclass_of_an_accepted_type_is_delivered():
    assert Fork().run_sync(loud=True) == "LoudPing"


class FanOut(Workflow):
    @step
    async def begin(self, ctx: Context, ev: StartEvent) -> Ping:
        await ctx.store.set("seen", [])
        return Ping()

    @step
    async def left(self, ctx: Context, ev: Ping) -> Pong:
        (await ctx.store.get("seen")).append("left")
        return Pong()

    @step
    async def right(self, ctx: Context, ev: Ping) -> Pong:
        (await ctx.store.get("seen")).append("right")
        return Pong()

    @step
    async def join(self, ctx: Context, ev: Pong) -> StopEvent | None:
        if ctx.collect_events(ev, [Pong, Pong]) is None:
            return None
        return StopEvent(result=await ctx.store.get("seen"))


def test_an_event_goes_to_every_step_that_accepts_it():
    assert FanOut().run_sync() == ["left", "right"]


class Counter(Workflow):
    @step
    async def begin(self, ctx: Context, ev: StartEvent) -> Ping:
        ctx.send_event(Ping(n=1))
        ctx.send_event(Ping(n=2))
        return None

    @step
    async def end(self, ctx: Context, ev: Ping) -> StopEvent | None:
        seen = await ctx.store.get("seen", default=[])
        await ctx.store.set("seen", [*seen, ev.n])
        return StopEvent(result=[*seen, ev.n]) if ev.n == 2 else None


def test_a_step_returning_none_emits_nothing_and_sent_events_are_delivered():
    assert Counter().run_sync() == [1, 2]


class Directed(Workflow):
    @step
    async def begin(self, ctx: Context, ev: StartEvent) -> Ping:
        ctx.send_event(Ping(n=5), step=ev.target)
        return None

    @step
    async def a(self, ev: Ping) -> StopEvent:
        return StopEvent(result="a")

    @step
    async def b(self, ev: Ping) -> StopEvent:
        return StopEvent(result="b")


def test_send_event_to_a_named_step_reaches_only_that_step():
    assert Directed().run_sync(target="b") == "b"


def test_send_event_to_an_unknown_step_fails_the_run_naming_the_steps():
    with pytest.raises(WorkflowRuntimeError,
                       match=r"^Error in step 'begin': No step named 'zz' in Directed \(steps: "
                             r"'begin', 'a', 'b'\)$"):
        Directed().run_sync(target="zz")


def test_send_event_to_a_step_that_does_not_accept_it_fails_the_run():
    with pytest.raises(WorkflowRuntimeError,
                       match=r"^Error in step 'begin': Step 'begin' does not accept Ping \(it "
                             r"accepts StartEvent\)$"):
        Directed().run_sync(target="begin")


class Stray(Workflow):
    @step
    async def begin(self, ctx: Context, ev: StartEvent) -> StopEvent:
        ctx.send_event(Pong())
        return StopEvent()


def test_sending_an_event_nobody_accepts_fails_the_run():
    with pytest.raises(WorkflowRuntimeError,
                       match=r"^Error in step 'begin': No step accepts Pong and no wait_for_event "
                             r"is waiting for it \(steps: 'begin'\)$"):
        Stray().run_sync()


class Boom(Workflow):
    @step
    async def begin(self, ev: StartEvent) -> StopEvent:
        raise KeyError("missing")


def test_a_raising_step_fails_the_run_with_its_name_and_message():
    with pytest.raises(WorkflowRuntimeError, match=r"^Error in step 'begin': 'missing'$"):
        Boom().run_sync()


def test_a_raising_steps_exception_is_chained_as_the_cause():
    with pytest.raises(WorkflowRuntimeError) as info:
        Boom().run_sync()
    assert isinstance(info.value.__cause__, KeyError)


class NotAnEvent(Workflow):
    @step
    async def begin(self, ev: StartEvent) -> StopEvent:
        return 42  # type: ignore[return-value]


def test_a_step_returning_a_non_event_fails_the_run_in_upstreams_words():
    with pytest.raises(WorkflowRuntimeError,
                       match=r"^Step function begin returned int instead of an Event instance\.$"):
        NotAnEvent().run_sync()


class Verdict(StopEvent):
    verdict: str


class Judge(Workflow):
    @step
    async def begin(self, ev: StartEvent) -> Verdict:
        return Verdict(verdict="ok")


def test_a_stop_event_subclass_is_the_result_itself():
    assert Judge().run_sync() == Verdict(verdict="ok")


class SyncSteps(Workflow):
    @step
    def begin(self, ev: StartEvent) -> StopEvent:
        return StopEvent(result="sync")


def test_a_sync_step_function_runs():
    assert SyncSteps().run_sync() == "sync"


class WithFreeStep(Workflow):
    @step
    async def begin(self, ev: StartEvent) -> Ping:
        return Ping(n=3)


@step(workflow=WithFreeStep)
async def finish(ev: Ping) -> StopEvent:
    return StopEvent(result=ev.n * 10)


def test_a_free_function_step_joins_its_workflow():
    assert WithFreeStep().run_sync() == 30


def test_steps_can_reach_the_workflow_instance():
    class Configured(Workflow):
        def __init__(self, greeting: str) -> None:
            super().__init__()
            self.greeting = greeting

        @step
        async def begin(self, ev: StartEvent) -> StopEvent:
            return StopEvent(result=f"{self.greeting} {ev.name}")

    assert Configured("hi").run_sync(name="Ada") == "hi Ada"


def test_verbose_prints_each_step_and_what_it_produced(capsys):
    Relay(verbose=True).run_sync(n=1)
    assert capsys.readouterr().out.splitlines() == [
        "Running step begin", "Step begin produced event Ping",
        "Running step end", "Step end produced event StopEvent"]


def test_a_run_of_one_instance_does_not_disturb_a_concurrent_run():
    async def main():
        wf = Relay()
        return await asyncio.gather(wf.run(n=1), wf.run(n=10))

    assert run_sync(main()) == [2, 11]


class SendsStop(Workflow):
    @step
    async def begin(self, ctx: Context, ev: StartEvent) -> StopEvent:
        ctx.send_event(StopEvent(result="sent"), step=ev.get("to"))
        return None


def test_sending_a_stop_event_ends_the_run():
    assert SendsStop().run_sync() == "sent"


def test_sending_a_stop_event_to_a_step_is_rejected():
    with pytest.raises(WorkflowRuntimeError,
                       match=r"^Error in step 'begin': StopEvent ends the run; it cannot be sent to "
                             r"a step$"):
        SendsStop().run_sync(to="begin")


def test_sending_a_stop_event_with_no_run_in_progress_is_rejected():
    with pytest.raises(WorkflowRuntimeError,
                       match=r"^send_event\(StopEvent\): no run is in progress$"):
        Context(SendsStop()).send_event(StopEvent())


def test_run_takes_only_a_context_as_ctx():
    with pytest.raises(TypeError, match=r"^run\(ctx=...\) takes a Context, got dict$"):
        Relay().run_sync(ctx={})


# ---------------------------------------------------------------- the run-end hook
class _Recording(Workflow):
    def __init__(self) -> None:
        super().__init__()
        self.ended: list[str | None] = []

    @step
    async def begin(self, ctx: Context, ev: StartEvent) -> StopEvent:
        if ev.get("fail"):
            raise ValueError("no")
        if ev.get("wait"):
            await ctx.wait_for_event(HumanResponseEvent)
        return StopEvent(result="ok")

    async def _on_run_end(self, ctx: Context, error: BaseException | None) -> None:
        self.ended.append(None if error is None else type(error).__name__)


def test_the_run_end_hook_sees_a_finished_and_a_failed_run():
    wf = _Recording()
    wf.run_sync()
    with pytest.raises(WorkflowRuntimeError):
        wf.run_sync(fail=True)
    assert wf.ended == [None, "WorkflowRuntimeError"]


def test_the_run_end_hook_is_not_called_for_a_paused_run():
    wf = _Recording()

    async def pause() -> None:
        handler = wf.run(wait=True)
        await asyncio.sleep(0)
        await handler.cancel_run()

    run_sync(pause())
    assert wf.ended == []
