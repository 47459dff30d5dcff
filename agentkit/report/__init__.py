"""Comparison reports: every scenario × agent type with its metrics, deltas against a baseline
run, rendered as Markdown, JSON and a self-contained HTML page.

Typical use (what ``agentkit report`` does)::

    comparison = run_comparison("scenarios", ["react", "function_calling"])
    baseline = load_comparison("baseline/report.json")        # optional
    write_report(comparison, "reports", baseline=baseline)
    failed = not comparison.passed or compare_to_baseline(comparison, baseline).has_regressions
"""

from agentkit.report.baseline import BaselineDiff, RowDelta, compare_to_baseline
from agentkit.report.compare import run_comparison
from agentkit.report.model import (
    METRICS,
    REPORT_FORMAT,
    AgentSummary,
    Comparison,
    ReportError,
    Row,
    load_comparison,
)
from agentkit.report.render import render_html, render_json, render_markdown, write_report

__all__ = [
    "METRICS",
    "REPORT_FORMAT",
    "AgentSummary",
    "BaselineDiff",
    "Comparison",
    "ReportError",
    "Row",
    "RowDelta",
    "compare_to_baseline",
    "load_comparison",
    "render_html",
    "render_json",
    "render_markdown",
    "run_comparison",
    "write_report",
]
