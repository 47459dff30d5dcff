"""A recording saves its cassette after every exchange: each save writes out only the
exchanges added since the last (their redacted YAML kept), so recording N exchanges costs
what N exchanges cost once; the file is still the whole cassette, written atomically, the
same bytes a fresh dump writes; after kill -9 it holds every exchange completed before."""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from agentkit.llms.cassette import Cassette, RecordingLLM
from agentkit.llms.mock import ScriptedLLM, ScriptedResponse
from agentkit.llms.types import ChatMessage
from agentkit.recording import _cassette
from tests.fake_keys import fake_key

ROOT = Path(__file__).parents[2]


def _fresh_text(cassette: Cassette, secrets: dict[str, str] | None = None) -> str:
    """What a cassette that never saved writes for the same exchanges."""
    return dataclasses.replace(cassette, redactions=list(cassette.redactions)).dumps(
        secrets=secrets)


def _conversation(path: Path, answers: list[object]) -> RecordingLLM:
    """Record a conversation whose every request resends the history, as an agent's does."""
    recorder = RecordingLLM(ScriptedLLM(answers), path, "once")
    history = [ChatMessage(role="system", content="You are terse.")]
    for number in range(len(answers)):
        history.append(ChatMessage(role="user", content=f"question {number}"))
        history.append(recorder.chat(list(history)).message)
    return recorder


def _counting_dumps(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The number of exchanges each YAML dump of exchange items wrote."""
    dumped: list[int] = []
    real = _cassette.dump_yaml

    def counting(data: object) -> str:
        if isinstance(data, list):
            dumped.append(len(data))
        return real(data)

    monkeypatch.setattr(_cassette, "dump_yaml", counting)
    return dumped


def test_recording_n_exchanges_writes_each_exchange_out_once(tmp_path, monkeypatch):
    dumped = _counting_dumps(monkeypatch)

    recorder = _conversation(tmp_path / "c.yaml", [f"answer {i}" for i in range(12)])

    assert recorder.recorded == 12 and sum(dumped) == 12
    assert len(Cassette.load(tmp_path / "c.yaml").exchanges) == 12


def test_each_save_writes_the_bytes_a_fresh_dump_of_the_cassette_writes(tmp_path):
    path = tmp_path / "c.yaml"
    recorder = RecordingLLM(ScriptedLLM([f"answer {i}" for i in range(6)]), path, "once")
    history = [ChatMessage(role="system", content="You are terse.")]
    for number in range(6):
        history.append(ChatMessage(role="user", content=f"question {number}\n(multi-line)"))
        history.append(recorder.chat(list(history)).message)

        assert path.read_text("utf-8") == _fresh_text(recorder.cassette)


def test_a_secret_learnt_later_is_redacted_from_exchanges_already_written(tmp_path):
    key = fake_key("later")
    cassette = Cassette(path=tmp_path / "c.yaml")
    recorder = RecordingLLM(ScriptedLLM([f"the key is {key}", "noted"]), cassette, "once",
                            autosave=False)
    recorder.chat([ChatMessage(role="user", content="q1")])
    assert key in cassette.dumps()  # not a secret yet (no pattern matches the fake key)

    recorder.chat([ChatMessage(role="user", content="q2")])
    text = cassette.dumps(secrets={"LATER_KEY": key})

    assert key not in text and "<redacted:LATER_KEY>" in text
    assert text == _fresh_text(cassette, {"LATER_KEY": key})


def test_an_exchange_dropped_or_replaced_is_written_again_from_there(tmp_path):
    cassette = Cassette.load(_conversation(tmp_path / "c.yaml",
                                           ["a", "b", "c", "d"]).cassette.path)
    cassette.dumps()
    cassette.exchanges.pop(1)
    assert cassette.dumps() == _fresh_text(cassette)

    cassette.exchanges[0] = dataclasses.replace(cassette.exchanges[0], latency=2.5)
    assert cassette.dumps() == _fresh_text(cassette)
    assert "latency: 2.5" in cassette.dumps()


def test_a_sampled_cassette_recorded_out_of_order_is_written_by_sample(tmp_path):
    cassette = Cassette(path=tmp_path / "c.yaml", samples=2)
    first = Cassette.load(_conversation(tmp_path / "a.yaml", ["a", "b"]).cassette.path)
    for sample, exchange in [(1, first.exchanges[0]), (0, first.exchanges[1]),
                             (1, first.exchanges[1])]:
        cassette.exchanges.append(dataclasses.replace(exchange, sample=sample))
        assert cassette.dumps() == _fresh_text(cassette)


def test_stream_chunks_holding_a_secret_are_redacted_as_one_text(tmp_path):
    path = tmp_path / "c.yaml"
    secret = fake_key("fake-abcdefghijklmnopqrst")
    recorder = RecordingLLM(ScriptedLLM([
        "first", ScriptedResponse(text=f"use {secret} now", chunks=[
            "use " + fake_key("fake-abcd"), "efghijklmnopqrst", " now"])]), path, "once")
    recorder.chat([ChatMessage(role="user", content="q1")])
    for _ in recorder.stream_chat([ChatMessage(role="user", content="q2")]):
        pass

    text = path.read_text("utf-8")

    assert "efghijklmnopqrst" not in text and "- use <redacted:api-key>" in text
    assert text == _fresh_text(recorder.cassette)


_KILLED = """\
import os, signal, sys
from agentkit.llms.cassette import RecordingLLM
from agentkit.llms.mock import ScriptedLLM
from agentkit.llms.types import ChatMessage

path, kill_after = sys.argv[1], int(sys.argv[2])

def answer(messages, tools):
    if len(messages) // 2 == kill_after:  # the request after `kill_after` exchanges
        os.kill(os.getpid(), signal.SIGKILL)
    return f"answer {len(messages) // 2}"

recorder = RecordingLLM(ScriptedLLM([answer] * 1000), path, "once")
history = []
for number in range(1000):
    history.append(ChatMessage(role="user", content=f"question {number}"))
    history.append(recorder.chat(list(history)).message)
"""


@pytest.mark.slow  # a recorder in a fresh interpreter, killed
def test_a_recording_killed_mid_way_leaves_a_valid_cassette_with_every_exchange_before(
        tmp_path):
    path = tmp_path / "c.yaml"
    run = subprocess.run([sys.executable, "-c", _KILLED, str(path), "40"], cwd=ROOT,
                         check=False, capture_output=True)

    assert run.returncode == -signal.SIGKILL, run.stderr.decode()
    exchanges = Cassette.load(path).exchanges
    assert [e.response["message"]["content"] for e in exchanges if e.response] == [
        f"answer {n}" for n in range(40)]
    assert [name for name in os.listdir(tmp_path) if name != "c.yaml"] == []
