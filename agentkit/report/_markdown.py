"""The report as Markdown (tables by tabulate): the whole report (``report.md``) and the short
summary for a pull-request comment (``summary.md``), in the wording of :mod:`._wording`."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from itertools import islice

from tabulate import tabulate

from agentkit.report._baseline import BaselineDiff
from agentkit.report._model import METRICS, AgentSummary, Comparison, JudgeVerdict, Row, contender_label
from agentkit.report._resumed import markdown_continuations
from agentkit.report._runs import role_costs
from agentkit.report._standings import HeadToHead, head_to_head
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
    DISAGREEMENTS,
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
    counts_line,
    delta_text,
    diagram_groups,
    h2h_cell,
    h2h_note,
    incomplete,
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

__all__ = ["render_markdown", "markdown_pieces", "render_summary", "table_lines"]


def _md_attention(comparison: Comparison, diff: BaselineDiff | None) -> list[str]:
    items = attention(comparison, diff)
    lines = [f"## {ATTENTION}", ""]
    if not items:
        return [*lines, NOTHING, ""]
    lines += [f"- **{ATTENTION_TITLES[kind]}** `{key}`: {_md_text(why)}"
              for kind, key, _, why in items]
    return [*lines, ""]


def _md_head_to_head(table: HeadToHead) -> list[str]:
    lines = [f"## {BEST}", ""]
    if not table.contenders or not table.scenarios:
        return [*lines, NOTHING_TO_COMPARE,
                ""]
    headers = ["", *(contender_label(c) for c in table.contenders)]
    body = [[line.label, *(h2h_cell(line, c) for c in table.contenders)]
            for line in table.lines]
    lines += [h2h_note(table), "",
              tabulate(body, headers, tablefmt="github", disable_numparse=True,
                       colalign=("left", *("right" for _ in table.contenders))), ""]
    return [*lines, *left_out_lines(table), *([""] if table.left_out else [])]


def _md_by_tag(comparison: Comparison) -> list[str]:
    groups = comparison.by_tag()
    if not groups:
        return []
    contenders = comparison.contenders
    body = [[tag, *(tag_cell(counts.get(c)) for c in contenders)] for tag, counts in groups]
    return [f"## {BY_TAG}", "", BY_TAG_NOTE, "",
            tabulate(body, ["Tag", *(contender_label(c) for c in contenders)],
                     tablefmt="github", disable_numparse=True,
                     colalign=("left", *("right" for _ in contenders))), ""]


def _md_agentdojo(comparison: Comparison) -> list[str]:
    found = agentdojo_scores(comparison)
    if not found:
        return []
    return [f"## {AGENTDOJO}", "", AGENTDOJO_NOTE, "",
            tabulate([agentdojo_cells(c, s) for c, s in found], AGENTDOJO_HEADERS,
                     tablefmt="github", disable_numparse=True,
                     colalign=("left", *("right" for _ in AGENTDOJO_HEADERS[1:]))), ""]


def _md_pairs(table: HeadToHead) -> list[str]:
    if not table.pairs:
        return []
    return [f"## {PAIRS}", "", pairs_note(), "",
            tabulate([pair_cells(pair) for pair in table.pairs], PAIR_HEADERS,
                     tablefmt="github", disable_numparse=True), ""]


def _fence(text: str) -> str:
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}\n{text}\n{fence}"


def _md_text(text: str) -> str:
    """One line of plain text, with the characters Markdown would interpret escaped."""
    return re.sub(r"([\\`*_\[\]<>#|~])", r"\\\1", " ".join(text.split()))


def _md_summary(summaries: list[AgentSummary]) -> str:
    headers = ["Agent type", "Passed", "Pass rate", *(m.label for m in METRICS)]
    table = []
    for s in summaries:
        cells = [contender_label(s.contender), f"{s.passed}/{s.runs}", summary_rate(s)]
        for m in METRICS:
            total = value_text(m, s.total[m.key])
            cells.append(total if m.kind == "ratio" else f"{total} ({mean_text(m, s.mean[m.key])})")
        table.append(cells)
    return tabulate(table, headers, tablefmt="github", disable_numparse=True,
                    colalign=("left", "right", "right", *("right" for _ in METRICS)))


def _md_rows(comparison: Comparison, diff: BaselineDiff | None) -> Iterator[str]:
    sampled = sampled_columns(comparison)
    headers = ["Scenario", "Agent type", *(["Model"] if comparison.models else []), "Result",
               *(["Pass rate", "Class"] if sampled else [])]
    for m in METRICS:
        headers += [m.label, f"Δ {m.short}"] if diff is not None else [m.label]

    def cells() -> Iterator[list[str]]:
        for row in comparison.rows:
            delta = diff.for_row(row) if diff is not None else None
            line = [row.scenario, row.agent_type or "—",
                    *([row.model or "—"] if comparison.models else []), STATUS[row.result]]
            if sampled:
                line += [rate_text(row), row.class_ or "—"]
            for m in METRICS:
                line.append(value_text(m, row.metric(m.key)))
                if diff is not None:
                    line.append(delta_text(m, delta))
            yield line

    lead = 3 + bool(comparison.models)
    colalign = (("left",) * lead + (("right", "left") if sampled else ())
                + tuple("right" for _ in headers[lead + 2 * sampled:]))
    return table_lines(headers, cells, colalign)


TABLE_CHUNK = 500
"""How many rows :func:`table_lines` hands tabulate at a time."""


def table_lines(headers: list[str], cells: Callable[[], Iterator[list[str]]],
                colalign: tuple[str, ...]) -> Iterator[str]:
    """The lines of tabulate's ``github`` table (``disable_numparse``) of the rows ``cells()``
    makes, :data:`TABLE_CHUNK` rows at a time: the same lines as one call over all of them,
    without holding them all. The rows are made twice: first to measure each column (the
    widths of the chunks' tables), then each chunk is tabulated with a row as wide as the
    widest column, and that row left out."""
    def table(rows: list[list[str]]) -> list[str]:
        return tabulate(rows, headers, tablefmt="github", disable_numparse=True,
                        colalign=colalign).split("\n")

    widths: list[int] = []
    for chunk in _chunks(cells()):
        measured = [len(dashes) - 2 for dashes in table(chunk)[1].strip("|").split("|")]
        widths = ([max(pair) for pair in zip(widths, measured, strict=True)] if widths
                  else measured)
    if not widths:
        yield from table([])
        return
    widest = ["x" * width for width in widths]
    for index, chunk in enumerate(_chunks(cells())):
        yield from table([*chunk, widest])[2 if index else 0:-1]


def _chunks(rows: Iterator[list[str]]) -> Iterator[list[list[str]]]:
    while chunk := list(islice(rows, TABLE_CHUNK)):
        yield chunk


def _md_failures(comparison: Comparison) -> list[str]:
    lines = [f"## {FAILURES}", ""]
    if not comparison.failures:
        return [*lines, NO_FAILURE, ""]
    for row in comparison.failures:
        lines += [f"### {row.key}: {STATUS[row.status]}", "",
                  *([_md_text(row.cause.describe()),
                     ""] if row.cause is not None else []),
                  _fence("\n".join(f"- {p}" for p in row.problems)), ""]
    return lines


def _md_baseline(diff: BaselineDiff) -> list[str]:
    lines = [f"## {BASELINE}", "", baseline_line(diff) + ".", ""]
    if diff.regressions:
        lines += [f"The regressions are listed under {ATTENTION}.", ""]
    sections = [("Fixed", [f"`{d.key}`" for d in diff.fixed]),
                ("New", [f"`{d.key}`" for d in diff.new]),
                ("Removed", [f"`{d.key}`" for d in diff.removed])]
    for title, items in sections:
        if items:
            lines += [f"{title}:", "", *(f"- {item}" for item in items), ""]
    return lines


def _md_snapshots(comparison: Comparison) -> list[str]:
    changed = snapshot_changes(comparison)
    if not changed:
        return []
    lines = [f"## {SNAPSHOTS}", "",
             "Runs whose trace is not the committed snapshot (snapshot -> now); accept a "
             "change with `pytest --snapshot-update`.", ""]
    for row in changed:
        lines += [f"### {row.key}: {snapshot_note(row)}", ""]
        if row.snapshot_diff:
            lines += [_fence("\n".join(row.snapshot_diff)), ""]
    return lines


def _judged_verdict(verdict: JudgeVerdict, row: Row | None = None) -> str:
    """``pass``, ``fail (split, 3 votes)``, ``pass (samples disagree)``: a split is one run's
    judges voting apart, a disagreement the samples of a case judged apart."""
    text = verdict.verdict + (f" (split, {verdict.votes} votes)" if verdict.split else "")
    if row is not None and any(d.at == verdict.at for d in row.disagreements):
        text += " (samples disagree)"
    if verdict.calibration is not None and not verdict.calibration.calibrated:
        text += " (judge uncalibrated)"
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
    return [f"### {DISAGREEMENTS}", "", _DISAGREE_NOTE, "", *lines, ""] \
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


def _md_diagrams(comparison: Comparison) -> list[str]:
    lines: list[str] = []
    for agent_types, diagram in diagram_groups(comparison):
        lines += [f"Workflow of {', '.join(f'`{t}`' for t in agent_types)}:", "",
                  "```mermaid", diagram.rstrip("\n"), "```", ""]
    return [f"## {WORKFLOWS}", "", DIAGRAM_NOTE, "", *lines] if lines else []


def render_markdown(comparison: Comparison, baseline: Comparison | None = None) -> str:
    """The verdict in one sentence, what needs attention (regressions against ``baseline``,
    failures, flaky cases, infrastructure errors), which agent type is best (the head-to-head
    table, then pair by pair), the summary over the same
    scenarios, the scenario × agent type table (with Δ columns against ``baseline``), the
    workflows, resumed runs beside the recorded ones, the failures with their problems, the
    regressions in full, then the snapshot changes."""
    return "".join(markdown_pieces(comparison, baseline))


def markdown_pieces(comparison: Comparison, baseline: Comparison | None = None, *,
                    table: HeadToHead | None = None) -> Iterator[str]:
    """:func:`render_markdown`'s text in pieces, a line at a time (what a large report
    writes to its file as it goes instead of holding it whole); ``table``: the comparison's
    head-to-head table if already built (a report builds it once for all its files)."""
    return _text_of(_markdown_lines(comparison, baseline, table))


def _text_of(lines: Iterator[str]) -> Iterator[str]:
    """``"\\n".join(lines).rstrip("\\n") + "\\n"``, in pieces: the newlines that end the
    text so far are held back until a line says more."""
    held = ""
    for index, line in enumerate(lines):
        text = held + ("\n" if index else "") + line
        said = text.rstrip("\n")
        if said:
            yield said
        held = text[len(said):]
    yield "\n"


def _markdown_lines(comparison: Comparison, baseline: Comparison | None,
                    table: HeadToHead | None) -> Iterator[str]:
    diff = baseline_diff(comparison, baseline)
    table = table or head_to_head(comparison)
    yield from [f"# {TITLE}", "", meta_line(comparison), "",
                f"**{VERDICT}:** {_md_text(verdict(table))}", ""]
    if diff is not None:
        yield from [f"{BASELINE}: {baseline_line(diff)}.", ""]
    yield from _md_attention(comparison, diff)
    yield from _md_by_tag(comparison)
    yield from _md_agentdojo(comparison)
    yield from _md_head_to_head(table)
    yield from _md_pairs(table)
    yield from [f"## {SUMMARY}", "", summary_note(table), "",
                _md_summary(comparison.summaries()), "",
                f"## {TABLE}", ""]
    if diff is not None:
        yield from ["Δ: current minus baseline (· unchanged, `new`: not in the baseline).", ""]
    if sampled_columns(comparison):
        yield from ["A sampled case's metrics are the means over its samples; its pass rate "
                    "reads `rate (passes/samples; interval)`.", ""]
    yield from _md_rows(comparison, diff)
    yield ""
    yield from _md_diagrams(comparison)
    yield from markdown_continuations(comparison)
    yield from _md_judged(comparison)
    yield from _md_failures(comparison)
    if diff is not None:
        yield from _md_baseline(diff)
    yield from _md_snapshots(comparison)
    yield from _md_coverage(comparison)


def _md_coverage(comparison: Comparison) -> list[str]:
    """What the runs exercised (``agentkit coverage``'s figures): what no run touched first,
    then a row per tool."""
    coverage = comparison.coverage
    if coverage is None:
        return []
    figures = coverage["behaviours"]
    lines = ["## Coverage", "",
             f"Behaviours covered: {figures['covered']} of {figures['total']} "
             f"({figures['percent']:g}%): each tool called, failing, called after a failure "
             "and its output used in an answer; each hand-off, judge and rule exercised.", ""]
    if coverage["untested"]:
        lines += ["Untested:", ""] + [f"- {_md_text(line)}" for line in coverage["untested"]]
        lines.append("")
    rows = [[t["name"], t["source"], str(len(t["by_agent_type"])), str(t["total"]["calls"]),
             str(len(t["total"]["shapes"])), str(t["total"]["failed"]),
             str(t["total"]["timed_out"]), str(t["total"]["after_failure"]),
             str(t["total"]["output_used"])] for t in coverage["tools"]]
    headers = ["tool", "source", "agent types", "calls", "shapes", "failed", "timed out",
               "after failure", "output used"]
    lines += [tabulate(rows, headers=headers, tablefmt="github"), ""]
    return lines


def render_summary(comparison: Comparison, baseline: Comparison | None = None, *,
                   table: HeadToHead | None = None) -> str:
    """A short Markdown summary for a pull-request comment: the verdict, what needs
    attention, which agent type is best, and the failures folded away (``table``: as
    :func:`markdown_pieces` takes it)."""
    diff = baseline_diff(comparison, baseline)
    table = table or head_to_head(comparison)
    regressions = diff.regressions if diff is not None else []
    ok = comparison.passed and not regressions
    outcome = ("❌ failed" if not ok else "⚠️ incomplete" if incomplete(comparison)
               else "✅ passed")
    lines = [f"### agentkit: {outcome}", "", counts_line(comparison)
             + (f"; against the baseline: {baseline_line(diff)}" if diff is not None else ""),
             "", f"**{VERDICT}:** {_md_text(verdict(table))}", ""]
    items = attention(comparison, diff)
    if items:
        lines += [f"**{ATTENTION}**", "",
                  *(f"- {ATTENTION_TITLES[kind]} `{key}`: {_md_text(why)}"
                    for kind, key, _, why in items), ""]
    if table.contenders and table.scenarios and len(table.contenders) > 1:
        lines += [f"**{BEST}** (★: best, several ★: a tie within noise)", "",
                  tabulate([[line.label, *(h2h_cell(line, c) for c in table.contenders)]
                            for line in table.lines],
                           ["", *(contender_label(c) for c in table.contenders)],
                           tablefmt="github", disable_numparse=True), ""]
    if comparison.failures:
        lines += [f"<details><summary>{plural(len(comparison.failures), 'failure')}"
                  "</summary>", ""]
        for row in comparison.failures:
            first = row.problems[0].splitlines()[0] if row.problems else ""
            lines.append(f"- `{row.key}` {STATUS[row.status]}: {_md_text(first)}")
        lines += ["", "</details>", ""]
    return "\n".join(lines).rstrip("\n") + "\n"
