"""What a replay of a conversation seen before does not work out again: a request of fixed
messages (the bridge's) is keyed once per process (request_key's _KEYS), its recorded reply is
built once per exchange and shared, fixed (response_from), and a cassette file replayed again
is the one shared cassette (CassetteLLM(path) -> replayed_cassette). Counted, never timed; a
changed request still misses with the same message."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentkit.llms import ChatMessage, openai_wire
from agentkit.llms.base import LLMRequest
from agentkit.llms.mock import ScriptedLLM
from agentkit.llms.openai_wire import WireTool, from_openai_messages
from agentkit.llms.types import fix_message, fixed_memo
from agentkit.recording import (
    REPLAYED,
    Cassette,
    CassetteLLM,
    CassetteMissError,
    RecordingLLM,
    _requests,
    _responses,
    canonical_request,
    request_hash,
)
from agentkit.recording._requests import keyed_request, request_key

TOOL = WireTool("lookup", "The population of a city.",
                {"type": "object", "properties": {"city": {"type": "string"}}})
CONVERSATION: list[dict[str, Any]] = [
    {"role": "system", "content": "Be brief."},
    {"role": "user", "content": "How many people live in Paris?"},
    {"role": "assistant", "content": "Let me look.",
     "tool_calls": [{"id": "call_1", "type": "function",
                     "function": {"name": "lookup", "arguments": '{"city": "Paris"}'}}]},
    {"role": "tool", "tool_call_id": "call_1", "content": "2,102,650"},
]


@pytest.fixture(autouse=True)
def _fresh_stores(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing kept by earlier tests: the process-wide stores of keys and read messages."""
    monkeypatch.setattr(_requests, "_KEYS", _requests._KEYS.emptied())
    monkeypatch.setattr(openai_wire, "_READ", openai_wire._READ.emptied())


def _fixed(messages: list[dict[str, Any]], known: dict[str, ChatMessage]) -> list[ChatMessage]:
    """``messages`` as the bridge reads them: fixed, the same objects for the same ``known``."""
    return from_openai_messages(json.loads(json.dumps(messages)), known)


def _fixed_anew(messages: list[dict[str, Any]]) -> list[ChatMessage]:
    """``messages`` read into new objects, fixed."""
    read = _loose(messages)
    for message in read:
        fix_message(message)
    return read


def _loose(messages: list[dict[str, Any]]) -> list[ChatMessage]:
    return from_openai_messages(json.loads(json.dumps(messages)), None)


def _hashed(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every request text hashed (a request put together from its parts)."""
    texts: list[str] = []
    text_hash = _requests.text_hash

    def counted(text: str) -> str:
        texts.append(text)
        return text_hash(text)

    monkeypatch.setattr(_requests, "text_hash", counted)
    return texts


def _request(messages: list[ChatMessage], **fields: Any) -> LLMRequest:
    return LLMRequest(kind="chat", messages=list(messages), **fields)


def test_a_request_of_the_same_fixed_messages_is_keyed_once(monkeypatch):
    known: dict[str, ChatMessage] = {}
    hashed = _hashed(monkeypatch)
    fields = {"tools": [TOOL], "tool_choice": "auto", "kwargs": {"temperature": 0.0}}

    keys = [request_key(_request(_fixed(CONVERSATION[:length], known), **fields))
            for _ in range(3) for length in (2, 4)]  # a conversation replayed three times

    assert len(hashed) == 2  # once per distinct request
    for length, key in zip((2, 4) * 3, keys, strict=True):
        slow = canonical_request(_request(_loose(CONVERSATION[:length]), **fields))
        assert key == (slow, request_hash(slow))


def test_a_changed_tool_choice_tool_or_option_is_keyed_again(monkeypatch):
    messages = _fixed(CONVERSATION[:2], {})
    hashed = _hashed(monkeypatch)
    tool = WireTool("lookup", "The population of a city.", {"type": "object"})
    variants: list[dict[str, Any]] = [
        {}, {"tools": [tool]}, {"tools": [tool], "tool_choice": "none"},
        {"tools": [tool], "allow_parallel_tool_calls": True}, {"kwargs": {"seed": 1}},
        {"kwargs": {"seed": 1.0}}, {"kwargs": {"seed": True}}, {"stream": True}]

    keys = [request_key(_request(messages, **fields))[1] for fields in variants]
    tool.metadata.description = "The population of a country."
    changed = request_key(_request(messages, tools=[tool]))[1]

    assert len(set(keys)) == len(keys) and changed not in keys
    assert len(hashed) == len(variants) + 1
    assert changed == request_hash(canonical_request(_request(messages, tools=[tool])))


def test_a_request_keyed_by_values_of_another_type_is_worked_out_every_time(monkeypatch):
    messages = _fixed(CONVERSATION[:2], {})
    hashed = _hashed(monkeypatch)

    # 1 == True as a key, but they are different JSON
    keys = [request_key(_request(messages, stream=1)) for _ in range(2)]  # type: ignore[arg-type]

    assert len(hashed) == 2 and not _requests._KEYS
    slow = canonical_request(_request(messages, stream=1))  # type: ignore[arg-type]
    assert keys == [(slow, request_hash(slow))] * 2


def test_messages_that_are_not_fixed_are_not_kept():
    messages = _loose(CONVERSATION)

    for _ in range(2):
        assert keyed_request(_request(messages))[2] is False

    assert not _requests._KEYS


def test_the_same_content_in_other_message_objects_is_keyed_anew_with_the_same_hash(monkeypatch):
    hashed = _hashed(monkeypatch)

    first, second = (request_key(_request(_fixed_anew(CONVERSATION))) for _ in range(2))

    assert len(hashed) == 2 and first == second


def _recorded(path: Path) -> Path:
    """A cassette of the conversation's two model calls, recorded through a script."""
    recorder = RecordingLLM(ScriptedLLM(["Let me look.", "About 2.1 million."]), path, "once")
    recorder.chat(_loose(CONVERSATION[:2]), tools=[TOOL])
    recorder.chat(_loose(CONVERSATION), tools=[TOOL])
    return path


def _built(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Every recorded response built into a message."""
    built: list[dict[str, Any]] = []
    reply = _responses._reply

    def counted(data: dict[str, Any]) -> Any:
        built.append(data)
        return reply(data)

    monkeypatch.setattr(_responses, "_reply", counted)
    return built


def _replay(path: Path, known: dict[str, ChatMessage] | None) -> list[ChatMessage]:
    """The conversation replayed by a new CassetteLLM of the file: fixed messages (the
    bridge's) with ``known``, else messages an agent may change."""
    llm = CassetteLLM(path)
    read = (lambda m: _fixed(m, known)) if known is not None else _loose
    replies = [llm.chat(read(CONVERSATION[:length]), tools=[TOOL]).message
               for length in (2, 4)]
    assert llm.unused == 0
    return replies


def test_the_reply_to_fixed_messages_is_built_once_per_exchange_and_shared(tmp_path,
                                                                          monkeypatch):
    path = _recorded(tmp_path / "c.yaml")
    built = _built(monkeypatch)
    known: dict[str, ChatMessage] = {}

    first, second, third = (_replay(path, known) for _ in range(3))

    assert len(built) == 2  # once per recorded exchange, not once per replay
    assert [id(m) for m in first] == [id(m) for m in second] == [id(m) for m in third]
    assert all(fixed_memo(m) is not None for m in first)
    assert [m.content for m in first] == ["Let me look.", "About 2.1 million."]


def test_the_reply_to_messages_an_agent_may_change_is_its_own_every_time(tmp_path,
                                                                        monkeypatch):
    path = _recorded(tmp_path / "c.yaml")
    built = _built(monkeypatch)

    first, second = _replay(path, None), _replay(path, None)

    assert len(built) == 4  # each call its own message
    assert not {id(m) for m in first} & {id(m) for m in second}
    assert all(fixed_memo(m) is None for m in first)
    first[0].content = "changed"  # the agent's to change: the next replay is as recorded
    assert _replay(path, None)[0].content == "Let me look."


def test_a_cassette_file_replayed_again_is_built_once(tmp_path, monkeypatch):
    path = _recorded(tmp_path / "c.yaml")
    REPLAYED.clear()
    built = REPLAYED.built

    llms = [CassetteLLM(path) for _ in range(3)]
    assert REPLAYED.built == built + 1 and llms[0].cassette is llms[2].cassette
    path.write_text(path.read_text().replace("About 2.1 million.", "About 2 million."))

    edited = CassetteLLM(path)

    assert REPLAYED.built == built + 2 and edited.cassette is not llms[0].cassette
    assert _replay(path, {})[1].content == "About 2 million."


def test_a_changed_request_of_fixed_messages_misses_with_the_same_message(tmp_path):
    path = _recorded(tmp_path / "c.yaml")
    changed = [*CONVERSATION[:3], {**CONVERSATION[3], "content": "2,102,651"}]
    _replay(path, {})  # the conversation's keys and replies kept

    errors = []
    for read in (lambda m: _fixed(m, {}), _loose):
        llm = CassetteLLM(path)
        llm.chat(read(CONVERSATION[:2]), tools=[TOOL])
        with pytest.raises(CassetteMissError) as caught:
            llm.chat(read(changed), tools=[TOOL])
        errors.append(str(caught.value))

    assert errors[0] == errors[1]
    assert "no recorded exchange matches this request" in errors[0]
    assert "2,102,651" in errors[0]


def test_a_loaded_cassette_is_the_callers_to_change(tmp_path):
    path = _recorded(tmp_path / "c.yaml")
    replayed = CassetteLLM(path).cassette

    loaded = Cassette.load(path)
    loaded.exchanges.clear()

    assert loaded is not replayed and len(CassetteLLM(path).cassette.exchanges) == 2
