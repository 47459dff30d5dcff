"""Parsed YAML is remembered by its text's content hash (agentkit.core.parsecache): the same
scenario or cassette is parsed once, an edited file is parsed again, an entry on disk that
is damaged is ignored and written again. Parses are counted (the parser is wrapped), never
timed."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentkit.core import parsecache, yamlsafe
from agentkit.core.parsecache import ENVIRONMENT, ParseCache, text_key
from agentkit.core.yamlsafe import parse_yaml
from agentkit.recording import Cassette, _cassette
from agentkit.scenario import load_scenario

SCENARIO = """\
format: 1
name: {name}
tools:
  - ref: "mocks.tools:population"
turns:
  - user: How many people live in Paris?
agents:
  function_calling:
    script:
      - Paris has 2102650 people.
"""


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every text the YAML parser is run on (a fresh, empty cache in the process, and none
    of built cassettes; no disk layer unless a test names one)."""
    monkeypatch.setattr(parsecache, "PARSE_CACHE", ParseCache())
    monkeypatch.setattr(_cassette, "LOADED", ParseCache())
    monkeypatch.setattr(yamlsafe, "PARSE_CACHE", parsecache.PARSE_CACHE)
    monkeypatch.delenv(ENVIRONMENT, raising=False)
    seen: list[str] = []
    parse = yamlsafe._plain_data

    def counted(text: str):  # type: ignore[no-untyped-def]
        seen.append(text)
        return parse(text)

    monkeypatch.setattr(yamlsafe, "_plain_data", counted)
    return seen


def test_the_same_scenario_file_loaded_again_is_not_parsed_again(tmp_path: Path, parses):
    path = tmp_path / "paris.yaml"
    path.write_text(SCENARIO.format(name="paris"), encoding="utf-8")

    first, second = load_scenario(path), load_scenario(path)

    assert len(parses) == 1
    assert first.model_dump() == second.model_dump()


def test_an_edited_file_is_parsed_again_and_read_as_edited(tmp_path: Path, parses):
    path = tmp_path / "paris.yaml"
    path.write_text(SCENARIO.format(name="paris"), encoding="utf-8")
    load_scenario(path)

    path.write_text(SCENARIO.format(name="paris_edited"), encoding="utf-8")

    assert load_scenario(path).name == "paris_edited"
    assert len(parses) == 2


def test_a_cassette_loaded_again_is_not_parsed_again(parses):
    path = next(Path("scenarios").rglob("cassettes/*.yaml"))

    first, second = Cassette.load(path), Cassette.load(path)

    assert len(parses) == 1
    assert first.to_dict() == second.to_dict()


def test_each_hit_is_a_fresh_copy_a_caller_may_change(parses):
    text = "a: [1, 2]\nb: {c: x}\n"
    data, _ = parse_yaml(text)
    data["a"].append(3)
    data["b"]["c"] = "changed"

    again, _ = parse_yaml(text)

    assert again == {"a": [1, 2], "b": {"c": "x"}} and len(parses) == 1


def test_errors_still_name_their_line_after_a_hit(parses):
    text = "a: 1\nb:\n  c: 2\n"
    parse_yaml(text)

    _, where = parse_yaml(text)

    assert where.line(("b", "c")) == 3 and len(parses) == 1


def test_yaml_that_needs_the_careful_path_is_loaded_every_time_and_not_kept(parses):
    text = "a: &x [1]\nb: *x\n"

    assert parse_yaml(text)[0] == parse_yaml(text)[0] == {"a": [1], "b": [1]}
    assert parsecache.PARSE_CACHE.parsed == 0


def test_with_a_cache_folder_another_process_reads_the_entry_instead_of_parsing(
        tmp_path: Path, parses, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv(ENVIRONMENT, str(tmp_path / "cache"))
    text = SCENARIO.format(name="paris")
    parse_yaml(text)
    fresh = ParseCache()  # a new process: nothing in memory
    monkeypatch.setattr(yamlsafe, "PARSE_CACHE", fresh)

    data, _ = parse_yaml(text)

    assert data["name"] == "paris" and len(parses) == 1
    assert (fresh.disk_hits, fresh.parsed) == (1, 0)


@pytest.mark.parametrize("damage", [b"", b"garbage", "flip"])
def test_a_damaged_entry_on_disk_is_ignored_parsed_again_and_written_again(
        tmp_path: Path, parses, monkeypatch: pytest.MonkeyPatch, damage):
    monkeypatch.setenv(ENVIRONMENT, str(tmp_path / "cache"))
    text = SCENARIO.format(name="paris")
    parse_yaml(text)
    folder = ParseCache.folder()
    assert folder is not None
    entry = folder / f"{text_key(text)}.marshal"
    stored = entry.read_bytes()
    if damage == "flip":  # one byte of the payload changed: still loadable, wrong data
        index = stored.index(b"paris")
        damaged = stored[:index] + b"P" + stored[index + 1:]
    else:
        damaged = damage
    entry.write_bytes(damaged)
    fresh = ParseCache()
    monkeypatch.setattr(yamlsafe, "PARSE_CACHE", fresh)

    data, _ = parse_yaml(text)

    assert data["name"] == "paris" and len(parses) == 2
    assert (fresh.disk_rejected, fresh.parsed) == (1, 1)
    # written again, whole: another process reads it back instead of parsing (not compared by
    # bytes: marshal's output depends on which strings the process happens to share)
    assert entry.read_bytes() != damaged
    again = ParseCache()
    monkeypatch.setattr(yamlsafe, "PARSE_CACHE", again)
    assert parse_yaml(text)[0] == data and (again.disk_hits, again.parsed) == (1, 0)


def test_a_cache_folder_that_cannot_be_written_is_no_error(tmp_path: Path, parses,
                                                          monkeypatch: pytest.MonkeyPatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder", encoding="utf-8")
    monkeypatch.setenv(ENVIRONMENT, str(blocker))

    assert parse_yaml("a: 1\n")[0] == {"a": 1}
    assert parse_yaml("a: 1\n")[0] == {"a": 1}
    assert len(parses) == 1  # the process's own layer still holds it


def test_the_process_layer_keeps_at_most_its_budget_dropping_the_least_recent():
    cache = ParseCache(memory_bytes=200)
    for index in range(20):
        cache.put(f"k{index}", {"text": "x" * 40, "index": index})

    assert cache.get("k0") is parsecache.MISSING
    assert cache.get("k19") == {"text": "x" * 40, "index": 19}
