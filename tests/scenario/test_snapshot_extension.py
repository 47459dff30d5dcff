"""The syrupy extension: traces stored as their own JSON, mismatches shown step-aligned."""

from __future__ import annotations

import json
from pathlib import Path

from syrupy.extensions.json import JSONSnapshotExtension

from agentkit.scenario import run_scenario
from agentkit.trace._diff import diff_traces
from agentkit.trace._trace import TRACE_FORMAT
from agentkit.verdict._syrupy import (
    SnapshotComparison,
    TraceSnapshotExtension,
    compare_with_snapshot,
    stale_snapshot,
)

SCENARIOS = Path(__file__).parents[2] / "scenarios"


def _trace(name: str = "single_tool_call", agent: str = "react"):
    return run_scenario(SCENARIOS / f"{name}.yaml", agent).trace


def _identity(*, data, path):
    return data


def _lines(serialized: str, stored: str) -> list[str]:
    return list(TraceSnapshotExtension().diff_lines(serialized, stored))


def test_a_trace_is_serialized_exactly_as_its_to_json():
    trace = _trace()

    serialized = TraceSnapshotExtension().serialize(trace, exclude=None, include=None,
                                                    matcher=_identity)

    assert serialized == trace.to_json()


def test_a_trace_keeps_its_readable_key_order():
    serialized = TraceSnapshotExtension().serialize(_trace())

    assert list(json.loads(serialized)) == ["format", "scenario", "agent", "tools", "turns",
                                                     "totals"]


def test_other_data_is_serialized_like_syrupys_json_extension():
    data = {"b": [1, 2], "a": {"y": 1, "x": 2}}

    assert TraceSnapshotExtension().serialize(data) == JSONSnapshotExtension().serialize(data)


def test_a_changed_trace_is_shown_as_a_step_aligned_diff_without_a_header_of_its_own():
    stored = _trace().to_dict()
    received = json.loads(json.dumps(stored))
    received["turns"][0]["steps"][0]["tool_calls"][0]["output"] = "6"

    lines = _lines(json.dumps(received), json.dumps(stored))

    assert lines == [
        'turn 1 ("What is 2 + 3?"):',
        "    step 1: changed",
        '      tool_calls[0] (add).output: "5" -> "6"',
    ]


def test_a_changed_tool_argument_is_shown_once_where_it_began(tmp_path):
    text = (SCENARIOS / "single_tool_call.yaml").read_text(encoding="utf-8")
    changed = tmp_path / "single_tool_call.yaml"
    changed.write_text(text.replace('Action Input: {"a": 2, "b": 3}',
                                    'Action Input: {"a": 2, "b": 4}'), encoding="utf-8")

    lines = _lines(run_scenario(changed, "react").trace.to_json(), _trace().to_json())

    assert lines == [
        'turn 1 ("What is 2 + 3?"):',
        "    step 1: changed",
        "      llm_calls[0].response.content:",
        "        also in: next request",
        "        @@ -2,2 +2,2 @@",
        "         Action: add",
        '        ~Action Input: {"a": 2, "b": [-3-]{+4+}}',
        "      tool_calls[0] (add).args.b: 3 -> 4",
        '      tool_calls[0] (add).output: "5" -> "6"',
        "        also in: step output, next request",
    ]


def _guide_example() -> list[str]:
    """The diff docs/reference/traces.md shows for a one-word docstring change, without the
    plugin's header line and its indentation."""
    guide = (SCENARIOS.parent / "docs" / "reference" / "traces.md").read_text(encoding="utf-8")
    block = guide.split("So a one-word docstring change reads like this")[1]
    lines = block.split("```\n")[1].splitlines()
    return [line.removeprefix("  ") for line in lines[1:]]


def test_the_guides_docstring_example_is_what_the_diff_shows(tmp_path, monkeypatch):
    source = (SCENARIOS.parent / "mocks" / "tools.py").read_text(encoding="utf-8")
    (tmp_path / "readme_tools.py").write_text(
        source.replace('"""Add two integers."""', '"""Add two whole numbers."""'),
        encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    scenario = tmp_path / "single_tool_call.yaml"
    scenario.write_text((SCENARIOS / "single_tool_call.yaml").read_text(encoding="utf-8")
                        .replace("mocks.tools:add", "readme_tools:add"), encoding="utf-8")

    lines = _lines(run_scenario(scenario, "react").trace.to_json(), _trace().to_json())

    assert lines == _guide_example()


def test_a_diff_between_scenarios_runs_names_the_inserted_step():
    stored = _trace("slow_tools", "function_calling").to_json()
    received = _trace("slow_tools", "react").to_json()

    lines = _lines(received, stored)

    assert lines[0] == 'turn 1 ("What are the populations of Paris, Rome and Lima?"):'
    assert any(": inserted + " in line for line in lines)
    assert 'agent: "function_calling" -> "react"' in lines


def test_a_trace_that_differs_only_in_formatting_says_so():
    trace = _trace()
    resorted = json.dumps(trace.to_dict(), indent=2, sort_keys=True)

    assert _lines(trace.to_json(), resorted) == [
        "the trace is the same; only the snapshot file's formatting differs (key order or "
        "whitespace): rewrite it with --snapshot-update"]


def _written_by_agentkit_1(trace) -> dict:
    """``trace`` as agentkit wrote it before traces held their tools (trace format 1)."""
    old = {key: value for key, value in trace.to_dict().items() if key != "tools"}
    return {**old, "format": 1}


def test_a_snapshot_of_an_older_trace_format_says_so_instead_of_a_diff():
    trace = _trace()

    lines = _lines(trace.to_json(), json.dumps(_written_by_agentkit_1(trace)))

    assert lines == ["this snapshot was written by an older agentkit (trace format 1); run "
                     "--snapshot-update to rewrite it"]


def test_a_snapshot_file_of_an_older_trace_format_is_stale(tmp_path):
    path = tmp_path / "react.json"
    path.write_text(json.dumps(_written_by_agentkit_1(_trace())), encoding="utf-8")

    assert stale_snapshot(path) == ("this snapshot was written by an older agentkit (trace "
                                    "format 1); run --snapshot-update to rewrite it")


def test_a_snapshot_file_of_this_trace_format_is_not_stale(tmp_path):
    path = tmp_path / "react.json"
    path.write_text(_trace().to_json(), encoding="utf-8")

    assert stale_snapshot(path) is None


def test_the_report_shows_an_older_snapshot_as_one_line(tmp_path):
    trace = _trace()
    path = tmp_path / "react.json"
    path.write_text(json.dumps(_written_by_agentkit_1(trace)), encoding="utf-8")

    assert compare_with_snapshot(trace.to_dict(), path) == SnapshotComparison("stale", [
        f"{path}: this snapshot was written by an older agentkit (trace format 1); run "
        "--snapshot-update to rewrite it"], stored=None)


def test_a_changed_snapshot_is_compared_step_by_step_and_kept_for_another_style(tmp_path):
    stored = _trace().to_dict()
    path = tmp_path / "react.json"
    path.write_text(json.dumps(stored), encoding="utf-8")
    current = json.loads(json.dumps(stored))
    current["turns"][0]["response"] = "five"

    assert compare_with_snapshot(current, path) == SnapshotComparison("changed", [
        'turn 1 ("What is 2 + 3?"):', '    response: "2 + 3 = 5" -> "five"'], stored)


def test_traces_of_two_formats_differ_in_one_line_not_step_by_step():
    trace = _trace()

    assert diff_traces(_written_by_agentkit_1(trace), trace.to_dict()) == [
        f"trace format 1 -> {TRACE_FORMAT}: the traces were written by different agentkit "
        "versions, which keep different things; write both with one agentkit to compare them "
        "step by step"]


def test_json_that_is_not_a_trace_falls_back_to_syrupys_diff():
    received, stored = '{"a": 1}\n', '{"a": 2}\n'

    assert _lines(received, stored) == list(
        JSONSnapshotExtension().diff_lines(received, stored))


def test_text_that_is_not_json_falls_back_to_syrupys_diff():
    received, stored = "not json", "also not json"

    assert _lines(received, stored) == list(
        JSONSnapshotExtension().diff_lines(received, stored))


def test_a_damaged_snapshot_file_of_a_trace_says_where_it_stops_being_json():
    trace = _trace()
    cut = trace.to_json()[:300]  # a write cut short, or a merge conflict's marks
    error = _json_error(cut)

    assert _lines(trace.to_json(), cut) == [
        f"the snapshot file cannot be read: line {error.lineno} column {error.colno}: not valid "
        f"JSON: {error.msg}; rewrite it with --snapshot-update once the run passes"]


def _json_error(text: str) -> json.JSONDecodeError:
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        return exc
    raise AssertionError("valid JSON")


def _with_bad_reference(trace) -> dict:
    stored = trace.to_dict()
    stored["turns"][0]["memory"][0] = {"ref": "/turns/5/memory", "start": 0, "count": 1}
    return stored


def test_a_snapshot_whose_reference_cannot_be_followed_is_a_change_saying_so(tmp_path):
    trace = _trace()
    path = tmp_path / "react.json"
    path.write_text(json.dumps(_with_bad_reference(trace)), encoding="utf-8")

    assert compare_with_snapshot(trace.to_dict(), path) == SnapshotComparison("changed", [
        f"the snapshot cannot be read: {path}:1: turns.0.memory.0: `ref` "
        "'/turns/5/memory' is not a list written before this one; not an agentkit trace (a "
        "snapshot or --trace-dir output)"])


def test_syrupy_shows_a_snapshot_whose_reference_cannot_be_followed_as_one_line():
    trace = _trace()

    assert _lines(trace.to_json(), json.dumps(_with_bad_reference(trace))) == [
        "the snapshot cannot be read: the old trace:1: turns.0.memory.0: `ref` "
        "'/turns/5/memory' is not a list written before this one; not an agentkit trace (a "
        "snapshot or --trace-dir output)"]


def test_a_snapshot_holding_the_same_messages_referenced_otherwise_is_the_same(tmp_path):
    trace = _trace()
    stored = trace.to_dict()
    full = stored["turns"][0]["steps"][0]["llm_calls"][0]["messages"]
    stored["turns"][0]["steps"][1]["llm_calls"][0]["messages"][0:1] = json.loads(
        json.dumps(full))  # the reference written out in full
    path = tmp_path / "react.json"
    path.write_text(json.dumps(stored), encoding="utf-8")

    assert compare_with_snapshot(trace.to_dict(), path) == SnapshotComparison("same", [])
