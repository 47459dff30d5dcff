"""The LLM protocol: every public variant derived from one backend hook, each call recorded once."""

import asyncio
import json
from collections.abc import AsyncIterator, Iterator

import pytest

from agentkit.core.events import dispatcher
from agentkit.core.sim import asleep, run_sync, sleep
from agentkit.core.tokens import count_tokens
from agentkit.instrumentation import (
    LLMCallEndEvent,
    LLMCallStartEvent,
    LLMStreamChunkEvent,
    collect_events,
)
from agentkit.llms import (
    LLM,
    AgentChatResponse,
    ChatMessage,
    ChatResponse,
    CompletionResponse,
    FunctionCallingLLM,
    LLMRequest,
    MessageRole,
    ToolSelection,
    Usage,
    messages_to_prompt,
)
from agentkit.llms.base import estimate_usage
from agentkit.tools import FunctionTool

ANSWER = "Hello there friend"
PIECES = ["Hello ", "there ", "friend"]


def _reply(text: str = ANSWER) -> ChatMessage:
    return ChatMessage(role=MessageRole.ASSISTANT, content=text)


class AsyncOnly(LLM):
    """Implements only ``_achat``, with 0.5 s of simulated latency."""

    def __init__(self) -> None:
        self.requests: list[LLMRequest] = []

    async def _achat(self, request: LLMRequest) -> ChatResponse:
        self.requests.append(request)
        await asleep(0.5)
        return ChatResponse(message=_reply())


class SyncOnly(LLM):
    """Implements only ``_chat``, with 0.5 s of simulated latency."""

    def __init__(self) -> None:
        self.requests: list[LLMRequest] = []

    def _chat(self, request: LLMRequest) -> ChatResponse:
        self.requests.append(request)
        sleep(0.5)
        return ChatResponse(message=_reply())


class AsyncStreamOnly(LLM):
    """Implements only ``_astream_chat``: three chunks, 0.5 s before the first."""

    def __init__(self) -> None:
        self.requests: list[LLMRequest] = []

    async def _astream_chat(self, request: LLMRequest) -> AsyncIterator[ChatResponse]:
        self.requests.append(request)
        await asleep(0.5)
        so_far = ""
        for piece in PIECES:
            so_far += piece
            yield ChatResponse(message=_reply(so_far), delta=piece)


class SyncStreamOnly(LLM):
    """Implements only ``_stream_chat``: three chunks, 0.5 s before the first."""

    def __init__(self) -> None:
        self.requests: list[LLMRequest] = []

    def _stream_chat(self, request: LLMRequest) -> Iterator[ChatResponse]:
        self.requests.append(request)
        sleep(0.5)
        so_far = ""
        for piece in PIECES:
            so_far += piece
            yield ChatResponse(message=_reply(so_far), delta=piece)


BACKENDS = [AsyncOnly, SyncOnly, AsyncStreamOnly, SyncStreamOnly]
STREAMING = [AsyncStreamOnly, SyncStreamOnly]
MESSAGES = [ChatMessage(role="user", content="hi")]


async def _drain(stream: AsyncIterator) -> list:
    return [chunk async for chunk in stream]


def _chat(llm: LLM) -> ChatResponse:
    return llm.chat(MESSAGES)


def _achat(llm: LLM) -> ChatResponse:
    return run_sync(llm.achat(MESSAGES))


def _stream_chat(llm: LLM) -> list[ChatResponse]:
    return list(llm.stream_chat(MESSAGES))


def _astream_chat(llm: LLM) -> list[ChatResponse]:
    async def go() -> list[ChatResponse]:
        return await _drain(await llm.astream_chat(MESSAGES))

    return run_sync(go())


def _complete(llm: LLM) -> CompletionResponse:
    return llm.complete("hi")


def _acomplete(llm: LLM) -> CompletionResponse:
    return run_sync(llm.acomplete("hi"))


def _stream_complete(llm: LLM) -> list[CompletionResponse]:
    return list(llm.stream_complete("hi"))


def _astream_complete(llm: LLM) -> list[CompletionResponse]:
    async def go() -> list[CompletionResponse]:
        return await _drain(await llm.astream_complete("hi"))

    return run_sync(go())


VARIANTS = {
    "chat": _chat, "achat": _achat, "stream_chat": _stream_chat, "astream_chat": _astream_chat,
    "complete": _complete, "acomplete": _acomplete, "stream_complete": _stream_complete,
    "astream_complete": _astream_complete,
}
KIND = {"chat": "chat", "achat": "chat", "stream_chat": "stream_chat", "astream_chat": "stream_chat",
        "complete": "complete", "acomplete": "complete", "stream_complete": "stream_complete",
        "astream_complete": "stream_complete"}


def _text(result) -> str:
    last = result[-1] if isinstance(result, list) else result
    return last.text if isinstance(last, CompletionResponse) else last.message.content


# ---------------------------------------------------------------- derivation


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("backend", BACKENDS)
def test_every_variant_is_derived_from_one_backend_hook(backend, variant):
    assert _text(VARIANTS[variant](backend())) == ANSWER


@pytest.mark.parametrize("variant", ["stream_chat", "astream_chat", "stream_complete", "astream_complete"])
@pytest.mark.parametrize("backend", STREAMING)
def test_streaming_backends_stream_their_chunks_with_deltas(backend, variant):
    chunks = VARIANTS[variant](backend())
    assert [c.delta for c in chunks] == PIECES


@pytest.mark.parametrize("variant", ["stream_chat", "astream_chat", "stream_complete", "astream_complete"])
@pytest.mark.parametrize("backend", [AsyncOnly, SyncOnly])
def test_a_stream_from_a_non_streaming_backend_is_one_chunk_with_the_whole_answer(backend, variant):
    chunks = VARIANTS[variant](backend())
    assert [c.delta for c in chunks] == [ANSWER]


@pytest.mark.parametrize("variant", ["chat", "achat"])
@pytest.mark.parametrize("backend", STREAMING)
def test_a_non_streamed_call_to_a_streaming_backend_has_no_delta(backend, variant):
    assert VARIANTS[variant](backend()).delta is None


@pytest.mark.parametrize("variant", VARIANTS)
def test_each_call_reaches_the_backend_once(variant):
    llm = AsyncOnly()
    VARIANTS[variant](llm)
    assert len(llm.requests) == 1


def test_a_backend_without_hooks_says_which_to_implement():
    class Empty(LLM):
        pass

    with pytest.raises(NotImplementedError, match="Empty must implement `_achat` or `_chat`"):
        Empty().chat(MESSAGES)


def test_a_stream_without_chunks_is_an_error_for_a_non_streamed_call():
    class Silent(LLM):
        async def _astream_chat(self, request):
            return
            yield

    with pytest.raises(RuntimeError, match="the backend's stream ended without a single chunk"):
        Silent().chat(MESSAGES)


# ---------------------------------------------------------------- requests


def test_chat_request_carries_the_messages():
    llm = AsyncOnly()
    llm.chat(MESSAGES)
    assert (llm.requests[0].kind, llm.requests[0].messages) == ("chat", MESSAGES)


def test_complete_request_carries_the_prompt_and_it_as_one_user_message():
    llm = AsyncOnly()
    llm.complete("say hi")
    request = llm.requests[0]
    assert (request.kind, request.prompt, request.messages) == (
        "complete", "say hi", [ChatMessage(role="user", content="say hi")])


def test_stream_flag_marks_streamed_requests():
    llm = AsyncOnly()
    list(llm.stream_chat(MESSAGES))
    assert (llm.requests[0].stream, llm.requests[0].call_kind) == (True, "stream_chat")


def test_extra_keyword_arguments_reach_the_backend():
    llm = AsyncOnly()
    llm.chat(MESSAGES, temperature=0.2)
    assert llm.requests[0].kwargs == {"temperature": 0.2}


def test_system_prompt_is_prepended_to_a_chat():
    llm = AsyncOnly()
    llm.system_prompt = "be brief"
    llm.chat(MESSAGES)
    assert llm.requests[0].messages == [ChatMessage(role="system", content="be brief"), *MESSAGES]


def test_system_prompt_is_not_added_when_the_chat_has_a_system_message():
    llm = AsyncOnly()
    llm.system_prompt = "be brief"
    messages = [ChatMessage(role="system", content="mine"), *MESSAGES]
    llm.chat(messages)
    assert llm.requests[0].messages == messages


def test_messages_to_prompt_writes_role_lines_ending_with_the_assistant_turn():
    prompt = messages_to_prompt([ChatMessage(role="system", content="s"), ChatMessage(content="u")])
    assert prompt == "system: s\nuser: u\nassistant: "


def test_estimate_usage_counts_prompt_and_reply_tokens():
    request = LLMRequest(kind="chat", messages=[ChatMessage(content="a b"), ChatMessage(content="c")])
    usage = estimate_usage(request, _reply("d e f"))
    assert usage == Usage(prompt_tokens=(2 + 4) + (1 + 4), completion_tokens=3)



# what AsyncOnly's reply to one "a b" message is estimated at: (2 tokens + 4) in, the answer out
_ESTIMATE = Usage(prompt_tokens=2 + 4, completion_tokens=count_tokens(ANSWER),
                  total_tokens=2 + 4 + count_tokens(ANSWER))


def _counting_estimates(monkeypatch) -> list[int]:
    """Count the calls of ``estimate_usage`` the LLM layer makes from now on."""
    import agentkit.llms.base as base

    calls: list[int] = []
    real = base.estimate_usage

    def counting(request, message):
        calls.append(1)
        return real(request, message)

    monkeypatch.setattr(base, "estimate_usage", counting)
    return calls


def test_the_usage_estimate_is_counted_when_first_read_and_only_once(monkeypatch):
    estimates = _counting_estimates(monkeypatch)
    response = AsyncOnly().chat([ChatMessage(content="a b")])
    assert estimates == []
    assert response.usage == _ESTIMATE
    assert response.usage.total_tokens == 6 + count_tokens(ANSWER)
    assert estimates == [1]


def test_a_read_usage_estimate_is_a_plain_usage_that_dumps_and_copies_like_one():
    response = AsyncOnly().chat([ChatMessage(content="a b")])
    eager = _ESTIMATE
    assert response.model_dump()["usage"] == eager.model_dump()
    assert type(response.usage) is Usage
    assert response.model_copy(deep=True).usage == eager
    assert repr(response.usage) == repr(eager)
    assert response.usage.model_fields_set == eager.model_fields_set


def test_a_usage_estimate_dumped_before_any_other_read_has_the_counted_values():
    response = AsyncOnly().chat([ChatMessage(content="a b")])
    assert json.loads(response.model_dump_json())["usage"] == _ESTIMATE.model_dump()


def test_an_agent_chat_counts_no_usage_estimate_nobody_reads(monkeypatch):
    from agentkit.agent import ReActAgent
    from agentkit.llms.mock import ScriptedLLM

    estimates = _counting_estimates(monkeypatch)
    llm = ScriptedLLM(["Thought: I can answer.\nAnswer: hi"])
    assert ReActAgent.from_tools([], llm=llm).chat("hello").response == "hi"
    assert estimates == []


def test_a_listener_of_llm_calls_gets_the_estimated_usage(monkeypatch):
    estimates = _counting_estimates(monkeypatch)
    with collect_events() as events:
        AsyncOnly().chat([ChatMessage(content="a b")])
    (end,) = [e for e in events if isinstance(e, LLMCallEndEvent)]
    assert end.usage == _ESTIMATE
    assert estimates == [1]


def _echo_tool():
    return FunctionTool.from_defaults(lambda x: x, name="echo", description="Echo x.")


def test_tool_specs_are_name_description_and_parameters_of_each_tool():
    tool = _echo_tool()

    specs = LLMRequest(kind="chat", messages=[], tools=[tool]).tool_specs()

    assert specs == [{"name": "echo", "description": "Echo x.",
                      "parameters": tool.metadata.get_parameters_dict()}]


def test_requests_offering_the_same_tools_share_their_specs():
    tool = _echo_tool()

    first = LLMRequest(kind="chat", messages=[], tools=[tool]).tool_specs()
    second = LLMRequest(kind="chat", messages=[], tools=[tool]).tool_specs()

    assert first is not second and first[0] is second[0]


def test_a_tool_changed_between_requests_shows_in_the_next_specs():
    tool = _echo_tool()
    LLMRequest(kind="chat", messages=[], tools=[tool]).tool_specs()

    tool.metadata.description = "Echo x back."
    (spec,) = LLMRequest(kind="chat", messages=[], tools=[tool]).tool_specs()

    assert spec["description"] == "Echo x back."


def test_estimated_usage_counts_the_offered_tool_specs_as_json():
    request = LLMRequest(kind="chat", messages=[ChatMessage(content="a")], tools=[_echo_tool()])

    usage = estimate_usage(request, _reply("b"))

    assert usage.prompt_tokens == (1 + 4) + count_tokens(json.dumps(request.tool_specs()))

# ---------------------------------------------------------------- events


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("backend", BACKENDS)
def test_each_call_emits_one_start_and_one_end_event(backend, variant):
    with collect_events() as events:
        VARIANTS[variant](backend())
    kinds = [type(e) for e in events if not isinstance(e, LLMStreamChunkEvent)]
    assert kinds == [LLMCallStartEvent, LLMCallEndEvent]


@pytest.mark.parametrize("variant", VARIANTS)
def test_call_events_name_the_kind_of_call(variant):
    with collect_events() as events:
        VARIANTS[variant](AsyncOnly())
    assert [e.kind for e in events if not isinstance(e, LLMStreamChunkEvent)] == [KIND[variant]] * 2


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("backend", BACKENDS)
def test_end_event_reports_the_simulated_latency(backend, variant):
    with collect_events() as events:
        VARIANTS[variant](backend())
    assert events[-1].latency == 0.5


@pytest.mark.parametrize("variant", VARIANTS)
def test_end_event_reports_the_estimated_usage(variant):
    with collect_events() as events:
        VARIANTS[variant](AsyncOnly())
    request = LLMRequest(kind="chat", messages=[ChatMessage(content="hi")])
    assert events[-1].usage == estimate_usage(request, _reply())


def test_returned_response_carries_the_estimated_usage():
    response = AsyncOnly().chat(MESSAGES)
    assert response.usage == estimate_usage(LLMRequest(kind="chat", messages=MESSAGES), _reply())


def test_usage_given_by_the_backend_is_kept():
    given = Usage(prompt_tokens=100, completion_tokens=7)

    class Priced(LLM):
        async def _achat(self, request):
            return ChatResponse(message=_reply(), usage=given)

    with collect_events() as events:
        Priced().chat(MESSAGES)
    assert events[-1].usage == given


@pytest.mark.parametrize("backend", STREAMING)
def test_streamed_call_emits_one_chunk_event_per_chunk(backend):
    with collect_events() as events:
        list(backend().stream_chat(MESSAGES))
    assert [e.delta for e in events if isinstance(e, LLMStreamChunkEvent)] == PIECES


def test_start_and_end_events_share_one_span_under_the_current_span():
    with collect_events() as events, dispatcher.span() as outer:
        AsyncOnly().chat(MESSAGES)
    assert {(e.span_id, e.parent_id) for e in events} == {(events[0].span_id, outer.id)}


def test_start_event_carries_the_messages_and_tool_specs():
    tool = FunctionTool.from_defaults(lambda x: x, name="echo")
    with collect_events() as events:
        AsyncOnly().chat(MESSAGES, tools=[tool], tool_choice="auto")
    start = events[0]
    assert (start.messages, [t["name"] for t in start.tools], start.tool_choice) == (
        MESSAGES, ["echo"], "auto")



class _CountingMetadata(AsyncOnly):
    reads = 0

    @property
    def metadata(self):
        type(self).reads += 1
        return super().metadata


def test_a_call_nobody_listens_to_builds_no_events_and_reads_no_metadata(monkeypatch):
    emitted: list[object] = []
    monkeypatch.setattr("agentkit.core.events.dispatcher.emit", emitted.append)
    _CountingMetadata.reads = 0

    response = _CountingMetadata().chat(MESSAGES)

    assert (emitted, _CountingMetadata.reads) == ([], 0)
    assert response.usage == estimate_usage(LLMRequest(kind="chat", messages=MESSAGES), _reply())


def test_a_listened_call_reads_the_model_metadata_once():
    _CountingMetadata.reads = 0

    with collect_events() as events:
        _CountingMetadata().chat(MESSAGES)

    assert _CountingMetadata.reads == 1 and {e.model for e in events} == {"unknown"}

def test_end_event_carries_the_response():
    with collect_events() as events:
        response = AsyncOnly().chat(MESSAGES)
    assert events[-1].response is response


def test_a_failing_backend_emits_an_end_event_with_the_error_and_raises():
    class Failing(LLM):
        async def _achat(self, request):
            raise TimeoutError("took too long")

    with collect_events() as events, pytest.raises(TimeoutError, match="took too long"):
        Failing().chat(MESSAGES)
    assert [(type(e), getattr(e, "error", None)) for e in events] == [
        (LLMCallStartEvent, None), (LLMCallEndEvent, "TimeoutError: took too long")]


def test_a_stream_closed_early_ends_its_call_with_an_error():
    with collect_events() as events:
        stream = AsyncStreamOnly().stream_chat(MESSAGES)
        next(stream)
        stream.close()
    assert events[-1].error == "stream closed before its end"


def test_concurrent_calls_overlap_on_the_virtual_clock():
    llm = AsyncOnly()

    async def three() -> None:
        await asyncio.gather(*(llm.achat(MESSAGES) for _ in range(3)))

    with collect_events() as events:
        run_sync(three())
    assert [e.latency for e in events if isinstance(e, LLMCallEndEvent)] == [0.5, 0.5, 0.5]


# ---------------------------------------------------------------- FunctionCallingLLM


def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def fail(reason: str) -> str:
    """Always fails."""
    raise RuntimeError(reason)


TOOLS = [FunctionTool.from_defaults(add), FunctionTool.from_defaults(fail)]


class ToolPicker(FunctionCallingLLM):
    """Answers with the given tool calls (or text when there are none)."""

    def __init__(self, calls: list[ToolSelection], text: str = "") -> None:
        self.calls = calls
        self.text = text
        self.requests: list[LLMRequest] = []

    async def _achat(self, request: LLMRequest) -> ChatResponse:
        self.requests.append(request)
        return ChatResponse(message=ChatMessage(
            role="assistant", content=self.text,
            additional_kwargs={"tool_calls": list(self.calls)} if self.calls else {}))


def _call(name: str, call_id: str = "c1", **kwargs) -> ToolSelection:
    return ToolSelection(tool_id=call_id, tool_name=name, tool_kwargs=kwargs)


def test_function_calling_llm_metadata_says_it_calls_functions():
    metadata = ToolPicker([]).metadata
    assert (metadata.is_chat_model, metadata.is_function_calling_model) == (True, True)


def test_chat_with_tools_offers_the_tools_and_tool_choice():
    llm = ToolPicker([])
    llm.chat_with_tools(TOOLS, "hi", tool_choice="required")
    request = llm.requests[0]
    assert (request.tools, request.tool_choice) == (TOOLS, "required")


def test_chat_with_tools_appends_the_user_message_to_the_history():
    llm = ToolPicker([])
    history = [ChatMessage(role="assistant", content="earlier")]
    llm.chat_with_tools(TOOLS, "now", chat_history=history)
    assert llm.requests[0].messages == [*history, ChatMessage(role="user", content="now")]


def test_chat_with_tools_accepts_a_message_object_as_user_message():
    llm = ToolPicker([])
    message = ChatMessage(role="user", content="now")
    llm.chat_with_tools(TOOLS, message)
    assert llm.requests[0].messages == [message]


def test_chat_with_tools_keeps_only_the_first_call_unless_parallel_calls_are_allowed():
    calls = [_call("add", "c1", a=1, b=2), _call("add", "c2", a=3, b=4)]
    response = ToolPicker(calls).chat_with_tools(TOOLS, "hi")
    assert response.message.tool_calls == calls[:1]


def test_chat_with_tools_keeps_every_call_when_parallel_calls_are_allowed():
    calls = [_call("add", "c1", a=1, b=2), _call("add", "c2", a=3, b=4)]
    response = ToolPicker(calls).chat_with_tools(TOOLS, "hi", allow_parallel_tool_calls=True)
    assert response.message.tool_calls == calls


def test_achat_with_tools_returns_the_tool_calls():
    calls = [_call("add", a=1, b=2)]
    response = run_sync(ToolPicker(calls).achat_with_tools(TOOLS, "hi"))
    assert response.message.tool_calls == calls


def test_stream_chat_with_tools_ends_with_the_tool_calls():
    calls = [_call("add", a=1, b=2)]
    chunks = list(ToolPicker(calls).stream_chat_with_tools(TOOLS, "hi"))
    assert chunks[-1].message.tool_calls == calls


def test_astream_chat_with_tools_ends_with_the_tool_calls():
    calls = [_call("add", a=1, b=2)]

    async def go():
        return await _drain(await ToolPicker(calls).astream_chat_with_tools(TOOLS, "hi"))

    assert run_sync(go())[-1].message.tool_calls == calls


def test_chat_with_tools_emits_one_call_with_the_tool_specs():
    with collect_events() as events:
        ToolPicker([]).chat_with_tools(TOOLS, "hi")
    assert [[t["name"] for t in e.tools] for e in events if isinstance(e, LLMCallStartEvent)] == [
        ["add", "fail"]]


def test_get_tool_calls_from_response_returns_the_calls():
    calls = [_call("add", a=1, b=2)]
    llm = ToolPicker(calls)
    assert llm.get_tool_calls_from_response(llm.chat_with_tools(TOOLS, "hi")) == calls


def test_get_tool_calls_from_response_without_calls_is_an_error():
    llm = ToolPicker([], text="no tools today")
    response = llm.chat_with_tools(TOOLS, "hi")
    with pytest.raises(ValueError, match=r"Expected at least one tool call, but got 0 tool calls\."):
        llm.get_tool_calls_from_response(response)


def test_get_tool_calls_from_response_without_calls_may_return_none():
    llm = ToolPicker([], text="no tools today")
    response = llm.chat_with_tools(TOOLS, "hi")
    assert llm.get_tool_calls_from_response(response, error_on_no_tool_call=False) == []


def test_predict_and_call_calls_the_chosen_tool():
    result = ToolPicker([_call("add", a=2, b=3)]).predict_and_call(TOOLS, "add")
    assert (result.response, [s.raw_output for s in result.sources]) == ("5", [5])


def test_apredict_and_call_calls_the_chosen_tool():
    result = run_sync(ToolPicker([_call("add", a=2, b=3)]).apredict_and_call(TOOLS, "add"))
    assert isinstance(result, AgentChatResponse) and result.response == "5"


def test_predict_and_call_joins_parallel_outputs_with_blank_lines():
    calls = [_call("add", "c1", a=1, b=1), _call("add", "c2", a=2, b=2)]
    result = ToolPicker(calls).predict_and_call(TOOLS, "add", allow_parallel_tool_calls=True)
    assert result.response == "2\n\n4"


def test_predict_and_call_without_a_tool_call_is_an_error_by_default():
    with pytest.raises(ValueError, match="Expected at least one tool call"):
        ToolPicker([], text="just text").predict_and_call(TOOLS, "hi")


def test_predict_and_call_without_a_tool_call_may_answer_with_the_text():
    result = ToolPicker([], text="just text").predict_and_call(TOOLS, "hi", error_on_no_tool_call=False)
    assert (result.response, result.sources) == ("just text", [])


def test_predict_and_call_turns_a_tool_error_into_an_error_output():
    result = ToolPicker([_call("fail", reason="disk full")]).predict_and_call(TOOLS, "go")
    assert (result.response, result.sources[0].is_error) == ("Encountered error: disk full", True)


def test_predict_and_call_raises_tool_errors_when_asked_to():
    with pytest.raises(ValueError, match=r"^Encountered error: disk full$"):
        ToolPicker([_call("fail", reason="disk full")]).predict_and_call(
            TOOLS, "go", error_on_tool_error=True)


def test_streamed_tool_calls_keep_only_the_first_call_unless_parallel_is_allowed():
    from agentkit.llms.mock import ScriptedLLM, ScriptedResponse, tool_call

    calls = [tool_call("a"), tool_call("b")]
    llm = ScriptedLLM([ScriptedResponse(tool_calls=calls), ScriptedResponse(tool_calls=calls)])
    *_, last = llm.stream_chat_with_tools([], user_msg="x", allow_parallel_tool_calls=False)
    assert [c.tool_name for c in last.message.tool_calls] == ["a"]
    *_, last = llm.stream_chat_with_tools([], user_msg="x", allow_parallel_tool_calls=True)
    assert [c.tool_name for c in last.message.tool_calls] == ["a", "b"]
