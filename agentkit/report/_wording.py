"""The report's wording, defined once for both renderers (:mod:`._markdown`, :mod:`._html`):
the title and status words, how a value, a mean and a change against the baseline read, the
counts line, what needs attention and why, the head-to-head notes and cells, the notes over
the summary and the workflows."""

from __future__ import annotations

from agentkit.core.fmt import count, ratio, seconds, signed_count, signed_seconds
from agentkit.eval.cases import percent
from agentkit.report.baseline import BaselineDiff, RowDelta, compare_to_baseline
from agentkit.report.model import (
    METRICS,
    AgentSummary,
    Comparison,
    Contender,
    Metric,
    Row,
    contender_label,
)
from agentkit.report.standings import HeadToHead, Line

TITLE = "Agent comparison report"
#: The report's sections, as both renderers head them (in this order)
ATTENTION = "Needs attention"
BASELINE = "Against the baseline"
BEST = "Which is best"
SUMMARY = "Summary by agent type"
TABLE = "Scenarios × agent types"
WORKFLOWS = "Workflows"
FAILURES = "Failures"
SNAPSHOTS = "Snapshot changes"
DISAGREEMENTS = "Judge disagreements between samples"
NO_FAILURE = "None: every run passed."
NOTHING_TO_COMPARE = "No scenario was run by more than one agent type: nothing to compare."


STATUS = {"pass": "pass", "fail": "FAIL", "error": "ERROR"}


def baseline_diff(comparison: Comparison, baseline: Comparison | None) -> BaselineDiff | None:
    return None if baseline is None else compare_to_baseline(comparison, baseline)


def value_text(metric: Metric, value: float | None) -> str:
    if value is None:
        return "—"
    if metric.kind == "count":
        return count(int(value)) if float(value).is_integer() else f"{value:,.1f}"
    if metric.kind == "seconds":
        return seconds(value)
    return ratio(value)


def mean_text(metric: Metric, value: float) -> str:
    return seconds(value) if metric.kind == "seconds" else f"{value:,.1f}"


def delta_text(metric: Metric, delta: RowDelta | None) -> str:
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


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def counts_line(comparison: Comparison) -> str:
    rows = comparison.rows
    passed = sum(r.status == "pass" for r in rows)
    failed = sum(r.status == "fail" for r in rows)
    errors = sum(r.status == "error" for r in rows)
    return (f"{plural(len(comparison.scenarios), 'scenario')} · {plural(len(rows), 'run')}: "
            f"{passed} passed, {failed} failed, {plural(errors, 'error')}"
            + (f"; incomplete: {incomplete(comparison)}" if incomplete(comparison) else ""))


def incomplete(comparison: Comparison) -> str:
    """The samples with no result (infrastructure errors, not recorded), in words; empty when
    every sample has one."""
    infra = sum(row.infra_errors or 0 for row in comparison.rows)
    missing = sum(row.not_recorded or 0 for row in comparison.rows)
    parts = ([f"{plural(infra, 'sample')} hit infrastructure errors"] if infra else []) + (
        [f"{plural(missing, 'sample')} not recorded"] if missing else [])
    return ", ".join(parts)


def baseline_line(diff: BaselineDiff) -> str:
    costs = len(diff.cost_regressions)
    return (f"{plural(len(diff.regressions), 'regression')}"
            + (f" ({costs} in cost)" if costs else "")
            + f", {len(diff.fixed)} fixed, {len(diff.new)} new, {len(diff.removed)} removed "
            f"(baseline: agentkit {diff.baseline_version})")


def snapshot_changes(comparison: Comparison) -> list[Row]:
    """Rows whose trace differs from its committed snapshot, or has none yet."""
    return [r for r in comparison.rows if r.snapshot in ("changed", "missing")]


def snapshot_note(row: Row) -> str:
    return ("no snapshot yet" if row.snapshot == "missing"
            else "the trace differs from its committed snapshot")


def rate_text(row: Row) -> str:
    """A sampled row's pass rate in one cell: ``60% (6/10; 31-83%)``."""
    if row.pass_rate is None or row.interval is None:
        return "—" if not row.sampled else "no rate"
    low, high = row.interval
    return (f"{percent(row.pass_rate)} ({row.passes}/{row.judged_runs}; "
            f"{low * 100:.0f}-{high * 100:.0f}%)")


def attention(comparison: Comparison,
               diff: BaselineDiff | None) -> list[tuple[str, str, Row | None, str]]:
    """What to look at first: regressions, flaky cases, infrastructure errors, samples not
    recorded -- (kind, key, row, why) each."""
    items: list[tuple[str, str, Row | None, str]] = []
    for delta in diff.regressions if diff is not None else []:
        items += [("regression", delta.key, delta.current, reason) for reason in delta.reasons]
    for row in comparison.rows:
        if row.class_ == "flaky":
            items.append(("flaky", row.key, row, f"pass rate {rate_text(row)}"))
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


ATTENTION_TITLES = {"regression": "Regression", "flaky": "Flaky",
                     "infrastructure": "Infrastructure errors", "partial": "Partial",
                     "gate": "A gate that cannot fail",
                     "disagree": "Judges disagree between samples"}


NOTHING = "Nothing: no regression, no flaky case, no infrastructure error."


def h2h_note(table: HeadToHead) -> str:
    return (f"Pass rates on the {plural(len(table.scenarios), 'scenario')} every compared "
            "agent type ran, then the mean cost per run there. ★ marks the best value of each "
            "line and every value tied with it: for pass rates, not lower beyond noise "
            f"(Fisher's exact test, one-sided, at {percent(table.confidence)}); for costs, "
            "within the margin of the two means' standard errors. Several ★ in a line are a "
            "tie. A pass rate reads `rate (passes/runs; interval)`.")


def h2h_cell(line: Line, contender: Contender) -> str:
    value = line.values[contender]
    text = value.text(line.kind)
    return f"★ {text}" if contender in line.best else text


def left_out_lines(table: HeadToHead) -> list[str]:
    return [f"{contender_label(c)} is left out: it {reason}." for c, reason in table.left_out]


def summary_rate(summary: AgentSummary) -> str:
    if summary.pass_rate is None:
        return "—"
    return f"{percent(summary.pass_rate)} ({summary.passes}/{summary.judged})"


def sampled_columns(comparison: Comparison) -> bool:
    return any(row.sampled for row in comparison.rows)


def diagram_groups(comparison: Comparison) -> list[tuple[list[str], str]]:
    """Each distinct workflow diagram with the agent types that run it."""
    groups: dict[str, list[str]] = {}
    for agent_type, diagram in comparison.diagrams.items():
        groups.setdefault(diagram, []).append(agent_type)
    return [(types, diagram) for diagram, types in groups.items()]


DIAGRAM_NOTE = ("The steps of the workflow agent types and the events between them, as "
                 "Mermaid source (the page loads no scripts: paste it into any Mermaid "
                 "renderer to draw it).")


def meta_line(comparison: Comparison) -> str:
    models = f" · models: {', '.join(comparison.models)}" if comparison.models else ""
    return (f"agentkit {comparison.agentkit_version} · agent types: "
            f"{', '.join(comparison.agent_types) or 'none'}{models} · {counts_line(comparison)}")


def summary_note(table: HeadToHead) -> str:
    return (f"Over the {plural(len(table.scenarios), 'scenario')} every compared agent type "
            "ran (the same ones for each, so the numbers compare): passed runs, the pass rate "
            "of all their runs and samples, metric totals and the mean per run; speedup is "
            "total serial time over total wall time (simulated seconds).")
