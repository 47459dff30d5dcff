"""Reading JSON files (traces, snapshots, baselines): agentkit's own errors, with lines."""

from __future__ import annotations

import json

import pytest

from agentkit.core.textfiles import TextFileError, parse_json
from agentkit.core.yamlsafe import MAX_DEPTH


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
