"""Resumed runs side by side: for a run that went on from a checkpoint of another agent type's
recorded run (``resume_from:``), the recorded continuation and its own, step by step, from the
step after the resume point.

A resumed run's trace says where it took over (the turn's ``resumed: {from, after_step}``);
the recorded continuation is the trace of the recorded agent type's row in the same report.
"""

from __future__ import annotations

from dataclasses import dataclass
from html import escape
from typing import Any

from agentkit.core.textdiff import short
from agentkit.report._model import Comparison, Row

__all__ = ["Continuations", "continuations", "markdown_continuations", "html_continuations"]


@dataclass(frozen=True)
class Continuations:
    """A resumed row and the recorded run it went on from: the agent type of the recording,
    how many of its steps were replayed, and the steps after them of each run (over the
    turns, each as one line of text; ``recorded`` is None when the recording's row is not in
    the report)."""

    row: Row
    recording: str
    after_step: int
    recorded: list[str] | None
    resumed: list[str]


def _steps(trace: dict[str, Any]) -> list[dict[str, Any]]:
    return [step for turn in trace.get("turns", []) for step in turn.get("steps", [])]


def _resume_point(trace: dict[str, Any]) -> tuple[str, int] | None:
    for turn in trace.get("turns", []):
        resumed = turn.get("resumed")
        if isinstance(resumed, dict):
            return str(resumed.get("from")), int(resumed.get("after_step", 0))
    return None


def _args(args: Any) -> str:
    if not isinstance(args, dict):
        return short(args, 60)
    return ", ".join(f"{key}={short(value, 40)}" for key, value in args.items())


def step_text(step: dict[str, Any]) -> str:
    """One line saying what an agent step did: its tool calls with their outputs, or its
    answer."""
    calls = [f"{call.get('name')}({_args(call.get('args'))}) → "
             f"{'error: ' if call.get('is_error') else ''}{short(call.get('output'), 60)}"
             for call in step.get("tool_calls") or []]
    if calls:
        return "; ".join(calls)
    error = step.get("error")
    if error:
        return f"error: {short(error, 100)}"
    prefix = "answer: " if step.get("is_last") else "says: "
    return prefix + short(step.get("output"), 100)


def continuations(comparison: Comparison) -> list[Continuations]:
    """Every resumed row of ``comparison`` with the recorded continuation it is compared to."""
    found = []
    for kept in comparison.rows:
        row = comparison.with_trace(kept)
        point = _resume_point(row.trace) if row.trace is not None else None
        if point is None:
            continue
        recording, after = point
        source = comparison.row(row.scenario, recording)
        source = comparison.with_trace(source) if source is not None else None
        recorded = ([step_text(s) for s in _steps(source.trace)[after:]]
                    if source is not None and source.trace is not None else None)
        assert row.trace is not None
        found.append(Continuations(row, recording, after, recorded,
                                   [step_text(s) for s in _steps(row.trace)[after:]]))
    return found


def _pairs(item: Continuations) -> list[tuple[int, str, str]]:
    recorded = item.recorded or []
    count = max(len(recorded), len(item.resumed))
    return [(item.after_step + index + 1,
             recorded[index] if index < len(recorded) else "—",
             item.resumed[index] if index < len(item.resumed) else "—")
            for index in range(count)]


def _lead(item: Continuations) -> str:
    first = "step 1" if item.after_step == 1 else f"steps 1 to {item.after_step}"
    return (f"{item.row.key} replayed {first} of the recorded run of {item.recording}, then "
            "went on with its own model:")


def _missing(item: Continuations) -> str:
    return (f"The recorded run of {item.recording} is not in this report (add "
            f"{item.recording} to --agents to see its continuation).")


_TITLE = "Resumed runs"
_NOTE = ("Runs that went on from a checkpoint of another agent type's recorded run: the recorded "
         "continuation and the resumed one, step by step.")


def markdown_continuations(comparison: Comparison) -> list[str]:
    """The report's Markdown section of resumed runs (none without one)."""
    items = continuations(comparison)
    if not items:
        return []
    lines = [f"## {_TITLE}", "", _NOTE, ""]
    for item in items:
        lines += [f"### {item.row.key}", "", _lead(item), ""]
        if item.recorded is None:
            lines += [_missing(item), ""]
        header = f"| Step | {item.recording} (recorded) | {item.row.agent_type} (resumed) |"
        lines += [header, "| ---: | --- | --- |"]
        lines += [f"| {number} | {_cell(old)} | {_cell(new)} |"
                  for number, old, new in _pairs(item)]
        lines.append("")
    return lines


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def html_continuations(comparison: Comparison) -> list[str]:
    """The report page's section of resumed runs (none without one)."""
    items = continuations(comparison)
    if not items:
        return []
    parts = [f"<h2>{_TITLE}</h2>", f'<p class="note">{escape(_NOTE, quote=False)}</p>']
    for item in items:
        parts.append(f"<h3>{escape(item.row.key)}</h3><p>{escape(_lead(item))}</p>")
        if item.recorded is None:
            parts.append(f'<p class="note">{escape(_missing(item))}</p>')
        rows = "".join(f'<tr><td class="n">{number}</td><td>{escape(old)}</td>'
                       f"<td>{escape(new)}</td></tr>" for number, old, new in _pairs(item))
        parts.append('<div class="wrap"><table class="steps"><thead><tr><th>Step</th>'
                     f"<th>{escape(item.recording)} (recorded)</th>"
                     f"<th>{escape(item.row.agent_type or '')} (resumed)</th></tr></thead>"
                     f"<tbody>{rows}</tbody></table></div>")
    return parts
