"""Instrumentation: collect_events and the legacy CallbackManager facade over the bus."""

import json

import pytest

from agentkit.core.ids import IdSource
from agentkit.core.sim import sleep
from agentkit.instrumentation import (
    AgentChatEndEvent,
    AgentChatStartEvent,
    AgentStepEndEvent,
    AgentStepStartEvent,
    BaseCallbackHandler,
    CallbackManager,
    CBEventType,
    EventPayload,
    LlamaDebugHandler,
    LLMCallEndEvent,
    LLMCallStartEvent,
    collect_events,
    dispatcher,
    get_dispatcher,
)
from agentkit.llms import ChatMessage
from agentkit.llms.mock import ScriptedLLM
from agentkit.tools import FunctionTool, call_tool

USER = [ChatMessage(role="user", content="hi")]


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def explode() -> None:
    """Always fails."""
    raise RuntimeError("kaboom")


class Recorder(BaseCallbackHandler):
    """Records every callback as a tuple."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.calls: list[tuple] = []

    def on_event_start(self, event_type, payload=None, event_id="", parent_id="", **kwargs):
        self.calls.append(("start", event_type, event_id, parent_id))
        return event_id

    def on_event_end(self, event_type, payload=None, event_id="", **kwargs):
        self.calls.append(("end", event_type, event_id))

    def start_trace(self, trace_id=None):
        self.calls.append(("start_trace", trace_id))

    def end_trace(self, trace_id=None, trace_map=None):
        self.calls.append(("end_trace", trace_id, trace_map))


def _manager(*handlers: BaseCallbackHandler) -> CallbackManager:
    return CallbackManager(list(handlers))


# ---------------------------------------------------------------- the bus


def test_get_dispatcher_is_the_one_bus():
    assert get_dispatcher("anything") is dispatcher


def test_collect_events_gathers_the_events_of_its_block():
    with collect_events() as events:
        ScriptedLLM(["a"]).chat(USER)
    assert [type(e) for e in events] == [LLMCallStartEvent, LLMCallEndEvent]


def test_collect_events_stops_at_the_end_of_its_block():
    with collect_events() as events:
        pass
    ScriptedLLM(["a"]).chat(USER)
    assert events == []


# ---------------------------------------------------------------- bus events as callbacks


def test_an_llm_call_becomes_an_llm_start_and_end_pair_with_one_id():
    debug = LlamaDebugHandler()
    with dispatcher.listen(_manager(debug)):
        ScriptedLLM(["a"]).chat(USER)
    [pair] = debug.get_llm_inputs_outputs()
    assert [(e.event_type, e.id_) for e in pair] == [(CBEventType.LLM, "span-1"), (CBEventType.LLM, "span-1")]


def test_llm_callbacks_carry_the_messages_and_the_response():
    debug = LlamaDebugHandler()
    with dispatcher.listen(_manager(debug)):
        response = ScriptedLLM(["a"]).chat(USER)
    start, end = debug.get_llm_inputs_outputs()[0]
    assert (start.payload[EventPayload.MESSAGES], end.payload[EventPayload.RESPONSE]) == (USER, response)


def test_a_failed_llm_call_ends_with_the_exception_in_the_payload():
    debug = LlamaDebugHandler()
    with dispatcher.listen(_manager(debug)), pytest.raises(TimeoutError):
        ScriptedLLM([TimeoutError("slow")]).chat(USER)
    end = debug.get_events(CBEventType.LLM)[-1]
    assert end.payload[EventPayload.EXCEPTION] == "TimeoutError: slow"


def test_a_tool_call_becomes_a_function_call_pair_with_arguments_and_output():
    debug = LlamaDebugHandler()
    with dispatcher.listen(_manager(debug)):
        call_tool(FunctionTool.from_defaults(add), {"b": 2, "a": 1})
    start, end = debug.get_event_pairs(CBEventType.FUNCTION_CALL)[0]
    assert (start.payload, end.payload) == (
        {EventPayload.FUNCTION_CALL: json.dumps({"a": 1, "b": 2}), EventPayload.TOOL: "add"},
        {EventPayload.FUNCTION_OUTPUT: "3"})


def test_a_failing_tool_call_output_is_the_error_text():
    debug = LlamaDebugHandler()
    with dispatcher.listen(_manager(debug)):
        call_tool(FunctionTool.from_defaults(explode), {})
    end = debug.get_events(CBEventType.FUNCTION_CALL)[-1]
    assert end.payload[EventPayload.FUNCTION_OUTPUT] == "Error: kaboom"


def test_a_chat_is_one_agent_step_pair_holding_the_user_message_and_the_response():
    debug = LlamaDebugHandler()
    with dispatcher.listen(_manager(debug)), dispatcher.span():
        dispatcher.emit(AgentChatStartEvent(user_msg="go"))
        for _ in range(2):
            with dispatcher.span():
                dispatcher.emit(AgentStepStartEvent(task_id="t", step_id="s"))
                dispatcher.emit(AgentStepEndEvent(task_id="t", step_id="s", output="step"))
        dispatcher.emit(AgentChatEndEvent(response="done"))
    [(start, end)] = debug.get_event_pairs(CBEventType.AGENT_STEP)
    assert (start.payload, end.payload) == ({EventPayload.MESSAGES: ["go"]},
                                            {EventPayload.RESPONSE: "done"})


def test_a_failed_chat_reports_an_exception_and_ends_its_agent_step_without_payload():
    debug = LlamaDebugHandler()
    with dispatcher.listen(_manager(debug)), dispatcher.span():
        dispatcher.emit(AgentChatStartEvent(user_msg="go"))
        dispatcher.emit(AgentChatEndEvent(error="RuntimeError: down"))
    assert [(e.event_type, e.payload) for e in debug.get_events()] == [
        (CBEventType.AGENT_STEP, {EventPayload.MESSAGES: ["go"]}),
        (CBEventType.EXCEPTION, {EventPayload.EXCEPTION: "RuntimeError: down"}),
        (CBEventType.AGENT_STEP, None)]


def test_calls_inside_a_chats_steps_hang_from_the_chat():
    recorder = Recorder()
    with dispatcher.listen(_manager(recorder)), dispatcher.span() as chat:
        dispatcher.emit(AgentChatStartEvent(user_msg="hi"))
        with dispatcher.span():
            dispatcher.emit(AgentStepStartEvent(task_id="t", step_id="s"))
            ScriptedLLM(["a"]).chat(USER)
            dispatcher.emit(AgentStepEndEvent(task_id="t", step_id="s"))
        dispatcher.emit(AgentChatEndEvent(response="a"))
    assert recorder.calls[-1] == ("end_trace", "chat", {"root": [chat.id], chat.id: ["span-3"]})


def test_calls_of_a_step_outside_a_chat_hang_from_the_root():
    recorder = Recorder()
    with dispatcher.listen(_manager(recorder)), dispatcher.span():
        dispatcher.emit(AgentStepStartEvent(task_id="t", step_id="s"))
        ScriptedLLM(["a"]).chat(USER)
        dispatcher.emit(AgentStepEndEvent(task_id="t", step_id="s"))
    assert recorder.calls[0] == ("start", CBEventType.LLM, "span-2", "root")


def test_an_agent_chat_is_one_trace_with_a_map_of_parents_to_children():
    recorder = Recorder()
    with dispatcher.listen(_manager(recorder)), dispatcher.span() as chat:
        dispatcher.emit(AgentChatStartEvent(user_msg="hi"))
        ScriptedLLM(["a"]).chat(USER)
        dispatcher.emit(AgentChatEndEvent(response="a"))
    assert [recorder.calls[0], recorder.calls[-1]] == [
        ("start_trace", "chat"), ("end_trace", "chat", {"root": [chat.id], chat.id: ["span-2"]})]


def test_callbacks_keep_the_parent_of_each_event():
    recorder = Recorder()
    with dispatcher.listen(_manager(recorder)), dispatcher.span() as outer:
        ScriptedLLM(["a"]).chat(USER)
    assert recorder.calls[0] == ("start", CBEventType.LLM, "span-2", outer.id)


def test_an_event_without_a_parent_hangs_from_the_root():
    recorder = Recorder()
    with dispatcher.listen(_manager(recorder)):
        ScriptedLLM(["a"]).chat(USER)
    assert recorder.calls[0] == ("start", CBEventType.LLM, "span-1", "root")


def test_handlers_skip_the_event_types_they_ignore():
    recorder = Recorder(event_starts_to_ignore=[CBEventType.LLM], event_ends_to_ignore=[CBEventType.LLM])
    with dispatcher.listen(_manager(recorder)):
        ScriptedLLM(["a"]).chat(USER)
        call_tool(FunctionTool.from_defaults(add), {"a": 1, "b": 2})
    assert [c[1] for c in recorder.calls] == [CBEventType.FUNCTION_CALL, CBEventType.FUNCTION_CALL]


# ---------------------------------------------------------------- the legacy API used directly


def test_on_event_start_without_an_id_uses_a_seeded_uuid():
    recorder = Recorder()
    event_id = _manager(recorder).on_event_start(CBEventType.QUERY)
    assert event_id == IdSource(0).uuid()


def test_event_context_starts_and_ends_one_event():
    recorder = Recorder()
    with _manager(recorder).event(CBEventType.QUERY, event_id="q1") as event:
        event.on_end({EventPayload.RESPONSE: "ok"})
    assert recorder.calls == [("start", CBEventType.QUERY, "q1", "root"), ("end", CBEventType.QUERY, "q1")]


def test_event_context_ends_the_event_if_the_block_did_not():
    recorder = Recorder()
    with _manager(recorder).event(CBEventType.QUERY, event_id="q1"):
        pass
    assert recorder.calls[-1] == ("end", CBEventType.QUERY, "q1")


def test_event_context_reports_an_exception_and_reraises_it():
    debug = LlamaDebugHandler()
    with pytest.raises(KeyError), _manager(debug).event(CBEventType.QUERY):
        raise KeyError("missing")
    exception = debug.get_events(CBEventType.EXCEPTION)[0]
    assert isinstance(exception.payload[EventPayload.EXCEPTION], KeyError)


def test_nested_traces_report_only_the_outermost():
    recorder = Recorder()
    manager = _manager(recorder)
    with manager.as_trace("outer"), manager.as_trace("inner"):
        pass
    assert [c[:2] for c in recorder.calls] == [("start_trace", "outer"), ("end_trace", "outer")]


def test_add_remove_and_set_handlers():
    first, second = Recorder(), Recorder()
    manager = CallbackManager()
    manager.add_handler(first)
    manager.add_handler(second)
    manager.remove_handler(first)
    after_remove = list(manager.handlers)
    manager.set_handlers([first])
    assert (after_remove, manager.handlers) == ([second], [first])


# ---------------------------------------------------------------- LlamaDebugHandler


def test_debug_handler_stamps_events_with_virtual_time():
    debug = LlamaDebugHandler()
    sleep(4.0)
    _manager(debug).on_event_start(CBEventType.QUERY, event_id="q")
    assert debug.get_events()[0].time == 4.0


def test_debug_handler_groups_events_by_type():
    debug = LlamaDebugHandler()
    manager = _manager(debug)
    manager.on_event_start(CBEventType.QUERY, event_id="q")
    manager.on_event_start(CBEventType.RETRIEVE, event_id="r")
    assert [e.id_ for e in debug.get_events(CBEventType.RETRIEVE)] == ["r"]


def test_debug_handler_keeps_the_sequence_of_all_events():
    debug = LlamaDebugHandler()
    manager = _manager(debug)
    manager.on_event_start(CBEventType.QUERY, event_id="q")
    manager.on_event_end(CBEventType.QUERY, event_id="q")
    assert [e.id_ for e in debug.get_events()] == ["q", "q"]


def test_debug_handler_records_finished_traces():
    debug = LlamaDebugHandler()
    manager = _manager(debug)
    with manager.as_trace("t"):
        manager.on_event_start(CBEventType.QUERY, event_id="q")
    assert debug.traces == [("t", {"root": ["q"]})]


def test_flush_event_logs_forgets_the_events():
    debug = LlamaDebugHandler()
    _manager(debug).on_event_start(CBEventType.QUERY, event_id="q")
    debug.flush_event_logs()
    assert (debug.get_events(), debug.get_events(CBEventType.QUERY)) == ([], [])
