"""Tool calls as the wire shows them (agentkit.bridge.wire_trace): what a ``$N`` argument
takes from a tool's output, decoded only when the output can be JSON."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentkit.bridge import wire_trace
from agentkit.bridge.wire_trace import _value

OUTPUTS = ["", " ", "Paris has 2.1 million people.", "42", " 42\n", '"x"', "NaN", "-Infinity",
           "true", "false", "null", "nope", "[1, 2]", '{"a": 1}', "x42", "\t\n 7",
           "\u00a042", "٣", "{not json", "1 2", "Infinity and beyond"]


def _json_or_text(output: str) -> Any:
    try:
        return json.loads(output)
    except ValueError:
        return output


@pytest.mark.parametrize("output", OUTPUTS)
def test_a_tool_output_gives_its_json_value_else_its_text(output):
    assert repr(_value(output)) == repr(_json_or_text(output))


def test_an_output_no_json_value_begins_with_is_not_decoded(monkeypatch):
    decoded: list[str] = []
    loads = wire_trace.loads_json
    monkeypatch.setattr(wire_trace, "loads_json",
                        lambda text: decoded.append(text) or loads(text))

    values = [_value(output) for output in ("Paris has 2.1 million people.", "", "x42",
                                            "42", " [1]", "nope")]

    assert values == ["Paris has 2.1 million people.", "", "x42", 42, [1], "nope"]
    assert decoded == ["42", " [1]", "nope"]  # "n" may begin null
