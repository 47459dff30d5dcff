"""The mock backends: scripted, computed and echoing LLMs."""

import asyncio
import json
import re

import pytest

from agentkit.core.ids import IdSource
from agentkit.core.sim import Stopwatch, asleep, now, run_sync
from agentkit.instrumentation import LLMCallEndEvent, collect_events
from agentkit.llms import ChatMessage, ChatResponse, Usage
from agentkit.llms.base import LLMRequest, estimate_usage
from agentkit.llms.mock import (
    FunctionLLM,
    MockLLM,
    ScriptedLLM,
    ScriptedResponse,
    ScriptExhaustedError,
    split_words,
    tool_call,
)
from agentkit.tools import FunctionTool

USER = [ChatMessage(role="user", content="hi")]


def _stream(llm, messages=USER, **kwargs) -> list[ChatResponse]:
    return list(llm.stream_chat(messages, **kwargs))


async def _adrain(stream) -> list:
    return [chunk async for chunk in stream]


# ---------------------------------------------------------------- script items


def test_a_string_item_is_an_assistant_text_answer():
    message = ScriptedLLM(["hello"]).chat(USER).message
    assert (message.role.value, message.content) == ("assistant", "hello")


def test_a_chat_message_item_is_answered_as_is():
    scripted = ChatMessage(role="assistant", content="hi", additional_kwargs={"x": 1})
    assert ScriptedLLM([scripted]).chat(USER).message == scripted


def test_a_chat_message_item_is_copied_so_callers_cannot_change_the_script():
    scripted = ChatMessage(role="assistant", content="hi")
    ScriptedLLM([scripted]).chat(USER).message.content = "changed"
    assert scripted.content == "hi"


def test_a_chat_response_item_keeps_its_message_and_usage():
    usage = Usage(prompt_tokens=1, completion_tokens=2)
    response = ScriptedLLM([ChatResponse(message=ChatMessage(role="assistant", content="x"),
                                         usage=usage)]).chat(USER)
    assert (response.message.content, response.usage) == ("x", usage)


def test_a_scripted_response_item_carries_text_and_tool_calls():
    call = tool_call("add", a=1, b=2)
    message = ScriptedLLM([ScriptedResponse(text="adding", tool_calls=[call])]).chat(USER).message
    assert (message.content, message.tool_calls) == ("adding", [call])


def test_a_tool_call_item_is_an_assistant_message_with_that_call():
    call = tool_call("add", a=1, b=2)
    assert ScriptedLLM([call]).chat(USER).message.tool_calls == [call]


def test_a_list_of_tool_calls_item_is_one_message_with_all_of_them():
    calls = [tool_call("add", a=1, b=2), tool_call("add", a=3, b=4)]
    response = ScriptedLLM([calls]).chat_with_tools([], "go", allow_parallel_tool_calls=True)
    assert response.message.tool_calls == calls


def test_tool_call_builds_a_tool_selection():
    call = tool_call("search", query="cats", limit=3)
    assert (call.tool_name, call.tool_kwargs) == ("search", {"query": "cats", "limit": 3})


def test_tool_call_ids_come_from_the_seeded_id_source():
    expected = IdSource(0).new("call")
    assert tool_call("f").tool_id == expected


def test_tool_call_accepts_a_kwarg_named_name():
    assert tool_call("lookup", name="Ada").tool_kwargs == {"name": "Ada"}


def test_an_exception_item_is_raised_by_its_call():
    llm = ScriptedLLM([TimeoutError("upstream timed out")])
    with pytest.raises(TimeoutError, match="upstream timed out"):
        llm.chat(USER)


def test_the_call_after_an_exception_item_gets_the_next_item():
    llm = ScriptedLLM([ConnectionError("429 Too Many Requests"), "after"])
    with pytest.raises(ConnectionError):
        llm.chat(USER)
    assert llm.chat(USER).message.content == "after"


def test_an_exception_item_is_raised_by_a_stream_too():
    with pytest.raises(TimeoutError, match="slow"):
        _stream(ScriptedLLM([TimeoutError("slow")]))


def test_a_callable_item_is_computed_from_the_messages_and_tools():
    tool = FunctionTool.from_defaults(lambda x: x, name="echo")
    llm = ScriptedLLM([lambda messages, tools: f"{messages[-1].content} with {tools[0].metadata.name}"])
    assert llm.chat_with_tools([tool], "hello").message.content == "hello with echo"


def test_a_callable_item_may_return_any_item_kind():
    llm = ScriptedLLM([lambda messages, tools: tool_call("add", a=1, b=2)])
    assert llm.chat(USER).message.tool_calls[0].tool_name == "add"


def test_a_callable_item_may_return_an_exception_to_raise():
    llm = ScriptedLLM([lambda messages, tools: ValueError("computed failure")])
    with pytest.raises(ValueError, match="computed failure"):
        llm.chat(USER)


def test_a_callable_item_may_be_async():
    async def answer(messages, tools):
        await asleep(2)
        return "late"

    llm = ScriptedLLM([answer])
    assert (llm.chat(USER).message.content, now()) == ("late", 2.0)


def test_an_unknown_item_kind_is_an_error_naming_it():
    with pytest.raises(TypeError,
                       match=r"ScriptedLLM 'scripted' cannot answer with 42: a script item must be"):
        ScriptedLLM([42]).chat(USER)


def test_a_callable_returning_a_callable_is_an_error():
    with pytest.raises(TypeError, match="cannot answer with"):
        ScriptedLLM([lambda m, t: (lambda m, t: "x")]).chat(USER)


def test_one_item_is_consumed_per_call_of_any_kind():
    llm = ScriptedLLM(["a", "b", "c", "d"])
    answers = [llm.chat(USER).message.content, llm.complete("x").text,
               _stream(llm)[-1].message.content, list(llm.stream_complete("x"))[-1].text]
    assert answers == ["a", "b", "c", "d"]


def test_async_calls_consume_items_too():
    llm = ScriptedLLM(["a", "b"])

    async def both():
        first = await llm.achat(USER)
        second = await llm.acomplete("x")
        return [first.message.content, second.text]

    assert run_sync(both()) == ["a", "b"]


# ---------------------------------------------------------------- ScriptedResponse


def test_scripted_response_chunks_must_join_to_its_text():
    with pytest.raises(ValueError,
                       match=r"ScriptedResponse chunks \['a', 'b'\] do not join to its text 'abc'"):
        ScriptedResponse(text="abc", chunks=["a", "b"])


def test_scripted_response_text_defaults_to_its_joined_chunks():
    assert ScriptedResponse(chunks=["He", "llo"]).text == "Hello"


def test_scripted_response_usage_may_be_a_dict():
    assert ScriptedResponse(text="x", usage={"prompt_tokens": 2, "completion_tokens": 3}).usage == Usage(
        prompt_tokens=2, completion_tokens=3)


def test_scripted_response_negative_latency_is_an_error():
    with pytest.raises(ValueError, match="ScriptedResponse latency must be >= 0, got -1"):
        ScriptedResponse(text="x", latency=-1)


# ---------------------------------------------------------------- streaming


def test_stream_splits_text_into_word_chunks():
    chunks = _stream(ScriptedLLM(["one two  three"]))
    assert [c.delta for c in chunks if c.delta] == ["one ", "two  ", "three"]


def test_stream_chunks_carry_cumulative_content():
    chunks = _stream(ScriptedLLM(["one two three"]))
    assert [c.message.content for c in chunks[:3]] == ["one ", "one two ", "one two three"]


def test_stream_deltas_join_to_the_whole_text():
    chunks = _stream(ScriptedLLM(["The answer is 42."]))
    assert "".join(c.delta for c in chunks) == "The answer is 42."


def test_stream_uses_explicit_chunks():
    chunks = _stream(ScriptedLLM([ScriptedResponse(chunks=["Hel", "lo", "!"])]))
    assert [c.delta for c in chunks if c.delta] == ["Hel", "lo", "!"]


def test_stream_last_chunk_carries_the_whole_message_with_tool_calls():
    call = tool_call("add", a=1, b=2)
    chunks = _stream(ScriptedLLM([ScriptedResponse(text="adding", tool_calls=[call])]))
    assert (chunks[-1].message.content, chunks[-1].message.tool_calls) == ("adding", [call])


def test_stream_streams_tool_call_arguments_in_pieces():
    call = tool_call("search", query="a long query about cats")
    chunks = _stream(ScriptedLLM([call]))
    deltas = [c.additional_kwargs["tool_call_delta"] for c in chunks
              if "tool_call_delta" in c.additional_kwargs]
    assert len(deltas) > 1 and "".join(d["arguments_delta"] for d in deltas) == json.dumps(call.tool_kwargs)


def test_streamed_tool_call_deltas_name_the_call_and_its_index():
    calls = [tool_call("add", a=1, b=2), tool_call("mul", a=3, b=4)]
    chunks = _stream(ScriptedLLM([calls]), tools=[], allow_parallel_tool_calls=True)
    names = {(d["index"], d["tool_id"], d["tool_name"]) for c in chunks
             if (d := c.additional_kwargs.get("tool_call_delta"))}
    assert names == {(0, calls[0].tool_id, "add"), (1, calls[1].tool_id, "mul")}


def test_astream_chat_streams_word_chunks():
    async def go():
        return await _adrain(await ScriptedLLM(["a b"]).astream_chat(USER))

    assert [c.delta for c in run_sync(go()) if c.delta] == ["a ", "b"]


def test_stream_complete_streams_word_chunks_as_text_deltas():
    chunks = list(ScriptedLLM(["a b c"]).stream_complete("x"))
    assert [(c.text, c.delta) for c in chunks if c.delta] == [("a ", "a "), ("a b ", "b "), ("a b c", "c")]


def test_stream_from_inside_a_running_loop_yields_every_chunk():
    llm = ScriptedLLM(["one two three"])

    async def inside() -> list[str]:
        return [c.delta for c in llm.stream_chat(USER) if c.delta]

    assert run_sync(inside()) == ["one ", "two ", "three"]


def test_split_words_keeps_whitespace_with_the_word_before_it():
    assert split_words("a  b\nc ") == ["a  ", "b\n", "c "]


# ---------------------------------------------------------------- usage and latency


def test_usage_is_estimated_when_the_script_gives_none():
    with collect_events() as events:
        response = ScriptedLLM(["two words"]).chat(USER)
    assert response.usage == events[-1].usage == estimate_usage(
        LLMRequest(kind="chat", messages=USER), response.message)


def test_scripted_usage_is_reported_per_call():
    llm = ScriptedLLM([ScriptedResponse(text="a", usage={"prompt_tokens": 10, "completion_tokens": 1}),
                       ScriptedResponse(text="b", usage={"prompt_tokens": 20, "completion_tokens": 2})])
    with collect_events() as events:
        llm.chat(USER)
        _stream(llm)
    assert [e.usage.total_tokens for e in events if isinstance(e, LLMCallEndEvent)] == [11, 22]


def test_streamed_usage_is_on_the_last_chunk():
    chunks = _stream(ScriptedLLM([ScriptedResponse(text="a b", usage={"prompt_tokens": 5})]))
    assert chunks[-1].usage == Usage(prompt_tokens=5)


def test_llm_latency_is_spent_on_the_virtual_clock_per_call():
    llm = ScriptedLLM(["a", "b"], latency=1.5)
    llm.chat(USER)
    llm.chat(USER)
    assert now() == 3.0


def test_per_call_latency_overrides_the_llm_latency():
    llm = ScriptedLLM([ScriptedResponse(text="slow", latency=30.0), "fast"], latency=1.0)
    with collect_events() as events:
        llm.chat(USER)
        llm.chat(USER)
    assert [e.latency for e in events if isinstance(e, LLMCallEndEvent)] == [30.0, 1.0]


def test_an_exception_item_spends_the_llm_latency_before_raising():
    llm = ScriptedLLM([TimeoutError("slow")], latency=2.0)
    with pytest.raises(TimeoutError):
        llm.chat(USER)
    assert now() == 2.0


def test_an_hour_of_scripted_latency_costs_only_virtual_time():
    ScriptedLLM([ScriptedResponse(text="x", latency=3600.0)]).chat(USER)
    assert now() == 3600.0


def test_concurrent_scripted_calls_overlap_on_the_virtual_clock():
    llm = ScriptedLLM(["a", "b", "c"], latency=1.0)

    async def three():
        await asyncio.gather(*(llm.achat(USER) for _ in range(3)))

    watch = Stopwatch.start()
    run_sync(three())
    assert (watch.wall, watch.serial) == (1.0, 3.0)


def test_negative_llm_latency_is_an_error():
    with pytest.raises(ValueError, match="latency must be >= 0 seconds, got -1"):
        ScriptedLLM([], latency=-1)


# ---------------------------------------------------------------- requests and metadata


def test_requests_keep_every_call_with_its_messages_tools_and_kind():
    tool = FunctionTool.from_defaults(lambda x: x, name="echo")
    llm = ScriptedLLM(["a", "b", "c"])
    llm.chat(USER)
    llm.chat_with_tools([tool], "use it")
    list(llm.stream_complete("prompt"))
    assert [(r.call_kind, r.messages[-1].content, r.tools) for r in llm.requests] == [
        ("chat", "hi", None), ("chat", "use it", [tool]), ("stream_complete", "prompt", None)]


def test_metadata_names_the_model_and_says_whether_it_calls_functions():
    metadata = ScriptedLLM([], function_calling=False, name="planner", context_window=8000).metadata
    assert (metadata.model_name, metadata.is_function_calling_model, metadata.context_window) == (
        "planner", False, 8000)


def test_calls_and_remaining_count_the_script():
    llm = ScriptedLLM(["a", "b", "c"], strict=False)
    llm.chat(USER)
    assert (llm.calls, llm.remaining) == (1, 2)


def test_reset_starts_the_script_over_and_forgets_requests():
    llm = ScriptedLLM(["a", "b"], strict=False)
    llm.chat(USER)
    llm.reset()
    assert (llm.chat(USER).message.content, len(llm.requests)) == ("a", 1)


# ---------------------------------------------------------------- running out of script


def test_running_out_of_script_raises_script_exhausted_error():
    llm = ScriptedLLM(["only"])
    llm.chat(USER)
    with pytest.raises(ScriptExhaustedError):
        llm.chat(USER)


def test_script_exhausted_error_names_the_call_number_and_script_length():
    llm = ScriptedLLM(["a", "b"], name="agent-llm")
    llm.chat(USER)
    llm.chat(USER)
    with pytest.raises(ScriptExhaustedError, match=re.escape(
            "ScriptedLLM 'agent-llm' ran out of script: call #3 has no scripted response "
            "(the script has 2).")):
        llm.chat(USER)


def test_script_exhausted_error_counts_every_call_after_the_end():
    llm = ScriptedLLM([])
    with pytest.raises(ScriptExhaustedError, match="call #1 "):
        llm.chat(USER)
    with pytest.raises(ScriptExhaustedError, match="call #2 "):
        llm.chat(USER)


def test_script_exhausted_error_quotes_the_last_user_message():
    messages = [ChatMessage(role="user", content="what is 2+2?"),
                ChatMessage(role="assistant", content="thinking")]
    with pytest.raises(ScriptExhaustedError,
                       match=re.escape("Last user/observation message: 'what is 2+2?'")):
        ScriptedLLM([]).chat(messages)


def test_script_exhausted_error_quotes_the_last_tool_observation():
    messages = [ChatMessage(role="user", content="add"),
                ChatMessage(role="tool", content="Observation: 4", additional_kwargs={"tool_call_id": "c"})]
    with pytest.raises(ScriptExhaustedError, match=re.escape("message: 'Observation: 4'")):
        ScriptedLLM([]).chat(messages)


def test_script_never_wraps_around():
    llm = ScriptedLLM(["a"])
    llm.chat(USER)
    with pytest.raises(ScriptExhaustedError):
        llm.chat(USER)
    with pytest.raises(ScriptExhaustedError):
        llm.chat(USER)


def test_running_out_of_script_in_a_stream_raises_too():
    with pytest.raises(ScriptExhaustedError, match="call #1"):
        _stream(ScriptedLLM([]))


def test_assert_complete_passes_when_every_item_was_used():
    llm = ScriptedLLM(["a"])
    llm.chat(USER)
    llm.assert_complete()
    assert llm.remaining == 0


@pytest.mark.agentkit_allow_unused_script
def test_assert_complete_fails_on_unused_items_when_strict():
    llm = ScriptedLLM(["a", "b", "c"], name="s")
    llm.chat(USER)
    with pytest.raises(AssertionError, match=re.escape(
            "ScriptedLLM 's' left 2 scripted response(s) unused (1 of 3 consumed); next unused: 'b'")):
        llm.assert_complete()


def test_assert_complete_ignores_unused_items_when_not_strict():
    llm = ScriptedLLM(["a", "b"], strict=False)
    llm.assert_complete()
    assert llm.remaining == 2


# ---------------------------------------------------------------- FunctionLLM


def test_function_llm_answers_with_fn_of_messages_and_tools():
    llm = FunctionLLM(lambda messages, tools: f"{len(messages)} messages, tools={tools}")
    assert llm.chat(USER).message.content == "1 messages, tools=None"


def test_function_llm_fn_may_return_tool_calls():
    llm = FunctionLLM(lambda messages, tools: tool_call("add", a=1, b=2))
    assert llm.chat(USER).message.tool_calls[0].tool_kwargs == {"a": 1, "b": 2}


def test_function_llm_fn_may_be_async():
    async def fn(messages, tools):
        await asleep(1)
        return "async answer"

    assert FunctionLLM(fn).chat(USER).message.content == "async answer"


def test_function_llm_answers_any_number_of_calls():
    llm = FunctionLLM(lambda messages, tools: messages[-1].content.upper())
    assert [llm.chat([ChatMessage(content=w)]).message.content for w in "abc"] == ["A", "B", "C"]


def test_function_llm_streams_fn_answers_in_word_chunks():
    chunks = _stream(FunctionLLM(lambda m, t: "one two"))
    assert [c.delta for c in chunks if c.delta] == ["one ", "two"]


def test_function_llm_stream_fn_drives_streaming_deltas():
    llm = FunctionLLM(lambda m, t: "unused", stream_fn=lambda m, t: iter(["Hel", "lo"]))
    assert [c.delta for c in _stream(llm) if c.delta] == ["Hel", "lo"]


def test_function_llm_stream_fn_may_yield_tool_calls():
    call = tool_call("add", a=1, b=2)
    llm = FunctionLLM(lambda m, t: "unused", stream_fn=lambda m, t: iter(["Adding", call]))
    last = _stream(llm)[-1].message
    assert (last.content, last.tool_calls) == ("Adding", [call])


def test_function_llm_stream_fn_yielding_something_else_is_an_error():
    llm = FunctionLLM(lambda m, t: "unused", stream_fn=lambda m, t: iter([3]))
    with pytest.raises(TypeError, match="FunctionLLM stream_fn yielded 3; yield str or ToolSelection"):
        _stream(llm)


def test_function_llm_non_streamed_calls_ignore_stream_fn():
    llm = FunctionLLM(lambda m, t: "plain", stream_fn=lambda m, t: iter(["streamed"]))
    assert llm.chat(USER).message.content == "plain"


def test_function_llm_records_requests():
    llm = FunctionLLM(lambda m, t: "x", stream_fn=lambda m, t: iter(["y"]))
    llm.chat(USER)
    _stream(llm)
    assert [r.call_kind for r in llm.requests] == ["chat", "stream_chat"]


def test_function_llm_latency_is_virtual():
    FunctionLLM(lambda m, t: "x", latency=4.0).chat(USER)
    assert now() == 4.0


# ---------------------------------------------------------------- MockLLM


def test_mock_llm_complete_echoes_the_prompt():
    assert MockLLM().complete("repeat me").text == "repeat me"


def test_mock_llm_chat_echoes_the_flattened_messages():
    assert MockLLM().chat(USER).message.content == "user: hi\nassistant: "


def test_mock_llm_with_max_tokens_answers_that_many_text_tokens():
    assert MockLLM(max_tokens=3).complete("ignored").text == "text text text"


def test_mock_llm_streams_the_echo_character_by_character():
    assert [c.delta for c in MockLLM().stream_complete("abc")] == ["a", "b", "c"]


def test_mock_llm_streams_max_tokens_one_token_per_chunk():
    chunks = list(MockLLM(max_tokens=2).stream_complete("x"))
    assert [(c.text, c.delta) for c in chunks] == [("text", "text"), ("text text", " text")]


def test_mock_llm_streams_an_empty_prompt_as_one_empty_chunk():
    assert [(c.text, c.delta) for c in MockLLM().stream_complete("")] == [("", "")]


def test_mock_llm_stream_of_an_empty_prompt_still_reports_usage():
    with collect_events() as events:
        list(MockLLM().stream_complete(""))
    assert events[-1].usage == Usage(prompt_tokens=4, completion_tokens=0)


def test_mock_llm_system_prompt_is_part_of_the_echo():
    assert MockLLM(system_prompt="sys").chat(USER).message.content == "system: sys\nuser: hi\nassistant: "


def test_mock_llm_is_not_a_chat_model():
    metadata = MockLLM(max_tokens=5).metadata
    assert (metadata.model_name, metadata.is_chat_model, metadata.num_output) == ("mock", False, 5)
