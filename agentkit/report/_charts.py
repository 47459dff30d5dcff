"""Inline SVG charts for the HTML report: grouped horizontal bars, one group per scenario and
one bar per agent type, drawn without any library or script so the page stays self-contained.

Horizontal bars keep long scenario names readable and the chart as wide as the page, however
many scenarios there are.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from html import escape

__all__ = ["PALETTE", "FAIL_COLOR", "Segment", "Bar", "grouped_bar_chart", "color_for",
           "nice_step", "legend", "RateBar", "pass_rate_chart", "Point", "scatter_chart"]

# Okabe-Ito: distinguishable with the common colour-vision deficiencies.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442",
           "#000000")

_WIDTH = 560
_BAR = 11
_BAR_GAP = 2
_GROUP_GAP = 10
_CHAR = 6.6  # average glyph width at the 11px label size, for layout estimates
FAIL_COLOR = "#b3261e"


def color_for(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


@dataclass(frozen=True)
class Segment:
    """A stretch of a bar from ``start`` to ``end`` in data units, drawn at ``opacity``."""

    start: float
    end: float
    opacity: float = 1.0


@dataclass(frozen=True)
class Bar:
    segments: list[Segment]
    label: str
    tooltip: str
    failed: bool = False


def nice_step(maximum: float, integral: bool) -> float:
    """A round axis step (1, 2, 2.5 or 5 × a power of ten) giving about four ticks."""
    raw = maximum / 4
    magnitude: float = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw - 1e-12)
    return max(1.0, round(step)) if integral else step


def _number(value: float) -> str:
    return f"{int(value):,}" if value == int(value) else f"{value:.2f}".rstrip("0").rstrip(".")


def legend(entries: list[tuple[str, str, float]], width: float) -> tuple[list[str], float]:
    """Swatches (text, colour, opacity) in a row that wraps onto new lines as needed; returns
    the SVG parts and the height they take."""
    parts: list[str] = []
    x, y = 0.0, 0.0
    for text, color, opacity in entries:
        item_width = 16 + len(text) * _CHAR + 14
        if x > 0 and x + item_width > width:
            x, y = 0.0, y + 16
        parts.append(f'<rect x="{x:.1f}" y="{y + 2:.1f}" width="11" height="11" fill="{color}" '
                     f'fill-opacity="{opacity}" rx="2"/>')
        parts.append(f'<text x="{x + 16:.1f}" y="{y + 11.5:.1f}" class="legend">'
                     f'{escape(text)}</text>')
        x += item_width
    return parts, y + 16


def _members(groups: list[str], series: list[str],
             bars: dict[tuple[str, str], object]) -> list[list[int]]:
    """Per group, the indexes of the series with an entry in it (no empty slots)."""
    return [[i for i, name in enumerate(series) if (group, name) in bars] for group in groups]


def _group_tops(top: float, members: list[list[int]]) -> list[float]:
    """The y of each group, each as tall as its own bars."""
    tops, y = [], top
    for present in members:
        tops.append(y)
        y += max(len(present), 1) * (_BAR + _BAR_GAP) - _BAR_GAP + _GROUP_GAP
    return tops


def grouped_bar_chart(*, title: str, groups: list[str], series: list[str],
                      bars: dict[tuple[str, str], Bar | str], integral: bool = True,
                      notes: list[tuple[str, float]] | None = None) -> str:
    """One SVG: for each group a bar per series that has an entry there (a series a group
    lacks takes no room: no empty slots); a string instead of a Bar is shown as text (e.g.
    ``error``). Each series keeps its colour everywhere. ``notes`` explain segment shades."""
    longest = max((len(g) for g in groups), default=4)
    label_width = min(220.0, max(60.0, longest * _CHAR + 12))
    label_texts = [b.label + (" ✗" if b.failed else "") if isinstance(b, Bar) else b
                   for b in bars.values()]
    value_width = max((len(t) for t in label_texts), default=1) * 6.0 + 10
    entries = [(name, color_for(i), 1.0) for i, name in enumerate(series)]
    entries += [(text, "#6b7280", opacity) for text, opacity in notes or []]
    swatches, legend_height = legend(entries, _WIDTH)
    maximum = max((s.end for b in bars.values() if isinstance(b, Bar) for s in b.segments),
                  default=0.0)
    step = nice_step(maximum, integral) if maximum > 0 else 1.0
    scale_max = math.ceil(maximum / step - 1e-9) * step if maximum > 0 else step
    top = legend_height + 22
    plot_left = label_width
    plot_width = _WIDTH - label_width - value_width
    members = _members(groups, series, dict(bars))
    tops = _group_tops(top, members)
    heights = [max(len(m), 1) * (_BAR + _BAR_GAP) - _BAR_GAP for m in members]
    height = (tops[-1] + heights[-1] + _GROUP_GAP if groups else top) + 4

    def x_of(value: float) -> float:
        return plot_left + plot_width * value / scale_max

    body: list[str] = []
    for g_index in range(1, len(groups), 2):
        y0 = tops[g_index]
        body.append(f'<rect x="0" y="{y0 - _GROUP_GAP / 2:.1f}" width="{_WIDTH}" '
                    f'height="{heights[g_index] + _GROUP_GAP:.1f}" class="band"/>')
    ticks = round(scale_max / step)
    for index in range(ticks + 1):
        x = x_of(index * step)
        body.append(f'<line x1="{x:.1f}" y1="{top - 6:.1f}" x2="{x:.1f}" y2="{height - 4:.1f}" '
                    'class="grid"/>')
        body.append(f'<text x="{x:.1f}" y="{top - 10:.1f}" class="tick">'
                    f'{_number(index * step)}</text>')
    for g_index, group in enumerate(groups):
        y0 = tops[g_index]
        body.append(f'<text x="{label_width - 8:.1f}" y="{y0 + heights[g_index] / 2 + 4:.1f}" '
                    f'class="group">{escape(group)}</text>')
        for slot, s_index in enumerate(members[g_index]):
            y = y0 + slot * (_BAR + _BAR_GAP)
            body.append(_bar(bars.get((group, series[s_index])), color_for(s_index), y, x_of,
                             plot_left))
    return (f'<svg viewBox="0 0 {_WIDTH} {height:.0f}" width="100%" role="img" '
            f'aria-label="{escape(title)}" class="chart">'
            f'<title>{escape(title)}</title>'
            f'<g class="legend-row">{"".join(swatches)}</g>{"".join(body)}</svg>')


def _bar(bar: Bar | str | None, color: str, y: float, x_of: Callable[[float], float],
         left: float) -> str:
    text_y = y + _BAR - 2
    if not isinstance(bar, Bar):
        text = "—" if bar is None else bar
        css = "value" if bar is None else "value fail"
        return f'<text x="{left + 4:.1f}" y="{text_y:.1f}" class="{css}">{escape(text)}</text>'
    parts = [f"<g><title>{escape(bar.tooltip)}</title>"]
    end = left
    for segment in bar.segments:
        x1, x2 = x_of(segment.start), x_of(segment.end)
        width = max(x2 - x1, 0.0)
        end = max(end, x2)
        parts.append(f'<rect x="{x1:.1f}" y="{y:.1f}" width="{width:.1f}" height="{_BAR}" '
                     f'fill="{color}" fill-opacity="{segment.opacity}"/>')
    label = bar.label + (" ✗" if bar.failed else "")
    css = "value fail" if bar.failed else "value"
    parts.append(f'<text x="{end + 4:.1f}" y="{text_y:.1f}" class="{css}">{escape(label)}</text>')
    parts.append("</g>")
    return "".join(parts)


@dataclass(frozen=True)
class RateBar:
    """A pass rate with its interval (whiskers; none when ``low == high``: a fact), the label
    beside it and its tooltip."""

    rate: float
    low: float
    high: float
    label: str
    tooltip: str


def pass_rate_chart(*, title: str, groups: list[str], series: list[str],
                    bars: dict[tuple[str, str], RateBar | str]) -> str:
    """One SVG: per group (a scenario) a horizontal bar per series that ran it, its length
    the pass rate and its whiskers the interval; a string is shown as text (``error``)."""
    longest = max((len(g) for g in groups), default=4)
    label_width = min(220.0, max(60.0, longest * _CHAR + 12))
    value_width = max((len(b.label) if isinstance(b, RateBar) else len(b)
                       for b in bars.values()), default=1) * 6.0 + 14
    swatches, legend_height = legend([(n, color_for(i), 1.0) for i, n in enumerate(series)],
                                     _WIDTH)
    top = legend_height + 22
    plot_left, plot_width = label_width, _WIDTH - label_width - value_width
    members = _members(groups, series, dict(bars))
    tops = _group_tops(top, members)
    heights = [max(len(m), 1) * (_BAR + _BAR_GAP) - _BAR_GAP for m in members]
    height = (tops[-1] + heights[-1] + _GROUP_GAP if groups else top) + 4

    def x_of(value: float) -> float:
        return plot_left + plot_width * value

    body: list[str] = []
    for g_index in range(1, len(groups), 2):
        body.append(f'<rect x="0" y="{tops[g_index] - _GROUP_GAP / 2:.1f}" width="{_WIDTH}" '
                    f'height="{heights[g_index] + _GROUP_GAP:.1f}" class="band"/>')
    for tick in range(0, 101, 25):
        x = x_of(tick / 100)
        body.append(f'<line x1="{x:.1f}" y1="{top - 6:.1f}" x2="{x:.1f}" y2="{height - 4:.1f}" '
                    'class="grid"/>')
        body.append(f'<text x="{x:.1f}" y="{top - 10:.1f}" class="tick">{tick}%</text>')
    for g_index, group in enumerate(groups):
        y0 = tops[g_index]
        body.append(f'<text x="{label_width - 8:.1f}" y="{y0 + heights[g_index] / 2 + 4:.1f}" '
                    f'class="group">{escape(group)}</text>')
        for slot, s_index in enumerate(members[g_index]):
            y = y0 + slot * (_BAR + _BAR_GAP)
            bar = bars[(group, series[s_index])]
            if not isinstance(bar, RateBar):
                body.append(f'<text x="{plot_left + 4:.1f}" y="{y + _BAR - 2:.1f}" '
                            f'class="value fail">{escape(bar)}</text>')
                continue
            middle = y + _BAR / 2
            x1, x2 = x_of(bar.low), x_of(bar.high)
            whiskers = "" if bar.low == bar.high else (  # a fact has no interval
                f'<line x1="{x1:.1f}" y1="{middle:.1f}" x2="{x2:.1f}" y2="{middle:.1f}" '
                'class="whisker"/>'
                f'<line x1="{x1:.1f}" y1="{y + 2:.1f}" x2="{x1:.1f}" y2="{y + _BAR - 2:.1f}" '
                'class="whisker"/>'
                f'<line x1="{x2:.1f}" y1="{y + 2:.1f}" x2="{x2:.1f}" y2="{y + _BAR - 2:.1f}" '
                'class="whisker"/>')
            body.append(
                f"<g><title>{escape(bar.tooltip)}</title>"
                f'<rect x="{plot_left:.1f}" y="{y:.1f}" width="{x_of(bar.rate) - plot_left:.1f}" '
                f'height="{_BAR}" fill="{color_for(s_index)}" fill-opacity="0.75"/>{whiskers}'
                f'<text x="{max(x2, x_of(bar.rate)) + 4:.1f}" y="{y + _BAR - 2:.1f}" '
                f'class="value">{escape(bar.label)}</text></g>')
    return (f'<svg viewBox="0 0 {_WIDTH} {height:.0f}" width="100%" role="img" '
            f'aria-label="{escape(title)}" class="chart"><title>{escape(title)}</title>'
            f'<g class="legend-row">{"".join(swatches)}</g>{"".join(body)}</svg>')


@dataclass(frozen=True)
class Point:
    """One series in a scatter: x (a cost), y (a pass rate) with its interval."""

    x: float
    y: float
    low: float
    high: float
    tooltip: str


def scatter_chart(*, title: str, x_label: str, series: list[str],
                  points: dict[str, Point]) -> str:
    """One SVG: cost (x) against pass rate (y, 0-100 %), a dot per series with its interval
    as a vertical whisker; up and to the left is better."""
    width, height, left, right, top, bottom = _WIDTH, 300.0, 46.0, 16.0, 0.0, 36.0
    swatches, legend_height = legend([(n, color_for(i), 1.0) for i, n in enumerate(series)],
                                     width)
    top = legend_height + 14
    height += legend_height
    maximum = max((p.x for p in points.values()), default=0.0)
    step = nice_step(maximum, False) if maximum > 0 else 1.0
    scale_max = math.ceil(maximum * 1.1 / step - 1e-9) * step if maximum > 0 else step
    plot_w, plot_h = width - left - right, height - top - bottom

    def x_of(value: float) -> float:
        return left + plot_w * value / scale_max

    def y_of(rate: float) -> float:
        return top + plot_h * (1 - rate)

    body: list[str] = []
    for tick in range(0, 101, 25):
        y = y_of(tick / 100)
        body.append(f'<line x1="{left:.1f}" y1="{y:.1f}" x2="{width - right:.1f}" y2="{y:.1f}" '
                    'class="grid"/>')
        body.append(f'<text x="{left - 6:.1f}" y="{y + 3:.1f}" class="tick" '
                    f'text-anchor="end">{tick}%</text>')
    for index in range(round(scale_max / step) + 1):
        x = x_of(index * step)
        body.append(f'<text x="{x:.1f}" y="{height - bottom + 14:.1f}" class="tick">'
                    f'{_number(index * step)}</text>')
    body.append(f'<text x="{left + plot_w / 2:.1f}" y="{height - 4:.1f}" class="tick">'
                f'{escape(x_label)}</text>')
    for index, name in enumerate(series):
        point = points.get(name)
        if point is None:
            continue
        x, color = x_of(point.x), color_for(index)
        body.append(f"<g><title>{escape(point.tooltip)}</title>"
                    f'<line x1="{x:.1f}" y1="{y_of(point.low):.1f}" x2="{x:.1f}" '
                    f'y2="{y_of(point.high):.1f}" stroke="{color}" class="spread"/>'
                    f'<circle cx="{x:.1f}" cy="{y_of(point.y):.1f}" r="5" fill="{color}"/></g>')
    return (f'<svg viewBox="0 0 {width} {height:.0f}" width="100%" role="img" '
            f'aria-label="{escape(title)}" class="chart"><title>{escape(title)}</title>'
            f'<g class="legend-row">{"".join(swatches)}</g>{"".join(body)}</svg>')
