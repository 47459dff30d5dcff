"""The chat.completions parser and SSE decoder, fuzzed: any bytes give an answer or a
WireError, never another exception."""

from __future__ import annotations

import contextlib
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentkit.llms.openai_wire import SSEDecoder, StreamAssembler, WireError, parse_completion

_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["choices", "message", "content", "delta", "tool_calls", "function",
                         "name", "arguments", "index", "id", "usage", "finish_reason",
                         "prompt_tokens", "error", "x"]), inner, max_size=4),
    max_leaves=12)


@given(_JSON)
def test_any_json_answer_parses_or_is_a_wire_error(value):
    try:
        response = parse_completion(json.dumps(value).encode())
    except WireError:
        return
    assert isinstance(response.message.content, str)


@given(st.binary(max_size=60))
def test_any_bytes_parse_or_are_a_wire_error(body):
    with contextlib.suppress(WireError):
        parse_completion(body)


@pytest.mark.slow  # property test at full size
@given(st.lists(_JSON, max_size=5), st.booleans())
def test_any_stream_of_json_events_assembles_or_is_a_wire_error(values, done):
    assembler = StreamAssembler()
    events = [("", json.dumps(v)) for v in values] + ([("", "[DONE]")] if done else [])
    try:
        for event in events:
            list(assembler.feed(*event))
        final = assembler.final()
    except WireError:
        return
    assert final.message.content == assembler.text


@pytest.mark.slow  # property test at full size
@given(st.lists(st.sampled_from([b"data: {\"a\": 1}", b"data: x", b"event: error", b": ping",
                                 b"id: 3", b"", b"data:", b"\xff"]), max_size=10),
       st.sampled_from([b"\n", b"\r\n", b"\r"]), st.data())
def test_sse_events_do_not_depend_on_how_the_bytes_were_split(lines, newline, data):
    stream = newline.join(lines) + newline

    def decode(pieces: list[bytes]) -> list[tuple[str, str]] | str:
        decoder = SSEDecoder()
        try:
            events = [e for piece in pieces for e in decoder.feed(piece)]
            return events + decoder.close()
        except WireError as exc:
            return str(exc)

    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=4)))
    pieces = [stream[a:b] for a, b in zip([0, *cuts], [*cuts, len(stream)], strict=True)]
    assert decode(pieces) == decode([stream])


def test_sse_data_lines_of_one_event_are_joined_and_comments_skipped():
    decoder = SSEDecoder()

    events = decoder.feed(b": keep-alive\nevent: error\ndata: a\ndata: b\n\ndata: c\n\n")

    assert events == [("error", "a\nb"), ("", "c")]


def test_a_stream_ending_in_a_lone_carriage_return_still_gives_its_last_event():
    decoder = SSEDecoder()

    events = decoder.feed(b"data: a\r") + decoder.close()

    assert events == [("", "a")]
