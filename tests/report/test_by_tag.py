"""The report's By tag table: runs passed per tag of the scenarios and agent type, the tags
with runs that did not pass first, so a report of a thousand scenarios reads by category."""

from __future__ import annotations

import re

from agentkit.report import render_html, render_markdown
from agentkit.report._model import Comparison, Row

METRICS = {"steps": 1, "llm_calls": 1, "tool_calls": 0, "tool_errors": 0, "prompt_tokens": 1,
           "completion_tokens": 1, "wall_time": 0.0, "serial_time": 0.0, "critical_path": 0.0,
           "speedup": 1.0}


def _row(scenario: str, agent_type: str, status: str, *tags: str) -> Row:
    metrics = METRICS if status != "error" else {}
    return Row(scenario=scenario, agent_type=agent_type, status=status, tags=list(tags),
               problems=[] if status == "pass" else ["it failed"], **metrics)


COMPARISON = Comparison(agent_types=["react", "function_calling"], rows=[
    _row("s1", "react", "pass", "bfcl", "simple"),
    _row("s1", "function_calling", "pass", "bfcl", "simple"),
    _row("p1", "react", "fail", "bfcl", "parallel"),
    _row("p1", "function_calling", "pass", "bfcl", "parallel"),
    _row("p2", "react", "error", "bfcl", "parallel"),
    _row("p2", "function_calling", "pass", "bfcl", "parallel"),
    _row("m1", "react", "pass", "multiple"),
])


def test_each_tag_counts_the_runs_passed_per_agent_type_failures_first():
    assert COMPARISON.by_tag() == [
        ("bfcl", {("react", None): (1, 3), ("function_calling", None): (3, 3)}),
        ("parallel", {("react", None): (0, 2), ("function_calling", None): (2, 2)}),
        ("multiple", {("react", None): (1, 1)}),
        ("simple", {("react", None): (1, 1), ("function_calling", None): (1, 1)}),
    ]


def test_the_markdown_report_shows_the_table_before_which_is_best():
    text = render_markdown(COMPARISON)

    assert text.index("## By tag") < text.index("## Which is best")
    assert re.search(r"^\| parallel +\| +\*\*0/2\*\* \| +2/2 \|$", text, flags=re.M)
    assert re.search(r"^\| multiple +\| +1/1 \| +— \|$", text, flags=re.M)


def test_a_report_without_tags_has_no_such_table():
    untagged = Comparison(agent_types=["react"], rows=[_row("s1", "react", "pass")])

    assert "## By tag" not in render_markdown(untagged)


def test_tags_survive_report_json():
    again = Comparison.model_validate_json(COMPARISON.model_dump_json())

    assert again.by_tag() == COMPARISON.by_tag()


def test_the_page_shows_the_table_with_failing_cells_marked():
    page = render_html(COMPARISON)

    assert page.index("<h2>By tag</h2>") < page.index("<h2>Which is best</h2>")
    assert '<tr><td class="l">parallel</td><td class="b-fail">0/2</td><td>2/2</td></tr>' in page
