"""The timeline of one run: its LLM and tool calls as bars on simulated time.

Calls that overlap go into separate lanes (one lane per call running at the same moment), so
concurrency is visible at a glance: LLMCompiler's and Chain-of-Abstraction's four parallel
look-ups stand in four lanes over the same second, ReAct's run one after another in one lane.
Drawn as inline SVG without scripts, like the report's other charts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from html import escape
from typing import Literal

from agentkit.core.fmt import count, seconds
from agentkit.report._charts import FAIL_COLOR, PALETTE, legend, nice_step
from agentkit.trace import Trace

__all__ = ["Span", "spans_of", "lanes", "timeline_svg"]

_WIDTH = 720
_LANE = 16
_LANE_GAP = 4
_CHAR = 6.0
_COLORS = {"llm": PALETTE[0], "tool": PALETTE[1]}


@dataclass(frozen=True)
class Span:
    """One call of a run on simulated time (seconds since the run started)."""

    kind: Literal["llm", "tool"]
    label: str
    start: float
    end: float
    turn: int
    step: int
    error: bool = False
    detail: str = ""


def spans_of(trace: Trace) -> list[Span]:
    """Every LLM and tool call of ``trace``, with its turn and step (1-based)."""
    spans = []
    for turn_number, turn in enumerate(trace.turns, start=1):
        for step in turn.steps:
            where = f"turn {turn_number}, step {step.index + 1}"
            for call in step.llm_calls:
                usage = call.usage or {}
                tokens = (f", {count(usage.get('prompt_tokens', 0))} tokens in, "
                          f"{count(usage.get('completion_tokens', 0))} out" if usage else "")
                error = f", error: {call.error}" if call.error else ""
                spans.append(Span("llm", "LLM", round(call.started, 6),
                                  round(call.started + call.latency, 6), turn_number,
                                  step.index + 1, call.error is not None,
                                  f"{where}: LLM call, {seconds(call.latency)}{tokens}{error}"))
            for tool in step.tool_calls:
                flag = " (error)" if tool.is_error else ""
                spans.append(Span("tool", tool.name, round(tool.started, 6),
                                  round(tool.started + tool.latency, 6), turn_number,
                                  step.index + 1, tool.is_error,
                                  f"{where}: {tool.name}{flag}, {seconds(tool.latency)}"))
    return sorted(spans, key=lambda s: (s.start, s.end))


def lanes(spans: list[Span]) -> list[int]:
    """The lane of each span (in order): the first lane free when it starts, so spans in
    different lanes overlap in time and one lane never holds two at once."""
    ends: list[float] = []
    chosen = []
    for span in spans:
        lane = next((i for i, end in enumerate(ends) if end <= span.start + 1e-9), len(ends))
        if lane == len(ends):
            ends.append(span.end)
        else:
            ends[lane] = span.end
        chosen.append(lane)
    return chosen


def timeline_svg(spans: list[Span], *, title: str) -> str | None:
    """The timeline as one SVG, or None when no simulated time passed (nothing to draw)."""
    total = max((s.end for s in spans), default=0.0)
    if total <= 0:
        return None
    placed = lanes(spans)
    step = nice_step(total, integral=False)
    scale_max = math.ceil(total / step - 1e-9) * step
    swatches, legend_height = legend([("LLM call", _COLORS["llm"], 1.0),
                                      ("tool call", _COLORS["tool"], 1.0),
                                      ("error", FAIL_COLOR, 1.0)], _WIDTH)
    top = legend_height + 22
    turn_starts: dict[int, float] = {}
    for span in spans:
        turn_starts.setdefault(span.turn, span.start)
    bottom = top + (max(placed) + 1) * (_LANE + _LANE_GAP)
    height = bottom + (16 if len(turn_starts) > 1 else 4)  # room for the turn labels

    def x_of(seconds: float) -> float:
        return _WIDTH * seconds / scale_max

    body: list[str] = []
    for index in range(round(scale_max / step) + 1):
        x = x_of(index * step)
        anchor = "start" if index == 0 else ("end" if x >= _WIDTH - 1 else "middle")
        body.append(f'<line x1="{x:.1f}" y1="{top - 6:.1f}" x2="{x:.1f}" y2="{height - 4:.1f}" '
                    'class="grid"/>')
        body.append(f'<text x="{x:.1f}" y="{top - 10:.1f}" class="tick" '
                    f'style="text-anchor:{anchor}">{seconds(index * step)}</text>')
    for turn, start in list(turn_starts.items())[1:]:
        x = x_of(start)
        body.append(f'<line x1="{x:.1f}" y1="{top - 4:.1f}" x2="{x:.1f}" y2="{height - 2:.1f}" '
                    'class="turn"/>')
        body.append(f'<text x="{x + 3:.1f}" y="{height - 3:.1f}" class="turn-label">turn '
                    f"{turn}</text>")
    for span, lane in zip(spans, placed, strict=True):
        body.append(_bar(span, x_of(span.start), x_of(span.end), top + lane * (_LANE + _LANE_GAP)))
    return (f'<svg viewBox="0 0 {_WIDTH} {height:.0f}" width="100%" role="img" '
            f'aria-label="{escape(title)}" class="chart timeline">'
            f"<title>{escape(title)}</title>"
            f'<g class="legend-row">{"".join(swatches)}</g>{"".join(body)}</svg>')


def _bar(span: Span, x1: float, x2: float, y: float) -> str:
    width = max(x2 - x1, 2.0)
    color = FAIL_COLOR if span.error else _COLORS[span.kind]
    parts = [f'<g class="call {span.kind}"><title>{escape(span.detail)}</title>',
             f'<rect x="{x1:.1f}" y="{y:.1f}" width="{width:.1f}" height="{_LANE}" rx="2" '
             f'fill="{color}"/>']
    if len(span.label) * _CHAR + 6 <= width:
        parts.append(f'<text x="{x1 + 3:.1f}" y="{y + _LANE - 4:.1f}" class="bar-label">'
                     f"{escape(span.label)}</text>")
    parts.append("</g>")
    return "".join(parts)
