"""The report as one self-contained HTML page (``report.html``): inline CSS and inline SVG
charts only -- no scripts, no external assets -- in the wording of :mod:`._wording`, with a
section per run (:mod:`agentkit.report._runs`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from html import escape

from agentkit.core.fmt import count, ratio, seconds
from agentkit.eval._cases import percent
from agentkit.eval._stats import DEFAULT_CONFIDENCE, wilson_interval
from agentkit.report._baseline import BaselineDiff, RowDelta
from agentkit.report._charts import (
    Bar,
    Point,
    RateBar,
    Segment,
    grouped_bar_chart,
    pass_rate_chart,
    scatter_chart,
)
from agentkit.report._model import METRICS, AgentSummary, Comparison, Metric, Row, contender_label
from agentkit.report._resumed import html_continuations
from agentkit.report._runs import RUNS_CSS, html_sections, run_anchor
from agentkit.report._standings import SCENARIO_LINES, HeadToHead, head_to_head, mean_cost
from agentkit.report._suites import (
    AGENTDOJO,
    AGENTDOJO_HEADERS,
    AGENTDOJO_NOTE,
    agentdojo_cells,
    agentdojo_scores,
)
from agentkit.report._wording import (
    ATTENTION,
    ATTENTION_TITLES,
    BASELINE,
    BEST,
    BY_TAG,
    BY_TAG_NOTE,
    DIAGRAM_NOTE,
    FAILURES,
    NO_FAILURE,
    NOTHING,
    NOTHING_TO_COMPARE,
    PAIR_HEADERS,
    PAIRS,
    SNAPSHOTS,
    STATUS,
    SUMMARY,
    TABLE,
    TITLE,
    VERDICT,
    WORKFLOWS,
    attention,
    baseline_diff,
    baseline_line,
    delta_text,
    diagram_groups,
    h2h_cell,
    h2h_note,
    left_out_lines,
    mean_text,
    meta_line,
    pair_cells,
    pairs_note,
    plural,
    rate_text,
    sampled_columns,
    snapshot_changes,
    snapshot_note,
    summary_note,
    summary_rate,
    tag_cell,
    value_text,
    verdict,
)

__all__ = ["render_html", "html_page", "CHART_TITLES", "RATE_CHART_TITLES"]


CHART_TITLES = ("Steps", "LLM calls", "Tool calls", "Tool errors", "Tokens (in + out)",
                "Simulated latency (wall vs serial)")


RATE_CHART_TITLES = ("Pass rate per scenario", "Cost against pass rate")


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
svg .whisker{stroke:#1f2328;stroke-width:1.3}
svg .spread{stroke-width:2}
td.best{font-weight:600;background:#dafbe1}
.b-flaky,.b-disagree,.b-gate,.b-undecided{background:#fff1c2;color:#7d4e00}
.b-stable_fail{background:#ffebe9;color:#b3261e}
p.verdict{font-size:15px;margin:12px 0 0}
.b-infrastructure,.b-partial,.b-uncalibrated{background:#eef1f4;color:#57606a}
ul.attention li{margin:3px 0}
pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#f6f8fa;border-radius:6px;
 padding:8px 10px;margin:4px 0;font-size:12px}
ul.plain{padding-left:20px;margin:4px 0}
.ok{color:#116329}
"""


def _badge(status: str) -> str:
    return f'<span class="badge b-{status}">{escape(STATUS[status].lower())}</span>'


def _delta_span(metric: Metric, delta: RowDelta | None) -> str:
    """The Δ under a table value: only where it changed (or ``new`` on a new row's first)."""
    text = delta_text(metric, delta)
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
        cells = [f'<td class="l">{escape(contender_label(s.contender))}</td>',
                 f"<td>{s.passed}/{s.runs}"
                 + (f'<span class="sub">{s.failed} failed, {s.errors} errors'
                    + (f", {s.undecided} undecided" if s.undecided else "") + "</span>"
                    if s.failed or s.errors or s.undecided else "") + "</td>",
                 f"<td>{escape(summary_rate(s))}</td>"]
        for m in METRICS:
            total = escape(value_text(m, s.total[m.key]))
            sub = "" if m.kind == "ratio" else \
                f'<span class="sub">{escape(mean_text(m, s.mean[m.key]))} / run</span>'
            cells.append(f"<td>{total}{sub}</td>")
        body.append(f"<tr>{''.join(cells)}</tr>")
    return (f'<div class="wrap"><table><thead><tr><th class="l">Agent type</th><th>Passed</th>'
            f"<th>Pass rate</th>{head}</tr></thead><tbody>{''.join(body)}</tbody></table></div>")


def _html_rows(comparison: Comparison, diff: BaselineDiff | None) -> Iterator[str]:
    """The scenario × agent type table, a row at a time."""
    sampled = sampled_columns(comparison)
    head = "".join(f"<th>{escape(m.label)}</th>" for m in METRICS)
    extra = "<th>Pass rate</th><th class=\"l\">Class</th>" if sampled else ""
    yield (f'<div class="wrap"><table><thead><tr><th class="l">Scenario</th>'
           f'<th class="l">Agent type</th><th class="l">Result</th>{extra}{head}</tr></thead>'
           "<tbody>")
    spans: dict[str, int] = {}
    for row in comparison.rows:
        spans[row.scenario] = spans.get(row.scenario, 0) + 1
    seen: set[str] = set()
    for row in comparison.rows:
        delta = diff.for_row(row) if diff is not None else None
        cells = []
        if row.scenario not in seen:
            seen.add(row.scenario)
            cells.append(f'<td class="l scenario" rowspan="{spans[row.scenario]}">'
                         f"{escape(row.scenario)}</td>")
        result = _badge(row.result)
        if delta is not None and delta.regressed:
            result += ' <span class="badge b-regression">regression</span>'
        name = contender_label(row.contender) if row.agent_type is not None else "—"
        cells += [f'<td class="l"><a class="run-link" href="#{run_anchor(row)}">'
                  f'{escape(name)}</a></td>',
                  f'<td class="l result">{result}</td>']
        if sampled:
            cells += [f"<td>{escape(rate_text(row))}</td>",
                      f'<td class="l">{escape(row.class_ or "—")}</td>']
        for m in METRICS:
            cells.append(f"<td>{escape(value_text(m, row.metric(m.key)))}"
                         f"{_delta_span(m, delta)}</td>")
        yield f"<tr>{''.join(cells)}</tr>"
    yield "</tbody></table></div>"


def _charted(comparison: Comparison) -> list[str]:
    """The scenarios several agent types (× models) ran: the only ones charted, so that no
    chart has empty slots."""
    runs: dict[str, int] = {}
    for row in comparison.rows:
        if row.agent_type is not None:
            runs[row.scenario] = runs.get(row.scenario, 0) + 1
    return [s for s in comparison.scenarios if runs.get(s, 0) > 1]


def _series(comparison: Comparison) -> list[str]:
    return [contender_label(c) for c in comparison.contenders]


def _chart_bars(comparison: Comparison,
                make: Callable[[Row], Bar]) -> dict[tuple[str, str], Bar | str]:
    return {(row.scenario, contender_label(row.contender)):
            make(row) if row.has_metrics else "error"
            for row in comparison.rows if row.agent_type is not None}


def _count_bar(key: str, label: str) -> Callable[[Row], Bar]:
    def make(row: Row) -> Bar:
        value = row.metric(key) or 0
        text = value_text(METRICS[[m.key for m in METRICS].index(key)], value)
        return Bar([Segment(0, value)], text, f"{row.key}: {text} {label}",
                   failed=row.status == "fail")
    return make


def _token_bar(row: Row) -> Bar:
    prompt, completion = row.prompt_tokens or 0, row.completion_tokens or 0
    total = prompt + completion
    shown = count(int(total)) if float(total).is_integer() else f"{total:,.1f}"
    return Bar([Segment(0, prompt), Segment(prompt, prompt + completion, 0.45)], shown,
               f"{row.key}: {prompt:,.0f} tokens in, {completion:,.0f} tokens out",
               failed=row.status == "fail")


def _latency_bar(row: Row) -> Bar:
    wall, serial = row.wall_time or 0.0, row.serial_time or 0.0
    return Bar([Segment(0, serial, 0.3), Segment(0, wall)],
               f"{seconds(wall)} / {seconds(serial)}",
               f"{row.key}: wall {seconds(wall)}, serial {seconds(serial)}, "
               f"speedup {ratio(row.speedup or 1.0)}", failed=row.status == "fail")


def _figure(comparison: Comparison, title: str, make: Callable[[Row], Bar], *,
            groups: list[str], notes: list[tuple[str, float]] | None = None,
            integral: bool = True, caption: str = "") -> str:
    """One chart, or nothing when every one of its bars is zero (it would show nothing)."""
    charted = set(groups)
    bars = {k: v for k, v in _chart_bars(comparison, make).items() if k[0] in charted}
    if not any(segment.end > segment.start for bar in bars.values() if isinstance(bar, Bar)
               for segment in bar.segments):
        return ""
    svg = grouped_bar_chart(title=title, groups=groups, series=_series(comparison),
                            bars=bars, integral=integral, notes=notes)
    note = f'<p class="note">{escape(caption)}</p>' if caption else ""
    return f"<figure><figcaption>{escape(title)}</figcaption>{svg}{note}</figure>"


def _rate_bar(row: Row) -> RateBar | str:
    if not row.judged_runs:
        return "error"
    rate = row.passed_runs / row.judged_runs
    if not row.sampled:  # a fact: no interval
        return RateBar(rate, rate, rate, STATUS[row.result],
                       f"{row.key}: {STATUS[row.result]} (one run, no samples)")
    confidence = row.confidence or DEFAULT_CONFIDENCE
    low, high = row.interval or wilson_interval(row.passed_runs, row.judged_runs, confidence)
    label = f"{percent(rate)} ({row.passed_runs}/{row.judged_runs})"
    return RateBar(rate, low, high, label,
                   f"{row.key}: pass rate {label}, {percent(confidence)} interval "
                   f"{low * 100:.0f}-{high * 100:.0f}%")


def _rate_figures(comparison: Comparison, groups: list[str], table: HeadToHead) -> list[str]:
    """The pass rate per charted scenario with its interval, and cost against pass rate."""
    figures = []
    if groups:
        charted = set(groups)
        bars = {(row.scenario, contender_label(row.contender)): _rate_bar(row)
                for row in comparison.rows if row.agent_type is not None
                and row.scenario in charted}
        svg = pass_rate_chart(title=RATE_CHART_TITLES[0], groups=groups,
                              series=_series(comparison), bars=bars)
        figures.append(f"<figure><figcaption>{RATE_CHART_TITLES[0]}</figcaption>{svg}"
                       '<p class="note">Bar: the pass rate of a sampled case\'s samples, '
                       "whiskers: its Wilson interval; a run without samples is a fact, pass "
                       "(100%) or FAIL (0%), with no interval.</p></figure>")
    pooled = next((line for line in table.lines if line.label.startswith("All ")), None)
    if pooled is not None:
        points = {}
        for contender in table.contenders:
            rate = pooled.values[contender]
            rows = [comparison.row(s, *contender) for s in table.scenarios]
            ran = [row for row in rows if row is not None and row.has_metrics]
            if rate.value is None or len(ran) < len(rows):
                continue
            cost = mean_cost(ran, "tokens").value or 0.0
            name = contender_label(contender)
            points[name] = Point(cost, rate.value, *(rate.interval or (rate.value, rate.value)),
                                 f"{name}: {cost:,.0f} tokens per run, pass rate "
                                 f"{percent(rate.value)} ({rate.passes}/{rate.judged})")
        svg = scatter_chart(title=RATE_CHART_TITLES[1], x_label="tokens per run (mean)",
                            series=[contender_label(c) for c in table.contenders],
                            points=points)
        figures.append(f"<figure><figcaption>{RATE_CHART_TITLES[1]}</figcaption>{svg}"
                       f'<p class="note">Over the {plural(len(table.scenarios), "scenario")} '
                       "every compared agent type ran, the mean over all their runs (failed "
                       "ones too: the pass rate beside it counts them): up and to the left is "
                       "better; the whisker is the pass rate's interval.</p></figure>")
    return figures


def _html_charts(comparison: Comparison, table: HeadToHead) -> str:
    """Pass rates with their intervals, cost against pass rate, then count charts, tokens
    (in, out) and latency (wall drawn over serial) -- for the scenarios several agent types
    ran."""
    groups = _charted(comparison)
    summarized = ""
    if table.summarized:  # a chart of every scenario would be unreadable at this size
        shown = set(table.differ[:SCENARIO_LINES])
        summarized = (f'<p class="note">Charted per scenario: only the '
                      f"{plural(len(shown), 'scenario')} of {escape(BEST)} where the agent "
                      f"types' results differ (of {plural(len(groups), 'scenario')} several "
                      "ran).</p>")
        groups = [g for g in groups if g in shown]
    with_latency = {r.scenario for r in comparison.rows if (r.serial_time or 0) > 0}
    timed = [g for g in groups if g in with_latency]
    caption = "Simulated seconds; wall below serial means calls overlapped."
    if timed and len(groups) - len(timed):
        caption += (f" {plural(len(groups) - len(timed), 'scenario')} without simulated "
                    "latency not shown.")
    figures = _rate_figures(comparison, groups, table)
    if groups:
        figures += [
            _figure(comparison, CHART_TITLES[0], _count_bar("steps", "steps"), groups=groups),
            _figure(comparison, CHART_TITLES[1], _count_bar("llm_calls", "LLM calls"),
                    groups=groups),
            _figure(comparison, CHART_TITLES[2], _count_bar("tool_calls", "tool calls"),
                    groups=groups),
            _figure(comparison, CHART_TITLES[3], _count_bar("tool_errors", "tool errors"),
                    groups=groups),
            _figure(comparison, CHART_TITLES[4], _token_bar, groups=groups,
                    notes=[("solid: in", 1.0), ("light: out", 0.45)]),
            _figure(comparison, CHART_TITLES[5], _latency_bar, groups=timed or groups,
                    notes=[("solid: wall", 1.0), ("light: serial", 0.3)], integral=False,
                    caption=caption),
        ]
    alone = len(comparison.scenarios) - len(_charted(comparison))
    note = (f'<p class="note">{plural(alone, "scenario")} run by one agent type only '
            f"{'is' if alone == 1 else 'are'} in the table below, not charted.</p>"
            if alone else "")
    return summarized + note + f'<div class="charts">{"".join(figures)}</div>'


def _html_attention(comparison: Comparison, diff: BaselineDiff | None) -> str:
    items = attention(comparison, diff)
    if not items:
        return f'<p class="ok">{escape(NOTHING)}</p>'
    lines = "".join(f'<li><span class="badge b-{kind}">{escape(ATTENTION_TITLES[kind])}'
                    f"</span> {_link(key, row)}: {escape(why)}</li>"
                    for kind, key, row, why in items)
    return f'<ul class="plain attention">{lines}</ul>'


def _html_pairs(table: HeadToHead) -> list[str]:
    if not table.pairs:
        return []
    head = "".join(f'<th class="l">{escape(h)}</th>' if i in (0, 3) else f"<th>{escape(h)}</th>"
                   for i, h in enumerate(PAIR_HEADERS))
    body = "".join("<tr>" + "".join(
        f'<td class="l">{escape(cell)}</td>' if i in (0, 3) else f"<td>{escape(cell)}</td>"
        for i, cell in enumerate(pair_cells(pair))) + "</tr>" for pair in table.pairs)
    return [f"<h2>{escape(PAIRS)}</h2>", f'<p class="note">{escape(pairs_note())}</p>',
            f'<div class="wrap"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody>'
            "</table></div>"]


def _html_by_tag(comparison: Comparison) -> list[str]:
    groups = comparison.by_tag()
    if not groups:
        return []
    contenders = comparison.contenders
    head = "".join(f"<th>{escape(contender_label(c))}</th>" for c in contenders)
    rows = []
    for tag, counts in groups:
        cells = []
        for contender in contenders:
            count = counts.get(contender)
            failing = count is not None and count[0] < count[1]
            text = escape(tag_cell(count).strip("*"))
            cells.append(f'<td class="b-fail">{text}</td>' if failing else f"<td>{text}</td>")
        rows.append(f'<tr><td class="l">{escape(tag)}</td>{"".join(cells)}</tr>')
    return [f"<h2>{escape(BY_TAG)}</h2>", f'<p class="note">{escape(BY_TAG_NOTE)}</p>'
            f'<div class="wrap"><table><thead><tr><th class="l">Tag</th>{head}</tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table></div>']


def _html_agentdojo(comparison: Comparison) -> list[str]:
    found = agentdojo_scores(comparison)
    if not found:
        return []
    head = "".join(f"<th>{escape(h)}</th>" for h in AGENTDOJO_HEADERS[1:])
    rows = "".join(f'<tr><td class="l">{escape(cells[0])}</td>'
                   + "".join(f"<td>{escape(c)}</td>" for c in cells[1:]) + "</tr>"
                   for cells in (agentdojo_cells(c, s) for c, s in found))
    return [f"<h2>{escape(AGENTDOJO)}</h2>", f'<p class="note">{escape(AGENTDOJO_NOTE)}</p>'
            f'<div class="wrap"><table><thead><tr><th class="l">{AGENTDOJO_HEADERS[0]}</th>'
            f"{head}</tr></thead><tbody>{rows}</tbody></table></div>"]


def _html_head_to_head(table: HeadToHead) -> str:
    if not table.contenders or not table.scenarios:
        return f'<p class="note">{escape(NOTHING_TO_COMPARE)}</p>'
    head = "".join(f"<th>{escape(contender_label(c))}</th>" for c in table.contenders)
    body = []
    for line in table.lines:
        cells = "".join(
            f'<td class="best">{escape(h2h_cell(line, c))}</td>' if c in line.best
            else f"<td>{escape(h2h_cell(line, c))}</td>" for c in table.contenders)
        body.append(f'<tr><td class="l">{escape(line.label)}</td>{cells}</tr>')
    left = "".join(f'<p class="note">{escape(text)}</p>' for text in left_out_lines(table))
    return (f'<p class="note">{escape(h2h_note(table))}</p><div class="wrap"><table><thead>'
            f'<tr><th class="l"></th>{head}</tr></thead><tbody>{"".join(body)}</tbody>'
            f"</table></div>{left}")


def _html_failures(comparison: Comparison, diff: BaselineDiff | None) -> str:
    if not comparison.failures:
        return f'<p class="ok">{escape(NO_FAILURE)}</p>'
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
    parts = [f'<p class="meta">{escape(baseline_line(diff))}.</p>']
    if diff.regressions:
        parts.append(f'<p class="note">The regressions are listed under {escape(ATTENTION)}.'
                     "</p>")
    sections = [("Fixed", diff.fixed), ("New", diff.new), ("Removed", diff.removed)]
    for title, deltas in sections:
        if deltas:
            parts.append(f"<h3>{escape(title)}</h3><ul class=\"plain\">"
                         + "".join(f"<li>{_link(d.key, d.current)}</li>" for d in deltas)
                         + "</ul>")
    return "".join(parts)


def _html_snapshots(comparison: Comparison) -> list[str]:
    changed = snapshot_changes(comparison)
    if not changed:
        return []
    items = "".join(f"<li>{_link(r.key, r)}: {escape(snapshot_note(r))}</li>" for r in changed)
    return [f"<h2>{escape(SNAPSHOTS)}</h2>",
            '<p class="note">Runs whose trace is not the committed snapshot; each run\'s section '
            "shows the diff (accept a change with pytest --snapshot-update).</p>",
            f'<ul class="plain">{items}</ul>']


def _html_diagrams(comparison: Comparison) -> list[str]:
    groups = diagram_groups(comparison)
    if not groups:
        return []
    parts = [f"<h2>{escape(WORKFLOWS)}</h2>", f'<p class="note">{escape(DIAGRAM_NOTE)}</p>']
    for agent_types, diagram in groups:
        parts += [f"<p>Workflow of {escape(', '.join(agent_types))}:</p>",
                  f'<pre class="mermaid">{escape(diagram)}</pre>']
    return parts


def render_html(comparison: Comparison, baseline: Comparison | None = None) -> str:
    """One self-contained page: what needs attention (regressions against ``baseline``,
    flaky cases, infrastructure errors), which agent type is best, the summary, charts
    comparing the agent types (pass rates with intervals, cost against pass rate, costs), the
    scenario table (with Δ), failures, snapshot changes, then a section per run (timeline,
    steps, trace diffs) that the tables link to."""
    return "".join(html_page(comparison, baseline))


def html_page(comparison: Comparison, baseline: Comparison | None = None, *,
              table: HeadToHead | None = None) -> Iterator[str]:
    """:func:`render_html`'s page in pieces, a run's section at a time (what a large report
    writes to its file as it goes instead of holding the page whole); ``table``: the
    comparison's head-to-head table if already built (a report builds it once)."""
    diff = baseline_diff(comparison, baseline)
    table = table or head_to_head(comparison)
    sections: list[str | Iterator[str]] = [
        f"<h1>{escape(TITLE)}</h1>", f'<p class="meta">{escape(meta_line(comparison))}</p>',
                f'<p class="verdict"><strong>{escape(VERDICT)}:</strong> '
                f"{escape(verdict(table))}</p>",
                f"<h2>{escape(ATTENTION)}</h2>", _html_attention(comparison, diff)]
    if diff is not None:
        sections.append(f"<h2>{escape(BASELINE)}</h2>{_html_baseline(diff)}")
    sections += [
        *_html_by_tag(comparison),
        *_html_agentdojo(comparison),
        f"<h2>{escape(BEST)}</h2>", _html_head_to_head(table),
        *_html_pairs(table),
        f"<h2>{escape(SUMMARY)}</h2>",
        f'<p class="note">{escape(summary_note(table))}</p>',
        _html_summary(comparison.summaries()),
        "<h2>Charts</h2>",
        '<p class="note">One group per scenario several agent types ran, one bar per agent '
        "type that ran it; ✗ marks a failed run. Hover a bar for its numbers.</p>",
        _html_charts(comparison, table),
        f"<h2>{escape(TABLE)}</h2>",
    ]
    if diff is not None:
        sections.append('<p class="note">Δ: current minus baseline, shown where a value changed; '
                        "red is more cost (or less speedup), green less.</p>")
    sections += [_html_rows(comparison, diff), *_html_diagrams(comparison),
                 *html_continuations(comparison), f"<h2>{escape(FAILURES)}</h2>",
                 _html_failures(comparison, diff), *_html_snapshots(comparison),
                 "<h2>Runs</h2>",
                 '<p class="note">Each scenario × agent type: its costs, its calls on '
                 "simulated time, its steps, and how its trace differs from its snapshot and "
                 "the baseline. Hover a bar for its call.</p>"]
    yield ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
           '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
           f"<title>{escape(TITLE)}</title>\n<style>{_CSS}{RUNS_CSS}</style>\n</head>\n<body>\n<main>\n")
    for index, section in enumerate(sections):  # a table of every row is made a row at a time
        if index:
            yield "\n"
        if isinstance(section, str):
            yield section
        else:
            yield from section
    yield "\n"
    yield from html_sections(comparison, diff)
    yield "\n</main>\n</body>\n</html>\n"
