"""Render a comparison as Markdown (tabulate), JSON and one self-contained HTML page.

Every renderer is a pure function of the comparison (and the optional baseline), so the same
runs give byte-identical files. The HTML page has inline CSS and inline SVG charts only: no
scripts, no external assets.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from html import escape
from pathlib import Path
from typing import Any

from tabulate import tabulate

from agentkit.core.files import FolderRefused, replace_folder
from agentkit.core.fmt import (
    count,
    ratio,
    seconds,
    signed_count,
    signed_seconds,
)
from agentkit.report.baseline import BaselineDiff, RowDelta, compare_to_baseline
from agentkit.report.charts import Bar, Segment, grouped_bar_chart
from agentkit.report.model import (
    METRICS,
    AgentSummary,
    Comparison,
    JudgeVerdict,
    Metric,
    ReportError,
    Row,
    load_comparison,
    trace_file,
)
from agentkit.report.runs import RUNS_CSS, html_runs, role_costs, run_anchor

__all__ = ["render_markdown", "render_json", "render_html", "write_report", "REPORT_FILES",
           "REPORT_MARKER", "CHART_TITLES"]

REPORT_FILES = {"markdown": "report.md", "json": "report.json", "html": "report.html"}
#: The file that marks a folder as a report's: only such a folder (or an empty or missing one)
#: is replaced by the next report, so a user's folder given by mistake is never emptied.
REPORT_MARKER = ".agentkit-report"
_MARKER_TEXT = ("This folder is an agentkit report. `agentkit report --out` replaces it whole; "
                "without this file it refuses to.\n")
CHART_TITLES = ("Steps", "LLM calls", "Tool calls", "Tool errors", "Tokens (in + out)",
                "Simulated latency (wall vs serial)")
_TITLE = "Agent comparison report"
_STATUS = {"pass": "pass", "fail": "FAIL", "error": "ERROR"}


def _diff(comparison: Comparison, baseline: Comparison | None) -> BaselineDiff | None:
    return None if baseline is None else compare_to_baseline(comparison, baseline)


def _value(metric: Metric, value: float | None) -> str:
    if value is None:
        return "—"
    if metric.kind == "count":
        return count(int(value))
    if metric.kind == "seconds":
        return seconds(value)
    return ratio(value)


def _mean(metric: Metric, value: float) -> str:
    return seconds(value) if metric.kind == "seconds" else f"{value:,.1f}"


def _delta(metric: Metric, delta: RowDelta | None) -> str:
    """The change vs the baseline: ``+2``, ``-0.50s``, ``·`` (unchanged), ``new``, or blank."""
    if delta is None:
        return ""
    if delta.change == "new":
        return "new" if metric is METRICS[0] else ""
    if metric.key not in delta.deltas:
        return ""
    value = delta.deltas[metric.key]
    if value == 0:
        return "·"
    if metric.kind == "count":
        return signed_count(int(value))
    if metric.kind == "seconds":
        return signed_seconds(value)
    return f"{value:+.2f}×"


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _counts(comparison: Comparison) -> str:
    rows = comparison.rows
    passed = sum(r.status == "pass" for r in rows)
    failed = sum(r.status == "fail" for r in rows)
    errors = sum(r.status == "error" for r in rows)
    return (f"{_plural(len(comparison.scenarios), 'scenario')} · {_plural(len(rows), 'run')}: "
            f"{passed} passed, {failed} failed, {_plural(errors, 'error')}")


def _baseline_line(diff: BaselineDiff) -> str:
    costs = len(diff.cost_regressions)
    return (f"{_plural(len(diff.regressions), 'regression')}"
            + (f" ({costs} in cost)" if costs else "")
            + f", {len(diff.fixed)} fixed, {len(diff.new)} new, {len(diff.removed)} removed "
            f"(baseline: agentkit {diff.baseline_version})")


def _snapshot_changes(comparison: Comparison) -> list[Row]:
    """Rows whose trace differs from its committed snapshot, or has none yet."""
    return [r for r in comparison.rows if r.snapshot in ("changed", "missing")]


def _snapshot_note(row: Row) -> str:
    return ("no snapshot yet" if row.snapshot == "missing"
            else "the trace differs from its committed snapshot")


# -- Markdown -------------------------------------------------------------------------------

def _fence(text: str) -> str:
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}\n{text}\n{fence}"


def _md_text(text: str) -> str:
    """One line of plain text, with the characters Markdown would interpret escaped."""
    return re.sub(r"([\\`*_\[\]<>#|~])", r"\\\1", " ".join(text.split()))


def _md_summary(summaries: list[AgentSummary]) -> str:
    headers = ["Agent type", "Passed", *(m.label for m in METRICS)]
    table = []
    for s in summaries:
        cells = [s.agent_type, f"{s.passed}/{s.runs}"]
        for m in METRICS:
            total = _value(m, s.total[m.key])
            cells.append(total if m.kind == "ratio" else f"{total} ({_mean(m, s.mean[m.key])})")
        table.append(cells)
    return tabulate(table, headers, tablefmt="github", disable_numparse=True,
                    colalign=("left", "right", *("right" for _ in METRICS)))


def _md_rows(comparison: Comparison, diff: BaselineDiff | None) -> str:
    headers = ["Scenario", "Agent type", "Result"]
    for m in METRICS:
        headers += [m.label, f"Δ {m.short}"] if diff is not None else [m.label]
    table = []
    for row in comparison.rows:
        delta = diff.for_row(row) if diff is not None else None
        cells = [row.scenario, row.agent_type or "—", _STATUS[row.status]]
        for m in METRICS:
            cells.append(_value(m, row.metric(m.key)))
            if diff is not None:
                cells.append(_delta(m, delta))
        table.append(cells)
    colalign = ("left", "left", "left", *("right" for _ in headers[3:]))
    return tabulate(table, headers, tablefmt="github", disable_numparse=True, colalign=colalign)


def _md_failures(comparison: Comparison) -> list[str]:
    lines = ["## Failures", ""]
    if not comparison.failures:
        return [*lines, "None: every run passed.", ""]
    for row in comparison.failures:
        lines += [f"### {row.key}: {_STATUS[row.status]}", "",
                  _fence("\n".join(f"- {p}" for p in row.problems)), ""]
    return lines


def _md_baseline(diff: BaselineDiff) -> list[str]:
    lines = ["## Against the baseline", "", _baseline_line(diff) + ".", ""]
    sections = [("Regressions", [f"`{d.key}`: {_md_text(reason)}"
                                 for d in diff.regressions for reason in d.reasons]),
                ("Fixed", [f"`{d.key}`" for d in diff.fixed]),
                ("New", [f"`{d.key}`" for d in diff.new]),
                ("Removed", [f"`{d.key}`" for d in diff.removed])]
    for title, items in sections:
        if items:
            lines += [f"{title}:", "", *(f"- {item}" for item in items), ""]
    return lines


def _md_snapshots(comparison: Comparison) -> list[str]:
    changed = _snapshot_changes(comparison)
    if not changed:
        return []
    lines = ["## Snapshot changes", "",
             "Runs whose trace is not the committed snapshot (snapshot -> now); accept a "
             "change with `pytest --snapshot-update`.", ""]
    for row in changed:
        lines += [f"### {row.key}: {_snapshot_note(row)}", ""]
        if row.snapshot_diff:
            lines += [_fence("\n".join(row.snapshot_diff)), ""]
    return lines


def _judged_verdict(verdict: JudgeVerdict) -> str:
    """``pass``, ``fail (split: 2 of 3 votes)``..."""
    return verdict.verdict + (f" (split, {verdict.votes} votes)" if verdict.split else "")


def _md_judged(comparison: Comparison) -> list[str]:
    rows = [row for row in comparison.rows if row.judged or row.roles]
    if not rows:
        return []
    table = [[f"`{row.key}`", f"`{verdict.at}`", _md_text(verdict.rubric),
              _judged_verdict(verdict), _md_text(verdict.reason)]
             for row in rows for verdict in row.judged]
    lines = ["## Judged expectations", "",
             "What the LLM judges decided on each judged expectation, and why. The calls of the "
             "judges and of simulated users are counted apart from the agent's (not in the "
             "tables above).", ""]
    if table:
        lines += [tabulate(table, ["run", "expectation", "rubric", "verdict", "reason"],
                           tablefmt="github", disable_numparse=True), ""]
    lines += [f"- `{row.key}`: {role_costs(row)}" for row in rows if row.roles]
    return [*lines, ""]


def _diagram_groups(comparison: Comparison) -> list[tuple[list[str], str]]:
    """Each distinct workflow diagram with the agent types that run it."""
    groups: dict[str, list[str]] = {}
    for agent_type, diagram in comparison.diagrams.items():
        groups.setdefault(diagram, []).append(agent_type)
    return [(types, diagram) for diagram, types in groups.items()]


_DIAGRAM_NOTE = ("The steps of the workflow agent types and the events between them, as "
                 "Mermaid source (the page loads no scripts: paste it into any Mermaid "
                 "renderer to draw it).")


def _md_diagrams(comparison: Comparison) -> list[str]:
    lines: list[str] = []
    for agent_types, diagram in _diagram_groups(comparison):
        lines += [f"Workflow of {', '.join(f'`{t}`' for t in agent_types)}:", "",
                  "```mermaid", diagram.rstrip("\n"), "```", ""]
    return ["## Workflows", "", _DIAGRAM_NOTE, "", *lines] if lines else []


def render_markdown(comparison: Comparison, baseline: Comparison | None = None) -> str:
    """Summary per agent type, the scenario × agent type table (with Δ columns against
    ``baseline``), the failures with their problems, the regressions against ``baseline``
    (failures and costs past their thresholds), then the snapshot changes."""
    diff = _diff(comparison, baseline)
    lines = [f"# {_TITLE}", "",
             f"agentkit {comparison.agentkit_version} · agent types: "
             f"{', '.join(comparison.agent_types) or 'none'} · {_counts(comparison)}", ""]
    if diff is not None:
        lines += [f"Against the baseline: {_baseline_line(diff)}.", ""]
    lines += ["## Summary by agent type", "",
              "Totals over the runs of each agent type, the mean per run in parentheses; "
              "speedup is total serial time over total wall time (simulated seconds).", "",
              _md_summary(comparison.summaries()), "",
              "## Scenarios × agent types", ""]
    if diff is not None:
        lines += ["Δ: current minus baseline (· unchanged, `new`: not in the baseline).", ""]
    lines += [_md_rows(comparison, diff), ""]
    lines += _md_diagrams(comparison)
    lines += _md_judged(comparison)
    lines += _md_failures(comparison)
    if diff is not None:
        lines += _md_baseline(diff)
    lines += _md_snapshots(comparison)
    return "\n".join(lines).rstrip("\n") + "\n"


# -- JSON -----------------------------------------------------------------------------------

def render_json(comparison: Comparison, baseline: Comparison | None = None) -> str:
    """:meth:`Comparison.to_dict`, plus a ``baseline`` section (deltas, regressions) if given."""
    data: dict[str, Any] = comparison.to_dict()
    diff = _diff(comparison, baseline)
    if diff is not None:
        data["baseline"] = diff.to_dict()
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


# -- HTML -----------------------------------------------------------------------------------

_CSS = """
*{box-sizing:border-box}
body{margin:0;background:#fff;color:#1f2328;
 font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
main{max-width:1180px;margin:0 auto;padding:24px 20px 48px}
h1{font-size:24px;margin:0 0 4px}
h2{font-size:18px;margin:32px 0 10px;padding-bottom:4px;border-bottom:1px solid #d8dee4}
h3{font-size:14px;margin:16px 0 6px}
.meta{color:#57606a;margin:0}
.note{color:#57606a;font-size:12px;margin:6px 0}
.wrap{overflow-x:auto}
table{border-collapse:collapse;width:100%;font-size:13px;font-variant-numeric:tabular-nums}
th,td{padding:4px 7px;border-bottom:1px solid #d8dee4;text-align:right;vertical-align:top}
th{background:#f6f8fa;font-weight:600;font-size:12px}
th.l,td.l{text-align:left}
td.result{white-space:nowrap}
td.scenario{font-weight:600;border-right:1px solid #d8dee4}
td .sub{display:block;font-size:11px;color:#57606a}
td .d{display:block;font-size:11px;color:#57606a}
td .d.worse{color:#b3261e}
td .d.better{color:#116329}
.badge{display:inline-block;padding:0 7px;border-radius:10px;font-size:12px;font-weight:600}
.b-pass{background:#dafbe1;color:#116329}
.b-fail{background:#ffebe9;color:#b3261e}
.b-error{background:#fff1c2;color:#7d4e00}
.b-regression{background:#b3261e;color:#fff}
.charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(460px,1fr));gap:16px;
 align-items:start}
figure{margin:0;border:1px solid #d8dee4;border-radius:6px;padding:10px 12px}
figcaption{font-weight:600;margin-bottom:6px}
svg.chart{display:block;height:auto}
svg .group{font-size:11px;text-anchor:end;fill:#1f2328}
svg .tick{font-size:10px;text-anchor:middle;fill:#57606a}
svg .value{font-size:10px;fill:#1f2328}
svg .value.fail{fill:#b3261e;font-weight:600}
svg .legend{font-size:11px;fill:#1f2328}
svg .grid{stroke:#d8dee4;stroke-width:1}
svg .band{fill:#f6f8fa}
pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#f6f8fa;border-radius:6px;
 padding:8px 10px;margin:4px 0;font-size:12px}
ul.plain{padding-left:20px;margin:4px 0}
.ok{color:#116329}
"""


def _badge(status: str) -> str:
    return f'<span class="badge b-{status}">{escape(_STATUS[status].lower())}</span>'


def _delta_span(metric: Metric, delta: RowDelta | None) -> str:
    """The Δ under a table value: only where it changed (or ``new`` on a new row's first)."""
    text = _delta(metric, delta)
    if text in ("", "·") or delta is None:
        return ""
    if text == "new":
        return '<span class="d">new</span>'
    value = delta.deltas[metric.key]
    worse = value < 0 if metric.higher_is_better else value > 0
    return f'<span class="d {"worse" if worse else "better"}">Δ {escape(text)}</span>'


def _html_summary(summaries: list[AgentSummary]) -> str:
    head = "".join(f"<th>{escape(m.label)}</th>" for m in METRICS)
    body = []
    for s in summaries:
        cells = [f'<td class="l">{escape(s.agent_type)}</td>',
                 f"<td>{s.passed}/{s.runs}"
                 + (f'<span class="sub">{s.failed} failed, {s.errors} errors</span>'
                    if s.failed or s.errors else "") + "</td>"]
        for m in METRICS:
            total = escape(_value(m, s.total[m.key]))
            sub = "" if m.kind == "ratio" else \
                f'<span class="sub">{escape(_mean(m, s.mean[m.key]))} / run</span>'
            cells.append(f"<td>{total}{sub}</td>")
        body.append(f"<tr>{''.join(cells)}</tr>")
    return (f'<div class="wrap"><table><thead><tr><th class="l">Agent type</th><th>Passed</th>'
            f"{head}</tr></thead><tbody>{''.join(body)}</tbody></table></div>")


def _html_rows(comparison: Comparison, diff: BaselineDiff | None) -> str:
    head = "".join(f"<th>{escape(m.label)}</th>" for m in METRICS)
    spans: dict[str, int] = {}
    for row in comparison.rows:
        spans[row.scenario] = spans.get(row.scenario, 0) + 1
    body, seen = [], set()
    for row in comparison.rows:
        delta = diff.for_row(row) if diff is not None else None
        cells = []
        if row.scenario not in seen:
            seen.add(row.scenario)
            cells.append(f'<td class="l scenario" rowspan="{spans[row.scenario]}">'
                         f"{escape(row.scenario)}</td>")
        result = _badge(row.status)
        if delta is not None and delta.regressed:
            result += ' <span class="badge b-regression">regression</span>'
        cells += [f'<td class="l"><a class="run-link" href="#{run_anchor(row)}">'
                  f'{escape(row.agent_type or "—")}</a></td>',
                  f'<td class="l result">{result}</td>']
        for m in METRICS:
            cells.append(f"<td>{escape(_value(m, row.metric(m.key)))}"
                         f"{_delta_span(m, delta)}</td>")
        body.append(f"<tr>{''.join(cells)}</tr>")
    return (f'<div class="wrap"><table><thead><tr><th class="l">Scenario</th>'
            f'<th class="l">Agent type</th><th class="l">Result</th>{head}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table></div>")


def _chart_bars(comparison: Comparison,
                make: Callable[[Row], Bar]) -> dict[tuple[str, str], Bar | str]:
    bars: dict[tuple[str, str], Bar | str] = {}
    for row in comparison.rows:
        targets = comparison.agent_types if row.agent_type is None else [row.agent_type]
        for name in targets:
            bars[(row.scenario, name)] = make(row) if row.has_metrics else "error"
    return bars


def _count_bar(key: str, label: str) -> Callable[[Row], Bar]:
    def make(row: Row) -> Bar:
        value = int(row.metric(key) or 0)
        return Bar([Segment(0, value)], count(value),
                   f"{row.key}: {count(value)} {label}",
                   failed=row.status == "fail")
    return make


def _token_bar(row: Row) -> Bar:
    prompt, completion = row.prompt_tokens or 0, row.completion_tokens or 0
    return Bar([Segment(0, prompt), Segment(prompt, prompt + completion, 0.45)],
               count(prompt + completion),
               f"{row.key}: {count(prompt)} tokens in, {count(completion)} tokens out",
               failed=row.status == "fail")


def _latency_bar(row: Row) -> Bar:
    wall, serial = row.wall_time or 0.0, row.serial_time or 0.0
    return Bar([Segment(0, serial, 0.3), Segment(0, wall)],
               f"{seconds(wall)} / {seconds(serial)}",
               f"{row.key}: wall {seconds(wall)}, serial {seconds(serial)}, "
               f"speedup {ratio(row.speedup or 1.0)}", failed=row.status == "fail")


def _figure(comparison: Comparison, title: str, make: Callable[[Row], Bar], *,
            groups: list[str] | None = None, notes: list[tuple[str, float]] | None = None,
            integral: bool = True, caption: str = "") -> str:
    groups = comparison.scenarios if groups is None else groups
    bars = {k: v for k, v in _chart_bars(comparison, make).items() if k[0] in groups}
    svg = grouped_bar_chart(title=title, groups=groups, series=comparison.agent_types,
                            bars=bars, integral=integral, notes=notes)
    note = f'<p class="note">{escape(caption)}</p>' if caption else ""
    return f"<figure><figcaption>{escape(title)}</figcaption>{svg}{note}</figure>"


def _html_charts(comparison: Comparison) -> str:
    """Count charts per scenario, tokens (in, out), and latency for the scenarios that have
    simulated time (wall drawn over serial)."""
    timed = [g for g in comparison.scenarios
             if any((r.serial_time or 0) > 0 for r in comparison.rows if r.scenario == g)]
    hidden = len(comparison.scenarios) - len(timed)
    caption = "Simulated seconds; wall below serial means calls overlapped."
    if timed and hidden:
        caption += f" {_plural(hidden, 'scenario')} without simulated latency not shown."
    figures = [
        _figure(comparison, CHART_TITLES[0], _count_bar("steps", "steps")),
        _figure(comparison, CHART_TITLES[1], _count_bar("llm_calls", "LLM calls")),
        _figure(comparison, CHART_TITLES[2], _count_bar("tool_calls", "tool calls")),
        _figure(comparison, CHART_TITLES[3], _count_bar("tool_errors", "tool errors")),
        _figure(comparison, CHART_TITLES[4], _token_bar,
                notes=[("solid: in", 1.0), ("light: out", 0.45)]),
        _figure(comparison, CHART_TITLES[5], _latency_bar, groups=timed or None,
                notes=[("solid: wall", 1.0), ("light: serial", 0.3)], integral=False,
                caption=caption),
    ]
    return f'<div class="charts">{"".join(figures)}</div>'


def _html_failures(comparison: Comparison, diff: BaselineDiff | None) -> str:
    if not comparison.failures:
        return '<p class="ok">None: every run passed.</p>'
    parts = []
    for row in comparison.failures:
        delta = diff.for_row(row) if diff is not None else None
        flag = (' <span class="badge b-regression">regression</span>'
                if delta is not None and delta.regressed else "")
        problems = "".join(f"<li><pre>{escape(p)}</pre></li>" for p in row.problems)
        parts.append(f'<h3><a class="run-link" href="#{run_anchor(row)}">{escape(row.key)}</a> '
                     f"{_badge(row.status)}{flag}</h3>"
                     f'<ul class="plain">{problems}</ul>')
    return "".join(parts)


def _link(key: str, row: Row | None) -> str:
    return (f'<a class="run-link" href="#{run_anchor(row)}">{escape(key)}</a>' if row is not None
            else escape(key))


def _html_baseline(diff: BaselineDiff) -> str:
    parts = [f'<p class="meta">{escape(_baseline_line(diff))}.</p>']
    if diff.regressions:
        items = "".join(f"<li>{_link(d.key, d.current)}<ul class=\"plain\">"
                        + "".join(f"<li>{escape(r)}</li>" for r in d.reasons) + "</ul></li>"
                        for d in diff.regressions)
        parts.append(f'<h3>Regressions</h3><ul class="plain">{items}</ul>')
    sections = [("Fixed", diff.fixed), ("New", diff.new), ("Removed", diff.removed)]
    for title, deltas in sections:
        if deltas:
            parts.append(f"<h3>{escape(title)}</h3><ul class=\"plain\">"
                         + "".join(f"<li>{_link(d.key, d.current)}</li>" for d in deltas)
                         + "</ul>")
    return "".join(parts)


def _html_snapshots(comparison: Comparison) -> list[str]:
    changed = _snapshot_changes(comparison)
    if not changed:
        return []
    items = "".join(f"<li>{_link(r.key, r)}: {escape(_snapshot_note(r))}</li>" for r in changed)
    return ["<h2>Snapshot changes</h2>",
            '<p class="note">Runs whose trace is not the committed snapshot; each run\'s section '
            "shows the diff (accept a change with pytest --snapshot-update).</p>",
            f'<ul class="plain">{items}</ul>']


def _html_diagrams(comparison: Comparison) -> list[str]:
    groups = _diagram_groups(comparison)
    if not groups:
        return []
    parts = ["<h2>Workflows</h2>", f'<p class="note">{escape(_DIAGRAM_NOTE)}</p>']
    for agent_types, diagram in groups:
        parts += [f"<p>Workflow of {escape(', '.join(agent_types))}:</p>",
                  f'<pre class="mermaid">{escape(diagram)}</pre>']
    return parts


def render_html(comparison: Comparison, baseline: Comparison | None = None) -> str:
    """One self-contained page: regressions against ``baseline``, summary, charts comparing
    the agent types, the scenario table (with Δ), failures, snapshot changes, then a section
    per run (timeline, steps, trace diffs) that the tables link to."""
    diff = _diff(comparison, baseline)
    meta = (f"agentkit {comparison.agentkit_version} · agent types: "
            f"{', '.join(comparison.agent_types) or 'none'} · {_counts(comparison)}")
    sections = [f"<h1>{escape(_TITLE)}</h1>", f'<p class="meta">{escape(meta)}</p>']
    if diff is not None:
        sections.append(f"<h2>Against the baseline</h2>{_html_baseline(diff)}")
    sections += [
        "<h2>Summary by agent type</h2>",
        '<p class="note">Totals over the runs of each agent type, the mean per run below; '
        "times are simulated seconds; speedup is total serial time over total wall time.</p>",
        _html_summary(comparison.summaries()),
        "<h2>Charts</h2>",
        '<p class="note">One group per scenario, one bar per agent type; ✗ marks a failed run. '
        "Hover a bar for its numbers.</p>",
        _html_charts(comparison),
        "<h2>Scenarios × agent types</h2>",
    ]
    if diff is not None:
        sections.append('<p class="note">Δ: current minus baseline, shown where a value changed; '
                        "red is more cost (or less speedup), green less.</p>")
    sections += [_html_rows(comparison, diff), *_html_diagrams(comparison), "<h2>Failures</h2>",
                 _html_failures(comparison, diff), *_html_snapshots(comparison),
                 "<h2>Runs</h2>",
                 '<p class="note">Each scenario × agent type: its costs, its calls on '
                 "simulated time, its steps, and how its trace differs from its snapshot and "
                 "the baseline. Hover a bar for its call.</p>",
                 html_runs(comparison, diff)]
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"<title>{escape(_TITLE)}</title>\n<style>{_CSS}{RUNS_CSS}</style>\n</head>\n<body>\n<main>\n"
            + "\n".join(sections) + "\n</main>\n</body>\n</html>\n")


# -- Files ----------------------------------------------------------------------------------

def write_report(comparison: Comparison, out_dir: str | Path,
                 baseline: Comparison | str | Path | None = None) -> dict[str, Path]:
    """Write report.md, report.json, report.html and each run's trace
    (``traces/<scenario>.<agent type>.json``, what a later ``--baseline`` diffs against) into
    ``out_dir``, all at once (:func:`agentkit.core.files.replace_folder`: never a new
    report.md beside an old report.json, even if the process is killed).

    ``out_dir`` is replaced whole, so it must be new, empty or a report's (it holds the
    :data:`REPORT_MARKER` file every report leaves): anything else, or the current folder or
    one holding it, is a :class:`ReportError` and nothing is written. A symlink is written
    through. ``baseline`` is a comparison or the path of a baseline ``report.json``. Returns
    the paths by format: ``{"markdown": ..., "json": ..., "html": ...}``.
    """
    if baseline is not None and not isinstance(baseline, Comparison):
        baseline = load_comparison(baseline)
    out = Path(out_dir)
    texts = {"markdown": render_markdown(comparison, baseline),
             "json": render_json(comparison, baseline),
             "html": render_html(comparison, baseline)}
    files = {REPORT_MARKER: _MARKER_TEXT}
    files.update({REPORT_FILES[kind]: text for kind, text in texts.items()})
    files.update({trace_file(row): json.dumps(row.trace, indent=2, ensure_ascii=False) + "\n"
                  for row in comparison.rows if row.trace is not None})
    try:
        written = replace_folder(out, files, marker=REPORT_MARKER)
    except FolderRefused as exc:
        raise ReportError(f"{out}: {exc}") from None
    return {kind: written[REPORT_FILES[kind]] for kind in texts}

