"""A replay's request key (request_key): the canonical request and its hash, the same whether
the messages are fixed (the bridge's: each one's part worked out once and kept with it) or
not (the whole request worked out on every call)."""

from __future__ import annotations

import base64
import gc
import json
from typing import Any

import pytest

from agentkit.core.secrets import Redactor
from agentkit.llms import ChatMessage, openai_wire
from agentkit.llms import types as message_types
from agentkit.llms.base import LLMRequest
from agentkit.llms.openai_wire import WireTool, from_openai_messages
from agentkit.llms.types import fix_message, fixed_memo
from agentkit.recording import _requests, canonical_request, request_hash
from agentkit.recording._requests import request_key
from tests.fake_keys import fake_key
from tests.python_calls import noted_calls

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(range(40))).decode()
CALL = {"id": "call_1", "type": "function",
        "function": {"name": "lookup", "arguments": '{"city": "Zürich", "n": 1.0}'}}
KEY = fake_key("fake-abcdefghijklmnopqrstuvw0123")
OPTION_KEY = fake_key("fake-live-1234567890abcdef")
WIRE_MESSAGES: list[dict[str, Any]] = [
    {"role": "system", "content": "Be brief. ΑΣ is Greek; 🙂 too."},
    {"role": "user", "content": [{"type": "text", "text": "What is this?"},
                                 {"type": "image_url",
                                  "image_url": {"url": f"data:image/png;base64,{PNG}"}}]},
    {"role": "assistant", "content": None, "tool_calls": [CALL]},
    {"role": "tool", "tool_call_id": "call_1", "name": "lookup", "content": '{"people": 421878}'},
    {"role": "user", "content": f"my key is {KEY} and "
                                "Authorization: Bearer abc.def.ghi, see https://u:pw@host/x"},
    {"role": "assistant", "content": 'He said "no" \\ twice\nthen left.'},
]
TOOL = WireTool("lookup", "The population of a city.",
                {"type": "object", "properties": {"city": {"type": "string"}}})


def _read(messages: list[dict[str, Any]], known: dict[str, ChatMessage] | None) -> list[ChatMessage]:
    return from_openai_messages(json.loads(json.dumps(messages)), known)


def _request(messages: list[ChatMessage], **fields: Any) -> LLMRequest:
    return LLMRequest(kind="chat", messages=messages, **fields)


REQUESTS = {
    "plain": {},
    "with tools": {"tools": [TOOL], "tool_choice": "auto", "allow_parallel_tool_calls": True},
    "streamed, with options": {"stream": True, "kwargs": {"temperature": 0.0, "seed": 7,
                                                          "stop": ["\n\n"]}},
    "a secret in an option": {"kwargs": {"metadata": {"api_key": OPTION_KEY}}},
}


@pytest.mark.parametrize("fields", REQUESTS.values(), ids=REQUESTS.keys())
@pytest.mark.parametrize("length", [1, 3, len(WIRE_MESSAGES)])
def test_fixed_messages_give_the_canonical_request_and_hash_of_the_slow_way(fields, length):
    fixed = _read(WIRE_MESSAGES[:length], {})
    assert all(fixed_memo(m) is not None for m in fixed)
    loose = _read(WIRE_MESSAGES[:length], None)
    assert all(fixed_memo(m) is None for m in loose)
    slow = canonical_request(_request(loose, **fields))

    for _ in range(2):  # worked out, then kept
        canonical, key = request_key(_request(fixed, **fields))
        assert canonical == slow
        assert key == request_hash(slow) == request_hash(canonical)
    assert request_key(_request(loose, **fields)) == (slow, request_hash(slow))


def test_the_secrets_in_a_fixed_message_are_redacted_as_in_the_whole_request():
    (message,) = _read(WIRE_MESSAGES[4:5], {})
    canonical, _ = request_key(_request([message]))

    text = canonical["messages"][0]["content"]
    assert KEY not in text and "pw@" not in text
    assert canonical == canonical_request(_request(_read(WIRE_MESSAGES[4:5], None)))


def test_a_fixed_message_is_worked_out_once_however_often_it_is_sent(monkeypatch):
    # not the messages earlier tests read
    monkeypatch.setattr(openai_wire, "_READ", openai_wire._READ.emptied())
    known: dict[str, ChatMessage] = {}
    conversation = _read(WIRE_MESSAGES, known)
    made = []
    to_dict = ChatMessage.to_dict

    def counted(self: ChatMessage, **options: Any) -> dict[str, Any]:
        made.append(self)
        return to_dict(self, **options)

    monkeypatch.setattr(ChatMessage, "to_dict", counted)
    for length in range(1, len(conversation) + 1):  # each request resends the ones before
        request_key(_request(_read(WIRE_MESSAGES[:length], known)))

    assert len(made) == len(conversation)
    assert [id(m) for m in made] == [id(m) for m in conversation]


def test_a_message_that_is_not_fixed_is_worked_out_again_on_every_call():
    message = ChatMessage(role="user", content="first")
    _, before = request_key(_request([message]))
    message.content = "changed"

    _, after = request_key(_request([message]))

    assert after != before
    assert after == request_hash(canonical_request(_request([ChatMessage(content="changed")])))


def test_a_fixed_messages_digest_form_is_converted_once_for_the_hash_and_the_trace(
        monkeypatch: pytest.MonkeyPatch):
    converted: list[str] = []
    to_dict = ChatMessage._to_dict

    def counted(self: ChatMessage, images: Any) -> dict[str, Any]:
        converted.append(images)
        return to_dict(self, images)

    monkeypatch.setattr(ChatMessage, "_to_dict", counted)
    calls = _read(WIRE_MESSAGES, None)[2]  # an assistant message with a tool call
    loose = calls.model_copy()
    fix_message(calls)

    request_key(_request([calls]))
    first, again = calls.to_dict(images="digest"), calls.to_dict(images="digest")
    first.pop("additional_kwargs")  # what the trace does with its copy
    loose.to_dict(images="digest"), loose.to_dict(images="digest")

    assert converted == ["digest", "digest", "digest"]  # the fixed one once, the other twice
    assert again == loose.to_dict(images="digest") and "additional_kwargs" in again
    assert calls.to_dict(images="digest") is not calls.to_dict(images="digest")


def test_a_fixed_messages_memo_goes_with_it():
    message = ChatMessage(role="user", content="hello")
    fix_message(message)
    fixed_memo(message)["canonical"] = "kept"  # type: ignore[index]
    key = id(message)
    assert key in message_types._FIXED

    del message
    gc.collect()

    assert key not in message_types._FIXED


def _counted_json_data(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """What the redactor turns into plain JSON data, call by call."""
    seen = noted_calls(monkeypatch, Redactor, "json_data", lambda self, value: value)
    monkeypatch.setattr(_requests, "_RESTS", _requests._RESTS.emptied())
    return seen


def test_a_conversations_tools_and_options_are_worked_out_once(monkeypatch):
    worked = _counted_json_data(monkeypatch)
    known: dict[str, ChatMessage] = {}
    fields = REQUESTS["with tools"] | {"kwargs": {"temperature": 0.0}}
    for length in (1, 3, 4, 6):  # each request resends the messages before
        messages = _read([m for m in WIRE_MESSAGES if m["role"] != "system"][:length], known)
        key = request_key(_request(messages, **fields))
        assert key == (canonical_request(_request(messages, **fields)),
                       request_hash(canonical_request(_request(messages, **fields))))

    # once for the tools and options, and once for the one message that may hold a secret;
    # canonical_request, the slow way, works out the whole request each time
    assert sum("messages" in value and value["messages"] == [] for value in worked) == 1


def test_a_changed_tool_or_option_changes_the_key(monkeypatch):
    _counted_json_data(monkeypatch)
    messages = _read(WIRE_MESSAGES[:1], {})
    tool = WireTool("lookup", "The population of a city.", {"type": "object"})
    first = request_key(_request(messages, tools=[tool]))[1]

    tool.metadata.description = "The population of a country."
    second = request_key(_request(messages, tools=[tool]))[1]
    third = request_key(_request(messages, tools=[tool], kwargs={"seed": 1}))[1]

    assert len({first, second, third}) == 3
    assert second == request_hash(canonical_request(_request(messages, tools=[tool])))


def test_an_option_that_is_not_json_is_worked_out_every_time(monkeypatch):
    worked = _counted_json_data(monkeypatch)
    messages = _read(WIRE_MESSAGES[:1], {})

    class Format:
        def __str__(self) -> str:
            return "json"

    for _ in range(2):
        canonical, key = request_key(_request(messages, kwargs={"response_format": Format()}))
        assert canonical["kwargs"] == {"response_format": "json"}
        assert key == request_hash(canonical)
    assert sum("messages" in value for value in worked) == 2
