"""Rows of sampled cases in a report: their statistics in report.json, the means as metrics,
and how the page, the Markdown and the pull-request summary show them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentkit.eval._samples import record_samples
from agentkit.llms.mock import ScriptedLLM, tool_call
from agentkit.report import render_json, run_comparison
from agentkit.report._render import render_html, render_markdown, render_summary
from tests.scenario_text import adding_scenario


def _scenario(extra: str = "") -> str:
    return adding_scenario("sam", f"""\
expect:
  answer: {{contains: "5"}}
{extra}agents:
  function_calling:
    recording: cassettes/sam.yaml
  react:
    script:
      - "Thought: add.\\nAction: add\\nAction Input: {{\\"a\\": 2, \\"b\\": 3}}"
      - "Thought: done.\\nAnswer: 5"
""")


@pytest.fixture
def sampled(tmp_path: Path):
    path = tmp_path / "sam.yaml"
    path.write_text(_scenario("min_pass_rate: 0.5\n"), "utf-8")
    answers = ["2 + 3 = 5", "2 + 3 = 6", "2 + 3 = 5", "2 + 3 = 5"]
    record_samples(path, "function_calling",
                   lambda i: ScriptedLLM([tool_call("add", a=2, b=3), answers[i]],
                                         strict=False, name="m"), 4)
    return run_comparison(path, ["function_calling", "react"])


def test_a_sampled_row_in_report_json_carries_its_statistics(sampled):
    row = json.loads(render_json(sampled))["rows"][0]

    assert (row["samples"], row["passes"], row["pass_rate"], row["class"]) == (4, 3, 0.75,
                                                                               "flaky")
    assert row["interval"] == [pytest.approx(0.3006, abs=1e-4), pytest.approx(0.9544, abs=1e-4)]
    assert row["pass_at_k"] == {"1": 0.75, "2": 1.0, "3": 1.0, "4": 1.0}
    assert row["pass_all_k"] == {"1": 0.75, "2": 0.5, "3": 0.25, "4": 0.0}
    assert (row["confidence"], row["min_pass_rate"]) == (0.95, 0.5)
    assert row["sample_outcomes"] == ["pass", "fail", "pass", "pass"]
    assert set(row["cost"]) == {"steps", "llm_calls", "tool_calls", "tokens", "wall_time",
                                "serial_time"}


def test_a_single_run_row_has_no_statistics(sampled):
    row = json.loads(render_json(sampled))["rows"][1]

    assert not {"samples", "pass_rate", "interval", "class"} & set(row)


def test_a_sampled_rows_metrics_are_the_means_over_its_samples(sampled):
    row = sampled.rows[0]

    assert (row.steps, row.llm_calls, row.tool_calls) == (2, 2, 1)
    assert row.cost is not None and row.cost["llm_calls"].sd == 0.0


def test_flaky_cases_are_listed_first_in_markdown_html_and_the_summary(sampled):
    markdown = render_markdown(sampled)
    attention = markdown.split("## Needs attention")[1].split("\n## ")[0]

    assert "**Flaky** `sam[function_calling]`: pass rate 75% (3/4; 30-95%)" in attention
    assert markdown.index("## Needs attention") < markdown.index("## Which is best") \
        < markdown.index("## Summary by agent type")
    assert '<span class="badge b-flaky">Flaky</span>' in render_html(sampled)
    assert "Flaky `sam[function_calling]`" in render_summary(sampled)


def test_the_row_table_shows_pass_rate_and_class_when_a_row_is_sampled(sampled):
    table = render_markdown(sampled).split("## Scenarios × agent types")[1]

    assert "Pass rate" in table and "| Class " in table
    assert "75% (3/4; 30-95%)" in table and "flaky" in table


def test_the_page_draws_whiskers_for_the_sampled_case_and_none_for_a_single_run(sampled):
    page = render_html(sampled)
    chart = page.split("<figcaption>Pass rate per scenario</figcaption>")[1].split("</svg>")[0]

    assert chart.count('class="whisker"') == 3  # a line and two caps, the sampled bar's only
    assert "sam[function_calling]: pass rate 75% (3/4)" in chart
    assert "sam[react]: FAIL (one run, no samples)" in chart


def test_the_page_plots_cost_against_pass_rate_a_dot_per_agent_type_with_its_interval(sampled):
    page = render_html(sampled)
    chart = page.split("<figcaption>Cost against pass rate</figcaption>")[1].split("</svg>")[0]

    assert chart.count("<circle ") == 2 and chart.count('class="spread"') == 2
    assert "function_calling: " in chart and "tokens per run, pass rate 75% (3/4)" in chart
    assert "react: 1,054 tokens per run, pass rate 0% (0/1)" in chart
    assert "tokens per run (mean)" in chart


def test_the_page_lists_each_sample_of_a_sampled_run(sampled):
    section = render_html(sampled).split('id="run-sam-function_calling"')[1]

    assert "<h4>Samples</h4>" in section
    assert section.split("</section>")[0].count('<td class="n">') >= 4 * 5
