"""The timeline of a run: calls as bars on simulated time, one lane per concurrent call."""

from __future__ import annotations

import re

from agentkit.report._timeline import Span, lanes, spans_of, timeline_svg
from agentkit.scenario import run_scenario

from .conftest import SCENARIOS


def _span(start: float, end: float, label: str = "t", kind: str = "tool") -> Span:
    return Span(kind, label, start, end, turn=1, step=1)  # type: ignore[arg-type]


def test_calls_one_after_another_share_one_lane():
    assert lanes([_span(0, 1), _span(1, 2), _span(2, 2.5)]) == [0, 0, 0]


def test_overlapping_calls_get_a_lane_each_and_a_free_lane_is_reused():
    assert lanes([_span(0, 2), _span(0, 1), _span(0.5, 1), _span(1, 3)]) == [0, 1, 2, 1]


def test_parallel_look_ups_of_llm_compiler_and_coa_stand_in_four_lanes_over_one_second():
    for agent in ("llm_compiler", "coa"):
        spans = spans_of(run_scenario(SCENARIOS / "parallel_lookups.yaml", agent).trace)
        tools = [(span, lane) for span, lane in zip(spans, lanes(spans), strict=True) if span.kind == "tool"]

        assert len({lane for _, lane in tools}) == 4, agent
        assert {(span.start, span.end - span.start) for span, _ in tools} == {
            (tools[0][0].start, 1.0)}, agent


def test_react_runs_the_same_look_ups_in_one_lane():
    spans = spans_of(run_scenario(SCENARIOS / "parallel_lookups.yaml", "react").trace)

    assert set(lanes(spans)) == {0}


def test_the_svg_has_a_bar_per_call_with_its_details_and_a_lane_per_concurrent_call():
    spans = [_span(0, 1, "LLM", "llm"), *(_span(1, 2, f"look{n}") for n in range(3))]

    svg = timeline_svg(spans, title="t") or ""

    assert svg.count("<rect") == len(spans) + 3  # and three legend swatches
    assert len(set(re.findall(r'<rect x="[\d.]+" y="([\d.]+)" width="[\d.]+" height="16"',
                              svg))) == 3
    assert ">1.00s</text>" in svg and ">2.00s</text>" in svg


def test_an_erroring_call_is_drawn_in_the_error_colour():
    svg = timeline_svg([Span("tool", "divide", 0, 1, 1, 1, error=True, detail="x")],
                       title="t") or ""

    assert svg.count('fill="#b3261e"') == 2  # the bar and its legend swatch


def test_a_run_without_simulated_time_has_no_timeline():
    assert timeline_svg([_span(0, 0)], title="t") is None
    assert timeline_svg([], title="t") is None
