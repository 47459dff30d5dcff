"""Cassettes: record modes, faithful replay, helpful misses, clear errors for bad files,
secrets kept off disk, atomic writes."""

from __future__ import annotations

import contextlib
import os
import re
from pathlib import Path

import pytest
import yaml

from agentkit.core.files import FileWriteError
from agentkit.harness._record import record_scenario
from agentkit.llms import errors
from agentkit.llms.cassette import (
    Cassette,
    CassetteError,
    CassetteLLM,
    CassetteMissError,
    RecordedLLMError,
    RecordingLLM,
)
from agentkit.llms.mock import ScriptedLLM, ScriptedResponse, tool_call
from agentkit.llms.types import ChatMessage
from agentkit.recording import ReplayedCassettes, replayed_cassette
from agentkit.scenario import run_scenario
from agentkit.tools import FunctionTool
from tests.fake_keys import fake_key

from .conftest import MINIMAL


def _user(text: str) -> list[ChatMessage]:
    return [ChatMessage(role="user", content=text)]


def _ask(llm, text: str) -> str:
    return llm.chat(_user(text)).message.content


def _record(path, *answers, mode="once", **options):
    """Record one question per answer ("q1" -> answers[0], ...) through a scripted backend."""
    live = ScriptedLLM(list(answers), **options)
    recorder = RecordingLLM(live, path, mode)
    for number in range(1, len(answers) + 1):
        with contextlib.suppress(Exception):  # an answer may be a scripted error
            _ask(recorder, f"q{number}")
    return recorder


def _load_error(path: Path, text: str) -> str:
    """The message of the CassetteError that loading ``text``, written to ``path``, raises."""
    path.write_text(text, "utf-8")
    with pytest.raises(CassetteError) as info:
        Cassette.load(path)
    return str(info.value)


def _exchanges(path) -> list[dict]:
    return yaml.safe_load(path.read_text("utf-8"))["exchanges"]


# ----------------------------------------------------------------- record modes
def test_mode_none_without_a_cassette_file_says_how_to_record(tmp_path):
    path = tmp_path / "c.yaml"

    with pytest.raises(CassetteMissError) as info:
        RecordingLLM(ScriptedLLM([]), path, "none")

    assert str(info.value) == (f"{path}: cassette not found and record mode is `none`; record it "
                               "with --record-mode once")


def test_an_unknown_record_mode_is_rejected():
    with pytest.raises(ValueError, match="unknown record mode 'sometimes'; use one of none, once"):
        RecordingLLM(ScriptedLLM([]), "c.yaml", "sometimes")


def test_mode_once_records_when_the_cassette_is_missing(tmp_path):
    path = tmp_path / "c.yaml"

    _record(path, "a1", "a2")

    assert [(e["request"]["messages"][0]["content"], e["response"]["message"]["content"])
            for e in _exchanges(path)] == [("q1", "a1"), ("q2", "a2")]


def test_mode_once_replays_when_the_cassette_exists(tmp_path):
    path = tmp_path / "c.yaml"
    _record(path, "a1")
    live = ScriptedLLM([])

    answer = _ask(RecordingLLM(live, path, "once"), "q1")

    assert answer == "a1" and live.calls == 0


def test_mode_once_with_an_existing_cassette_does_not_record_a_miss(tmp_path):
    path = tmp_path / "c.yaml"
    _record(path, "a1")

    with pytest.raises(CassetteMissError):
        _ask(RecordingLLM(ScriptedLLM([], strict=False), path, "once"), "new question")
    assert len(_exchanges(path)) == 1


def test_mode_new_episodes_replays_hits_and_records_misses(tmp_path):
    path = tmp_path / "c.yaml"
    _record(path, "a1")
    live = ScriptedLLM(["fresh"])
    recorder = RecordingLLM(live, path, "new_episodes")

    answers = [_ask(recorder, "q1"), _ask(recorder, "q9")]

    assert answers == ["a1", "fresh"] and live.calls == 1
    assert [e["response"]["message"]["content"] for e in _exchanges(path)] == ["a1", "fresh"]


def test_mode_all_never_replays_and_a_rerecorded_answer_replaces_the_old_one(tmp_path):
    path = tmp_path / "c.yaml"
    _record(path, "a1")
    live = ScriptedLLM(["again"])

    answer = _ask(RecordingLLM(live, path, "all"), "q1")

    assert answer == "again" and live.calls == 1
    assert [e["response"]["message"]["content"] for e in _exchanges(path)] == ["again"]
    assert _ask(CassetteLLM(path), "q1") == "again"


def test_mode_all_keeps_old_answers_to_requests_it_did_not_make_again(tmp_path):
    path = tmp_path / "c.yaml"
    _record(path, "a1")

    _ask(RecordingLLM(ScriptedLLM(["other"]), path, "all"), "q2")

    assert [e["response"]["message"]["content"] for e in _exchanges(path)] == ["a1", "other"]


def test_failing_to_reach_the_model_is_not_recorded(tmp_path):
    from agentkit.llms.errors import APIConnectionError

    path = tmp_path / "c.yaml"
    recorder = RecordingLLM(ScriptedLLM([APIConnectionError("refused")], max_retries=0), path,
                            "once")
    with pytest.raises(APIConnectionError):
        _ask(recorder, "q1")

    assert not path.exists() or _exchanges(path) == []


def test_mode_rewrite_starts_an_empty_cassette(tmp_path):
    path = tmp_path / "c.yaml"
    _record(path, "a1", "a2")

    _ask(RecordingLLM(ScriptedLLM(["new"]), path, "rewrite"), "q1")

    assert [e["response"]["message"]["content"] for e in _exchanges(path)] == ["new"]


def test_a_recording_writes_the_header(tmp_path):
    path = tmp_path / "c.yaml"
    live = ScriptedLLM(["a"], name="model-x")
    _ask(RecordingLLM(live, path, "once", agent_type="react", scenario="demo"), "q")

    header = yaml.safe_load(path.read_text("utf-8"))

    assert (header["format"], header["model"], header["agent_type"], header["scenario"]) == (
        1, "model-x", "react", "demo")
    assert header["agentkit_version"] and header["recorded_at"]
    assert header["redactions"] == []


def test_a_tests_recording_names_the_test_and_no_scenario(tmp_path):
    path = tmp_path / "c.yaml"
    recorder = CassetteLLM(path, "once", ScriptedLLM(["a"]), test="tests/test_x.py::test_y")
    _ask(recorder, "q")

    header = yaml.safe_load(path.read_text("utf-8"))

    assert header["test"] == "tests/test_x.py::test_y"
    assert "scenario" not in header and "agent_type" not in header
    assert Cassette.load(path).test == "tests/test_x.py::test_y"


def test_a_cassette_with_null_owner_fields_from_an_earlier_agentkit_still_replays(tmp_path):
    path = tmp_path / "c.yaml"
    _record(path, "a1")
    old = path.read_text("utf-8").replace("recorded_at:", "agent_type: null\nscenario: null\n"
                                                           "recorded_at:")
    path.write_text(old, "utf-8")

    replay = CassetteLLM(path)

    assert (replay.cassette.scenario, replay.cassette.test, _ask(replay, "q1")) == (
        None, None, "a1")


def test_the_cassette_is_saved_after_every_recorded_exchange(tmp_path):
    path = tmp_path / "c.yaml"
    recorder = RecordingLLM(ScriptedLLM(["a1", "a2"]), path, "once")

    _ask(recorder, "q1")
    after_one = len(_exchanges(path))
    _ask(recorder, "q2")

    assert (after_one, len(_exchanges(path))) == (1, 2)


# ----------------------------------------------------------------- replay
def test_replay_gives_the_recorded_answer_and_usage(tmp_path):
    path = tmp_path / "c.yaml"
    _record(path, ScriptedResponse(text="a1", usage={"prompt_tokens": 7, "completion_tokens": 2}))

    response = CassetteLLM(path).chat(_user("q1"))

    assert response.message.content == "a1"
    assert (response.usage.prompt_tokens, response.usage.completion_tokens) == (7, 2)


def test_replay_gives_the_recorded_tool_calls(tmp_path):
    path = tmp_path / "c.yaml"
    tool = FunctionTool.from_defaults(lambda a, b: a + b, name="add", description="Add.")
    live = ScriptedLLM([tool_call("add", a=1, b=2)])
    RecordingLLM(live, path, "once").chat_with_tools([tool], "add them")

    response = CassetteLLM(path).chat_with_tools([tool], "add them")

    assert [(c.tool_name, c.tool_kwargs) for c in response.message.tool_calls] == [
        ("add", {"a": 1, "b": 2})]


def test_replay_streams_the_recorded_chunks(tmp_path):
    path = tmp_path / "c.yaml"
    recorder = RecordingLLM(ScriptedLLM([ScriptedResponse(chunks=["Hel", "lo ", "there"])]), path,
                            "once")
    list(recorder.stream_chat(_user("q")))

    deltas = [c.delta for c in CassetteLLM(path).stream_chat(_user("q"))]

    assert [d for d in deltas if d] == ["Hel", "lo ", "there"]


def test_replay_takes_the_recorded_latency_on_the_virtual_clock(tmp_path, sim):
    path = tmp_path / "c.yaml"
    _record(path, "a1", latency=1.5)
    before = sim.clock.now()

    _ask(CassetteLLM(path), "q1")

    assert sim.clock.now() - before == 1.5


def test_a_recorded_backend_error_replays_as_the_same_error_type(tmp_path):
    path = tmp_path / "c.yaml"
    _record(path, errors.RateLimitError("slow down"), max_retries=0)

    with pytest.raises(errors.RateLimitError, match="slow down") as info:
        _ask(CassetteLLM(path), "q1")

    assert info.value.status_code == 429
    assert _exchanges(path)[0]["error"] == {"type": "RateLimitError", "message": "slow down",
                                            "status_code": 429}


def test_a_recorded_error_of_another_kind_replays_as_a_recorded_llm_error(tmp_path):
    path = tmp_path / "c.yaml"
    _record(path, ValueError("odd"))

    with pytest.raises(RecordedLLMError, match="ValueError: odd") as info:
        _ask(CassetteLLM(path), "q1")

    assert info.value.kind == "ValueError"


def test_repeated_identical_requests_replay_in_recorded_order(tmp_path):
    path = tmp_path / "c.yaml"
    recorder = RecordingLLM(ScriptedLLM(["first", "second"]), path, "once")
    _ask(recorder, "same")
    _ask(recorder, "same")
    replay = CassetteLLM(path)

    assert [_ask(replay, "same"), _ask(replay, "same")] == ["first", "second"]


def test_unused_counts_the_exchanges_not_replayed_yet(tmp_path):
    path = tmp_path / "c.yaml"
    _record(path, "a1", "a2")
    replay = CassetteLLM(path)

    _ask(replay, "q2")

    assert replay.unused == 1


def test_replay_metadata_comes_from_the_cassette_header(tmp_path):
    path = tmp_path / "c.yaml"
    _record(path, "a1", name="model-y", function_calling=False)

    meta = CassetteLLM(path).metadata

    assert (meta.model_name, meta.is_function_calling_model) == ("model-y", False)


# ----------------------------------------------------------------- misses
def test_a_miss_names_the_request_the_nearest_recorded_one_and_the_first_difference(tmp_path):
    path = tmp_path / "c.yaml"
    _record(path, "a1", "a2")

    with pytest.raises(CassetteMissError) as info:
        _ask(CassetteLLM(path), "q2!")

    lines = str(info.value).splitlines()
    assert re.fullmatch(rf"{re.escape(str(path))}: no recorded exchange matches this request "
                        r'\(hash \w{16}: chat, 1 message, last user: "q2!"\)', lines[0])
    assert re.fullmatch(r"nearest recorded: exchanges\[1\] \(hash \w{16}: chat, 1 message, "
                        r'last user: "q2"\)', lines[1])
    assert lines[2:] == [
        'first difference (recorded -> now), at messages[0].content: "q2" -> "q2!"',
        "If the change is intended, re-record with record mode `new_episodes` or `rewrite`."]


def test_a_miss_in_a_long_prompt_shows_the_changed_words_in_a_unified_diff(tmp_path):
    path = tmp_path / "c.yaml"
    prompt = "\n".join(f"Rule {n}: be brief about topic {n}." for n in range(1, 40))
    _ask(RecordingLLM(ScriptedLLM(["a1"]), path, "once"), prompt)

    with pytest.raises(CassetteMissError) as info:
        _ask(CassetteLLM(path), prompt.replace("topic 13.", "topic thirteen."))

    assert str(info.value).splitlines()[2:-1] == [
        "first difference (recorded -> now), at messages[0].content:",
        "  @@ -12,3 +12,3 @@",
        "   Rule 12: be brief about topic 12.",
        "  ~Rule 13: be brief about topic [-13-]{+thirteen+}.",
        "   Rule 14: be brief about topic 14."]


def test_a_miss_counts_the_differences_after_the_first(tmp_path):
    path = tmp_path / "c.yaml"
    _ask(RecordingLLM(ScriptedLLM(["a1"]), path, "once"), "one")

    with pytest.raises(CassetteMissError) as info:
        CassetteLLM(path).chat([ChatMessage(role="user", content="two"),
                                ChatMessage(role="user", content="three")])

    assert "(and 1 more difference)" in str(info.value)


def test_a_miss_on_a_request_made_more_often_than_recorded_says_so(tmp_path):
    path = tmp_path / "c.yaml"
    _record(path, "a1")
    replay = CassetteLLM(path)
    _ask(replay, "q1")

    with pytest.raises(CassetteMissError) as info:
        _ask(replay, "q1")

    assert "first recorded as exchanges[0]) was recorded 1 time(s) and every recording of it was " \
           "already replayed" in str(info.value)


def test_a_miss_on_an_empty_cassette_says_to_record_it(tmp_path):
    path = tmp_path / "c.yaml"
    Cassette(path=path).save()

    with pytest.raises(CassetteMissError, match="the cassette has no recorded exchanges; record "
                                                "it first"):
        _ask(CassetteLLM(path), "q")


# ----------------------------------------------------------------- malformed files
def test_a_cassette_that_is_not_yaml_is_an_error_with_the_line(tmp_path):
    path = tmp_path / "c.yaml"
    message = _load_error(path, "format: 1\nexchanges:\n  - request: {a: [1\n")

    assert message.startswith(f"{path}:4:1: cassette is not valid YAML:")


def test_a_cassette_of_another_format_version_says_to_re_record(tmp_path):
    path = tmp_path / "c.yaml"
    message = _load_error(path, "format: 9\nexchanges: []\n")

    assert message == (f"{path}:1: format: unsupported cassette format 9 (this agentkit "
                       "reads formats 1, 2, 3, 4, 5); re-record it")


def test_a_cassette_that_is_not_a_mapping_is_an_error(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("- 1\n")

    with pytest.raises(CassetteError, match="a cassette must be a mapping with `format` and "
                                            "`exchanges`"):
        Cassette.load(path)


def test_cassette_exchanges_must_be_a_list(tmp_path):
    path = tmp_path / "c.yaml"
    message = _load_error(path, "format: 1\nexchanges: {a: 1}\n")

    assert re.fullmatch(rf"{re.escape(str(path))}:2: exchanges: .+, got \{{'a': 1\}}", message)


def test_an_exchange_without_a_response_is_an_error_naming_it(tmp_path):
    path = tmp_path / "c.yaml"
    message = _load_error(path, "format: 1\nexchanges:\n  - {request: {kind: chat}, response: {}}\n"
                                "  - {request: {kind: chat}}\n")

    assert message == f"{path}:4: exchanges.1: needs `response` (or `error`)"


@pytest.mark.parametrize("latency, shown", [
    ("-1", "-1"), (".inf", "inf"), ("1.0e+8", "100000000.0")])
def test_an_exchange_with_a_negative_endless_or_huge_latency_is_an_error_at_its_line(
        tmp_path, latency, shown):
    path = tmp_path / "c.yaml"
    message = _load_error(path, "format: 1\nexchanges:\n  - request: {}\n    response: {}\n"
                                f"    latency: {latency}\n")

    # what is wrong is pydantic's wording; the place and the value shown are agentkit's
    assert re.fullmatch(rf"{re.escape(str(path))}:5: exchanges\.0\.latency: .+, got {re.escape(shown)}",
                        message)


def test_a_missing_cassette_file_is_an_error_naming_it_and_saying_how_to_record(tmp_path):
    path = tmp_path / "none.yaml"

    with pytest.raises(CassetteError) as info:
        CassetteLLM(path)

    assert str(info.value) == (f"{path}: cannot read cassette: no such file; record it first "
                               "(`agentkit record`, or pytest --record-mode once)")


def test_a_saved_cassette_loads_back_with_multi_line_text_intact(tmp_path):
    path = tmp_path / "c.yaml"
    tricky = "line one  \n\tindented\n\nlast: value # not a comment\n"
    _record(path, tricky)

    assert _ask(CassetteLLM(path), "q1") == tricky


# ----------------------------------------------------------------- secrets
def test_secrets_never_reach_the_file_and_redactions_lists_their_kinds(tmp_path, monkeypatch):
    monkeypatch.setenv("MY_SERVICE_TOKEN", "tok-0123456789")
    path = tmp_path / "c.yaml"
    live = ScriptedLLM([f"use {fake_key('fake-abcdefghijklmnopqrst')} with header Bearer abc.def.ghi123"])
    recorder = RecordingLLM(live, path, "once")

    recorder.chat(_user("my token is tok-0123456789"), api_key="k-123", authorization="Basic xyz")

    text = path.read_text("utf-8")
    for secret in ("tok-0123456789", fake_key("fake-abcdefghijklmnopqrst"), "abc.def.ghi123", "k-123",
                   "Basic xyz"):
        assert secret not in text
    assert yaml.safe_load(text)["redactions"] == ["MY_SERVICE_TOKEN", "api-key", "api_key",
                                                  "authorization", "bearer-token"]


def test_a_secret_only_in_the_request_is_listed_in_redactions(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", fake_key("fake-live-0123456789abcdef"))
    path = tmp_path / "c.yaml"

    _ask(RecordingLLM(ScriptedLLM(["ok"]), path, "once"), "key " + fake_key("fake-live-0123456789abcdef"))

    data = yaml.safe_load(path.read_text("utf-8"))
    assert data["redactions"] == ["OPENAI_API_KEY"]
    assert data["exchanges"][0]["request"]["messages"][0]["content"] == \
        "key <redacted:OPENAI_API_KEY>"


def test_replay_stays_stable_when_a_recorded_answer_with_a_secret_is_fed_back(tmp_path):
    path = tmp_path / "c.yaml"
    leaked = "your key is " + fake_key("fake-abcdefghijklmnopqrst")
    recorder = RecordingLLM(ScriptedLLM([leaked, "noted"]), path, "once")
    first = recorder.chat(_user("q1")).message
    recorder.chat([*_user("q1"), first, *_user("thanks")])
    replay = CassetteLLM(path)

    replayed = replay.chat(_user("q1")).message
    second = replay.chat([*_user("q1"), replayed, *_user("thanks")]).message.content

    assert replayed.content == "your key is <redacted:api-key>"
    assert second == "noted"


# ----------------------------------------------------------------- atomic writes
def test_a_failing_rename_leaves_the_old_cassette_intact_and_no_temp_file(tmp_path, monkeypatch):
    path = tmp_path / "c.yaml"
    _record(path, "a1")
    before = path.read_text("utf-8")

    def fail(*_args):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", fail)
    with pytest.raises(FileWriteError, match=r"disk full \(nothing written\)"):
        _ask(RecordingLLM(ScriptedLLM(["a2"]), path, "all"), "q2")

    assert path.read_text("utf-8") == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.yaml"]


def test_a_failing_serializer_leaves_the_old_cassette_intact(tmp_path, monkeypatch):
    path = tmp_path / "c.yaml"
    _record(path, "a1")
    before = path.read_text("utf-8")

    def fail(*_args, **_kwargs):
        raise RuntimeError("cannot serialize")

    monkeypatch.setattr(yaml, "dump", fail)
    with pytest.raises(RuntimeError, match="cannot serialize"):
        _ask(RecordingLLM(ScriptedLLM(["a2"]), path, "all"), "q2")

    assert path.read_text("utf-8") == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c.yaml"]


# ----------------------------------------------------------------- with scenarios
def test_a_recording_with_exchanges_left_over_is_a_problem(write_file):
    path = write_file("rec.yaml", MINIMAL.replace(
        "    script:\n      - tool_calls: [{name: add, args: {a: 2, b: 3}}]\n      - 2 + 3 = 5\n",
        "    recording: cassettes/rec.yaml\n"))
    live = ScriptedLLM([tool_call("add", a=2, b=3), "2 + 3 = 5"])
    assert record_scenario(path, "function_calling", live).written
    cassette = Cassette.load(path.parent / "cassettes" / "rec.yaml")
    cassette.exchanges.append(cassette.exchanges[-1])
    cassette.save()

    assert run_scenario(path).problems == [
        "the recording has 1 exchange(s) that were not replayed"]


def _fresh_replays(monkeypatch: pytest.MonkeyPatch, text_bytes: int = 16 * 1024 * 1024,
                   ) -> tuple[ReplayedCassettes, list[str], list[str]]:
    """A fresh cache of replayed cassettes, and the files read and texts hashed through it."""
    from agentkit.recording import _cassette

    replays = ReplayedCassettes(text_bytes=text_bytes)
    monkeypatch.setattr(_cassette, "REPLAYED", replays)
    read: list[str] = []
    hashed: list[str] = []
    read_text, text_key = _cassette.read_text, _cassette.text_key
    monkeypatch.setattr(_cassette, "read_text",
                        lambda path: read.append(Path(path).stem) or read_text(path))
    monkeypatch.setattr(_cassette, "text_key", lambda text: hashed.append(text) or text_key(text))
    return replays, read, hashed


def test_a_recording_replayed_again_is_built_again_only_when_its_file_changed(write_file,
                                                                              monkeypatch):
    path = write_file("again.yaml", MINIMAL.replace(
        "    script:\n      - tool_calls: [{name: add, args: {a: 2, b: 3}}]\n      - 2 + 3 = 5\n",
        "    recording: cassettes/again.yaml\n"))
    live = ScriptedLLM([tool_call("add", a=2, b=3), "2 + 3 = 5"])
    assert record_scenario(path, "function_calling", live).written
    replays, read, hashed = _fresh_replays(monkeypatch)
    first, second = run_scenario(path), run_scenario(path)

    assert first.passed and second.passed
    assert first.trace.to_dict() == second.trace.to_dict()
    assert (replays.built, replays.hits) == (1, 1)  # the second replay reused what the first built
    # each replay: read once; hashed once, when built (the text compared with the kept one's)
    assert read == ["again", "again"] and len(hashed) == 1

    cassette = Cassette.load(path.parent / "cassettes" / "again.yaml")
    cassette.exchanges.append(cassette.exchanges[-1])
    cassette.save()  # an edited recording: built again, and its change seen
    assert run_scenario(path).problems == [
        "the recording has 1 exchange(s) that were not replayed"]
    assert (replays.built, replays.hits) == (2, 1)


def test_a_replayed_cassette_is_shared_and_a_loaded_one_is_the_callers(write_file, monkeypatch):
    path = write_file("shared.yaml", MINIMAL.replace(
        "    script:\n      - tool_calls: [{name: add, args: {a: 2, b: 3}}]\n      - 2 + 3 = 5\n",
        "    recording: cassettes/shared.yaml\n"))
    assert record_scenario(path, "function_calling",
                           ScriptedLLM([tool_call("add", a=2, b=3), "2 + 3 = 5"])).written
    _fresh_replays(monkeypatch)
    cassette_file = path.parent / "cassettes" / "shared.yaml"

    assert replayed_cassette(cassette_file) is replayed_cassette(cassette_file)
    assert Cassette.load(cassette_file) is not Cassette.load(cassette_file)
    assert Cassette.load(cassette_file) == replayed_cassette(cassette_file)


def test_the_recordings_kept_built_are_bounded_the_least_recently_replayed_let_go_first(
        write_file, monkeypatch):
    """A process replaying many recordings (a suite's thousands, a long test session) keeps
    at most ``text_bytes`` of their text built, not every cassette it ever replayed."""
    paths = []
    for name in ("one", "two", "three"):
        path = write_file(f"{name}.yaml", MINIMAL.replace(
            "    script:\n      - tool_calls: [{name: add, args: {a: 2, b: 3}}]\n"
            "      - 2 + 3 = 5\n", f"    recording: cassettes/{name}.yaml\n"))
        assert record_scenario(path, "function_calling",
                               ScriptedLLM([tool_call("add", a=2, b=3), "2 + 3 = 5"])).written
        paths.append(path)
    size = len((paths[0].parent / "cassettes" / "one.yaml").read_text("utf-8"))
    replays, _, _ = _fresh_replays(monkeypatch, text_bytes=2 * size + size // 2)  # room for two
    built: list[str] = []
    from_text = Cassette._from_text.__func__
    monkeypatch.setattr(Cassette, "_from_text", classmethod(
        lambda cls, at, text, key: built.append(Path(at).stem) or from_text(cls, at, text, key)))

    for path in (paths[0], paths[1], paths[0], paths[2], paths[0], paths[1]):
        assert run_scenario(path).passed

    # one, two; one kept; three lets two go (one was replayed since); one kept; two built again
    assert built == ["one", "two", "three", "two"]
    assert len(replays) == 2 and replays.size <= 2 * size + size // 2


def test_cassette_llm_is_importable_from_the_mock_backends():
    from agentkit.llms import mock

    assert mock.CassetteLLM is CassetteLLM


def test_cassette_llm_in_a_record_mode_records_through_the_live_backend(tmp_path):
    path = tmp_path / "c.yaml"
    live = ScriptedLLM(["recorded"])

    assert _ask(CassetteLLM(path, mode="once", llm=live), "q1") == "recorded"
    assert _ask(CassetteLLM(path), "q1") == "recorded" and live.calls == 1


def test_cassette_llm_without_autosave_writes_nothing_until_saved(tmp_path):
    path = tmp_path / "c.yaml"
    recorder = CassetteLLM(path, mode="once", llm=ScriptedLLM(["recorded"]), autosave=False)

    _ask(recorder, "q1")

    assert not path.exists() and recorder.recorded == 1
    assert recorder.save()
    assert [e["response"]["message"]["content"] for e in _exchanges(path)] == ["recorded"]


def test_saving_a_cassette_llm_that_recorded_nothing_writes_nothing(tmp_path):
    path = tmp_path / "c.yaml"
    _record(path, "a1")
    before = path.read_text(encoding="utf-8")
    replaying = CassetteLLM(path, mode="once", llm=ScriptedLLM([]), autosave=False)

    _ask(replaying, "q1")

    assert not replaying.save() and path.read_text(encoding="utf-8") == before


def test_cassette_llm_in_a_record_mode_needs_the_live_backend(tmp_path):
    with pytest.raises(ValueError, match="needs the live backend"):
        CassetteLLM(tmp_path / "c.yaml", mode="once")


def test_a_secret_split_across_stream_chunks_never_reaches_the_file_or_a_replay(tmp_path):
    path = tmp_path / "c.yaml"
    secret = fake_key("fake-abcdefghijklmnopqrst")
    live = ScriptedLLM([ScriptedResponse(text=f"use {secret} now",
                                         chunks=["use " + fake_key("fake-abcd"),
                                                 "efghijklmnopqrst", " now"])])
    for _ in RecordingLLM(live, path, "once").stream_chat(_user("q1")):
        pass

    replayed = [r.delta for r in CassetteLLM(path).stream_chat(_user("q1"))]

    assert "efghijklmnopqrst" not in path.read_text("utf-8")
    assert _exchanges(path)[0]["response"]["chunks"] == ["use <redacted:api-key>", " now"]
    assert "".join(replayed) == "use <redacted:api-key> now"


def test_a_cassette_with_an_alias_bomb_and_no_request_hash_is_an_error_not_a_hang(tmp_path):
    path = tmp_path / "c.yaml"
    levels = "".join(f"  {b}: &{b} [{','.join(['*' + a] * 9)}]\n"
                     for a, b in zip("abcdefgh", "bcdefghi", strict=True))
    path.write_text("format: 1\nbomb:\n  a: &a [1,2,3,4,5,6,7,8,9]\n" + levels
                    + "exchanges:\n  - request: {messages: *i}\n    response: {}\n", "utf-8")

    with pytest.raises(CassetteError, match=r"c\.yaml:7: cassette is not valid YAML: aliases"):
        Cassette.load(path)


@pytest.mark.slow  # a property test at full size
@pytest.mark.parametrize("depth", [101, 1001])
def test_a_cassette_nested_too_deep_gets_agentkits_error_with_the_limit_and_the_fix(tmp_path, depth):
    path = tmp_path / "c.yaml"
    path.write_text("format: 1\nexchanges:\n- request: {x: " + "[" * depth + "]" * depth + "}\n",
                    "utf-8")

    with pytest.raises(CassetteError) as info:
        Cassette.load(path)

    assert str(info.value).startswith(f"{path}:3:")
    assert "cassette is not valid YAML: nested more than 100 levels deep, the most agentkit " \
        "reads\n  fix: flatten the data there to at most 100 levels" in str(info.value)


def test_context_window_that_is_not_a_number_names_line_and_field(tmp_path):
    path = tmp_path / "c.yaml"
    message = _load_error(path, "format: 1\ncontext_window: lots\nexchanges: []\n")

    assert re.fullmatch(rf"{re.escape(str(path))}:2: context_window: .+, got 'lots'", message)


def test_a_tool_call_written_as_a_plain_string_is_a_cassette_error_at_its_line(tmp_path):
    path = tmp_path / "c.yaml"
    message = _load_error(path, "format: 1\nexchanges:\n  - request: {}\n    response:\n      message:\n"
                                "        additional_kwargs:\n          tool_calls:\n            - add\n")

    assert re.fullmatch(rf"{re.escape(str(path))}:8: exchanges\.0\.response\.message\."
                        r"additional_kwargs\.tool_calls\.0: .+, got 'add'", message)


@pytest.mark.parametrize("text, line, problem", [
    ("format: 1\nexchanges:\n  - request: {}\n    response: {message: {content: hi}}\n"
     "    lantecy: 2\n", 5, "exchanges.0.lantecy: unknown field `lantecy`; did you mean "
                             "`latency`?"),
    ("format: 1\nexchanges:\n  - request: {}\n    response:\n      message: {content: hi}\n"
     "      usage: {prompt_tokens: 1, completion: 2}\n", 6,
     "exchanges.0.response.usage.completion: unknown field `completion`; did you mean "
     "`completion_tokens`?"),
    ("format: 1\nexchanges:\n  - request: {}\n    response:\n      message:\n"
     "        content: hi\n        tool_call: []\n", 7,
     "exchanges.0.response.message.tool_call: unknown field `tool_call`; known fields here: "
     "additional_kwargs, blocks, content, role"),
    ("format: 1\nexchanges:\n  - request: {}\n    error: {type: RateLimitError, code: 429}\n",
     4, "exchanges.0.error.code: unknown field `code`; known fields here: message, status_code, "
        "type"),
    ("format: 1\nmodle: gpt-4o\nexchanges: []\n", 2,
     "modle: unknown field `modle`; did you mean `model`?"),
])
def test_an_unknown_key_anywhere_in_a_cassette_is_an_error_at_its_line(tmp_path, text, line,
                                                                        problem):
    path = tmp_path / "c.yaml"

    assert _load_error(path, text) == f"{path}:{line}: {problem}"


@pytest.mark.parametrize("role", ["user", "system", "tool"])
def test_a_recorded_answer_that_is_not_the_assistants_is_an_error_at_its_line(tmp_path, role):
    path = tmp_path / "c.yaml"
    text = ("format: 1\nexchanges:\n  - request: {}\n    response:\n      message:\n"
            f"        role: {role}\n        content: hi\n")

    assert _load_error(path, text) == (
        f"{path}:6: exchanges.0.response.message.role: a recorded answer is the assistant's "
        f"(role: assistant), got {role!r}")


def test_the_keys_a_recording_writes_load_back(tmp_path):
    path = tmp_path / "c.yaml"
    _record(path, ScriptedResponse(text="hi", tool_calls=[tool_call("add", a=1)],
                                   chunks=["h", "i"]), "plain",
            errors.RateLimitError("slow down", status_code=429))

    assert len(Cassette.load(path).exchanges) == 3


def test_recorded_chunks_that_do_not_make_the_answer_are_a_cassette_error(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("format: 1\nexchanges:\n  - request: {}\n    response:\n"
                    "      message: {role: assistant, content: hello}\n"
                    "      chunks: [hel, p]\n", "utf-8")

    with pytest.raises(CassetteError, match=r"c\.yaml:5: exchanges\.0\.response: `chunks` must "
                                            r"join to `message\.content`"):
        Cassette.load(path)


def test_a_cassette_that_is_not_utf8_is_a_cassette_error_at_its_line(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_bytes(b"format: 1\nexchanges: []\nmodel: \xff\n")

    with pytest.raises(CassetteError) as info:
        Cassette.load(path)

    assert str(info.value) == f"{path}:3:8: not UTF-8 text (byte 0xff); save the file as UTF-8"


def test_every_problem_of_a_cassette_is_reported_at_once_in_file_order(tmp_path):
    path = tmp_path / "c.yaml"
    message = _load_error(path, "format: 1\nmodle: x\nexchanges:\n  - request: {}\n"
                                "    response:\n      message: {role: user, content: hi}\n"
                                "  - request: {}\n    lantecy: 2\n    response: {}\n"
                                "context_window: lots\n")

    assert message.splitlines()[:3] == [
        f"{path}:2: modle: unknown field `modle`; did you mean `model`?",
        f"{path}:6: exchanges.0.response.message.role: a recorded answer is the assistant's "
        "(role: assistant), got 'user'",
        f"{path}:8: exchanges.1.lantecy: unknown field `lantecy`; did you mean `latency`?",
    ]
    # what is wrong with `lots` is pydantic's wording; the place and the value are agentkit's
    assert re.fullmatch(rf"{re.escape(str(path))}:10: context_window: .+, got 'lots'",
                        message.splitlines()[3])


def test_a_message_problem_is_reported_with_the_header_problems(tmp_path):
    path = tmp_path / "c.yaml"
    message = _load_error(path, "format: 1\nmodle: x\nexchanges:\n  - request: {}\n"
                                "    response:\n      message:\n        content: hi\n"
                                "        blocks: [{block_type: nope}]\n")

    assert message.splitlines() == [
        f"{path}:2: modle: unknown field `modle`; did you mean `model`?",
        f"{path}:7: exchanges.0.response.message: give a ChatMessage either `content` or "
        "`blocks`, not both",
    ]


def test_a_duplicate_key_in_a_cassette_is_an_error_naming_both_lines(tmp_path):
    path = tmp_path / "c.yaml"
    message = _load_error(path, "format: 1\nmodel: a\nexchanges: []\nmodel: b\n")

    assert message == (f"{path}:4: model: duplicate key `model` (first at line 2); remove one")


def test_a_cassette_problem_quoting_a_line_break_stays_on_one_line(tmp_path):
    path = tmp_path / "c.yaml"
    message = _load_error(path, 'format: 1\n"mo\\ndel": x\nexchanges: []\n')

    assert message.splitlines() == [
        f"{path}:2: mo\\ndel: unknown field `mo\\ndel`; did you mean `model`?"]


# ----------------------------------------------------------------- wires
_WIRED = """\
format: {format}
exchanges:
  - wire: {wire}
    request: {{kind: chat, stream: false, messages: [{{role: user, content: hi}}]}}
    response: {{message: {{role: assistant, content: hello}}}}
"""


def test_an_exchange_over_another_wire_keeps_it_and_needs_format_4(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text(_WIRED.format(format=4, wire="anthropic_messages"), "utf-8")

    cassette = Cassette.load(path)

    assert cassette.exchanges[0].wire == "anthropic_messages"
    assert cassette.to_dict()["format"] == 4
    assert cassette.to_dict()["exchanges"][0]["wire"] == "anthropic_messages"
    assert _load_error(path, _WIRED.format(format=3, wire="openai_responses")) == (
        f"{path}:3: exchanges.0.wire: an exchange's `wire` (the Responses or Messages API) "
        "belongs to a cassette of `format: 4`, but the file says `format: 3`; write "
        "`format: 4` (or re-record it)")
    assert "exchanges.0.wire" in _load_error(path, _WIRED.format(format=4, wire="grpc"))


def test_a_chat_completions_recording_names_no_wire_and_keeps_its_format(tmp_path):
    from agentkit.bridge import Bridge, openai_clients
    from agentkit.recording import RecordingLLM

    bridge = Bridge(RecordingLLM(ScriptedLLM(["5"]), tmp_path / "c.yaml", "once"))
    client, _ = openai_clients(bridge)
    with bridge.wire.turn("What is 2 + 3?"):
        client.chat.completions.create(model="m", messages=[
            {"role": "user", "content": "What is 2 + 3?"}])

    data = yaml.safe_load((tmp_path / "c.yaml").read_text("utf-8"))
    assert data["format"] == 1 and "wire" not in data["exchanges"][0]
