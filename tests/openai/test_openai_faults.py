"""A real (loopback) server that misbehaves: cut streams, bad JSON, trickled and stalled
answers. Every fault is a typed agentkit error saying what was wrong."""

from __future__ import annotations

import json
import re

import pytest

from agentkit.agent import FunctionCallingAgent, ReActAgent
from agentkit.core.sim import run_sync
from agentkit.llms import ChatMessage, errors
from agentkit.llms.openai import OpenAI
from agentkit.llms.openai_wire import MAX_ARGUMENT_DEPTH
from mocks.loopback_server import LoopbackServer, Reply, completion, sse

pytestmark = pytest.mark.agentkit_allow_loopback

USER = [ChatMessage(role="user", content="hi")]
SSE = {"content-type": "text/event-stream"}


def _stream(server: LoopbackServer, **options) -> list[str]:
    llm = OpenAI(base_url=server.url, max_retries=0, **options)
    return [chunk.delta for chunk in llm.stream_chat(USER)]


async def _astream(llm: OpenAI) -> list[str]:
    return [chunk.delta async for chunk in await llm.astream_chat(USER)]


# ----------------------------------------------------------------- streams cut short
def test_a_stream_that_ends_without_finish_reason_or_done_is_an_incomplete_stream_error():
    with (LoopbackServer([Reply(body=sse(["Hel", "lo"], finish=False, done=False),
                                headers=SSE)]) as server,
          pytest.raises(errors.IncompleteStreamError, match="stream ended before completion")):
        _stream(server)


def test_an_async_stream_that_ends_early_is_an_incomplete_stream_error_too():
    with LoopbackServer([Reply(body=sse(["Hel", "lo"], finish=False, done=False),
                               headers=SSE)]) as server:
        llm = OpenAI(base_url=server.url, max_retries=0)
        with pytest.raises(errors.IncompleteStreamError, match="stream ended before completion"):
            run_sync(_astream(llm))


def test_a_connection_cut_mid_stream_is_a_connection_error_not_an_answer():
    body = sse(["Hel", "lo"])
    with (LoopbackServer([Reply(body=body, headers=SSE, cut_after=len(body) // 2)]) as server,
          pytest.raises(errors.APIConnectionError)):
        _stream(server)


def test_a_stream_with_a_finish_reason_but_no_done_is_a_whole_answer():
    with LoopbackServer([Reply(body=sse(["Hel", "lo"], done=False), headers=SSE)]) as server:
        assert "".join(_stream(server)) == "Hello"


def test_a_stream_whose_chunks_have_no_choices_is_an_error_like_an_answer_without_them():
    chunk = json.dumps({"id": "x", "object": "chat.completion.chunk", "choices": []})
    with LoopbackServer([Reply(body=f"data: {chunk}\n\ndata: [DONE]\n\n", headers=SSE),
                         Reply(body={"id": "x", "choices": []})]) as server:
        with pytest.raises(errors.MalformedResponseError, match="the answer has no choices"):
            _stream(server)
        with pytest.raises(errors.MalformedResponseError, match="the answer has no choices"):
            OpenAI(base_url=server.url, max_retries=0).chat(USER)


@pytest.mark.parametrize("agent_class", [FunctionCallingAgent, ReActAgent])
def test_a_stream_cut_short_leaves_the_agents_memory_untouched(agent_class):
    cut = Reply(body=sse(["Thought: done.\nAnswer: ", "trunc"], finish=False, done=False),
                headers=SSE)
    with LoopbackServer([cut]) as server:
        agent = agent_class.from_tools([], llm=OpenAI(base_url=server.url, max_retries=0))

        with pytest.raises(errors.IncompleteStreamError):
            response = agent.stream_chat("hi")
            for _ in response.response_gen:
                pass

    assert agent.chat_history == []


# ----------------------------------------------------------------- malformed answers
# after agentkit's frame (what is wrong, where) comes the json module's or pydantic's wording
@pytest.mark.parametrize("body, problem", [
    (b"{not json", r"the answer is not valid JSON \(.+ at position 1\)"),
    (b"[1, 2]", r"the answer is not a chat\.completions object: \(top level\): .+"),
    (json.dumps({"choices": [{"message": None}]}).encode(),
     r"the answer is not a chat\.completions object: choices\.0\.message: .+"),
    (json.dumps({"choices": [{"message": {"content": 5}}]}).encode(),
     r"the answer is not a chat\.completions object: choices\.0\.message\.content: .+"),
])
def test_a_malformed_answer_is_a_malformed_response_error_naming_the_problem(body, problem):
    with (LoopbackServer([Reply(body=body)]) as server,
          pytest.raises(errors.MalformedResponseError) as info):
        OpenAI(base_url=server.url, max_retries=0).chat(USER)

    assert re.fullmatch(rf"the server at {re.escape(server.url)}: {problem}", str(info.value))
    assert not re.search(r"\b_[A-Z]", str(info.value))  # no internal model names (_Message)


def test_a_malformed_stream_event_is_a_malformed_response_error_naming_the_event():
    good = sse(["Hi"], finish=False, done=False)
    with (LoopbackServer([Reply(body=good + "data: {bad\n\n", headers=SSE)]) as server,
          pytest.raises(errors.MalformedResponseError,
                        match=r"stream event 3 is not valid JSON \(.+ at position 1\)")):
        _stream(server)


# ----------------------------------------------------------------- JSON past the limits
def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def _tool_call_answer(arguments: str) -> str:
    call = {"id": "call_1", "type": "function", "function": {"name": "add", "arguments": ""}}
    body = completion("", finish_reason="tool_calls")
    body["choices"][0]["message"]["tool_calls"] = [call]
    text = json.dumps(body)
    return text.replace('"arguments": ""', f'"arguments": {json.dumps(arguments)}')


def _tool_call_stream(arguments: str) -> str:
    def event(delta: dict, finish_reason: str | None = None) -> str:
        chunk = {"id": "x", "object": "chat.completion.chunk",
                 "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]}
        return f"data: {json.dumps(chunk)}\n\n"

    start = {"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                             "function": {"name": "add", "arguments": ""}}]}
    half = len(arguments) // 2
    pieces = [{"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}
              for piece in (arguments[:half], arguments[half:])]
    return (event(start) + "".join(event(piece) for piece in pieces)
            + event({}, "tool_calls") + "data: [DONE]\n\n")


@pytest.mark.parametrize("depth", [1_001, 100_000])
def test_an_answer_nested_past_the_limit_is_a_malformed_response_error(depth):
    body = json.dumps(completion("hi"))[:-1] + f', "extra": {_nested(depth)}}}'
    with (LoopbackServer([Reply(body=body)]) as server,
          pytest.raises(errors.MalformedResponseError) as info):
        OpenAI(base_url=server.url, max_retries=0).chat(USER)

    assert str(info.value).startswith(
        f"the server at {server.url}: the answer exceeds agentkit's limits: nested more than 100 "
        "levels deep")


def test_a_stream_event_nested_past_the_limit_is_a_malformed_response_error():
    deep = f'data: {{"choices": [], "extra": {_nested(5_000)}}}\n\n'
    with (LoopbackServer([Reply(body=sse(["Hi"], finish=False, done=False) + deep,
                                headers=SSE)]) as server,
          pytest.raises(errors.MalformedResponseError,
                        match="stream event 3 exceeds agentkit's limits: nested more than 100 "
                              "levels deep")):
        _stream(server)


@pytest.mark.parametrize("streamed", [False, True], ids=["plain", "streamed"])
@pytest.mark.parametrize("depth", [MAX_ARGUMENT_DEPTH + 1, 1_001, 100_000])
def test_tool_arguments_nested_past_the_limit_are_a_malformed_response_error(streamed, depth):
    arguments = '{"a": ' + _nested(depth - 1) + "}"
    reply = (Reply(body=_tool_call_stream(arguments), headers=SSE) if streamed
             else Reply(body=_tool_call_answer(arguments)))
    with (LoopbackServer([reply]) as server,
          pytest.raises(errors.MalformedResponseError,
                        match=rf"the arguments of tool call `add` exceed agentkit's limits: nested more than "
                              rf"{MAX_ARGUMENT_DEPTH} levels deep")):
        llm = OpenAI(base_url=server.url, max_retries=0)
        if streamed:
            list(llm.stream_chat(USER))
        else:
            llm.chat(USER)


@pytest.mark.parametrize("streamed", [False, True], ids=["plain", "streamed"])
def test_tool_arguments_nested_up_to_the_limit_are_read(streamed):
    arguments = '{"a": ' + _nested(MAX_ARGUMENT_DEPTH - 1) + "}"
    reply = (Reply(body=_tool_call_stream(arguments), headers=SSE) if streamed
             else Reply(body=_tool_call_answer(arguments)))
    with LoopbackServer([reply]) as server:
        llm = OpenAI(base_url=server.url, max_retries=0)
        response = list(llm.stream_chat(USER))[-1] if streamed else llm.chat(USER)

    assert response.message.tool_calls[0].tool_kwargs == json.loads(arguments)


@pytest.mark.parametrize("where", ["answer", "arguments"])
def test_an_integer_longer_than_python_reads_is_a_malformed_response_error(where):
    digits = "7" * 5_000
    body = (_tool_call_answer('{"a": ' + digits + "}") if where == "arguments"
            else json.dumps(completion("hi"))[:-1] + f', "n": {digits}}}')
    with (LoopbackServer([Reply(body=body)]) as server,
          pytest.raises(errors.MalformedResponseError, match="an integer of 5,000 digits")):
        OpenAI(base_url=server.url, max_retries=0).chat(USER)


# ----------------------------------------------------------------- timeouts
def test_total_timeout_cuts_off_an_answer_trickled_a_byte_at_a_time():
    body = json.dumps(completion("a long answer " * 10)).encode()
    with LoopbackServer([Reply(body=body, trickle=0.02)]) as server:
        llm = OpenAI(base_url=server.url, timeout=5, total_timeout=0.2, max_retries=2)

        with pytest.raises(errors.APITimeoutError, match=r"did not finish within "
                                                         r"total_timeout=0.2 s \(1 attempt\)"):
            llm.chat(USER)

    (request,) = server.requests  # no retry past the deadline
    assert request.sent < len(body)


def test_total_timeout_cuts_off_an_async_streamed_answer_trickled_a_byte_at_a_time():
    body = sse(["word "] * 40)
    with LoopbackServer([Reply(body=body, headers=SSE, trickle=0.02)]) as server:
        llm = OpenAI(base_url=server.url, timeout=5, total_timeout=0.2, max_retries=2)

        with pytest.raises(errors.APITimeoutError, match="did not finish within total_timeout"):
            run_sync(_astream(llm))

    assert len(server.requests) == 1 and server.requests[0].sent < len(body)


def test_total_timeout_caps_the_read_timeout_of_a_server_that_stalls():
    with LoopbackServer([Reply(body=completion("late"), stall=5.0)]) as server:
        llm = OpenAI(base_url=server.url, timeout=5, total_timeout=0.2, max_retries=2)

        with pytest.raises(errors.APITimeoutError, match=r"did not finish within "
                                                         r"total_timeout=0.2 s \(1 attempt\)"):
            llm.chat(USER)

    assert server.requests[0].sent == 0


def test_a_read_timeout_of_its_own_is_named_as_the_read_timeout():
    with LoopbackServer([Reply(body=completion("late"), stall=5.0)]) as server:
        llm = OpenAI(base_url=server.url, timeout=0.2, total_timeout=60, max_retries=0)

        with pytest.raises(errors.APITimeoutError, match=r"did not answer within 0.2 s"):
            llm.chat(USER)


def test_a_server_still_generating_past_the_read_timeout_is_asked_once():
    # a one-slot local server generating without end: three retries would queue behind it
    with LoopbackServer([Reply(body=completion("late"), stall=3.0)] * 4) as server:
        llm = OpenAI(base_url=server.url, timeout=0.2, max_retries=3)

        with pytest.raises(errors.APITimeoutError, match=r"within 0.2 s \(1 attempt\); not "
                                                         r"retried: the server may still be "
                                                         r"generating that answer"):
            llm.chat(USER)

    assert len(server.requests) == 1


def test_with_limits_sends_max_tokens_and_bounds_the_call_leaving_the_original_alone():
    with LoopbackServer([Reply(body=completion("short")),
                         Reply(body=completion("late"), stall=3.0),
                         Reply(body=completion("free"))]) as server:
        llm = OpenAI(base_url=server.url, timeout=5, max_retries=3)
        limited = llm.with_limits(max_tokens=12, timeout=0.2)

        assert limited.chat(USER).message.content == "short"
        with pytest.raises(errors.APITimeoutError, match=r"total_timeout=0.2 s \(1 attempt\)"):
            limited.chat(USER)
        assert llm.chat(USER).message.content == "free"

    bodies = [json.loads(request.body) for request in server.requests]
    assert [body.get("max_tokens") for body in bodies] == [12, 12, None]
    assert (limited.max_retries, llm.max_tokens, llm.total_timeout) == (3, None, None)


def test_with_limits_checks_its_values_as_the_constructor_does():
    with pytest.raises(ValueError, match="max_tokens must be at least 1"):
        OpenAI(base_url="http://127.0.0.1:9/v1").with_limits(max_tokens=0)
    with pytest.raises(ValueError, match="timeout must be > 0 seconds"):
        OpenAI(base_url="http://127.0.0.1:9/v1").with_limits(timeout=-1)


def test_without_total_timeout_a_trickled_answer_is_read_to_its_end():
    body = json.dumps({"choices": [{"message": {"content": "ok"}, "finish_reason": "stop"}]})
    with LoopbackServer([Reply(body=body, trickle=0.001)]) as server:
        response = OpenAI(base_url=server.url, timeout=5).chat(USER)

    assert response.message.content == "ok"


def test_total_timeout_must_be_positive():
    with pytest.raises(ValueError, match="total_timeout must be > 0 seconds"):
        OpenAI(base_url="http://127.0.0.1:9/v1", total_timeout=0)


# ----------------------------------------------------------------- configured secrets
def test_a_configured_header_echoed_by_the_server_reaches_no_error_log_or_cassette(tmp_path,
                                                                                    caplog):
    from agentkit.llms.cassette import RecordingLLM

    header = "hdr-secret-0123456789"
    echo = {"error": {"message": f"key {header} and postgres://u:pw-0123456@db/x rejected"}}
    with LoopbackServer([Reply(500, echo), Reply(400, echo)]) as server:
        llm = OpenAI(base_url=server.url, max_retries=1, default_headers={"X-Api-Key": header})
        recorder = RecordingLLM(llm, tmp_path / "c.yaml", "once")
        with caplog.at_level("DEBUG"), pytest.raises(errors.BadRequestError) as info:
            recorder.chat(USER)

    assert server.requests[0].headers["x-api-key"] == header  # it was sent
    written = (tmp_path / "c.yaml").read_text("utf-8")
    for text in (str(info.value), caplog.text, written):
        assert header not in text and "pw-0123456" not in text
    assert "key <redacted:header X-Api-Key> and postgres://u:<redacted>@db/x" in str(info.value)
