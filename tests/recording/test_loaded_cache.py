"""A cassette loaded again is built from what its first load built (agentkit.recording.
_cassette.LOADED, keyed by the file's text): neither parsed nor checked again, the same
cassette every time -- its messages shared as a load shares them, so it saves the same bytes
-- and a fresh copy a caller may change. An edited file is loaded the careful way; an entry
on disk that is damaged, or does not build a cassette, is ignored and written again. Loads
are counted (the check is wrapped), never timed."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentkit.core.parsecache import ENVIRONMENT, ParseCache
from agentkit.llms.mock import ScriptedLLM
from agentkit.llms.types import ChatMessage
from agentkit.recording import Cassette, RecordingLLM, _cassette
from agentkit.recording._errors import CassetteError


@pytest.fixture
def checks(monkeypatch: pytest.MonkeyPatch) -> list[Path | None]:
    """The path of every cassette checked (a fresh, empty cache in the process; no disk
    layer unless a test names one)."""
    monkeypatch.setattr(_cassette, "LOADED", ParseCache())
    monkeypatch.delenv(ENVIRONMENT, raising=False)
    seen: list[Path | None] = []
    check = _cassette.check_cassette

    def counted(data, path=None, where=None):  # type: ignore[no-untyped-def]
        seen.append(path)
        return check(data, path, where)

    monkeypatch.setattr(_cassette, "check_cassette", counted)
    return seen


def _recorded(path: Path, turns: int = 3) -> Path:
    """A cassette of a conversation whose every request resends the history (its messages
    written as references, format 3)."""
    recorder = RecordingLLM(ScriptedLLM([f"answer {i}" for i in range(turns)]), path, "once")
    history = [ChatMessage(role="system", content="You are terse.")]
    for number in range(turns):
        history.append(ChatMessage(role="user", content=f"question {number}"))
        history.append(recorder.chat(list(history)).message)
    return path


def _sharing(cassette: Cassette) -> list[list[int]]:
    """Which message objects each request holds, numbered by first appearance."""
    numbers: dict[int, int] = {}
    return [[numbers.setdefault(id(m), len(numbers)) for m in e.request["messages"]]
            for e in cassette.exchanges]


def test_a_cassette_loaded_again_is_not_checked_again_and_is_the_same(tmp_path: Path, checks):
    path = _recorded(tmp_path / "c.yaml")

    first, second = Cassette.load(path), Cassette.load(path)

    assert checks == [path]
    assert first == second and second.path == path
    assert first.dumps() == second.dumps() == path.read_text(encoding="utf-8")
    # each message object is shared by the requests that resend it, as the first load has it
    assert _sharing(second) == _sharing(first) == [[0, 1], [0, 1, 2, 3], [0, 1, 2, 3, 4, 5]]


def test_bundled_cassettes_load_the_same_from_the_cache(checks):
    paths = sorted(Path("scenarios").rglob("cassettes/*.yaml"))[:12]
    assert paths

    for path in paths:
        first, second = Cassette.load(path), Cassette.load(path)
        assert first == second and first.dumps() == second.dumps()
        assert _sharing(first) == _sharing(second)
    assert checks == paths


def test_each_load_is_a_fresh_copy_a_caller_may_change(tmp_path: Path, checks):
    path = _recorded(tmp_path / "c.yaml")
    first = Cassette.load(path)
    first.exchanges[0].request["messages"][0]["content"] = "changed"
    first.exchanges[1].response = {"message": {"role": "assistant", "content": "changed"}}
    first.exchanges.pop()
    first.redactions.append("changed")

    again = Cassette.load(path)

    assert again.exchanges[0].request["messages"][0]["content"] == "You are terse."
    assert again.exchanges[1].response["message"]["content"] == "answer 1"
    assert len(again.exchanges) == 3 and again.redactions == []
    assert len(checks) == 1


def test_an_edited_cassette_is_checked_again_and_read_as_edited(tmp_path: Path, checks):
    path = _recorded(tmp_path / "c.yaml")
    Cassette.load(path)

    path.write_text(path.read_text(encoding="utf-8").replace("answer 2", "answer two"),
                    encoding="utf-8")

    assert Cassette.load(path).exchanges[2].response["message"]["content"] == "answer two"
    assert len(checks) == 2


def test_a_cassette_that_fails_its_check_fails_every_load(tmp_path: Path, checks):
    path = tmp_path / "bad.yaml"
    path.write_text("format: 1\nexchanges: [{request: {}, latency: -1}]\n", encoding="utf-8")

    for _ in range(2):
        with pytest.raises(CassetteError, match="latency"):
            Cassette.load(path)
    assert len(checks) == 2


def test_with_a_cache_folder_another_process_builds_it_without_a_check(
        tmp_path: Path, checks, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv(ENVIRONMENT, str(tmp_path / "cache"))
    path = _recorded(tmp_path / "c.yaml")
    first = Cassette.load(path)
    fresh = ParseCache()  # a new process: nothing in memory
    monkeypatch.setattr(_cassette, "LOADED", fresh)

    again = Cassette.load(path)

    assert again == first and _sharing(again) == _sharing(first)
    assert (fresh.disk_hits, fresh.parsed, len(checks)) == (1, 0, 1)


@pytest.mark.parametrize("damage", [b"", b"garbage", "flip"])
def test_a_damaged_entry_on_disk_is_ignored_checked_again_and_written_again(
        tmp_path: Path, checks, monkeypatch: pytest.MonkeyPatch, damage):
    monkeypatch.setenv(ENVIRONMENT, str(tmp_path / "cache"))
    path = _recorded(tmp_path / "c.yaml")
    Cassette.load(path)
    folder = ParseCache.folder()
    assert folder is not None
    (entry,) = folder.glob("cassette-*.marshal")
    stored = entry.read_bytes()
    if damage == "flip":  # one byte of the payload changed: still loadable, wrong data
        index = stored.index(b"answer 1")
        damaged = stored[:index] + b"A" + stored[index + 1:]
    else:
        damaged = damage
    entry.write_bytes(damaged)
    fresh = ParseCache()
    monkeypatch.setattr(_cassette, "LOADED", fresh)

    again = Cassette.load(path)

    assert again.exchanges[1].response["message"]["content"] == "answer 1"
    assert (fresh.disk_rejected, fresh.parsed, len(checks)) == (1, 1, 2)
    assert entry.read_bytes() != damaged  # written again, whole
    last = ParseCache()
    monkeypatch.setattr(_cassette, "LOADED", last)
    assert Cassette.load(path) == again and (last.disk_hits, len(checks)) == (1, 2)


def test_an_entry_that_does_not_build_a_cassette_is_ignored_and_replaced(tmp_path: Path,
                                                                         checks):
    path = _recorded(tmp_path / "c.yaml")
    key = _cassette._loaded_key(path.read_text(encoding="utf-8"))
    for stale in [("not", "a", "cassette"), ({"no_such_field": 1}, [], [], {}),
                  ({}, [["too", "few", "fields"]], [], {})]:
        _cassette.LOADED.put(key, stale)

        loaded = Cassette.load(path)

        assert [e.response["message"]["content"] for e in loaded.exchanges] == [
            "answer 0", "answer 1", "answer 2"]
    assert len(checks) == 3
    assert Cassette.load(path) == loaded and len(checks) == 3  # the entry was written again
