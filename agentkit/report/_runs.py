"""One section of the report page per run (scenario × agent type): what it cost, why it
regressed or failed, its timeline on simulated time, its steps, and how its trace differs
from its snapshot and from the baseline's -- so a failed or regressed row can be read, not
only counted."""

from __future__ import annotations

import re
from collections.abc import Iterator
from html import escape
from typing import Any

from agentkit.core.fmt import count, ratio, seconds
from agentkit.core.textdiff import HTML, Line, render, short
from agentkit.report._baseline import BaselineDiff, RowDelta
from agentkit.report._model import Comparison, Row
from agentkit.report._timeline import timeline_svg
from agentkit.report._wording import DISAGREEMENTS
from agentkit.trace import trace_diff

__all__ = ["run_anchor", "html_sections", "metrics_line", "role_costs", "RUNS_CSS"]

RUNS_CSS = """
section.run{border:1px solid #d8dee4;border-radius:6px;padding:4px 14px 10px;margin:14px 0}
section.run h3{font-size:15px;margin:10px 0 4px}
section.run h4{font-size:13px;margin:12px 0 4px;color:#57606a}
svg.timeline{display:block;height:auto;max-width:900px}
svg .turn{stroke:#57606a;stroke-width:1;stroke-dasharray:3 3}
svg .turn-label{font-size:10px;fill:#57606a}
svg .bar-label{font-size:10px;fill:#fff}
table.steps td,table.steps th{text-align:left}
table.steps td.n{text-align:right;white-space:nowrap}
table.steps .turn-row td{background:#f6f8fa;font-weight:600}
.err{color:#b3261e;font-weight:600}
pre.diff{max-height:420px;overflow:auto}
pre.diff del.diff-del{background:#ffcecb;color:#82071e}
pre.diff ins.diff-ins{background:#aceebb;color:#055d20}
pre.diff .diff-old{color:#b3261e}
pre.diff .diff-new{color:#116329}
a.run-link{color:inherit}
"""


def run_anchor(row: Row) -> str:
    """The id of a row's section: ``run-<scenario>-<agent type>``."""
    return "run-" + re.sub(r"[^A-Za-z0-9_.-]+", "-", row.key).strip("-")


def _count(value: float | None) -> str:
    """A count, or a sampled case's mean count (one decimal when it is not whole)."""
    value = value or 0
    return count(int(value)) if float(value).is_integer() else f"{value:,.1f}"


def metrics_line(row: Row) -> str:
    """A run's costs in one line, in the report's one number format (a sampled case's: the
    means over its samples)."""
    mean = "mean per sample: " if row.sampled else ""
    return (f"{mean}{_count(row.steps)} steps · {_count(row.llm_calls)} LLM calls · "
            f"{_count(row.tool_calls)} tool calls ({_count(row.tool_errors)} "
            f"failed) · {_count(row.prompt_tokens)} tokens in, "
            f"{_count(row.completion_tokens)} out · wall {seconds(row.wall_time or 0)},"
            f" serial {seconds(row.serial_time or 0)}, speedup {ratio(row.speedup or 1)}")


def role_costs(row: Row) -> str:
    """The calls and tokens of the run's roles (LLM judges, a simulated user), one phrase
    each: counted apart from the agent's (empty without roles; a sampled case's: the means
    per sample)."""
    mean = " (mean per sample)" if row.sampled else ""
    return "; ".join(f"{role}: {_count(cost.llm_calls)} LLM call"
                     f"{'s' if cost.llm_calls != 1 else ''}, {_count(cost.prompt_tokens)} "
                     f"tokens in, {_count(cost.completion_tokens)} out{mean}"
                     for role, cost in row.roles.items())


def _failed(text: str) -> str:
    return f'<span class="err">{escape(text)}</span>'


def _verdict_text(verdict: str) -> str:
    return escape(verdict) if verdict in ("pass", "-") else _failed(verdict)


def _judged(row: Row) -> str:
    items = "".join(
        f"<li>{escape(f'sample {v.sample}: ') if v.sample is not None else ''}"
        f"<code>{escape(v.at)}</code> {escape(repr(v.rubric))}: {_verdict_text(v.verdict)}"
        f"{escape(f' (split, {v.votes} votes)' if v.split else '')} -- {escape(v.reason)}</li>"
        for v in row.judged)
    costs = (f'<p class="note">Apart from the agent\'s: {escape(role_costs(row))}.</p>'
             if row.roles else "")
    return f'<h4>Judged</h4><ul class="plain">{items}</ul>{costs}'


def _disagreements(row: Row) -> str:
    """A sampled case's judged expectations whose verdict differs between its samples."""
    items = "".join(
        f'<li><span class="badge b-disagree">samples disagree</span> '
        f"<code>{escape(found.at)}</code> {escape(repr(found.rubric))}:<ul>"
        + "".join(f"<li>sample {s.sample}: {_verdict_text(s.verdict)}"
                  f"{escape(f' -- {s.reason}') if s.reason else ''}</li>" for s in found.samples)
        + "</ul></li>" for found in row.disagreements)
    return (f"<h4>{escape(DISAGREEMENTS)}</h4>"
            '<p class="note">The verdict differs between the samples of this case (the judges '
            "of one run voting apart are marked split instead).</p>"
            f'<ul class="plain">{items}</ul>')


def _call_text(call: dict[str, Any]) -> str:
    usage = call.get("usage") or {}
    parts = [seconds(call.get("latency") or 0)]
    if usage:
        parts.append(f"{count(usage.get('prompt_tokens', 0))} → "
                     f"{count(usage.get('completion_tokens', 0))} tokens")
    response = call.get("response") or {}
    said = (response.get("content") or "").strip()
    if said:
        parts.append(short(said, 120))
    requested = [c.get("name") for c in response.get("tool_calls") or []]
    if requested:
        parts.append("calls " + ", ".join(str(n) for n in requested))
    text = escape(" · ".join(parts))
    if call.get("error"):
        text += f' <span class="err">error: {escape(short(call["error"], 160))}</span>'
    return text


def _tool_text(call: dict[str, Any]) -> str:
    text = escape(f"{call.get('name')}({short(call.get('args'), 100)}) → "
                  f"{short(call.get('output'), 100)} · {seconds(call.get('latency') or 0)}")
    return f'<span class="err">{text} (error)</span>' if call.get("is_error") else text


def _steps_table(trace: dict[str, Any]) -> str:
    rows = []
    turns = trace.get("turns") or []
    for number, turn in enumerate(turns, start=1):
        if len(turns) > 1:
            rows.append(f'<tr class="turn-row"><td colspan="3">turn {number}: '
                        f"{escape(short(turn.get('user'), 120))}</td></tr>")
        for step in turn.get("steps") or []:
            llm = "<br>".join(_call_text(c) for c in step.get("llm_calls") or []) or "—"
            tools = "<br>".join(_tool_text(c) for c in step.get("tool_calls") or []) or "—"
            rows.append(f'<tr><td class="n">{step.get("index", 0) + 1}</td><td>{llm}</td>'
                        f"<td>{tools}</td></tr>")
        if turn.get("error"):
            rows.append(f'<tr><td class="n">—</td><td colspan="2" class="err">'
                        f"{escape(short(turn['error'], 300))}</td></tr>")
    return ('<div class="wrap"><table class="steps"><thead><tr><th>Step</th><th>LLM calls '
            "(latency · tokens in → out · reply)</th><th>Tool calls (args → output · latency)"
            f"</th></tr></thead><tbody>{''.join(rows)}</tbody></table></div>")


def _world_changes(trace: dict[str, Any]) -> str:
    """What the run changed in the scenario's world, turn by turn (empty without a world)."""
    if "world" not in trace:
        return ""
    items = []
    for number, turn in enumerate(trace.get("turns") or [], start=1):
        world = turn.get("world") if isinstance(turn, dict) else None
        changes = world.get("changes") if isinstance(world, dict) else None
        if not isinstance(changes, list):
            continue
        shown = "\n".join(str(line) for line in changes) or "(nothing changed)"
        items.append(f"<li>after turn {number}:<pre>{escape(shown)}</pre></li>")
    return ("<h4>World: what changed since the start of the run</h4>"
            f'<ul class="plain">{"".join(items)}</ul>')


def _samples_table(row: Row) -> str:
    """One line per sample of a sampled case: its outcome, costs and answer."""
    assert row.trace is not None
    outcomes = row.sample_outcomes or []
    lines = []
    for index, trace in enumerate(row.trace["samples"]):
        totals = trace.get("totals") or {}
        turns = trace.get("turns") or []
        last = turns[-1] if turns else {}
        said = last.get("error") or last.get("response") or ""
        outcome = outcomes[index] if index < len(outcomes) else "—"
        css = ' class="err"' if outcome == "fail" else ""
        tokens = totals.get("prompt_tokens", 0) + totals.get("completion_tokens", 0)
        lines.append(f'<tr><td class="n">{index}</td><td{css}>{escape(outcome)}</td>'
                     f'<td class="n">{count(totals.get("steps", 0))}</td>'
                     f'<td class="n">{count(totals.get("llm_calls", 0))}</td>'
                     f'<td class="n">{count(tokens)}</td>'
                     f'<td class="n">{seconds(totals.get("wall_time", 0))}</td>'
                     f"<td>{escape(short(said, 120))}</td></tr>")
    return ('<div class="wrap"><table class="steps"><thead><tr><th>Sample</th><th>Outcome</th>'
            "<th>Steps</th><th>LLM calls</th><th>Tokens</th><th>Wall</th><th>Answer or error"
            f"</th></tr></thead><tbody>{''.join(lines)}</tbody></table></div>")


def _pre(lines: list[Line]) -> str:
    """Diff lines with their changed words marked."""
    return f'<pre class="diff">{chr(10).join(render(lines, HTML))}</pre>'


def _snapshot_lines(row: Row) -> list[Line]:
    if row.snapshot_trace is not None and row.trace is not None:
        return trace_diff(row.snapshot_trace, row.trace)
    return [Line.of(line) for line in row.snapshot_diff]


def _against_snapshot(row: Row) -> str:
    if row.snapshot == "changed":
        return ("<h4>Trace against its committed snapshot: changed</h4>"
                '<p class="note">Snapshot → now (accept it with pytest --snapshot-update).</p>'
                + _pre(_snapshot_lines(row)))
    if row.snapshot == "missing":
        return "<h4>Trace against its committed snapshot: no snapshot yet</h4>"
    return ""


def _against_baseline(row: Row, delta: RowDelta | None) -> str:
    if delta is None or delta.baseline is None:
        return "<h4>Trace against the baseline: not in the baseline</h4>"
    before = delta.baseline.trace
    if before is None or row.trace is None:
        return ("<h4>Trace against the baseline: not compared</h4><p class=\"note\">The "
                "baseline keeps no trace of this run (its report folder has no "
                "<code>traces/</code> file for it).</p>")
    lines = trace_diff(before, row.trace)
    if not lines:
        return "<h4>Trace against the baseline: the same</h4>"
    if row.snapshot == "changed" and [str(x) for x in lines] == [
            str(x) for x in _snapshot_lines(row)]:
        return ""  # the same diff as against the snapshot: that pane says it, once
    return ("<h4>Trace against the baseline: changed</h4>"
            '<p class="note">Baseline → now, step by step.</p>' + _pre(lines))


def _section(row: Row, delta: RowDelta | None, diff: BaselineDiff | None) -> str:
    badge = f'<span class="badge b-{row.result}">{escape(row.result)}</span>'
    if delta is not None and delta.regressed:
        badge += ' <span class="badge b-regression">regression</span>'
    parts = [f'<section class="run" id="{run_anchor(row)}"><h3>{escape(row.key)} {badge}</h3>']
    if row.has_metrics:
        parts.append(f'<p class="meta">{escape(metrics_line(row))}</p>')
    if delta is not None and delta.reasons:
        parts.append('<h4>Regressed</h4><ul class="plain">'
                     + "".join(f"<li>{escape(r)}</li>" for r in delta.reasons) + "</ul>")
    if row.judged or row.roles:
        parts.append(_judged(row))
    if row.disagreements:
        parts.append(_disagreements(row))
    if row.problems:
        parts.append('<h4>Problems</h4><ul class="plain">'
                     + "".join(f"<li><pre>{escape(p)}</pre></li>" for p in row.problems)
                     + "</ul>")
    if row.timeline is not None:
        svg = timeline_svg(row.timeline, title=f"Timeline of {row.key}")
        parts.append("<h4>Timeline (simulated time; one lane per concurrent call)</h4>"
                     + (svg or '<p class="note">No simulated time passed: every call took '
                                "0 s.</p>"))
    if row.trace is not None and isinstance(row.trace.get("samples"), list):
        parts.append("<h4>Samples</h4>" + _samples_table(row))
    elif row.trace is not None:
        parts.append("<h4>Steps</h4>" + _steps_table(row.trace))
        parts.append(_world_changes(row.trace))
    snapshot = _against_snapshot(row)
    if diff is not None and row.has_metrics:
        baseline = _against_baseline(row, delta)
        if not baseline and snapshot:
            snapshot = snapshot.replace("against its committed snapshot: changed",
                                        "against its committed snapshot and the baseline's "
                                        "(the same trace): changed", 1)
        parts += [snapshot, baseline]
    else:
        parts.append(snapshot)
    parts.append("</section>")
    return "".join(parts)


def html_sections(comparison: Comparison, diff: BaselineDiff | None) -> Iterator[str]:
    """A section per row, in row order (linked from the tables by :func:`run_anchor`), one
    at a time: each run's trace is read back as its section is made
    (:meth:`Comparison.with_trace`)."""
    for kept in comparison.rows:
        row = comparison.with_trace(kept)
        yield _section(row, diff.for_row(kept) if diff is not None else None, diff)
