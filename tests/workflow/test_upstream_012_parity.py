"""Issue 38, D1-D9: the workflow engine's last public differences from llama-index-core
0.12.42. Each test states upstream's result, observed by running 0.12.42 on the same code."""

from __future__ import annotations

import asyncio
import re
from typing import Annotated

import pytest

from agentkit.core.sim import asleep, run_sync
from agentkit.workflow import (
    Context,
    Event,
    Resource,
    ResourceManager,
    StartEvent,
    StopEvent,
    Workflow,
    WorkflowConfigurationError,
    WorkflowHandler,
    WorkflowRuntimeError,
    WorkflowTimeoutError,
    step,
)


class W(Workflow):
    @step
    async def only(self, ev: StartEvent) -> StopEvent:
        return StopEvent(result=42)


# ---------------------------------------------------------------- D1, D2: context accessors
def test_d1_ctx_get_result_is_the_runs_result():
    async def main():
        handler = W().run()
        await handler
        return handler.ctx.get_result()

    assert run_sync(main()) == 42  # upstream: 42


def test_d1_get_result_is_none_before_a_run_ends():
    assert Context(W()).get_result() is None  # upstream: None (its _retval's default)


def test_d2_get_holding_events_of_a_fresh_context_is_empty():
    assert Context(W()).get_holding_events() == []  # upstream: []


class Ping(Event):
    n: int


class Two(Workflow):
    @step
    async def begin(self, ev: StartEvent) -> Ping:
        return Ping(n=1)

    @step
    async def end(self, ev: Ping) -> StopEvent:
        return StopEvent(result=ev.n)


def test_d2_get_holding_events_gives_a_copy_of_what_the_last_step_handed_out():
    async def main():
        handler = Two().run(stepwise=True)
        produced = await handler.run_step()
        holding = handler.ctx.get_holding_events()
        holding.clear()  # a copy, as upstream
        return produced, handler.ctx.get_holding_events()

    produced, holding = run_sync(main())
    assert [type(e) for e in produced] == [Ping] and holding == produced


# ---------------------------------------------------------------- D3: any object on the stream
class Streams(Workflow):
    @step
    async def only(self, ctx: Context, ev: StartEvent) -> StopEvent:
        ctx.write_event_to_stream({"k": 1})
        ctx.write_event_to_stream(None)
        return StopEvent(result="done")


def test_d3_write_event_to_stream_streams_any_object():
    async def main():
        handler = Streams().run()
        seen = [e async for e in handler.stream_events()]
        return seen, await handler

    seen, result = run_sync(main())
    # upstream: {'k': 1}, then None, then the StopEvent; the run succeeds
    assert seen[:2] == [{"k": 1}, None] and type(seen[2]) is StopEvent and result == "done"


# ---------------------------------------------------------------- D4: Event.dict()
def test_d4_event_dict_is_the_extras_as_upstream():
    class E(Event):
        param: str

    ev = E(param="foo")
    ev["a"] = "bar"
    assert ev.dict() == {"a": "bar"}  # upstream: {'a': 'bar'}
    assert ev.param == "foo" and list(ev.keys()) == ["a"]


# ---------------------------------------------------------------- D5: the handler is a Future
def test_d5_the_handler_is_an_asyncio_future_whose_str_is_the_result():
    async def main():
        handler = W().run()
        await handler
        return handler

    handler = run_sync(main())
    assert isinstance(handler, asyncio.Future)  # upstream: True
    assert str(handler) == "42" and handler.result() == 42 and handler.done()


def test_d5_a_handler_built_around_a_restored_context_holds_it_and_takes_a_result():
    async def main():
        wf = W()
        restored = Context.from_dict(wf, Context(wf).to_dict())
        handler = WorkflowHandler(ctx=restored)
        handler.set_result(7)
        return handler, restored, await handler

    handler, restored, result = run_sync(main())
    assert handler.ctx is restored and result == 7 and str(handler) == "7"  # upstream: same


def test_d5_a_handler_without_a_run_says_so_when_asked_for_its_stream():
    async def main():
        handler = WorkflowHandler(ctx=Context(W()))
        async for _ in handler.stream_events():
            pass

    with pytest.raises(WorkflowRuntimeError, match=r"^stream_events\(\): this handler was built "
                                                   r"around a context"):
        run_sync(main())


# ---------------------------------------------------------------- D6: failures end the stream
class Fails(Workflow):
    @step
    async def only(self, ctx: Context, ev: StartEvent) -> StopEvent:
        ctx.write_event_to_stream(Ping(n=1))
        raise RuntimeError("boom")


class Sleeps(Workflow):
    @step
    async def only(self, ev: StartEvent) -> StopEvent:
        await asleep(100)
        return StopEvent()


@pytest.mark.parametrize(("workflow", "error", "message"), [
    (Fails(), WorkflowRuntimeError, r"^Error in step 'only': boom$"),
    (Sleeps(timeout=5), WorkflowTimeoutError, r"^Operation timed out after 5 seconds$"),
])
def test_d6_upstream_style_code_reads_the_stream_then_gets_the_error_from_the_handler(
        workflow, error, message):
    async def main():
        handler = workflow.run()
        seen = [e async for e in handler.stream_events()]  # upstream: no error in the loop
        try:
            await handler
        except error as exc:  # upstream: the error comes from `await handler`
            return seen, exc
        raise AssertionError("the run should have failed")

    seen, exc = run_sync(main())
    assert type(seen[-1]) is StopEvent and seen[-1].result is None
    assert re.match(message, str(exc))


# ---------------------------------------------------------------- D7: no StopEvent anywhere
class NeverStops(Workflow):
    @step
    async def only(self, ev: StartEvent) -> None:
        return None


@pytest.mark.parametrize("disable_validation", [False, True])
def test_d7_no_step_returning_stop_event_is_upstreams_configuration_error(disable_validation):
    # upstream: WorkflowConfigurationError, even with disable_validation=True
    with pytest.raises(WorkflowConfigurationError,
                       match=r"^At least one Event of type StopEvent must be returned by any "
                             r"step\."):
        NeverStops(disable_validation=disable_validation)


# ---------------------------------------------------------------- D8: step resources
_made: list[str] = []


def _counter() -> list[str]:
    _made.append("counter")
    return []  # falsy: still cached (upstream made it again on every call)


async def _client() -> dict[str, int]:
    _made.append("client")
    await asleep(1)
    return {"id": len(_made)}


def _fresh() -> int:
    _made.append("fresh")
    return len(_made)


class Uses(Workflow):
    @step
    async def begin(self, ev: StartEvent,
                    seen: Annotated[list[str], Resource(_counter)],
                    client: Annotated[dict[str, int], Resource(_client)]) -> Ping:
        seen.append("begin")
        return Ping(n=client["id"])

    @step
    async def end(self, ev: Ping, seen: Annotated[list[str], Resource(_counter)],
                  fresh: Annotated[int, Resource(_fresh, cache=False)]) -> StopEvent:
        seen.append("end")
        return StopEvent(result=(list(seen), ev.n, fresh))


@pytest.fixture
def made():
    _made.clear()
    yield _made
    _made.clear()


def test_d8_a_resource_parameter_gets_the_factorys_value_cached_per_workflow(made):
    wf = Uses()
    first = wf.run_sync()
    second = wf.run_sync()
    # upstream 0.12.42: cached values are shared by the steps and the runs of one instance,
    # async factories are awaited, cache=False calls the factory each time
    assert first == (["begin", "end"], 2, 3)
    assert second == (["begin", "end", "begin", "end"], 2, 4)
    assert made == ["counter", "client", "fresh", "fresh"]
    assert wf.resource_manager.get_all() == {"_counter": ["begin", "end", "begin", "end"],
                                              "_client": {"id": 2}}


def test_d8_another_workflow_instance_makes_its_own_resources(made):
    Uses().run_sync()
    Uses().run_sync()
    assert made.count("counter") == 2 and made.count("client") == 2


def test_d8_a_shared_resource_manager_shares_the_values(made):
    shared = ResourceManager()
    Uses(resource_manager=shared).run_sync()
    Uses(resource_manager=shared).run_sync()
    assert made.count("counter") == 1 and made.count("client") == 1


class Parallel(Workflow):
    @step
    async def begin(self, ctx: Context, ev: StartEvent) -> Ping:
        for n in range(3):
            ctx.send_event(Ping(n=n))
        return None

    @step(num_workers=3)
    async def use(self, ctx: Context, ev: Ping,
                  client: Annotated[dict[str, int], Resource(_client)]) -> StopEvent | None:
        got = ctx.collect_events(ev, [Ping] * 3)
        return None if got is None else StopEvent(result=client["id"])


def test_d8_concurrent_steps_share_one_call_of_a_cached_async_factory(made):
    assert Parallel().run_sync() == 1
    assert made == ["client"]


def _broken() -> int:
    raise OSError("no database")


def test_d8_a_failing_factory_fails_the_step():
    class Broken(Workflow):
        @step
        async def only(self, ev: StartEvent, db: Annotated[int, Resource(_broken)]) -> StopEvent:
            return StopEvent(result=db)

    with pytest.raises(WorkflowRuntimeError, match=r"^Error in step 'only': no database$"):
        Broken().run_sync()


def test_d8_annotated_metadata_that_is_no_resource_leaves_the_parameter_as_it_is():
    class Plain(Workflow):
        @step
        async def only(self, ev: Annotated[StartEvent, "a note"]) -> StopEvent:
            return StopEvent(result=ev.x)

    assert Plain().run_sync(x=3) == 3


# ---------------------------------------------------------------- D9: start_event and kwargs
def test_d9_keywords_beside_a_start_event_are_ignored_and_the_run_goes_on(caplog):
    async def main():
        return await W().run(start_event=StartEvent(), extra=1)

    assert run_sync(main()) == 42  # upstream: 42, with a logged warning
    assert "These keyword arguments will be ignored: {'extra': 1}" in caplog.text
