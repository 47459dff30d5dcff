"""Reading text files (read_text) and JSON files (traces, snapshots, baselines): agentkit's own
errors, with lines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentkit.core import textfiles
from agentkit.core.textfiles import (
    JsonLimitError,
    TextFileError,
    loads_json,
    parse_json,
    read_text,
)
from agentkit.core.yamlsafe import MAX_DEPTH


def test_a_file_is_read_whole_up_to_the_limit(tmp_path, monkeypatch):
    monkeypatch.setattr(textfiles, "MAX_TEXT_BYTES", 64)
    path = tmp_path / "x.yaml"
    path.write_text("é" * 32)  # 64 bytes

    assert read_text(path) == "é" * 32

    path.write_text("é" * 32 + "x")
    with pytest.raises(TextFileError, match=r"x.yaml:1: larger than 0 MiB"):
        read_text(path)


def test_a_file_longer_than_its_size_says_is_read_whole():
    status = Path("/proc/self/status")  # its size says 0
    if not status.exists() or status.stat().st_size:
        pytest.skip("needs Linux's /proc, whose files say they are empty")

    assert read_text(status).startswith("Name:") and "\nPid:" in read_text(status)


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 1001, 100_000])
def test_json_nested_too_deep_is_agentkits_error_at_its_line_with_the_limit_and_the_fix(depth):
    # the 100th bracket of "steps" is the 101st level: the document itself is the first
    text = '{\n  "steps": ' + "[" * depth + "]" * depth + "\n}\n"

    with pytest.raises(TextFileError) as info:
        parse_json("trace.json", text)

    assert str(info.value) == (
        f"trace.json:2:{11 + MAX_DEPTH}: nested more than {MAX_DEPTH} levels deep, the most "
        f"agentkit reads\n  fix: flatten the data there to at most {MAX_DEPTH} levels of nested "
        "lists and mappings (deeper data is almost always a generated or hostile file)")


def test_json_nested_up_to_the_limit_loads():
    text = "[" * (MAX_DEPTH - 1) + '{"a": 1}' + "]" * (MAX_DEPTH - 1)

    assert parse_json("x.json", text) == json.loads(text)


def test_brackets_inside_json_strings_do_not_count_as_nesting():
    text = json.dumps({"answer": "[" * 5000, "quote": 'say \\"[[[\\"' + "{" * 500})

    assert parse_json("x.json", text)["answer"] == "[" * 5000


def test_malformed_json_names_its_line_and_column():
    with pytest.raises(TextFileError, match=r"^x\.json:2:7: not valid JSON: "):
        parse_json("x.json", '{"a": 1,\n "b": }')


@pytest.mark.parametrize("number", ["7" * 5_000, "-" + "7" * 5_000])
def test_an_integer_longer_than_python_reads_is_agentkits_error_at_its_line_and_column(number):
    text = '{\n  "tokens": ' + number + "\n}\n"

    with pytest.raises(TextFileError) as info:
        parse_json("trace.json", text)

    assert str(info.value) == (
        "trace.json:2:13: an integer of 5,000 digits, more than the 4,300 agentkit reads\n"
        "  fix: shorten it, or write it as a string")


def test_long_digit_runs_in_strings_and_floats_are_read():
    text = ('{"id": "' + "7" * 5_000 + '", "x": 0.' + "1" * 5_000 + ', "y": 1' + "2" * 5_000
            + "e-5000}")

    assert parse_json("x.json", text)["id"] == "7" * 5_000


def test_loads_json_past_a_depth_limit_of_its_own_is_a_json_limit_error():
    with pytest.raises(JsonLimitError) as info:
        loads_json('{"a": [[1]]}', max_depth=2)

    assert (info.value.line, info.value.column) == (1, 8)
    assert info.value.problem == "nested more than 2 levels deep, the most agentkit reads"


def _depth(value) -> int:
    children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else None
    if children is None:
        return 0
    return 1 + max((_depth(child) for child in children), default=0)


_NESTED = st.recursive(st.integers() | st.text(alphabet="[]{}\"\\ab", max_size=6),
                       lambda inner: st.lists(inner, max_size=3)
                       | st.dictionaries(st.text(alphabet="[{a", max_size=3), inner, max_size=3),
                       max_leaves=25)


@given(_NESTED, st.integers(min_value=1, max_value=6))
def test_json_loads_exactly_when_it_nests_at_most_the_limit(value, limit):
    text = json.dumps(value)

    if _depth(value) > limit:
        with pytest.raises(JsonLimitError, match=f"nested more than {limit} levels deep"):
            loads_json(text, max_depth=limit)
    else:
        assert loads_json(text, max_depth=limit) == value
