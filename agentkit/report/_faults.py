"""The fault matrix report: per scenario, a table of its fault variants (rows) by agent type
(columns), each cell the run's outcome class linked to its trace and its timeline; then the totals per agent
type, and a sentence of who fabricates or crashes. JUnit cases carry the class as a
property."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from agentkit.core.files import atomic_write_text
from agentkit.harness import FaultMatrix, FaultVariant
from agentkit.report._junit import JUnitCase
from agentkit.report._timeline import spans_of, timeline_svg
from agentkit.scenario import FAULT_CLASSES
from agentkit.trace import Trace

__all__ = ["FAULT_REPORT", "fault_junit_cases", "fault_trace_path", "render_fault_matrix",
           "write_fault_report"]

FAULT_REPORT = "faults.md"
_COLUMNS = (*FAULT_CLASSES, "not_reached", "error")
_WORDS = {"recovered": "recovered", "failed_safely": "failed safely",
          "fabricated": "fabricated", "crashed": "crashed", "failed": "failed",
          "not_reached": "fault not reached",
          "error": "could not run"}


def fault_trace_path(matrix: FaultMatrix, variant: FaultVariant, agent_type: str,
                     kind: str = "traces") -> Path:
    """Where a cell's trace (``kind="timelines"``: its timeline, SVG) goes, relative to the
    report's folder."""
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "-", variant.label)
    suffix = ".json" if kind == "traces" else ".svg"
    return Path(kind) / matrix.scenario.name / agent_type / f"{stem}{suffix}"


def _timeline(matrix: FaultMatrix, variant: FaultVariant, agent_type: str) -> str | None:
    trace = matrix.cell(variant, agent_type).trace
    if not isinstance(trace, Trace):
        return None
    return timeline_svg(spans_of(trace), title=variant.name(matrix.scenario.name, agent_type))


def _cell(matrix: FaultMatrix, variant: FaultVariant, agent_type: str) -> str:
    outcome = matrix.outcome(variant, agent_type)
    word = _WORDS[outcome]
    if not matrix.cell(variant, agent_type).passed:
        word = f"**{word}** ✗"
    if matrix.cell(variant, agent_type).trace is None:
        return word
    cell = f"[{word}]({fault_trace_path(matrix, variant, agent_type).as_posix()})"
    if _timeline(matrix, variant, agent_type) is not None:
        path = fault_trace_path(matrix, variant, agent_type, "timelines").as_posix()
        cell += f" ([timeline]({path}))"
    return cell


def _totals(matrix: FaultMatrix, agent_type: str) -> dict[str, int]:
    counts = dict.fromkeys(_COLUMNS, 0)
    for variant in matrix.variants:
        counts[matrix.outcome(variant, agent_type)] += 1
    return counts


def _sentence(matrix: FaultMatrix) -> str:
    """``llm_compiler fabricates on 3 of 33 faults, react on 0; ...``."""
    total = len(matrix.variants)
    parts = []
    for outcome, verb in (("fabricated", "fabricates"), ("crashed", "crashes")):
        ranked = sorted(matrix.agent_types, key=lambda a: (-_totals(matrix, a)[outcome], a))
        if not ranked:
            continue
        first, rest = ranked[0], ranked[1:]
        counts = _totals(matrix, first)[outcome]
        tail = ", ".join(f"{a} on {_totals(matrix, a)[outcome]}" for a in rest)
        parts.append(f"{first} {verb} on {counts} of {total} faults" + (f", {tail}" if tail else ""))
    return "; ".join(parts) + "."


def render_fault_matrix(matrices: Sequence[FaultMatrix]) -> str:
    """The Markdown report of ``matrices`` (one section per scenario)."""
    lines = ["# Fault matrix", ""]
    for matrix in matrices:
        types = matrix.agent_types
        lines += [f"## {matrix.scenario.name}", "",
                  f"{len(matrix.variants)} fault variants × {len(types)} agent types; "
                  f"cells link to the run's trace and timeline; ✗ marks a class `expect.on_fault` does not "
                  "allow.", "",
                  "| fault | " + " | ".join(types) + " |",
                  "| --- |" + " --- |" * len(types)]
        for variant in matrix.variants:
            lines.append(f"| `{variant.label}` | "
                         + " | ".join(_cell(matrix, variant, a) for a in types) + " |")
        lines += ["", "| agent type | " + " | ".join(_WORDS[c] for c in _COLUMNS) + " |",
                  "| --- |" + " ---: |" * len(_COLUMNS)]
        for agent_type in types:
            counts = _totals(matrix, agent_type)
            lines.append(f"| {agent_type} | " + " | ".join(str(counts[c]) for c in _COLUMNS)
                         + " |")
        lines += ["", _sentence(matrix), ""]
        for agent_type, why in matrix.left_out.items():
            lines.append(f"- not run: {agent_type} ({why})")
        if matrix.left_out:
            lines.append("")
    return "\n".join(lines)


def write_fault_report(matrices: Sequence[FaultMatrix], out: str | Path) -> Path:
    """Write ``faults.md`` and each cell's trace under ``out`` (atomically); the report's
    path."""
    folder = Path(out)
    for matrix in matrices:
        for variant in matrix.variants:
            for agent_type in matrix.agent_types:
                trace = matrix.cell(variant, agent_type).trace
                if trace is not None:
                    atomic_write_text(folder / fault_trace_path(matrix, variant, agent_type),
                                      trace.to_json())
                timeline = _timeline(matrix, variant, agent_type)
                if timeline is not None:
                    atomic_write_text(folder / fault_trace_path(matrix, variant, agent_type,
                                                                "timelines"), timeline)
    report = folder / FAULT_REPORT
    atomic_write_text(report, render_fault_matrix(matrices))
    return report


def fault_junit_cases(matrices: Sequence[FaultMatrix]) -> list[JUnitCase]:
    """A JUnit case per cell, its class, fault and why as properties."""
    cases = []
    for matrix in matrices:
        for variant in matrix.variants:
            for agent_type in matrix.agent_types:
                verdict = matrix.cell(variant, agent_type).verdict
                lines = verdict.lines()
                properties = {"fault": variant.label,
                              "fault_class": matrix.outcome(variant, agent_type)}
                if verdict.fault is not None:
                    properties["fault_why"] = verdict.fault.why
                cases.append(JUnitCase(
                    matrix.scenario.name, variant.name(matrix.scenario.name, agent_type),
                    verdict.outcome, lines[0].removeprefix("- ") if lines else "",
                    "\n".join(lines), properties=properties))
    return cases
