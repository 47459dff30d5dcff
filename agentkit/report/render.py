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
from agentkit.eval.cases import percent
from agentkit.eval.stats import DEFAULT_CONFIDENCE, wilson_interval
from agentkit.report.baseline import BaselineDiff, RowDelta, compare_to_baseline
from agentkit.report.charts import (
    Bar,
    Point,
    RateBar,
    Segment,
    grouped_bar_chart,
    pass_rate_chart,
    scatter_chart,
)
from agentkit.report.model import (
    METRICS,
    SHARD_FILE,
    AgentSummary,
    Comparison,
    Contender,
    JudgeVerdict,
    Metric,
    ReportError,
    Row,
    contender_label,
    load_comparison,
    shard_details,
    trace_file,
)
from agentkit.report.resumed import html_continuations, markdown_continuations
from agentkit.report.runs import RUNS_CSS, html_runs, role_costs, run_anchor
from agentkit.report.standings import HeadToHead, Line, head_to_head

__all__ = ["render_markdown", "render_json", "render_html", "render_summary", "write_report",
           "REPORT_FILES", "REPORT_MARKER", "CHART_TITLES", "RATE_CHART_TITLES"]

REPORT_FILES = {"markdown": "report.md", "json": "report.json", "html": "report.html",
                "summary": "summary.md"}
#: The file that marks a folder as a report's: only such a folder (or an empty or missing one)
#: is replaced by the next report, so a user's folder given by mistake is never emptied.
REPORT_MARKER = ".agentkit-report"
_MARKER_TEXT = ("This folder is an agentkit report. `agentkit report --out` replaces it whole; "
                "without this file it refuses to.\n")
CHART_TITLES = ("Steps", "LLM calls", "Tool calls", "Tool errors", "Tokens (in + out)",
                "Simulated latency (wall vs serial)")
RATE_CHART_TITLES = ("Pass rate per scenario", "Cost against pass rate")
_TITLE = "Agent comparison report"
_STATUS = {"pass": "pass", "fail": "FAIL", "error": "ERROR"}


def _diff(comparison: Comparison, baseline: Comparison | None) -> BaselineDiff | None:
    return None if baseline is None else compare_to_baseline(comparison, baseline)


def _value(metric: Metric, value: float | None) -> str:
    if value is None:
        return "—"
    if metric.kind == "count":
        return count(int(value)) if float(value).is_integer() else f"{value:,.1f}"
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
            f"{passed} passed, {failed} failed, {_plural(errors, 'error')}"
            + (f"; incomplete: {_incomplete(comparison)}" if _incomplete(comparison) else ""))


def _incomplete(comparison: Comparison) -> str:
    """The samples with no result (infrastructure errors, not recorded), in words; empty when
    every sample has one."""
    infra = sum(row.infra_errors or 0 for row in comparison.rows)
    missing = sum(row.not_recorded or 0 for row in comparison.rows)
    parts = ([f"{_plural(infra, 'sample')} hit infrastructure errors"] if infra else []) + (
        [f"{_plural(missing, 'sample')} not recorded"] if missing else [])
    return ", ".join(parts)


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


# -- What needs attention, which is best ---------------------------------------------------

def _rate_text(row: Row) -> str:
    """A sampled row's pass rate in one cell: ``60% (6/10; 31-83%)``."""
    if row.pass_rate is None or row.interval is None:
        return "—" if not row.sampled else "no rate"
    low, high = row.interval
    return (f"{percent(row.pass_rate)} ({row.passes}/{row.judged_runs}; "
            f"{low * 100:.0f}-{high * 100:.0f}%)")


def _attention(comparison: Comparison,
               diff: BaselineDiff | None) -> list[tuple[str, str, Row | None, str]]:
    """What to look at first: regressions, flaky cases, infrastructure errors, samples not
    recorded -- (kind, key, row, why) each."""
    items: list[tuple[str, str, Row | None, str]] = []
    for delta in diff.regressions if diff is not None else []:
        items += [("regression", delta.key, delta.current, reason) for reason in delta.reasons]
    for row in comparison.rows:
        if row.class_ == "flaky":
            items.append(("flaky", row.key, row, f"pass rate {_rate_text(row)}"))
    for row in comparison.rows:
        if row.infra_errors:
            what = (f"{row.infra_errors} of {row.samples} samples hit infrastructure errors "
                    "(timeouts, 5xx, rate limits); they are not counted as failures")
            items.append(("infrastructure", row.key, row, what))
    items += [("gate", row.key, row, row.gate_warning)
              for row in comparison.rows if row.gate_warning is not None]
    for row in comparison.rows:
        if row.not_recorded:
            items.append(("partial", row.key, row, f"{row.not_recorded} samples not recorded: "
                                                  "the result is partial"))
    items += [("disagree", row.key, row, disagreement.describe())
              for row in comparison.rows for disagreement in row.disagreements]
    return items


_ATTENTION_TITLES = {"regression": "Regression", "flaky": "Flaky",
                     "infrastructure": "Infrastructure errors", "partial": "Partial",
                     "gate": "A gate that cannot fail",
                     "disagree": "Judges disagree between samples"}
_NOTHING = "Nothing: no regression, no flaky case, no infrastructure error."


def _h2h_note(table: HeadToHead) -> str:
    return (f"Pass rates on the {_plural(len(table.scenarios), 'scenario')} every compared "
            "agent type ran, then the mean cost per run there. ★ marks the best value of each "
            "line and every value tied with it: for pass rates, not lower beyond noise "
            f"(Fisher's exact test, one-sided, at {percent(table.confidence)}); for costs, "
            "within the margin of the two means' standard errors. Several ★ in a line are a "
            "tie. A pass rate reads `rate (passes/runs; interval)`.")


def _h2h_cell(line: Line, contender: Contender) -> str:
    value = line.values[contender]
    text = value.text(line.kind)
    return f"★ {text}" if contender in line.best else text


def _left_out_lines(table: HeadToHead) -> list[str]:
    return [f"{contender_label(c)} is left out: it {reason}." for c, reason in table.left_out]


# -- Markdown -------------------------------------------------------------------------------

def _md_attention(comparison: Comparison, diff: BaselineDiff | None) -> list[str]:
    items = _attention(comparison, diff)
    lines = ["## Needs attention", ""]
    if not items:
        return [*lines, _NOTHING, ""]
    lines += [f"- **{_ATTENTION_TITLES[kind]}** `{key}`: {_md_text(why)}"
              for kind, key, _, why in items]
    return [*lines, ""]


def _md_head_to_head(table: HeadToHead) -> list[str]:
    lines = ["## Which is best", ""]
    if not table.contenders or not table.scenarios:
        return [*lines, "No scenario was run by more than one agent type: nothing to compare.",
                ""]
    headers = ["", *(contender_label(c) for c in table.contenders)]
    body = [[line.label, *(_h2h_cell(line, c) for c in table.contenders)]
            for line in table.lines]
    lines += [_h2h_note(table), "",
              tabulate(body, headers, tablefmt="github", disable_numparse=True,
                       colalign=("left", *("right" for _ in table.contenders))), ""]
    return [*lines, *_left_out_lines(table), *([""] if table.left_out else [])]



def _fence(text: str) -> str:
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}\n{text}\n{fence}"


def _md_text(text: str) -> str:
    """One line of plain text, with the characters Markdown would interpret escaped."""
    return re.sub(r"([\\`*_\[\]<>#|~])", r"\\\1", " ".join(text.split()))


def _summary_rate(summary: AgentSummary) -> str:
    if summary.pass_rate is None:
        return "—"
    return f"{percent(summary.pass_rate)} ({summary.passes}/{summary.judged})"


def _md_summary(summaries: list[AgentSummary]) -> str:
    headers = ["Agent type", "Passed", "Pass rate", *(m.label for m in METRICS)]
    table = []
    for s in summaries:
        cells = [contender_label(s.contender), f"{s.passed}/{s.runs}", _summary_rate(s)]
        for m in METRICS:
            total = _value(m, s.total[m.key])
            cells.append(total if m.kind == "ratio" else f"{total} ({_mean(m, s.mean[m.key])})")
        table.append(cells)
    return tabulate(table, headers, tablefmt="github", disable_numparse=True,
                    colalign=("left", "right", "right", *("right" for _ in METRICS)))


def _sampled_columns(comparison: Comparison) -> bool:
    return any(row.sampled for row in comparison.rows)


def _md_rows(comparison: Comparison, diff: BaselineDiff | None) -> str:
    sampled = _sampled_columns(comparison)
    headers = ["Scenario", "Agent type", *(["Model"] if comparison.models else []), "Result",
               *(["Pass rate", "Class"] if sampled else [])]
    for m in METRICS:
        headers += [m.label, f"Δ {m.short}"] if diff is not None else [m.label]
    table = []
    for row in comparison.rows:
        delta = diff.for_row(row) if diff is not None else None
        cells = [row.scenario, row.agent_type or "—",
                 *([row.model or "—"] if comparison.models else []), _STATUS[row.status]]
        if sampled:
            cells += [_rate_text(row), row.class_ or "—"]
        for m in METRICS:
            cells.append(_value(m, row.metric(m.key)))
            if diff is not None:
                cells.append(_delta(m, delta))
        table.append(cells)
    lead = 3 + bool(comparison.models)
    colalign = (("left",) * lead + (("right", "left") if sampled else ())
                + tuple("right" for _ in headers[lead + 2 * sampled:]))
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


def _judged_verdict(verdict: JudgeVerdict, row: Row | None = None) -> str:
    """``pass``, ``fail (split, 3 votes)``, ``pass (samples disagree)``: a split is one run's
    judges voting apart, a disagreement the samples of a case judged apart."""
    text = verdict.verdict + (f" (split, {verdict.votes} votes)" if verdict.split else "")
    if row is not None and any(d.at == verdict.at for d in row.disagreements):
        text += " (samples disagree)"
    return text


def _judged_run(row: Row, verdict: JudgeVerdict) -> str:
    return f"`{row.key}`" + (f" sample {verdict.sample}" if verdict.sample is not None else "")


_DISAGREE_NOTE = ("The verdict on these judged expectations differs between the samples of one "
                  "case (the judges of one run voting apart are marked `split` instead): each "
                  "sample's verdict and reason.")


def _md_disagreements(rows: list[Row]) -> list[str]:
    lines: list[str] = []
    for row in rows:
        for found in row.disagreements:
            lines.append(f"- `{row.key}` `{found.at}` ({_md_text(found.rubric)}):")
            lines += [f"  - sample {s.sample}: {s.verdict}"
                      + (f" -- {_md_text(s.reason)}" if s.reason else "") for s in found.samples]
    return ["### Judge disagreements between samples", "", _DISAGREE_NOTE, "", *lines, ""] \
        if lines else []


def _md_judged(comparison: Comparison) -> list[str]:
    rows = [row for row in comparison.rows if row.judged or row.roles]
    if not rows:
        return []
    table = [[_judged_run(row, verdict), f"`{verdict.at}`", _md_text(verdict.rubric),
              _judged_verdict(verdict, row), _md_text(verdict.reason)]
             for row in rows for verdict in row.judged]
    lines = ["## Judged expectations", "",
             "What the LLM judges decided on each judged expectation, and why. The calls of the "
             "judges and of simulated users are counted apart from the agent's (not in the "
             "tables above).", ""]
    if table:
        lines += [tabulate(table, ["run", "expectation", "rubric", "verdict", "reason"],
                           tablefmt="github", disable_numparse=True), ""]
    lines += [f"- `{row.key}`: {role_costs(row)}" for row in rows if row.roles]
    return [*lines, "", *_md_disagreements(rows)]


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


def _meta(comparison: Comparison) -> str:
    models = f" · models: {', '.join(comparison.models)}" if comparison.models else ""
    return (f"agentkit {comparison.agentkit_version} · agent types: "
            f"{', '.join(comparison.agent_types) or 'none'}{models} · {_counts(comparison)}")


def _summary_note(table: HeadToHead) -> str:
    return (f"Over the {_plural(len(table.scenarios), 'scenario')} every compared agent type "
            "ran (the same ones for each, so the numbers compare): passed runs, the pass rate "
            "of all their runs and samples, metric totals and the mean per run; speedup is "
            "total serial time over total wall time (simulated seconds).")


def render_markdown(comparison: Comparison, baseline: Comparison | None = None) -> str:
    """What needs attention (regressions against ``baseline``, flaky cases, infrastructure
    errors), which agent type is best (the head-to-head table), the summary over the same
    scenarios, the scenario × agent type table (with Δ columns against ``baseline``), the
    workflows, resumed runs beside the recorded ones, the failures with their problems, the
    regressions in full, then the snapshot changes."""
    diff = _diff(comparison, baseline)
    table = head_to_head(comparison)
    lines = [f"# {_TITLE}", "", _meta(comparison), ""]
    if diff is not None:
        lines += [f"Against the baseline: {_baseline_line(diff)}.", ""]
    lines += _md_attention(comparison, diff)
    lines += _md_head_to_head(table)
    lines += ["## Summary by agent type", "", _summary_note(table), "",
              _md_summary(comparison.summaries()), "",
              "## Scenarios × agent types", ""]
    if diff is not None:
        lines += ["Δ: current minus baseline (· unchanged, `new`: not in the baseline).", ""]
    if _sampled_columns(comparison):
        lines += ["A sampled case's metrics are the means over its samples; its pass rate "
                  "reads `rate (passes/samples; interval)`.", ""]
    lines += [_md_rows(comparison, diff), ""]
    lines += _md_diagrams(comparison)
    lines += markdown_continuations(comparison)
    lines += _md_judged(comparison)
    lines += _md_failures(comparison)
    if diff is not None:
        lines += _md_baseline(diff)
    lines += _md_snapshots(comparison)
    return "\n".join(lines).rstrip("\n") + "\n"


def render_summary(comparison: Comparison, baseline: Comparison | None = None) -> str:
    """A short Markdown summary for a pull-request comment: the verdict, what needs
    attention, which agent type is best, and the failures folded away."""
    diff = _diff(comparison, baseline)
    table = head_to_head(comparison)
    regressions = diff.regressions if diff is not None else []
    ok = comparison.passed and not regressions
    verdict = ("❌ failed" if not ok else "⚠️ incomplete" if _incomplete(comparison)
               else "✅ passed")
    lines = [f"### agentkit: {verdict}", "", _counts(comparison)
             + (f"; against the baseline: {_baseline_line(diff)}" if diff is not None else ""),
             ""]
    items = _attention(comparison, diff)
    if items:
        lines += ["**Needs attention**", "",
                  *(f"- {_ATTENTION_TITLES[kind]} `{key}`: {_md_text(why)}"
                    for kind, key, _, why in items), ""]
    if table.contenders and table.scenarios and len(table.contenders) > 1:
        lines += ["**Which is best** (★: best, several ★: a tie within noise)", "",
                  tabulate([[line.label, *(_h2h_cell(line, c) for c in table.contenders)]
                            for line in table.lines],
                           ["", *(contender_label(c) for c in table.contenders)],
                           tablefmt="github", disable_numparse=True), ""]
    if comparison.failures:
        lines += [f"<details><summary>{_plural(len(comparison.failures), 'failure')}"
                  "</summary>", ""]
        for row in comparison.failures:
            first = row.problems[0].splitlines()[0] if row.problems else ""
            lines.append(f"- `{row.key}` {_STATUS[row.status]}: {_md_text(first)}")
        lines += ["", "</details>", ""]
    return "\n".join(lines).rstrip("\n") + "\n"


# -- JSON -----------------------------------------------------------------------------------

def render_json(comparison: Comparison, baseline: Comparison | None = None) -> str:
    """:meth:`Comparison.to_dict`, the head-to-head table, and a ``baseline`` section
    (deltas, regressions) if given."""
    data: dict[str, Any] = comparison.to_dict()
    data["head_to_head"] = head_to_head(comparison).to_dict()
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
svg .whisker{stroke:#1f2328;stroke-width:1.3}
svg .spread{stroke-width:2}
td.best{font-weight:600;background:#dafbe1}
.b-flaky,.b-disagree,.b-gate{background:#fff1c2;color:#7d4e00}
.b-infrastructure,.b-partial{background:#eef1f4;color:#57606a}
ul.attention li{margin:3px 0}
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
        cells = [f'<td class="l">{escape(contender_label(s.contender))}</td>',
                 f"<td>{s.passed}/{s.runs}"
                 + (f'<span class="sub">{s.failed} failed, {s.errors} errors</span>'
                    if s.failed or s.errors else "") + "</td>",
                 f"<td>{escape(_summary_rate(s))}</td>"]
        for m in METRICS:
            total = escape(_value(m, s.total[m.key]))
            sub = "" if m.kind == "ratio" else \
                f'<span class="sub">{escape(_mean(m, s.mean[m.key]))} / run</span>'
            cells.append(f"<td>{total}{sub}</td>")
        body.append(f"<tr>{''.join(cells)}</tr>")
    return (f'<div class="wrap"><table><thead><tr><th class="l">Agent type</th><th>Passed</th>'
            f"<th>Pass rate</th>{head}</tr></thead><tbody>{''.join(body)}</tbody></table></div>")


def _html_rows(comparison: Comparison, diff: BaselineDiff | None) -> str:
    sampled = _sampled_columns(comparison)
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
        name = contender_label(row.contender) if row.agent_type is not None else "—"
        cells += [f'<td class="l"><a class="run-link" href="#{run_anchor(row)}">'
                  f'{escape(name)}</a></td>',
                  f'<td class="l result">{result}</td>']
        if sampled:
            cells += [f"<td>{escape(_rate_text(row))}</td>",
                      f'<td class="l">{escape(row.class_ or "—")}</td>']
        for m in METRICS:
            cells.append(f"<td>{escape(_value(m, row.metric(m.key)))}"
                         f"{_delta_span(m, delta)}</td>")
        body.append(f"<tr>{''.join(cells)}</tr>")
    extra = "<th>Pass rate</th><th class=\"l\">Class</th>" if sampled else ""
    return (f'<div class="wrap"><table><thead><tr><th class="l">Scenario</th>'
            f'<th class="l">Agent type</th><th class="l">Result</th>{extra}{head}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table></div>")


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
        text = _value(METRICS[[m.key for m in METRICS].index(key)], value)
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
    bars = {k: v for k, v in _chart_bars(comparison, make).items() if k[0] in groups}
    svg = grouped_bar_chart(title=title, groups=groups, series=_series(comparison),
                            bars=bars, integral=integral, notes=notes)
    note = f'<p class="note">{escape(caption)}</p>' if caption else ""
    return f"<figure><figcaption>{escape(title)}</figcaption>{svg}{note}</figure>"


def _rate_bar(row: Row) -> RateBar | str:
    if not row.judged_runs:
        return "error"
    confidence = row.confidence or DEFAULT_CONFIDENCE
    low, high = row.interval or wilson_interval(row.passed_runs, row.judged_runs, confidence)
    rate = row.passed_runs / row.judged_runs
    label = f"{percent(rate)} ({row.passed_runs}/{row.judged_runs})"
    return RateBar(rate, low, high, label,
                   f"{row.key}: pass rate {label}, {percent(confidence)} interval "
                   f"{low * 100:.0f}-{high * 100:.0f}%")


def _rate_figures(comparison: Comparison, groups: list[str], table: HeadToHead) -> list[str]:
    """The pass rate per charted scenario with its interval, and cost against pass rate."""
    figures = []
    if groups:
        bars = {(row.scenario, contender_label(row.contender)): _rate_bar(row)
                for row in comparison.rows if row.agent_type is not None
                and row.scenario in groups}
        svg = pass_rate_chart(title=RATE_CHART_TITLES[0], groups=groups,
                              series=_series(comparison), bars=bars)
        figures.append(f"<figure><figcaption>{RATE_CHART_TITLES[0]}</figcaption>{svg}"
                       '<p class="note">Bar: the pass rate of the runs (all samples of a sampled '
                       "case); whiskers: its Wilson interval. One run alone says little: its "
                       "interval is wide.</p></figure>")
    pooled = next((line for line in table.lines if line.label.startswith("All ")), None)
    tokens = next((line for line in table.lines if line.label == "Tokens per run"), None)
    if pooled is not None and tokens is not None:
        points = {}
        for contender in table.contenders:
            rate, cost = pooled.values[contender], tokens.values[contender]
            if rate.value is None or cost.value is None or rate.interval is None:
                continue
            name = contender_label(contender)
            points[name] = Point(cost.value, rate.value, *rate.interval,
                                 f"{name}: {cost.value:,.0f} tokens per run, pass rate "
                                 f"{percent(rate.value)} ({rate.passes}/{rate.judged})")
        svg = scatter_chart(title=RATE_CHART_TITLES[1], x_label="tokens per run (mean)",
                            series=[contender_label(c) for c in table.contenders],
                            points=points)
        figures.append(f"<figure><figcaption>{RATE_CHART_TITLES[1]}</figcaption>{svg}"
                       f'<p class="note">Over the {_plural(len(table.scenarios), "scenario")} '
                       "every compared agent type ran: up and to the left is better; the "
                       "whisker is the pass rate's interval.</p></figure>")
    return figures


def _html_charts(comparison: Comparison, table: HeadToHead) -> str:
    """Pass rates with their intervals, cost against pass rate, then count charts, tokens
    (in, out) and latency (wall drawn over serial) -- for the scenarios several agent types
    ran."""
    groups = _charted(comparison)
    timed = [g for g in groups
             if any((r.serial_time or 0) > 0 for r in comparison.rows if r.scenario == g)]
    caption = "Simulated seconds; wall below serial means calls overlapped."
    if timed and len(groups) - len(timed):
        caption += (f" {_plural(len(groups) - len(timed), 'scenario')} without simulated "
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
    alone = len(comparison.scenarios) - len(groups)
    note = (f'<p class="note">{_plural(alone, "scenario")} run by one agent type only '
            f"{'is' if alone == 1 else 'are'} in the table below, not charted.</p>"
            if alone else "")
    return note + f'<div class="charts">{"".join(figures)}</div>'


def _html_attention(comparison: Comparison, diff: BaselineDiff | None) -> str:
    items = _attention(comparison, diff)
    if not items:
        return f'<p class="ok">{escape(_NOTHING)}</p>'
    lines = "".join(f'<li><span class="badge b-{kind}">{escape(_ATTENTION_TITLES[kind])}'
                    f"</span> {_link(key, row)}: {escape(why)}</li>"
                    for kind, key, row, why in items)
    return f'<ul class="plain attention">{lines}</ul>'


def _html_head_to_head(table: HeadToHead) -> str:
    if not table.contenders or not table.scenarios:
        return '<p class="note">No scenario was run by more than one agent type: nothing to ' \
               "compare.</p>"
    head = "".join(f"<th>{escape(contender_label(c))}</th>" for c in table.contenders)
    body = []
    for line in table.lines:
        cells = "".join(
            f'<td class="best">{escape(_h2h_cell(line, c))}</td>' if c in line.best
            else f"<td>{escape(_h2h_cell(line, c))}</td>" for c in table.contenders)
        body.append(f'<tr><td class="l">{escape(line.label)}</td>{cells}</tr>')
    left = "".join(f'<p class="note">{escape(text)}</p>' for text in _left_out_lines(table))
    return (f'<p class="note">{escape(_h2h_note(table))}</p><div class="wrap"><table><thead>'
            f'<tr><th class="l"></th>{head}</tr></thead><tbody>{"".join(body)}</tbody>'
            f"</table></div>{left}")


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
    """One self-contained page: what needs attention (regressions against ``baseline``,
    flaky cases, infrastructure errors), which agent type is best, the summary, charts
    comparing the agent types (pass rates with intervals, cost against pass rate, costs), the
    scenario table (with Δ), failures, snapshot changes, then a section per run (timeline,
    steps, trace diffs) that the tables link to."""
    diff = _diff(comparison, baseline)
    table = head_to_head(comparison)
    sections = [f"<h1>{escape(_TITLE)}</h1>", f'<p class="meta">{escape(_meta(comparison))}</p>',
                "<h2>Needs attention</h2>", _html_attention(comparison, diff)]
    if diff is not None:
        sections.append(f"<h2>Against the baseline</h2>{_html_baseline(diff)}")
    sections += [
        "<h2>Which is best</h2>", _html_head_to_head(table),
        "<h2>Summary by agent type</h2>",
        f'<p class="note">{escape(_summary_note(table))}</p>',
        _html_summary(comparison.summaries()),
        "<h2>Charts</h2>",
        '<p class="note">One group per scenario several agent types ran, one bar per agent '
        "type that ran it; ✗ marks a failed run. Hover a bar for its numbers.</p>",
        _html_charts(comparison, table),
        "<h2>Scenarios × agent types</h2>",
    ]
    if diff is not None:
        sections.append('<p class="note">Δ: current minus baseline, shown where a value changed; '
                        "red is more cost (or less speedup), green less.</p>")
    sections += [_html_rows(comparison, diff), *_html_diagrams(comparison),
                 *html_continuations(comparison), "<h2>Failures</h2>",
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
    """Write report.md, report.json, report.html, summary.md (for a pull-request comment)
    and each run's trace
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
             "html": render_html(comparison, baseline),
             "summary": render_summary(comparison, baseline)}
    files = {REPORT_MARKER: _MARKER_TEXT}
    files.update({REPORT_FILES[kind]: text for kind, text in texts.items()})
    files.update({trace_file(row): json.dumps(row.trace, indent=2, ensure_ascii=False) + "\n"
                  for row in comparison.rows if row.trace is not None})
    if comparison.shard is not None:
        files[SHARD_FILE] = shard_details(comparison)
    try:
        written = replace_folder(out, files, marker=REPORT_MARKER)
    except FolderRefused as exc:
        raise ReportError(f"{out}: {exc}") from None
    return {kind: written[REPORT_FILES[kind]] for kind in texts}

