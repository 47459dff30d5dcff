"""Comparison reports: every scenario × agent type with its metrics, its trace and timeline,
deltas and regressions (failures and costs past their thresholds) against a baseline run,
rendered as Markdown, JSON and a self-contained HTML page with a section per run.

Typical use (what ``agentkit report`` does)::

    comparison = run_comparison("scenarios", ["react", "function_calling"])
    baseline = load_comparison("baseline/report.json")        # optional; reads its traces/
    write_report(comparison, "reports/latest", baseline=baseline)  # report.* and traces/
    failed = not comparison.passed or compare_to_baseline(comparison, baseline).has_regressions
"""

from agentkit.report._files import load_comparison, merge_shards
from agentkit.report.baseline import BaselineDiff, RowDelta, compare_to_baseline
from agentkit.report.compare import eval_comparison, run_comparison
from agentkit.report.model import (
    METRICS,
    REPORT_FORMAT,
    AgentSummary,
    Comparison,
    ReportError,
    Row,
)
from agentkit.report.render import (
    render_html,
    render_json,
    render_markdown,
    verdict_sentence,
    write_report,
)
from agentkit.report.thresholds import DEFAULT_THRESHOLDS, CostRegression, cost_regressions

__all__ = [
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
