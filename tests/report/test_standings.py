"""The head-to-head table: the same scenarios for everyone, the best marked, ties within
noise shown as ties."""

from __future__ import annotations

from agentkit.eval.cases import CaseStats
from agentkit.report.model import Comparison, CostSpread, Row
from agentkit.report.standings import head_to_head

from .conftest import make_row


def _sampled(scenario: str, agent: str, passes: int, judged: int, tokens: float = 100,
             sd: float = 0.0) -> Row:
    stats = CaseStats(passes, judged - passes)
    spread = CostSpread(mean=tokens, sd=sd, min=tokens, max=tokens)
    return make_row(scenario, agent, samples=judged, passes=passes, pass_rate=stats.pass_rate,
                    interval=stats.interval, confidence=0.95, prompt_tokens=tokens,
                    completion_tokens=0, cost={"tokens": spread},
                    **{"class": stats.case_class})


def _table(*rows: Row):
    types = list(dict.fromkeys(r.agent_type for r in rows if r.agent_type))
    return head_to_head(Comparison(agent_types=types, rows=list(rows)))


def _line(table, label: str):
    return next(line for line in table.lines if line.label == label)


def test_only_scenarios_every_compared_type_ran_are_in_the_table():
    table = _table(_sampled("a", "react", 5, 10), _sampled("a", "coa", 5, 10),
                   _sampled("b", "react", 5, 10))

    assert table.scenarios == ["a"]


def test_a_clearly_higher_pass_rate_is_the_one_best():
    line = _line(_table(_sampled("a", "react", 20, 20), _sampled("a", "coa", 5, 20)), "a")

    assert line.best == [("react", None)] and not line.tie


def test_pass_rates_within_noise_are_a_tie():
    line = _line(_table(_sampled("a", "react", 9, 10), _sampled("a", "coa", 7, 10)), "a")

    assert line.best == [("react", None), ("coa", None)] and line.tie


def test_the_pooled_line_adds_up_passes_over_the_compared_scenarios():
    table = _table(_sampled("a", "react", 9, 10), _sampled("a", "coa", 2, 10),
                   _sampled("b", "react", 8, 10), _sampled("b", "coa", 3, 10))
    pooled = _line(table, "All 2 compared scenarios")

    assert (pooled.values[("react", None)].passes, pooled.values[("react", None)].judged) == (
        17, 20)
    assert pooled.best == [("react", None)]


def test_the_lowest_cost_is_best_and_equal_costs_of_single_runs_tie():
    table = _table(make_row("a", "react", prompt_tokens=50, completion_tokens=50),
                   make_row("a", "coa", prompt_tokens=50, completion_tokens=50),
                   make_row("a", "llm_compiler", prompt_tokens=80, completion_tokens=50))

    assert _line(table, "Tokens per run").best == [("react", None), ("coa", None)]


def test_costs_within_their_standard_errors_tie():
    noisy = _table(_sampled("a", "react", 5, 10, tokens=100, sd=30),
                   _sampled("a", "coa", 5, 10, tokens=110, sd=30))
    clear = _table(_sampled("a", "react", 5, 10, tokens=100, sd=1),
                   _sampled("a", "coa", 5, 10, tokens=110, sd=1))

    assert _line(noisy, "Tokens per run").tie
    assert _line(clear, "Tokens per run").best == [("react", None)]


def test_an_agent_type_that_could_not_run_is_never_best():
    line = _line(_table(make_row("a", "react", status="error"), make_row("a", "coa")), "a")

    assert line.best == [("coa", None)]
    assert line.values[("react", None)].text("pass_rate") == "error"


def test_the_table_is_in_report_json_form():
    data = _table(_sampled("a", "react", 9, 10), _sampled("a", "coa", 2, 10)).to_dict()

    assert data["contenders"] == ["react", "coa"] and data["scenarios"] == ["a"]
    first = data["lines"][0]
    assert (first["label"], first["best"], first["tie"]) == ("a", ["react"], False)
    assert first["values"]["react"]["passes"] == 9
