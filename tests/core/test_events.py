"""The event bus: scoped and global handlers, spans, virtual timestamps."""

import asyncio
from collections.abc import Callable

from agentkit.core.events import (
    AgentChatStartEvent,
    Dispatcher,
    EventFilter,
    LLMCallStartEvent,
    Span,
    ToolCallStartEvent,
    dispatcher,
)
from agentkit.core.ids import use_ids
from agentkit.core.sim import asleep, run_sync, sleep
from tests.python_calls import python_calls


def _event(name: str = "t") -> ToolCallStartEvent:
    return ToolCallStartEvent(tool_name=name)


def test_event_name_is_its_class_name():
    assert AgentChatStartEvent(user_msg="hi").name == "AgentChatStartEvent"


def test_listen_delivers_events_emitted_inside_the_block():
    seen = []
    with dispatcher.listen(seen.append):
        dispatcher.emit(_event("inside"))
    assert [e.tool_name for e in seen] == ["inside"]


def test_listen_stops_delivering_after_the_block():
    seen = []
    with dispatcher.listen(seen.append):
        pass
    dispatcher.emit(_event("after"))
    assert seen == []


def test_listen_reaches_tasks_started_inside_the_block():
    seen = []

    async def child() -> None:
        await asleep(1)
        dispatcher.emit(_event("child"))

    async def main() -> None:
        with dispatcher.listen(seen.append):
            task = asyncio.create_task(child())
        await task

    run_sync(main())
    assert [e.tool_name for e in seen] == ["child"]


def test_concurrent_listeners_see_only_their_own_events():
    seen: dict[str, list[str]] = {"a": [], "b": []}

    async def run(name: str, latency: float) -> None:
        with dispatcher.listen(lambda e: seen[name].append(e.tool_name)):
            await asleep(latency)
            dispatcher.emit(_event(name))

    async def main() -> None:
        await asyncio.gather(run("a", 2), run("b", 1))

    run_sync(main())
    assert seen == {"a": ["a"], "b": ["b"]}


def test_add_handler_subscribes_for_the_whole_process():
    bus, seen = Dispatcher(), []
    bus.add_handler(seen.append)
    bus.emit(_event())
    bus.emit(_event())
    assert len(seen) == 2


def test_remove_handler_unsubscribes():
    bus, seen = Dispatcher(), []
    bus.add_handler(seen.append)
    bus.remove_handler(seen.append)
    bus.emit(_event())
    assert seen == []


def test_global_handlers_run_before_scoped_ones_in_subscription_order():
    bus, order = Dispatcher(), []
    bus.add_handler(lambda e: order.append("global"))
    with bus.listen(lambda e: order.append("first")), bus.listen(lambda e: order.append("second")):
        bus.emit(_event())
    assert order == ["global", "first", "second"]


def test_bus_is_active_only_with_a_handler():
    bus = Dispatcher()
    inactive = bus.active
    with bus.listen(lambda e: None):
        assert (inactive, bus.active) == (False, True)


def test_emit_stamps_the_virtual_time():
    seen = []
    sleep(2.5)
    with dispatcher.listen(seen.append):
        dispatcher.emit(_event())
    assert seen[0].time == 2.5


def test_events_emitted_in_a_span_carry_its_id_and_parent():
    seen = []
    with dispatcher.listen(seen.append), dispatcher.span() as outer, dispatcher.span() as inner:
        dispatcher.emit(_event())
    assert (seen[0].span_id, seen[0].parent_id) == (inner.id, outer.id)


def test_span_ids_come_from_the_seeded_counter():
    with dispatcher.span() as outer, dispatcher.span() as inner:
        assert (outer.id, outer.parent_id, inner.id, inner.parent_id) == (
            "span-1", None, "span-2", "span-1")


def _python_calls(block: Callable[[], object]) -> list[str]:
    """The Python functions ``block`` runs (C calls left out), in order."""
    return python_calls(block)[1]


def _open_span() -> None:
    with dispatcher.span():
        pass


def test_opening_a_span_runs_no_python_beyond_its_block():
    # every step, LLM call and tool call opens one (issue 36: 8 % of a ReAct chat before the
    # cut): the id comes from the source's span numbers, not a named counter, and the span is
    # built without a Python __init__/__new__; ``dispatcher.span`` is the scope's class and
    # ``new_span`` the function itself, both reading the id source without current_ids()
    assert _python_calls(_open_span) == ["_open_span", "__enter__", "__exit__"]
    assert _python_calls(dispatcher.new_span) == ["_child_span"]
    with use_ids(7), dispatcher.span() as outer:
        assert dispatcher.new_span() == Span("span-2", "span-1") and outer.id == "span-1"


def test_an_event_outside_any_span_has_no_span():
    seen = []
    with dispatcher.listen(seen.append):
        dispatcher.emit(_event())
    assert (seen[0].span_id, seen[0].parent_id) == (None, None)


def test_an_event_with_its_own_span_id_keeps_it():
    seen = []
    with dispatcher.listen(seen.append), dispatcher.span():
        dispatcher.emit(LLMCallStartEvent(kind="chat", model="m", span_id="mine", parent_id="p"))
    assert (seen[0].span_id, seen[0].parent_id) == ("mine", "p")


def test_new_span_is_a_child_that_does_not_become_current():
    with dispatcher.span() as outer:
        child = dispatcher.new_span()
        assert (child.parent_id, dispatcher.current_span()) == (outer.id, outer)


def test_span_is_restored_after_its_block():
    with dispatcher.span():
        pass
    assert dispatcher.current_span() is None



def test_resume_makes_an_earlier_span_current_again_so_later_events_file_under_it():
    seen = []
    with dispatcher.span() as step:
        pass
    with dispatcher.listen(seen.append), dispatcher.resume(step), dispatcher.span() as call:
        dispatcher.emit(_event())
    assert (seen[0].span_id, seen[0].parent_id) == (call.id, step.id)
    assert dispatcher.current_span() is None


def test_a_listener_may_take_only_some_event_types_and_their_subclasses():
    class Started(ToolCallStartEvent):
        pass

    bus = Dispatcher()
    taken, every = [], []
    with bus.listen(every.append), bus.listen(taken.append, EventFilter.of(ToolCallStartEvent)):
        for event in (_event("plain"), AgentChatStartEvent(user_msg="hi"), Started(tool_name="sub")):
            bus.emit(event)
    assert [e.name for e in taken] == ["ToolCallStartEvent", "Started"]
    assert [e.name for e in every] == ["ToolCallStartEvent", "AgentChatStartEvent", "Started"]


def test_wants_tells_whether_an_event_type_reaches_anyone():
    bus = Dispatcher()
    asked = []
    only_tools = EventFilter(lambda kind: asked.append(kind) or kind is ToolCallStartEvent)
    nobody = bus.wants(ToolCallStartEvent)
    with bus.listen(lambda e: None, only_tools):
        filtered = (bus.wants(ToolCallStartEvent), bus.wants(LLMCallStartEvent),
                    bus.wants(LLMCallStartEvent))
        with bus.listen(lambda e: None):
            everyone = bus.wants(LLMCallStartEvent)
    assert (nobody, filtered, everyone) == (False, (True, False, False), True)
    assert asked == [ToolCallStartEvent, LLMCallStartEvent]  # once per type
    bus.add_handler(lambda e: None)
    assert bus.wants(LLMCallStartEvent)


def test_an_event_type_a_filter_refuses_is_not_delivered_to_that_listener():
    bus = Dispatcher()
    seen = []
    with bus.listen(seen.append, EventFilter.of(AgentChatStartEvent)):
        bus.emit(_event())
    assert seen == []
