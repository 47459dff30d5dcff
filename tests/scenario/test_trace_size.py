"""A trace grows with the turns, not their square: each message is written once, then
referenced (trace format 3), and a run keeps one memory buffer for all its turns.

Sizes and counts only; the time and memory of long runs are measured by
benchmarks/bench_trace_size.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from agentkit.core import textfiles
from agentkit.core.errors import BadInputError
from agentkit.core.reflists import Shared, is_ref
from agentkit.llms.types import ChatMessage
from agentkit.scenario import run_scenario
from agentkit.scenario._layout import snapshot_path
from agentkit.scenario.judge import SnapshotFiles
from agentkit.trace._diff import diff_traces
from agentkit.trace._read import expand_trace
from agentkit.trace._trace import TRACE_FORMAT, IdNormalizer, Trace, TurnTrace


def long_scenario(folder: Path, turns: int, name: str = "long") -> Path:
    """A ReAct conversation of ``turns`` questions, each answered directly."""
    path = folder / f"{name}.yaml"
    path.write_text(yaml.safe_dump({
        "format": 1, "name": name, "description": "a long conversation",
        "tools": [{"ref": "mocks.tools:add"}],
        "turns": [{"user": f"Question {i}: what is {i} + {i}?"} for i in range(turns)],
        "agents": {"react": {"script": [
            f"Thought: I can answer.\nAnswer: {i} + {i} = {2 * i}, as asked in question {i}."
            for i in range(turns)]}}}, sort_keys=False), encoding="utf-8")
    return path


def _messages(data: Any) -> list[dict[str, Any]]:
    """Every message object written anywhere in a trace's JSON (references not followed)."""
    found: list[dict[str, Any]] = []
    stack = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if "role" in item:
                found.append(item)
            stack += list(item.values())
        elif isinstance(item, list):
            stack += item
    return found


def test_trace_bytes_grow_linearly_with_the_turns(tmp_path):
    sizes = {n: len(run_scenario(long_scenario(tmp_path, n, f"long{n}")).trace.to_json())
             for n in (40, 80)}

    assert sizes[80] <= 2.2 * sizes[40]


def test_each_message_is_written_once_however_many_requests_and_memories_hold_it(tmp_path):
    trace = run_scenario(long_scenario(tmp_path, 30)).trace.to_dict()

    written = [json.dumps(m, sort_keys=True) for m in _messages(trace)]
    assert len(written) == len(set(written))
    assert sum(m.get("content") == "Question 7: what is 7 + 7?" for m in _messages(trace)) == 1


def test_a_turns_memory_is_its_previous_memory_as_one_reference_then_what_the_turn_added(
        tmp_path):
    trace = run_scenario(long_scenario(tmp_path, 5)).trace.to_dict()

    memory = trace["turns"][3]["memory"]
    assert memory[0] == {"ref": "/turns/2/memory", "start": 0, "count": 6}
    assert [m["role"] if not is_ref(m) else "ref" for m in memory[1:]] == ["ref", "assistant"]


def test_a_request_is_a_few_references_and_its_new_message(tmp_path):
    trace = run_scenario(long_scenario(tmp_path, 30)).trace.to_dict()

    request = trace["turns"][29]["steps"][0]["llm_calls"][0]["messages"]
    assert len(request) <= 4
    assert request[-1] == {"role": "user", "content": "Question 29: what is 29 + 29?"}


def test_expanding_a_written_trace_gives_every_request_and_memory_in_full(tmp_path):
    trace = run_scenario(long_scenario(tmp_path, 12)).trace

    expanded = expand_trace(json.loads(trace.to_json()))

    for turn, written in zip(trace.turns, expanded["turns"], strict=True):
        assert list(written["memory"]) == list(turn.memory)
        requests = [c["messages"] for s in written["steps"] for c in s["llm_calls"]]
        assert requests == [c.messages for c in turn.llm_calls]


def test_a_run_keeps_every_turns_memory_in_one_buffer(tmp_path):
    turns = run_scenario(long_scenario(tmp_path, 20)).trace.turns

    last = turns[-1].memory
    assert isinstance(last, Shared) and all(isinstance(t.memory, Shared) for t in turns)
    assert all(last.extends(t.memory) for t in turns)
    assert [len(t.memory) for t in turns] == [2 * (i + 1) for i in range(20)]


def test_a_memory_that_does_not_extend_the_last_one_is_written_in_full():
    ids = IdNormalizer()
    first = ids.memory([ChatMessage(role="user", content="a"),
                        ChatMessage(role="assistant", content="b")])
    second = ids.memory([ChatMessage(role="user", content="c")])  # the memory was reset
    trace = Trace("s", "react", [
        TurnTrace(user=u, steps=[], response=None, error=None, memory=m, wall_time=0,
                  serial_time=0) for u, m in (("a", first), ("c", second))])

    turns = trace.to_dict()["turns"]

    assert turns[1]["memory"] == [{"role": "user", "content": "c"}]
    assert not isinstance(second, Shared) or not second.extends(first)


def test_equal_messages_of_a_run_are_one_object():
    ids = IdNormalizer()

    one = ids.message(ChatMessage(role="user", content="same"))
    other = ids.message(ChatMessage(role="user", content="same"))

    assert one is other


def test_traces_are_written_in_format_3():
    assert TRACE_FORMAT == 3


def test_a_format_2_trace_diffs_with_the_same_run_in_format_3_as_equal_but_the_format(tmp_path):
    current = run_scenario(long_scenario(tmp_path, 3)).trace.to_dict()
    old = expand_trace(current)
    old = {**old, "format": 2, "turns": [{**t, "memory": list(t["memory"])}
                                          for t in old["turns"]]}

    assert diff_traces(old, current) == ["format: 2 -> 3"]


def test_a_changed_message_shows_once_where_it_began_though_later_requests_refer_to_it(
        tmp_path):
    current = run_scenario(long_scenario(tmp_path, 4)).trace.to_dict()
    old = json.loads(json.dumps(current))
    old["turns"][1]["steps"][0]["llm_calls"][0]["messages"][-1]["content"] = "Question one?"

    lines = diff_traces(old, current)

    assert lines[0] == 'turn 2 ("Question 1: what is 1 + 1?"):'
    assert "Question one?" in "\n".join(lines)
    assert any("also in:" in line and "turn 3" in line and "turn 4" in line for line in lines)


def test_a_snapshot_too_large_to_read_back_is_not_written_and_says_so(tmp_path, monkeypatch):
    scenario = long_scenario(tmp_path, 30)
    monkeypatch.setattr(textfiles, "MAX_TEXT_BYTES", 16 << 10)

    result = run_scenario(scenario, snapshots=SnapshotFiles("check", update=True))

    path = snapshot_path(result.scenario, "react")
    assert path is not None and not path.exists()
    assert result.verdict is not None and not result.verdict.passed
    assert result.verdict.lines() == [
        f"- the snapshot was not written: {path} would be "
        f"{len(result.trace.to_json()) / (1 << 20):.1f} MiB, more than the 0.015625 MiB "
        "agentkit reads back (MAX_TEXT_BYTES); split the scenario's turns into several "
        "scenarios"]


@pytest.mark.parametrize("segment, problem", [
    ({"ref": "/turns/9/memory", "start": 0, "count": 1},
     "`ref` '/turns/9/memory' is not a list written before this one"),
    ({"ref": "/turns/0/memory", "start": 1, "count": 5},
     "`start` 1 and `count` 5 are not a run of the 2 items of /turns/0/memory"),
])
def test_a_reference_that_cannot_be_followed_is_a_trace_error_naming_the_place(
        tmp_path, segment, problem):
    trace = run_scenario(long_scenario(tmp_path, 2)).trace.to_dict()
    trace["turns"][1]["memory"][0] = segment

    with pytest.raises(BadInputError) as caught:
        expand_trace(trace, "t.json")

    assert str(caught.value) == (f"t.json:1: turns.1.memory.0: {problem}; not an agentkit "
                                 "trace (a snapshot or --trace-dir output)")
