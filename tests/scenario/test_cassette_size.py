"""A cassette grows with its exchanges, not with each request's memory window: each request
message is written once, then referenced (cassette format 3); formats 1 and 2 are still read."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from agentkit.harness._record import record_scenario
from agentkit.llms.cassette import Cassette, CassetteError, CassetteLLM, RecordingLLM
from agentkit.llms.mock import ScriptedLLM
from agentkit.llms.types import ChatMessage

from .test_trace_size import long_scenario


def _conversation(path: Path, turns: int) -> RecordingLLM:
    """Record a conversation whose every request resends the history, as an agent's does."""
    recorder = RecordingLLM(ScriptedLLM([f"answer {i}" for i in range(turns)]), path, "once")
    history = [ChatMessage(role="system", content="You are terse.")]
    for number in range(turns):
        history.append(ChatMessage(role="user", content=f"question {number}"))
        history.append(recorder.chat(list(history)).message)
    return recorder


def _recorded(folder: Path, turns: int) -> int:
    scenario = long_scenario(folder, turns, f"long{turns}")
    text = scenario.read_text("utf-8").replace(
        "    script:", f"    recording: cassettes/long{turns}.yaml\n    old_script:")
    data = yaml.safe_load(text)
    script = data["agents"]["react"].pop("old_script")
    scenario.write_text(yaml.safe_dump(data, sort_keys=False), "utf-8")
    assert record_scenario(scenario, "react", ScriptedLLM(script), "rewrite").ok
    return (folder / "cassettes" / f"long{turns}.yaml").stat().st_size


@pytest.mark.slow  # long recordings, measured
def test_cassette_bytes_grow_linearly_with_the_turns(tmp_path):
    sizes = {turns: _recorded(tmp_path, turns) for turns in (40, 80)}

    assert sizes[80] <= 2.2 * sizes[40]


def test_a_request_that_extends_the_last_is_one_reference_then_its_new_message(tmp_path):
    path = tmp_path / "c.yaml"
    _conversation(path, 3)

    exchanges = yaml.safe_load(path.read_text("utf-8"))["exchanges"]

    assert exchanges[2]["request"]["messages"] == [
        {"ref": "/exchanges/1/request/messages", "start": 0, "count": 4},
        {"role": "assistant", "content": "answer 1"},
        {"role": "user", "content": "question 2"}]


def test_a_written_cassette_replays_every_request_in_full(tmp_path):
    path = tmp_path / "c.yaml"
    recorded = _conversation(path, 4).cassette

    loaded = Cassette.load(path)

    assert [e.request for e in loaded.exchanges] == [e.request for e in recorded.exchanges]
    history = [ChatMessage(role="system", content="You are terse.")]
    replay = CassetteLLM(loaded)
    for number in range(4):
        history.append(ChatMessage(role="user", content=f"question {number}"))
        history.append(replay.chat(list(history)).message)
    assert replay.unused == 0


def test_a_format_1_cassette_with_every_request_in_full_still_replays(tmp_path):
    path = tmp_path / "c.yaml"
    recorded = _conversation(path, 3).cassette
    data = recorded.to_dict()
    data["format"] = 1
    for exchange, full in zip(data["exchanges"], recorded.exchanges, strict=True):
        exchange["request"] = full.request
    path.write_text(yaml.safe_dump(data, sort_keys=False), "utf-8")

    loaded = Cassette.load(path)

    assert [e.request for e in loaded.exchanges] == [e.request for e in recorded.exchanges]


def test_a_format_1_cassette_saved_again_writes_each_request_message_once(tmp_path):
    path = tmp_path / "c.yaml"
    recorded = _conversation(path, 3).cassette
    data = recorded.to_dict()
    data["format"] = 1
    for exchange, full in zip(data["exchanges"], recorded.exchanges, strict=True):
        exchange["request"] = copy.deepcopy(full.request)  # every message written in full
    path.write_text(yaml.safe_dump(data, sort_keys=False), "utf-8")

    Cassette.load(path).save()

    assert path.read_text("utf-8") == recorded.dumps()


def test_a_loaded_cassette_holds_each_request_message_once(tmp_path):
    path = tmp_path / "c.yaml"
    _conversation(path, 3)

    loaded = Cassette.load(path)

    first, last = loaded.exchanges[0].request["messages"], loaded.exchanges[2].request["messages"]
    assert last[0] is first[0] and last[1] is first[1]


@pytest.mark.parametrize("segment, problem", [
    ({"ref": "/exchanges/5/request/messages", "start": 0, "count": 1},
     "`ref` '/exchanges/5/request/messages' is not a list written before this one"),
    ({"ref": "/exchanges/0/request/messages", "start": 0, "count": 9},
     "`start` 0 and `count` 9 are not a run of the 2 items of /exchanges/0/request/messages"),
])
def test_a_reference_that_cannot_be_followed_is_a_cassette_error_at_its_line(
        tmp_path, segment, problem):
    path = tmp_path / "c.yaml"
    _conversation(path, 2)
    data = yaml.safe_load(path.read_text("utf-8"))
    data["exchanges"][1]["request"]["messages"][0] = segment
    data["exchanges"][1].pop("request_hash")
    text = yaml.safe_dump(data, sort_keys=False)
    path.write_text(text, "utf-8")
    line = next(number for number, row in enumerate(text.splitlines(), start=1)
                if f"ref: {segment['ref']}" in row or row.strip() == f"- ref: {segment['ref']}")

    with pytest.raises(CassetteError) as caught:
        Cassette.load(path)

    assert str(caught.value) == (f"{path}:{line}: exchanges.1.request.messages.0: {problem}; "
                                 "re-record the cassette")


def test_a_cassette_with_references_is_written_as_format_3_and_one_without_stays_format_1(
        tmp_path):
    _conversation(tmp_path / "long.yaml", 2)
    _conversation(tmp_path / "short.yaml", 1)

    formats = [yaml.safe_load((tmp_path / name).read_text("utf-8"))["format"]
               for name in ("long.yaml", "short.yaml")]

    assert formats == [3, 1]
