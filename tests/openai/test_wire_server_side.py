"""The server side of the chat.completions wire format: requests read into our messages and
tools (malformed ones refused with a 400 naming the field), answers written so that the client
side reads back exactly what was written."""

from __future__ import annotations

import base64
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentkit.llms.openai_wire import (
    RequestError,
    SSEDecoder,
    StreamAssembler,
    WireReply,
    completion_body,
    completion_events,
    from_openai_messages,
    parse_completion,
    parse_request,
    sse_body,
    to_openai_messages,
)
from agentkit.llms.types import ChatMessage, ImageBlock, MessageRole, TextBlock, ToolSelection, Usage

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 8
ADD = {"type": "function", "function": {"name": "add", "description": "Add two integers.",
                                        "parameters": {"type": "object", "properties": {
                                            "a": {"type": "integer"}, "b": {"type": "integer"}}}}}


def _body(**fields) -> bytes:
    return json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}],
                       **fields}).encode()


def _refused(body: bytes) -> RequestError:
    with pytest.raises(RequestError) as caught:
        parse_request(body)
    return caught.value


# ----------------------------------------------------------------- reading requests
def test_a_request_is_read_into_our_messages_tools_and_options():
    request = parse_request(_body(
        messages=[{"role": "system", "content": "Be brief."},
                  {"role": "user", "content": "What is 2 + 3?"},
                  {"role": "assistant", "content": None, "tool_calls": [
                      {"id": "c1", "type": "function",
                       "function": {"name": "add", "arguments": "{\"a\": 2, \"b\": 3}"}}]},
                  {"role": "tool", "tool_call_id": "c1", "content": "5"}],
        tools=[ADD], tool_choice="auto", parallel_tool_calls=False, temperature=0, seed=7,
        user="someone"))

    assert [m.role for m in request.messages] == [MessageRole.SYSTEM, MessageRole.USER,
                                                  MessageRole.ASSISTANT, MessageRole.TOOL]
    assert request.messages[2].tool_calls == [ToolSelection(tool_id="c1", tool_name="add",
                                                            tool_kwargs={"a": 2, "b": 3})]
    assert request.messages[3].additional_kwargs == {"tool_call_id": "c1"}
    assert [t.metadata.name for t in request.tools] == ["add"]
    assert request.tools[0].metadata.get_parameters_dict() == ADD["function"]["parameters"]
    assert (request.tool_choice, request.parallel_tool_calls) == ("auto", False)
    assert request.options == {"temperature": 0, "seed": 7}  # `user` does not decide the answer


def test_a_streamed_request_says_whether_it_wants_the_usage():
    request = parse_request(_body(stream=True, stream_options={"include_usage": True}))

    assert (request.stream, request.include_usage) == (True, True)
    assert parse_request(_body(stream=True)).include_usage is False


def test_a_data_url_image_becomes_an_image_block_with_its_bytes():
    url = "data:image/png;base64," + base64.b64encode(PNG).decode()
    request = parse_request(_body(messages=[{"role": "user", "content": [
        {"type": "text", "text": "What is this?"},
        {"type": "image_url", "image_url": {"url": url, "detail": "low"}}]}]))

    text, image = request.messages[0].blocks
    assert text == TextBlock(text="What is this?")
    assert (image.resolve_image(), image.image_mimetype, image.detail) == (PNG, "image/png", "low")


def test_our_messages_survive_the_wire_both_ways():
    messages = [
        ChatMessage(role="system", content="Be brief."),
        ChatMessage(role="user", blocks=[TextBlock(text="What is this?"),
                                         ImageBlock(image=PNG, image_mimetype="image/png")]),
        ChatMessage(role="assistant", content="", additional_kwargs={"tool_calls": [
            ToolSelection(tool_id="c1", tool_name="add", tool_kwargs={"a": 2, "b": 3})]}),
        ChatMessage(role="tool", content="5", additional_kwargs={"tool_call_id": "c1"}),
        ChatMessage(role="user", content="thanks", additional_kwargs={"name": "alice"}),
    ]

    assert from_openai_messages(to_openai_messages(messages)) == messages


@pytest.mark.parametrize("body, field, says", [
    (b"{not json", None, "the request body is not valid JSON"),
    (b"[1, 2]", None, "the request body is a JSON array, not an object"),
    (json.dumps({"messages": [{"role": "user", "content": "hi"}]}).encode(), "model",
     "you must provide a model parameter"),
    (_body(messages=[]), "messages", "messages must be a non-empty array"),
    (_body(messages=[{"role": "robot", "content": "hi"}]), "messages[0].role",
     "messages[0].role: \"robot\" is not one of system, developer, user, assistant, tool"),
    (_body(messages=[{"role": "tool", "content": "5"}]), "messages[0].tool_call_id",
     "a tool message must say which tool call it answers"),
    (_body(messages=[{"role": "user"}]), "messages[0].content", "missing"),
    (_body(messages=[{"role": "user", "content": [{"type": "input_audio"}]}]),
     "messages[0].content[0]", "unsupported content part \"input_audio\""),
    (_body(frobnicate=1), "frobnicate", "Unrecognized request argument supplied: frobnicate"),
    (_body(functions=[]), "functions", "send `tools` instead"),
    (_body(n=2), "n", "only 1 choice per request"),
    (_body(stream="yes"), "stream", "stream must be true or false"),
    (_body(tools=[{"type": "function", "function": {}}]), "tools[0].function.name",
     "a tool needs a name"),
    (_body(tools=[ADD], tool_choice={"type": "function", "function": {"name": "mul"}}),
     "tool_choice", "names the tool 'mul', which is not among the offered tools (add)"),
])
def test_a_malformed_request_is_a_400_naming_what_is_wrong(body, field, says):
    error = _refused(body)

    assert error.status == 400
    assert says in error.message
    assert error.body() == {"error": {"message": error.message, "type": "invalid_request_error",
                                      "param": field, "code": None}}


@given(st.binary(max_size=80))
def test_any_bytes_are_a_request_or_a_request_error(body):
    try:
        parse_request(body)
    except RequestError as error:
        assert error.status == 400


# ----------------------------------------------------------------- writing answers
REPLY = WireReply("Adding them now.", [("c1", "add", json.dumps({"a": 2, "b": 3})),
                                       ("c2", "add", json.dumps({"a": 4, "b": 5}))],
                  chunks=["Adding ", "them ", "now."])
USAGE = Usage(prompt_tokens=12, completion_tokens=7)
ENVELOPE = {"completion_id": "chatcmpl-1", "model": "m", "created": 0}


def test_a_written_completion_reads_back_as_the_reply():
    response = parse_completion(json.dumps(completion_body(REPLY, USAGE, **ENVELOPE)).encode())

    assert response.message.content == "Adding them now."
    assert [(c.tool_id, c.tool_kwargs) for c in response.message.tool_calls] == [
        ("c1", {"a": 2, "b": 3}), ("c2", {"a": 4, "b": 5})]
    assert response.usage == Usage(prompt_tokens=12, completion_tokens=7, total_tokens=19)
    assert response.additional_kwargs["finish_reason"] == "tool_calls"


def test_a_written_stream_reads_back_chunk_by_chunk_as_the_reply():
    decoder, assembler = SSEDecoder(), StreamAssembler()
    body = sse_body(completion_events(REPLY, USAGE, **ENVELOPE))
    deltas = [chunk.delta for event in decoder.feed(body) for chunk in assembler.feed(*event)
              if chunk.delta]
    final = assembler.final()

    assert deltas == ["Adding ", "them ", "now."]
    assert [(c.tool_name, c.tool_kwargs) for c in final.message.tool_calls] == [
        ("add", {"a": 2, "b": 3}), ("add", {"a": 4, "b": 5})]
    assert (final.usage.total_tokens, final.additional_kwargs["finish_reason"]) == (19,
                                                                                    "tool_calls")


def test_a_stream_without_usage_asked_for_has_no_usage_chunk():
    events = completion_events(REPLY, None, **ENVELOPE)

    assert all("usage" not in event for event in events)
    assert events[-1]["choices"][0]["finish_reason"] == "tool_calls"


def test_a_message_sent_again_is_read_once_and_a_changed_one_anew():
    known: dict[str, ChatMessage] = {}
    first = from_openai_messages([{"role": "user", "content": "hi"}], known)

    again = from_openai_messages([{"role": "user", "content": "hi"},
                                  {"role": "assistant", "content": "hello"}], known)
    changed = from_openai_messages([{"role": "user", "content": "hi!"}], known)

    assert again[0] is first[0]
    assert (again[1].role, again[1].content) == (MessageRole.ASSISTANT, "hello")
    assert changed[0] is not first[0] and changed[0].content == "hi!"


def test_a_malformed_message_is_refused_even_after_good_ones_were_read():
    known: dict[str, ChatMessage] = {}
    from_openai_messages([{"role": "user", "content": "hi"}], known)

    with pytest.raises(RequestError, match=r"messages\[1\]\.role"):
        from_openai_messages([{"role": "user", "content": "hi"}, {"role": "robot"}], known)
