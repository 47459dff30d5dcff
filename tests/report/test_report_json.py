"""The JSON form of a comparison: versioned, round-trips, and malformed files say why."""

from __future__ import annotations

import json
import re
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

import agentkit
from agentkit.report import REPORT_FORMAT, Comparison, ReportError, load_comparison
from tests.fuzz import mutated

from .conftest import make_comparison, make_row


def test_json_form_carries_the_format_and_agentkit_version(bundled):
    data = bundled.to_dict()

    assert (data["format"], data["agentkit_version"]) == (REPORT_FORMAT, agentkit.__version__)


def test_json_form_has_a_summary_per_compared_agent_type_and_what_it_compares(bundled):
    data = bundled.to_dict()
    summary = data["summary"]

    assert [s["agent_type"] for s in summary] == [c[0] for c in bundled.compared().contenders]
    assert summary[0]["passed"] == bundled.summaries()[0].passed
    assert data["compared"]["scenarios"] == bundled.compared().scenarios


def test_json_form_names_an_agent_type_left_out_of_the_comparison(lone_react):
    left_out = lone_react.to_dict()["compared"]["left_out"]

    assert [item["agent_type"] for item in left_out] == ["react"]


def test_json_round_trip_gives_the_same_comparison_without_its_traces(bundled):
    text = bundled.to_json()

    again = Comparison.from_dict(json.loads(text))

    assert again == bundled.model_copy(update={"rows": [
        r.model_copy(update={"trace": None, "timeline": None}) for r in bundled.rows]})
    assert again.to_json() == text


def test_error_rows_round_trip(tmp_path):
    comparison = make_comparison(make_row("a"), make_row("broken", None, "error"))
    path = tmp_path / "report.json"
    path.write_text(comparison.to_json(), encoding="utf-8")

    assert load_comparison(path) == comparison


def test_invalid_json_baseline_names_the_file_line_and_problem(tmp_path):
    path = tmp_path / "baseline.json"
    path.write_text('{"format": 1,\n "rows": [}\n', encoding="utf-8")

    with pytest.raises(ReportError, match=rf"{path}:2:\d+: not valid JSON"):
        load_comparison(path)


def test_a_5000_digit_integer_in_a_baseline_is_a_report_error_at_its_line(tmp_path):
    data = make_comparison(make_row("a")).to_dict()
    data["rows"][0]["steps"] = "HUGE"
    text = json.dumps(data, indent=2).replace('"HUGE"', "9" * 5_000)
    path = tmp_path / "baseline.json"
    path.write_text(text, encoding="utf-8")
    line = next(i for i, t in enumerate(text.splitlines(), 1) if '"steps": 999' in t)

    with pytest.raises(ReportError, match=rf"^{re.escape(str(path))}:{line}:16: an integer of "
                                          "5,000 digits"):
        load_comparison(path)


def test_wrong_field_type_in_baseline_names_the_file_line_and_field(tmp_path):
    data = make_comparison(make_row("a")).to_dict()
    data["rows"][0]["steps"] = "many"
    path = tmp_path / "baseline.json"
    text = json.dumps(data, indent=2)
    path.write_text(text, encoding="utf-8")
    line = text.splitlines().index('      "steps": "many",') + 1

    with pytest.raises(ReportError, match=rf"^{re.escape(str(path))}:{line}: rows\.0\.steps: \S"):
        load_comparison(path)


def test_row_missing_its_metrics_is_rejected():
    data = make_comparison(make_row("a")).to_dict()
    del data["rows"][0]["wall_time"]

    with pytest.raises(ReportError, match=r"base\.json: rows\.0: a `pass` row needs wall_time"):
        Comparison.from_dict(data, source="base.json")


def test_unknown_field_in_baseline_is_rejected():
    data = make_comparison(make_row("a")).to_dict()
    data["rows"][0]["stepz"] = 3

    with pytest.raises(ReportError, match=r"base\.json: rows\.0\.stepz: unknown field"):
        Comparison.from_dict(data, source="base.json")


def test_unsupported_report_format_is_rejected():
    with pytest.raises(ReportError, match=r"base\.json: report format 3 is not supported "
                                          r"\(this agentkit reads formats 1 and 2\)"):
        Comparison.from_dict({"format": 3, "rows": []}, source="base.json")


def test_a_format_1_report_is_still_read_as_a_baseline():
    old = {"format": 1, "agentkit_version": "0.1.0", "agent_types": ["react"],
           "summary": [], "rows": [{"scenario": "a", "agent_type": "react", "status": "error",
                                    "problems": ["it broke"]}]}

    assert Comparison.from_dict(old).rows[0].key == "a[react]"


def test_file_that_is_not_a_report_is_rejected(tmp_path):
    path = tmp_path / "trace.json"
    path.write_text("[1, 2]", encoding="utf-8")

    with pytest.raises(ReportError, match=rf"{path}:1: not an agentkit report"):
        load_comparison(path)


def test_duplicate_rows_in_baseline_are_rejected():
    data = make_comparison(make_row("a")).to_dict()
    data["rows"].append(data["rows"][0])

    with pytest.raises(ReportError, match=r"duplicate row a\[react\]"):
        Comparison.from_dict(data, source="base.json")


def test_missing_baseline_file_is_a_report_error(tmp_path):
    with pytest.raises(ReportError, match="cannot read report"):
        load_comparison(tmp_path / "absent.json")


def test_row_of_an_agent_type_the_report_does_not_list_is_rejected():
    data = make_comparison(make_row("a")).to_dict()
    data["agent_types"] = ["function_calling"]

    with pytest.raises(ReportError, match=r"rows\.0\.agent_type: `react` is not one of"):
        Comparison.from_dict(data, source="base.json")


_EXAMPLE = json.loads((Path(__file__).parents[2] / "reports" / "example" / "report.json")
                      .read_text(encoding="utf-8"))
_FUZZ_FOLDER = Path(tempfile.mkdtemp(prefix="agentkit-report-fuzz-"))


@pytest.mark.slow  # property test at full size
@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated(_EXAMPLE))
def test_any_mutated_baseline_loads_or_is_a_report_error_with_file_and_line(document):
    path = _FUZZ_FOLDER / "baseline.json"
    path.write_text(json.dumps(document, indent=2), encoding="utf-8")

    try:
        load_comparison(path)
    except ReportError as exc:
        assert re.match(rf"{re.escape(str(path))}:\d+(:\d+)?: ", str(exc)), str(exc)
