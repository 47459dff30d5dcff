"""JUnit XML for CI systems (``--junit-xml PATH`` on ``agentkit run``, ``report`` and ``eval``):
one ``<testcase>`` per scenario × agent type (× model), a ``<failure>`` for a run or case that
failed (its problems as the text), an ``<error>`` for one that could not run or whose samples
hit infrastructure errors (the commands exit non-zero for those too), and, for a
sampled case, its statistics as ``<properties>`` (samples, pass rate, interval, class, and
``judges_disagree`` when its samples were judged differently) --
the shape GitLab, Jenkins, GitHub's test reporters and pytest's own ``--junitxml`` share.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from agentkit.core.files import atomic_write_text
from agentkit.report._model import Comparison, Row

__all__ = ["JUnitCase", "junit_cases", "junit_xml", "sample_properties", "write_junit"]


@dataclass(frozen=True)
class JUnitCase:
    """One test case: ``classname`` (the scenario), ``name`` (agent type, ``@model``),
    ``outcome``, the ``message`` (first problem) and ``details`` (all of them)."""

    classname: str
    name: str
    outcome: str  # pass | fail | error | regression
    message: str = ""
    details: str = ""
    seconds: float = 0.0
    properties: dict[str, str] = field(default_factory=dict)


def sample_properties(row: Row) -> dict[str, str]:
    """A sampled case's statistics as JUnit properties, and for any case the judges not
    calibrated against people (``judges_uncalibrated``) and a failed run's cause
    (``failure_cause``: agent, simulated_user, judge or infrastructure, and why)."""
    uncalibrated = ({"judges_uncalibrated": "; ".join(f"{at}: {why}" for at, why
                                                      in row.uncalibrated.items())}
                    if row.uncalibrated else {})
    if row.cause is not None:
        uncalibrated.update(failure_cause=row.cause.cause, failure_cause_why=row.cause.why)
    if not row.sampled:
        return uncalibrated
    found = {"samples": str(row.samples), "passes": str(row.passes),
             "infra_errors": str(row.infra_errors or 0), "class": str(row.class_)}
    if row.pass_rate is not None and row.interval is not None:
        found.update(pass_rate=f"{row.pass_rate:.6g}",
                     interval=f"{row.interval[0]:.6g}-{row.interval[1]:.6g}",
                     confidence=f"{row.confidence or 0.95:g}")
    if row.not_recorded:
        found["not_recorded"] = str(row.not_recorded)
    if row.gate_warning is not None:
        found["gate_warning"] = row.gate_warning
    if row.disagreements:
        found["judges_disagree"] = "; ".join(d.describe() for d in row.disagreements)
    return {**found, **uncalibrated}


def junit_cases(comparison: Comparison, regressions: dict[str, list[str]] | None = None
                ) -> list[JUnitCase]:
    """A case per row; ``regressions`` (row key: reasons) turn a passing row into a failure
    that says why (a pass-rate or cost regression against the baseline)."""
    cases = []
    for row in comparison.rows:
        name = row.key.removeprefix(row.scenario).strip("[]") or "load"
        reasons = (regressions or {}).get(row.key, [])
        problems = [*row.problems, *(f"regression: {r}" for r in reasons)]
        if row.infra_errors and row.status != "error":
            problems.append(f"{row.infra_errors} of {row.samples} samples hit infrastructure "
                            "errors (timeouts, 5xx, rate limits); the next run asks them again")
        outcome = ("error" if row.status == "error" else
                   "fail" if row.status == "fail" or reasons else
                   "error" if row.infra_errors else "pass")
        cases.append(JUnitCase(row.scenario, name, outcome,
                               problems[0].splitlines()[0] if problems else "",
                               "\n".join(problems), float(row.wall_time or 0.0),
                               sample_properties(row)))
    return cases


def junit_xml(cases: Sequence[JUnitCase], *, suite: str = "agentkit") -> str:
    """The JUnit XML text of ``cases`` (one ``<testsuite>``)."""
    failures = sum(c.outcome == "fail" for c in cases)
    errors = sum(c.outcome == "error" for c in cases)
    root = ET.Element("testsuites", name=suite, tests=str(len(cases)), failures=str(failures),
                      errors=str(errors))
    group = ET.SubElement(root, "testsuite", name=suite, tests=str(len(cases)),
                          failures=str(failures), errors=str(errors), skipped="0",
                          time=f"{sum(c.seconds for c in cases):.3f}")
    for case in cases:
        element = ET.SubElement(group, "testcase", classname=case.classname, name=case.name,
                                time=f"{case.seconds:.3f}")
        if case.properties:
            properties = ET.SubElement(element, "properties")
            for key, value in case.properties.items():
                ET.SubElement(properties, "property", name=key, value=value)
        if case.outcome in ("fail", "error"):
            tag = "failure" if case.outcome == "fail" else "error"
            problem = ET.SubElement(element, tag, message=case.message)
            problem.text = case.details
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, "unicode") + "\n"


def write_junit(path: str | Path, cases: Sequence[JUnitCase]) -> Path:
    """Write :func:`junit_xml` atomically to ``path``."""
    target = Path(path)
    atomic_write_text(target, junit_xml(cases))
    return target
