"""OpenAI backend: SSE streams of text and of tool-call deltas, usage included."""

import httpx
import pytest

from agentkit.core.sim import run_sync
from agentkit.llms import errors
from agentkit.llms.mock import ScriptedResponse, tool_call
from agentkit.llms.types import ChatMessage, Usage
from agentkit.tools import FunctionTool
from mocks.openai_server import RawToolCall

USER = [ChatMessage(content="Tell me")]


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


TOOLS = [FunctionTool.from_defaults(add), FunctionTool.from_defaults(multiply)]


async def _drain(stream_awaitable):
    return [chunk async for chunk in await stream_awaitable]


def test_a_text_stream_yields_each_delta(fake_openai):
    server = fake_openai([ScriptedResponse(chunks=["Hel", "lo, ", "world"])])
    chunks = list(server.llm().stream_chat(USER))
    assert [c.delta for c in chunks] == ["Hel", "lo, ", "world", ""]


def test_a_text_stream_carries_the_cumulative_message(fake_openai):
    server = fake_openai([ScriptedResponse(chunks=["Hel", "lo, ", "world"])])
    chunks = list(server.llm().stream_chat(USER))
    assert [c.message.content for c in chunks] == ["Hel", "Hello, ", "Hello, world",
                                                   "Hello, world"]


def test_an_async_text_stream_yields_the_same_chunks(fake_openai):
    server = fake_openai([ScriptedResponse(chunks=["a ", "b"])])
    chunks = run_sync(_drain(server.llm().astream_chat(USER)))
    assert [(c.delta, c.message.content) for c in chunks] == [("a ", "a "), ("b", "a b"),
                                                               ("", "a b")]


def test_a_stream_requests_usage_and_reports_it_on_the_last_chunk(fake_openai):
    server = fake_openai([ScriptedResponse("Hi there", usage={"prompt_tokens": 5,
                                                              "completion_tokens": 2})])
    chunks = list(server.llm().stream_chat(USER))
    assert server.requests[0]["stream_options"] == {"include_usage": True}
    assert chunks[-1].usage == Usage(prompt_tokens=5, completion_tokens=2)
    assert all(c.usage is None for c in chunks[:-1])


def test_the_last_stream_chunk_carries_the_finish_reason(fake_openai):
    server = fake_openai(["Hi"])
    chunks = list(server.llm().stream_chat(USER))
    assert chunks[-1].additional_kwargs["finish_reason"] == "stop"


def test_stream_options_from_additional_kwargs_replace_the_default(fake_openai):
    server = fake_openai(["Hi"])
    list(server.llm(additional_kwargs={"stream_options": {"include_usage": False}})
         .stream_chat(USER))
    assert server.requests[0]["stream_options"] == {"include_usage": False}


def test_stream_options_none_leaves_them_out_and_usage_is_estimated(fake_openai):
    server = fake_openai(["Hi"])
    chunks = list(server.llm(additional_kwargs={"stream_options": None}).stream_chat(USER))
    assert "stream_options" not in server.requests[0]
    assert chunks[-1].usage.completion_tokens == 1


def test_a_streamed_tool_call_is_reassembled_from_argument_deltas(fake_openai):
    call = tool_call("add", a=12345, b=67890)
    server = fake_openai([call])
    chunks = list(server.llm().stream_chat_with_tools(TOOLS, user_msg="add"))
    pieces = [c.additional_kwargs["tool_call_delta"]["arguments_delta"] for c in chunks[:-1]]
    assert len([p for p in pieces if p]) > 1
    assert "".join(pieces) == '{"a": 12345, "b": 67890}'
    assert chunks[-1].message.tool_calls == [call]


def test_tool_call_deltas_name_their_call(fake_openai):
    call = tool_call("add", a=1, b=2)
    server = fake_openai([call])
    chunks = list(server.llm().stream_chat_with_tools(TOOLS, user_msg="add"))
    deltas = [c.additional_kwargs["tool_call_delta"] for c in chunks[:-1]]
    assert {(d["index"], d["tool_id"], d["tool_name"]) for d in deltas} == {
        (0, call.tool_id, "add")}


def test_only_the_last_stream_chunk_carries_tool_calls(fake_openai):
    server = fake_openai([tool_call("add", a=1, b=2)])
    chunks = list(server.llm().stream_chat_with_tools(TOOLS, user_msg="add"))
    assert [bool(c.message.tool_calls) for c in chunks] == [False] * (len(chunks) - 1) + [True]


def test_parallel_streamed_tool_calls_are_reassembled_per_index(fake_openai):
    calls = [tool_call("add", a=1, b=2), tool_call("multiply", a=30, b=40)]
    server = fake_openai([calls])
    chunks = run_sync(_drain(server.llm().astream_chat_with_tools(
        TOOLS, user_msg="both", allow_parallel_tool_calls=True)))
    assert chunks[-1].message.tool_calls == calls
    assert chunks[-1].additional_kwargs["finish_reason"] == "tool_calls"


def test_a_stream_of_text_then_tool_calls_keeps_both(fake_openai):
    call = tool_call("add", a=1, b=2)
    server = fake_openai([ScriptedResponse("Adding now.", tool_calls=[call])])
    final = list(server.llm().stream_chat_with_tools(TOOLS, user_msg="add"))[-1]
    assert (final.message.content, final.message.tool_calls) == ("Adding now.", [call])


def test_a_stream_with_tool_calls_reports_usage(fake_openai):
    server = fake_openai([ScriptedResponse(tool_calls=[tool_call("add", a=1, b=2)],
                                           usage={"prompt_tokens": 9, "completion_tokens": 4})])
    final = list(server.llm().stream_chat_with_tools(TOOLS, user_msg="add"))[-1]
    assert final.usage == Usage(prompt_tokens=9, completion_tokens=4)


def test_invalid_streamed_arguments_become_an_arguments_error(fake_openai):
    server = fake_openai([RawToolCall("add", "{'a': 1}")])
    [call] = list(server.llm().stream_chat_with_tools(TOOLS, user_msg="add"))[-1].message.tool_calls
    assert call.tool_kwargs == {} and "not valid JSON" in call.arguments_error


def test_stream_complete_yields_text_deltas(fake_openai):
    server = fake_openai([ScriptedResponse(chunks=["4", "2"])])
    assert [c.delta for c in server.llm().stream_complete("6*7=")] == ["4", "2", ""]


def test_astream_complete_ends_with_the_full_text(fake_openai):
    server = fake_openai([ScriptedResponse(chunks=["4", "2"])])
    chunks = run_sync(_drain(server.llm().astream_complete("6*7=")))
    assert chunks[-1].text == "42"


def _broken_stream() -> httpx.Response:
    head = ('data: {"id": "c", "object": "chat.completion.chunk", "created": 0, "model": "m", '
            '"choices": [{"index": 0, "delta": {"content": "Hi"}, "finish_reason": null}]}\n\n')
    error = 'event: error\ndata: {"error": {"message": "overloaded mid-stream"}}\n\n'
    return httpx.Response(200, headers={"content-type": "text/event-stream"},
                          content=(head + error).encode())


def test_an_error_in_the_middle_of_a_stream_is_a_typed_error_and_not_retried(fake_openai):
    server = fake_openai([_broken_stream()])
    received = []
    with pytest.raises(errors.LLMError, match="overloaded mid-stream"):
        for chunk in server.llm().stream_chat(USER):
            received.append(chunk.delta)
    assert (received, server.calls) == (["Hi"], 1)


def test_an_error_in_the_middle_of_an_async_stream_is_a_typed_error(fake_openai):
    server = fake_openai([_broken_stream()])
    with pytest.raises(errors.LLMError, match="overloaded mid-stream"):
        run_sync(_drain(server.llm().astream_chat(USER)))
