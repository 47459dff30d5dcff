"""handler.stream_events(): the streamed events in order, then the StopEvent."""

import pytest

from agentkit.core.sim import asleep, run_sync
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


class Progress(Event):
    step: str


class Middle(Event):
    pass


class Chatty(Workflow):
    @step
    async def begin(self, ctx: Context, ev: StartEvent) -> Middle:
        ctx.write_event_to_stream(Progress(step="begin:1"))
        await asleep(1)
        ctx.write_event_to_stream(Progress(step="begin:2"))
        return Middle()

    @step
    async def end(self, ctx: Context, ev: Middle) -> StopEvent:
        ctx.write_event_to_stream(Progress(step="end"))
        return StopEvent(result="done")


async def _drain(handler) -> list[str]:
    return [e.step if isinstance(e, Progress) else type(e).__name__
            async for e in handler.stream_events()]


def test_stream_events_yields_streamed_events_in_order_then_the_stop_event():
    async def main():
        return await _drain(Chatty().run())

    assert run_sync(main()) == ["begin:1", "begin:2", "end", "StopEvent"]


def test_the_handler_still_gives_the_result_after_the_stream_is_drained():
    async def main():
        handler = Chatty().run()
        await _drain(handler)
        return await handler

    assert run_sync(main()) == "done"


class Failing(Chatty):
    @step
    async def end(self, ctx: Context, ev: Middle) -> StopEvent:
        ctx.write_event_to_stream(Progress(step="end"))
        raise RuntimeError("no")


def test_a_failing_run_ends_its_stream_with_a_plain_stop_event_and_awaiting_raises():
    # upstream 0.12.42: the stream ends with StopEvent() (result None); `await handler` raises
    seen: list[object] = []

    async def main():
        handler = Failing().run()
        async for e in handler.stream_events():
            seen.append(e.step if isinstance(e, Progress) else e)
        await handler

    with pytest.raises(WorkflowRuntimeError, match=r"^Error in step 'end': no$"):
        run_sync(main())
    assert seen[:3] == ["begin:1", "begin:2", "end"]
    assert len(seen) == 4 and type(seen[3]) is StopEvent and seen[3].result is None


class Asks(Workflow):
    @step
    async def begin(self, ev: StartEvent) -> InputRequiredEvent:
        return InputRequiredEvent(prefix="name?")

    @step
    async def hear(self, ev: HumanResponseEvent) -> StopEvent:
        return StopEvent(result=ev.name)


def test_a_returned_input_required_event_goes_to_the_stream():
    async def main():
        handler = Asks().run()
        async for e in handler.stream_events():
            if isinstance(e, InputRequiredEvent):
                handler.ctx.send_event(HumanResponseEvent(name="Ada"))
        return await handler

    assert run_sync(main()) == "Ada"
