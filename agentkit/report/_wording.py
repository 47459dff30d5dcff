"""The report's wording, defined once for both renderers (:mod:`._markdown`, :mod:`._html`):
the title and status words, how a value, a mean and a change against the baseline read, the
counts line, what needs attention and why, the head-to-head notes and cells, the notes over
the summary and the workflows."""

from __future__ import annotations

from agentkit.core.fmt import count, ratio, seconds, signed_count, signed_seconds
from agentkit.eval._cases import percent
from agentkit.eval._stats import DEFAULT_CONFIDENCE
from agentkit.report._baseline import BaselineDiff, RowDelta, compare_to_baseline
from agentkit.report._model import (
    METRICS,
    SECONDS_METRICS,
    AgentSummary,
    Comparison,
    Contender,
    Metric,
    Row,
    contender_label,
)
from agentkit.report._standings import COST_LINES, SCENARIO_LINES, HeadToHead, Line, Pair, Record
from agentkit.verdict import SAMPLES_LIMIT, samples_to_fail_gate

TITLE = "Agent comparison report"
#: The report's sections, as both renderers head them (in this order)
ATTENTION = "Needs attention"
BASELINE = "Against the baseline"
BEST = "Which is best"
BY_TAG = "By tag"
BY_TAG_NOTE = ("Runs passed of runs, per tag of the scenarios and agent type; the tags with "
               "runs that did not pass first.")
PAIRS = "Pair by pair"
VERDICT = "Verdict"
SUMMARY = "Summary by agent type"
TABLE = "Scenarios × agent types"
WORKFLOWS = "Workflows"
FAILURES = "Failures"
SNAPSHOTS = "Snapshot changes"
DISAGREEMENTS = "Judge disagreements between samples"
NO_FAILURE = "None: every run passed."
NOTHING_TO_COMPARE = "No scenario was run by more than one agent type: nothing to compare."


STATUS = {"pass": "pass", "fail": "FAIL", "error": "ERROR", "undecided": "undecided"}


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
    passed = sum(r.result == "pass" for r in rows)
    failed = sum(r.result == "fail" for r in rows)
    errors = sum(r.result == "error" for r in rows)
    undecided = sum(r.result == "undecided" for r in rows)
    return (f"{plural(len(comparison.scenarios), 'scenario')} · {plural(len(rows), 'run')}: "
            f"{passed} passed, {failed} failed, {plural(errors, 'error')}"
            + (f", {undecided} undecided" if undecided else "")
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


def _gate_decided_at(row: Row) -> int | None:
    """The samples at which an ``undecided`` row's rate, if it held, would fail its gate."""
    assert row.min_pass_rate is not None
    return samples_to_fail_gate(row.passed_runs, row.judged_runs, row.min_pass_rate,
                                row.confidence or DEFAULT_CONFIDENCE)


def undecided_text(row: Row) -> str:
    """Why an ``undecided`` row is not ``pass``, and the samples that would decide it."""
    assert row.min_pass_rate is not None
    needed = _gate_decided_at(row)
    decide = (f"about {needed} samples at this rate would put it under beyond noise"
              if needed is not None else f"more than {SAMPLES_LIMIT} samples would be needed "
              "to tell")
    return (f"pass rate {rate_text(row)} is under its min_pass_rate "
            f"{percent(row.min_pass_rate)}, but within noise; {decide}")


def _first_problem(row: Row) -> str:
    first = row.problems[0].splitlines()[0] if row.problems else ""
    more = len(row.problems) - 1
    return first + (f" (and {plural(more, 'more problem')})" if more > 0 else "")


def attention(comparison: Comparison,
              diff: BaselineDiff | None) -> list[tuple[str, str, Row | None, str]]:
    """What to look at first, each run once: regressions, then failed runs and runs that
    could not run, ``stable_fail`` cases, undecided and flaky ones; then infrastructure
    errors, gates that cannot fail, samples not recorded, judges' disagreements and judges
    not calibrated against people -- (kind, key, row, why) each."""
    items: list[tuple[str, str, Row | None, str]] = []
    listed: set[str] = set()
    for delta in diff.regressions if diff is not None else []:
        items.append(("regression", delta.key, delta.current, "; ".join(delta.reasons)))
        listed.add(delta.key)
    for row in comparison.rows:
        if row.key in listed:
            continue
        if row.result in ("fail", "error"):
            items.append((row.result, row.key, row, _first_problem(row) + (
                f" ({row.cause.describe()})" if row.cause is not None else "")))
        elif row.class_ == "stable_fail":
            gate = ("" if row.min_pass_rate is None else
                    f"; its min_pass_rate {percent(row.min_pass_rate)} does not gate it")
            items.append(("stable_fail", row.key, row,
                          f"no sample passed: pass rate {rate_text(row)}{gate}"))
        elif row.result == "undecided":
            items.append(("undecided", row.key, row, undecided_text(row)))
        elif row.class_ == "flaky":
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
    items += [("uncalibrated", row.key, row, f"the judge of {at}: {why}")
              for row in comparison.rows for at, why in row.uncalibrated.items()]
    return items


ATTENTION_TITLES = {"regression": "Regression", "fail": "Failed", "error": "Could not run",
                    "stable_fail": "Stable fail", "undecided": "Undecided", "flaky": "Flaky",
                    "infrastructure": "Infrastructure errors", "partial": "Partial",
                    "gate": "A gate that cannot fail",
                    "disagree": "Judges disagree between samples",
                    "uncalibrated": "Judges not calibrated"}


NOTHING = "Nothing: every run passed; no regression, no flaky case, no infrastructure error."


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


LISTED = 10
"""The most scenarios the verdict and a pair's cell name in one list (then ``and N more``)."""


def _some(items: list[str]) -> list[str]:
    """``items``, or its first :data:`LISTED` and ``N more`` (a large report's lists)."""
    return items if len(items) <= LISTED else [*items[:LISTED], f"{len(items) - LISTED} more"]


def _row_rate(row: Row) -> str:
    """`` (0/5)`` after a sampled case's scenario; nothing for a run without samples."""
    return f" ({row.passed_runs}/{row.judged_runs})" if row.sampled and row.judged_runs else ""


def _record_clause(record: Record) -> str:
    name = contender_label(record.contender)
    details = []
    failed = [r for r in record.failed if r.has_metrics]
    if failed:
        details.append("fails " + _and(_some([f"{r.scenario}{_row_rate(r)}" for r in failed])))
    broken = [r for r in record.failed if not r.has_metrics]
    if broken:
        details.append("could not run " + _and(_some([r.scenario for r in broken])))
    if record.undecided:
        details.append("is undecided on " + _and(
            [f"{r.scenario}{_row_rate(r)} under its min_pass_rate "
             f"{percent(r.min_pass_rate or 0)}" for r in record.undecided]))
    if record.flaky:
        details.append("passes only some samples of " + _and(
            [f"{r.scenario}{_row_rate(r)}" for r in record.flaky]))
    return (f"{name} passes {len(record.passed)} of the {plural(len(record.ran), 'scenario')} "
            f"it ran ({'; '.join(details)})")


def _clean_clause(records: list[Record]) -> str:
    names = _and([contender_label(r.contender) for r in records])
    if len(records) == 1:
        count = len(records[0].ran)
        return (f"{names} passes every scenario it ran ({count})" if count != 1
                else f"{names} passes the 1 scenario it ran")
    return (f"{names} pass every scenario they ran "
            f"({_and([str(len(r.ran)) for r in records])} respectively)")


def _cheapest(table: HeadToHead, candidates: list[Contender]) -> str:
    """Which of ``candidates`` costs the fewest tokens per run against each other one, on the
    scenarios both passed; empty when fewer than two of them were compared."""
    label = COST_LINES[0][0]
    against: dict[Contender, list[tuple[Pair, Contender | None]]] = {c: [] for c in candidates}
    for pair in table.pairs:
        if pair.first in against and pair.second in against and pair.costs:
            cost = next(c for c in pair.costs if c.label == label)
            for mine in pair.contenders:
                against[mine].append((pair, cost.cheaper))
    compared = {c: seen for c, seen in against.items() if seen}
    if len(compared) < 2:
        return ""
    cheapest = [c for c, seen in compared.items()
                if all(cheaper in (c, None) for _, cheaper in seen)]
    if not cheapest:
        return ("no one of them uses the fewest tokens per run against every other on the "
                f"scenarios both passed (see {PAIRS})")
    if len(cheapest) > 1:
        return (f"{_and([contender_label(c) for c in cheapest])} each use no more tokens per "
                "run than any other they share a passed scenario with")
    best = cheapest[0]
    seen = compared[best]
    ties = [p for p, cheaper in seen if cheaper is None]
    ratios = sorted(r for p, _ in seen for c in p.costs if c.label == label
                    and (r := c.ratio()) is not None)
    shared = sorted(len(p.both_passed) for p, _ in seen)
    span = (f"{ratios[0]:.1f}×" if ratios[0] == ratios[-1] else
            f"{ratios[0]:.1f}-{ratios[-1]:.1f}×") + " fewer" if ratios else "as many"
    over = (f"{shared[0]}" if shared[0] == shared[-1] else f"{shared[0]}-{shared[-1]}")
    others = "the other" if len(seen) == 1 else f"each of the {len(seen)} others"
    tied = (", tied with " + _and([contender_label(c) for p in ties for c in p.contenders
                                   if c != best]) if ties else "")
    return (f"the cheapest of them is {contender_label(best)}: {span} tokens per run than "
            f"{others} on the scenarios both passed ({over} shared){tied}")


def _thin(table: HeadToHead) -> str:
    """Where the evidence is too thin to call, with the samples that would decide it."""
    items = []
    for pair in table.pairs:
        for decision in pair.thin:
            first, second = decision.values
            decide = (f"about {decision.decide_at} samples each would decide"
                      if decision.decide_at is not None
                      else f"more than {SAMPLES_LIMIT} samples each would be needed")
            items.append(f"{contender_label(pair.first)} {first.passes}/{first.judged} vs "
                         f"{contender_label(pair.second)} {second.passes}/{second.judged} on "
                         f"{decision.scenario} ({decide})")
    for row in (row for record in table.records for row in record.undecided):
        if row.min_pass_rate is not None:
            needed = _gate_decided_at(row)
            items.append(f"{row.key} {row.passed_runs}/{row.judged_runs} against its "
                         f"min_pass_rate {percent(row.min_pass_rate)} ("
                         + (f"about {needed} samples would decide" if needed is not None
                            else f"more than {SAMPLES_LIMIT} samples would be needed") + ")")
    if not items:
        return ""
    shown = items[:4] + ([f"{len(items) - 4} more (see {PAIRS})"] if len(items) > 4 else [])
    return "too close to call: " + _and(shown)


def verdict(table: HeadToHead) -> str:
    """The report in one sentence: which agent types pass what, the cheapest of those that
    pass everything (over what each pair shares), and where the evidence is too thin."""
    records = table.records
    if not records:
        return "No scenario ran under an agent type."
    steady = [r for r in records if r.clean and not r.flaky]
    parts = [_clean_clause(steady)] if steady else []
    parts += [_record_clause(r) for r in records if r not in steady]
    clean = [r.contender for r in records if r.clean]
    cheapest = _cheapest(table, clean) if len(clean) >= 2 else ""
    if cheapest:
        parts.append(cheapest)
    thin = _thin(table)
    if thin:
        parts.append(thin)
    return "; ".join(parts) + "."


def pairs_note() -> str:
    return ("Every two agent types on the scenarios both ran, whatever the others ran: how "
            "many each passed and which is better where they differ (a run without samples is "
            "a fact, pass or fail; sampled cases by Fisher's exact test, one-sided, with the "
            "samples per side that would decide one too close to call); then the mean cost "
            "per run over the scenarios both passed only (a failed run's cost is not "
            "compared). ★ marks the cheaper, both when they tie.")


PAIR_HEADERS = ["Pair", "Shared", "Passed", "Better", "Both passed",
                *(label for label, _ in COST_LINES)]


def pair_cells(pair: Pair) -> list[str]:
    """One pair's line in the Pair by pair table (:data:`PAIR_HEADERS`)."""
    first, second = contender_label(pair.first), contender_label(pair.second)
    better = []
    for contender, name in ((pair.first, first), (pair.second, second)):
        wins = [d.scenario for d in pair.wins(contender)]
        if wins:
            better.append(f"{name} on {len(wins)} ({', '.join(_some(wins))})")
    thin = pair.thin
    if thin:
        better.append(f"too close on {len(thin)} (" + ", ".join(
            f"{d.scenario}: " + (f"~{d.decide_at} samples each would decide"
                                 if d.decide_at is not None else
                                 f"over {SAMPLES_LIMIT} samples each") for d in thin) + ")")
    costs = []
    for cost in pair.costs:
        shown = [seconds(m) if cost.key in SECONDS_METRICS
                 else (f"{m:,.0f}" if float(m).is_integer() else f"{m:,.1f}")
                 for m in cost.means]
        costs.append(" vs ".join(
            f"★ {text}" if cost.cheaper in (None, c) else text
            for text, c in zip(shown, pair.contenders, strict=True)))
    if not pair.costs:
        costs = ["—" for _ in COST_LINES]
    return [f"{first} vs {second}", str(len(pair.scenarios)),
            f"{pair.passes[0]} vs {pair.passes[1]}",
            "; ".join(better) or "the same on all", str(len(pair.both_passed)), *costs]


def h2h_note(table: HeadToHead) -> str:
    return (f"Results on the {plural(len(table.scenarios), 'scenario')} every compared agent "
            f"type ran{_summarized(table)}, then the mean cost per run there, over runs that "
            "passed only: an agent "
            "type that failed one of them has no cost here (see Pair by pair). A run without "
            "samples is a fact, pass or FAIL: the runs that passed are best, never tied with a "
            "failure. ★ marks the best value of each line and every value tied with it: for "
            "sampled pass rates, not lower beyond noise (Fisher's exact test, one-sided, at "
            f"{percent(table.confidence)}); for costs, within the margin of the two means' "
            "standard errors. A sampled pass rate reads `rate (passes/samples; interval)`.")


def _summarized(table: HeadToHead) -> str:
    """How a summarized table reads (empty for one with a line per scenario)."""
    if not table.summarized:
        return ""
    shown = len(table.differ) if len(table.differ) <= SCENARIO_LINES else (
        f"the first {SCENARIO_LINES} of the {len(table.differ)}")
    differ = (f", then {shown} where their results differ" if table.differ
              else "; their results are the same on every scenario")
    return (f" (more than {SCENARIO_LINES}: pooled per tag of the scenarios, tags with "
            f"failures first{differ}; every run is in the {TABLE} table)")


def h2h_cell(line: Line, contender: Contender) -> str:
    value = line.values[contender]
    text = value.text(line.kind)
    return f"★ {text}" if contender in line.best else text


def left_out_lines(table: HeadToHead) -> list[str]:
    return [f"{contender_label(c)} is left out: it {reason}." for c, reason in table.left_out]


def tag_cell(counts: tuple[int, int] | None) -> str:
    """``passed/runs`` of a tag's runs under one agent type (``—``: none)."""
    if counts is None:
        return "—"
    passed, runs = counts
    return f"{passed}/{runs}" if passed == runs else f"**{passed}/{runs}**"


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
