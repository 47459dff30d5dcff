"""Comparison reports: every scenario × agent type with its metrics, its trace and timeline,
deltas and regressions (failures and costs past their thresholds) against a baseline run,
rendered as Markdown, JSON and a self-contained HTML page with a section per run.

Typical use (what ``agentkit report`` does)::

    comparison = run_comparison("scenarios", ["react", "function_calling"])
    baseline = load_comparison("baseline/report.json")        # optional; reads its traces/
    write_report(comparison, "reports/latest", baseline=baseline)  # report.* and traces/
    failed = not comparison.passed or compare_to_baseline(comparison, baseline).has_regressions
"""

from agentkit.report._baseline import BaselineDiff, RowDelta, compare_to_baseline
from agentkit.report._compare import disagreement_lines, eval_comparison, row_from_samples, run_comparison
from agentkit.report._faults import fault_junit_cases, write_fault_report
from agentkit.report._files import load_comparison, merge_shards
from agentkit.report._junit import JUnitCase, junit_cases, sample_properties, write_junit
from agentkit.report._model import (
    METRICS,
    REPORT_FORMAT,
    AgentSummary,
    Comparison,
    ReportError,
    Row,
    contender_label,
)
from agentkit.report._render import (
    REPORT_MARKER,
    render_html,
    render_json,
    render_markdown,
    verdict_sentence,
    write_report,
)
from agentkit.report._suites import agentdojo_scores
from agentkit.report._thresholds import DEFAULT_THRESHOLDS, CostRegression, cost_regressions
from agentkit.report._wording import undecided_text

__all__ = [
    "agentdojo_scores",
    "disagreement_lines",
    "row_from_samples",
    "fault_junit_cases",
    "write_fault_report",
    "JUnitCase",
    "junit_cases",
    "sample_properties",
    "write_junit",
    "contender_label",
    "REPORT_MARKER",
    "undecided_text",
    "METRICS",
    "REPORT_FORMAT",
    "AgentSummary",
    "BaselineDiff",
    "CostRegression",
    "DEFAULT_THRESHOLDS",
    "Comparison",
    "ReportError",
    "Row",
    "RowDelta",
    "compare_to_baseline",
    "eval_comparison",
    "merge_shards",
    "cost_regressions",
    "load_comparison",
    "render_html",
    "render_json",
    "render_markdown",
    "run_comparison",
    "verdict_sentence",
    "write_report",
]
