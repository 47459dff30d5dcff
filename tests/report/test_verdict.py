"""The verdict sentence at the top of the report, and Needs attention: every failed run,
every stable_fail and every regression, each once; a case under its min_pass_rate is not
``pass``."""

from __future__ import annotations

import json

from agentkit.eval._cases import CaseStats
from agentkit.report import render_html, render_markdown, verdict_sentence
from agentkit.report._model import Comparison, Row
from agentkit.report._render import render_summary

from .conftest import SCENARIOS, make_comparison, make_row


def _sampled(scenario: str, agent: str, passes: int, judged: int, *,
             min_pass_rate: float | None = None, status: str = "pass") -> Row:
    stats = CaseStats(passes, judged - passes)
    return make_row(scenario, agent, status=status, samples=judged, passes=passes,
                    pass_rate=stats.pass_rate, interval=stats.interval, confidence=0.95,
                    min_pass_rate=min_pass_rate, **{"class": stats.case_class})


def _attention(text: str) -> str:
    return text.split("## Needs attention", 1)[1].split("\n## ", 1)[0]


def test_the_verdict_names_who_passes_what_and_the_cheapest_over_what_each_pair_shares():
    comparison = make_comparison(
        make_row("s1", "react", prompt_tokens=99), make_row("s1", "coa", prompt_tokens=9),
        make_row("s1", "function_calling", prompt_tokens=39),
        make_row("s2", "react", prompt_tokens=99), make_row("s2", "coa", status="fail"),
        make_row("s3", "react", prompt_tokens=99),
        make_row("s3", "function_calling", prompt_tokens=39))

    assert verdict_sentence(comparison) == (
        "react and function_calling pass every scenario they ran (3 and 2 respectively); "
        "coa passes 1 of the 2 scenarios it ran (fails s2); the cheapest of them is "
        "function_calling: 2.5× fewer tokens per run than the other on the scenarios both "
        "passed (2 shared).")


def test_the_verdict_says_where_the_evidence_is_too_thin_and_what_would_decide_it():
    comparison = make_comparison(_sampled("live", "react", 2, 5),
                                 _sampled("live", "function_calling", 5, 5))

    assert verdict_sentence(comparison).endswith(
        "too close to call: react 2/5 vs function_calling 5/5 on live (about 6 samples each "
        "would decide).")


def test_the_verdict_opens_report_md_the_summary_and_the_page():
    comparison = make_comparison(make_row("a", "react"), make_row("a", "coa", status="fail"))
    sentence = verdict_sentence(comparison)

    assert sentence.startswith("react passes the 1 scenario it ran; coa passes 0 of the 1")
    markdown = render_markdown(comparison)
    assert markdown.split("\n")[4].startswith("**Verdict:** react passes the 1 scenario")
    assert markdown.index("**Verdict:**") < markdown.index("## Needs attention")
    assert "**Verdict:** react passes" in render_summary(comparison)
    page = render_html(comparison)
    assert page.index("<strong>Verdict:</strong> react passes") < page.index(
        "<h2>Needs attention</h2>")


def test_needs_attention_lists_every_failed_run():
    comparison = make_comparison(make_row("a", "react", status="fail"),
                                 make_row("b", "react", status="error"), make_row("c", "react"))

    attention = _attention(render_markdown(comparison))

    assert "- **Failed** `a[react]`: the answer was wrong" in attention
    assert "- **Could not run** `b[react]`: it broke" in attention
    assert "c[react]" not in attention


def test_needs_attention_lists_a_stable_fail_below_its_min_pass_rate_and_one_not_gated():
    gated = _sampled("a", "react", 0, 5, min_pass_rate=0.2, status="fail")
    measured = _sampled("b", "react", 0, 5, min_pass_rate=0)

    attention = _attention(render_markdown(make_comparison(gated, measured)))

    assert "- **Failed** `a[react]`: the answer was wrong" in attention
    assert ("- **Stable fail** `b[react]`: no sample passed: pass rate 0% (0/5; 0-43%); its "
            "min\\_pass\\_rate 0% does not gate it") in attention


def test_a_case_under_its_min_pass_rate_within_noise_is_undecided_not_pass():
    row = _sampled("a", "react", 2, 5, min_pass_rate=0.6)  # meets the gate within noise
    text = render_markdown(make_comparison(row))

    assert row.status == "pass" and row.result == "undecided"
    assert "| a          | react        | undecided |" in text
    assert "1 run: 0 passed, 0 failed, 0 errors, 1 undecided" in text
    assert ("- **Undecided** `a[react]`: pass rate 40% (2/5; 12-77%) is under its "
            "min\\_pass\\_rate 60%, but within noise; about 25 samples at this rate would put "
            "it under beyond noise") in _attention(text)
    assert row.to_dict()["result"] == "undecided"
    summary = make_comparison(row).summaries()[0]
    assert (summary.passed, summary.undecided) == (0, 1)
    read_back = Comparison.from_dict(json.loads(make_comparison(row).to_json()))
    assert read_back.rows[0].result == "undecided"  # derived again, not stored


def test_a_regressed_run_that_fails_is_listed_once():
    current = make_comparison(make_row("a", "react", status="fail", steps=5))
    baseline = make_comparison(make_row("a", "react", steps=1))

    attention = _attention(render_markdown(current, baseline))

    assert attention.count("`a[react]`") == 1
    assert ("- **Regression** `a[react]`: passed in the baseline; fails now: the answer was "
            "wrong; steps 1 → 5") in attention
    assert "### Regressions" not in render_html(current, baseline)


def test_the_verdict_quoted_in_the_reports_page_is_the_example_reports():
    example = (SCENARIOS.parent / "reports" / "example" / "report.md").read_text("utf-8")
    page = (SCENARIOS.parent / "docs" / "reports.md").read_text("utf-8")
    sentence = example.split("**Verdict:** ", 1)[1].split("\n", 1)[0].replace("\\_", "_")

    assert page.split("says:\n\n```text\n", 1)[1].split("\n```", 1)[0] == sentence
