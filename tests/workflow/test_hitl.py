"""Human in the loop: answer in the stream, or pause (to_dict), restore (from_dict), resume."""

import json

import pytest

from agentkit.core.sim import run_sync
from agentkit.llms import ChatMessage
from agentkit.memory import ChatMemoryBuffer
from agentkit.workflow import (
    Context,
    ContextSerdeError,
    Event,
    HumanResponseEvent,
    InputRequiredEvent,
    StartEvent,
    StopEvent,
    Workflow,
    WorkflowCancelledByUser,
    WorkflowRuntimeError,
    step,
)
from agentkit.workflow.context import sealed


class Ask(Workflow):
    @step
    async def begin(self, ctx: Context, ev: StartEvent) -> StopEvent:
        await ctx.store.set("attempts", await ctx.store.get("attempts", default=0) + 1)
        answer = await ctx.wait_for_event(
            HumanResponseEvent, waiter_event=InputRequiredEvent(prefix="Your name?"))
        return StopEvent(result=f"HITL successful: {answer.response}")


async def _pause(wf: Workflow) -> dict:
    """Run until the workflow asks, save the context, cancel the run."""
    handler = wf.run()
    async for event in handler.stream_events():
        if isinstance(event, InputRequiredEvent):
            break
    data = handler.ctx.to_dict()
    await handler.cancel_run()
    return data


async def _resume(wf: Workflow, data: dict, answer: str = "John Doe") -> tuple[object, list]:
    handler = wf.run(ctx=Context.from_dict(wf, json.loads(json.dumps(data))))
    handler.ctx.send_event(HumanResponseEvent(response=answer))
    streamed = [type(e).__name__ async for e in handler.stream_events()]
    return await handler, streamed


def test_answering_in_the_stream_completes_the_run():
    async def main():
        handler = Ask().run()
        async for event in handler.stream_events():
            if isinstance(event, InputRequiredEvent):
                handler.ctx.send_event(HumanResponseEvent(response=event.prefix + " Ada"))
        return await handler

    assert run_sync(main()) == "HITL successful: Your name? Ada"


def test_a_paused_run_resumes_from_a_restored_context():
    async def main():
        wf = Ask()
        data = await _pause(wf)
        result, _ = await _resume(wf, data)
        return result

    assert run_sync(main()) == "HITL successful: John Doe"


def test_a_resumed_run_does_not_ask_again():
    async def main():
        wf = Ask()
        _, streamed = await _resume(wf, await _pause(wf))
        return streamed

    assert run_sync(main()) == ["StopEvent"]


def test_a_resumed_step_runs_again_from_its_start():
    async def main():
        wf = Ask()
        handler = wf.run(ctx=Context.from_dict(wf, await _pause(wf)))
        handler.ctx.send_event(HumanResponseEvent(response="x"))
        await handler
        return await handler.ctx.store.get("attempts")

    assert run_sync(main()) == 2


def test_a_restored_context_is_a_paused_run():
    async def main():
        wf = Ask()
        return Context.from_dict(wf, await _pause(wf)).is_running

    assert run_sync(main()) is True


def test_the_saved_context_is_plain_json():
    async def main():
        return await _pause(Ask())

    data = run_sync(main())
    assert json.loads(json.dumps(data)) == data


def test_awaiting_a_cancelled_run_raises_workflow_cancelled_by_user():
    async def main():
        handler = Ask().run()
        async for _ in handler.stream_events():
            break
        await handler.cancel_run()
        await handler

    with pytest.raises(WorkflowCancelledByUser,
                       match=r"^Workflow run was cancelled by cancel_run\(\)$"):
        run_sync(main())


def test_a_cancelled_run_resumes_from_its_own_context():
    async def main():
        wf = Ask()
        handler = wf.run()
        async for _ in handler.stream_events():
            break
        await handler.cancel_run()
        resumed = wf.run(ctx=handler.ctx)
        resumed.ctx.send_event(HumanResponseEvent(response="again"))
        return await resumed

    assert run_sync(main()) == "HITL successful: again"


def test_cancelling_a_finished_run_changes_nothing():
    async def main():
        handler = Ask().run()
        async for event in handler.stream_events():
            if isinstance(event, InputRequiredEvent):
                handler.ctx.send_event(HumanResponseEvent(response="Bo"))
        await handler.cancel_run()
        return await handler

    assert run_sync(main()) == "HITL successful: Bo"


def test_resuming_a_paused_context_with_start_arguments_is_rejected():
    async def main():
        wf = Ask()
        wf.run(ctx=Context.from_dict(wf, await _pause(wf)), topic="new")

    with pytest.raises(WorkflowRuntimeError,
                       match=r"^This Context holds a paused run; resume it with run\(ctx=ctx\)"):
        run_sync(main())


def test_a_context_already_running_cannot_start_a_second_run():
    async def main():
        wf = Ask()
        handler = wf.run()
        try:
            wf.run(ctx=handler.ctx)
        finally:
            await handler.cancel_run()

    with pytest.raises(WorkflowRuntimeError, match=r"^This Context is already running a workflow"):
        run_sync(main())


class Other(Workflow):
    @step
    async def only(self, ev: StartEvent) -> StopEvent:
        return StopEvent()


def test_a_context_from_another_workflow_is_rejected_by_from_dict():
    async def main():
        return await _pause(Ask())

    data = run_sync(main())
    with pytest.raises(ContextSerdeError,
                       match=rf"^Context.from_dict: the context was saved by workflow "
                             rf"{__name__}:Ask \(steps: begin\), not by {__name__}:Other "
                             r"\(steps: only\); restore it with the workflow that ran it$"):
        Context.from_dict(Other(), data)


@pytest.mark.parametrize("data", [None, [], {}, {"format": 99}])
def test_something_that_is_not_a_saved_context_is_rejected(data):
    with pytest.raises(ContextSerdeError, match=r"^Context.from_dict: not a saved context"):
        Context.from_dict(Ask(), data)


def _saved() -> dict:
    return Context(Ask()).to_dict()


def _resealed(data: dict) -> dict:
    """``data`` changed on purpose, with its digest recomputed (as a forger could)."""
    return sealed({key: value for key, value in data.items() if key != "digest"})


@pytest.mark.parametrize("key", ["store", "queues", "buffers", "waiters", "unclaimed", "stream",
                                 "is_running", "steps"])
def test_a_saved_context_missing_a_part_names_it(key):
    data = _saved()
    del data[key]
    with pytest.raises(ContextSerdeError,
                       match=rf"^Context.from_dict: at \['{key}'\]: missing$"):
        Context.from_dict(Ask(), _resealed(data))


def test_a_saved_part_of_the_wrong_shape_names_it():
    data = _resealed({**_saved(), "store": []})
    with pytest.raises(ContextSerdeError,
                       match=r"^Context.from_dict: at \['store'\]: must be a dict, got list$"):
        Context.from_dict(Ask(), data)


def test_a_saved_event_of_a_class_the_workflow_does_not_restore_names_it():
    data = _resealed({**_saved(), "stream": [{"__agentkit__": "model", "type": "nowhere.mod:Gone",
                                              "fields": {}, "extra": {}}]})
    with pytest.raises(ContextSerdeError,
                       match=r"^Context.from_dict: at \['stream'\]\[0\]\['type'\]: class "
                             r"nowhere.mod:Gone is not one this workflow restores"):
        Context.from_dict(Ask(), data)


def test_a_saved_stream_entry_may_be_any_saved_value_as_upstream_streams_any_object():
    data = _resealed({**_saved(), "stream": [3, {"k": 1}]})
    assert Context.from_dict(Ask(), data)._stream.pending() == [3, {"k": 1}]


def test_a_saved_stream_entry_naming_an_unknown_class_is_rejected():
    data = _resealed({**_saved(), "stream": [{"__agentkit__": "model", "type": "os:system",
                                               "fields": {}, "extra": {}}]})
    with pytest.raises(ContextSerdeError, match=r"^Context.from_dict: at \['stream'\]\[0\]"
                                                r"\['type'\]: class os:system is not one"):
        Context.from_dict(Ask(), data)


def test_registered_store_types_such_as_messages_and_memory_buffers_survive_a_save():
    async def main():
        wf = Ask()
        wf.register_context_types(ChatMemoryBuffer, ChatMessage)
        ctx = Context(wf)
        memory = ChatMemoryBuffer.from_defaults()
        memory.put(ChatMessage(role="user", content="hi"))
        await ctx.store.set("memory", memory)
        await ctx.store.set("state", {"last": ChatMessage(role="assistant", content="yo"),
                                      "n": (1, 2)})
        restored = Context.from_dict(wf, json.loads(json.dumps(ctx.to_dict())))
        return await restored.store.get("memory"), await restored.store.get("state")

    memory, state = run_sync(main())
    assert ([m.content for m in memory.get_all()], state) == (
        ["hi"], {"last": ChatMessage(role="assistant", content="yo"), "n": [1, 2]})


def test_an_unsaveable_store_value_is_named_in_the_error():
    async def main():
        ctx = Context(Ask())
        await ctx.store.set("handle", object())
        ctx.to_dict()

    with pytest.raises(ContextSerdeError,
                       match=r"^cannot save store\['handle'\]: a object is not JSON, a pydantic "
                             r"model or an object with to_dict\(\)/from_dict\(\)$"):
        run_sync(main())


def test_events_of_classes_defined_inside_a_function_restore_through_the_workflow():
    class Local(Event):
        payload: dict

    class Flow(Workflow):
        @step
        async def begin(self, ctx: Context, ev: StartEvent) -> Local:
            return Local(payload={"n": 1})

        @step
        async def end(self, ctx: Context, ev: Local) -> StopEvent:
            answer = await ctx.wait_for_event(HumanResponseEvent,
                                              waiter_event=InputRequiredEvent())
            return StopEvent(result=(ev.payload, answer.response))

    async def main():
        wf = Flow()
        result, _ = await _resume(wf, await _pause(wf), answer="ok")
        return result

    assert run_sync(main()) == ({"n": 1}, "ok")
