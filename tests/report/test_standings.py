"""The head-to-head table: the same scenarios for everyone, the best marked, ties within
noise shown as ties."""

from __future__ import annotations

from agentkit.eval._cases import CaseStats
from agentkit.report._model import Comparison, CostSpread, Row
from agentkit.report._standings import COST_LINES, head_to_head

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


def test_a_single_run_is_a_fact_so_a_failure_never_ties_with_a_pass():
    line = _line(_table(make_row("a", "react", status="fail"), make_row("a", "coa")), "a")

    assert line.best == [("coa", None)] and not line.tie
    assert line.values[("react", None)].text("pass_rate") == "FAIL"
    assert line.values[("coa", None)].text("pass_rate") == "pass"  # no interval


def test_single_runs_pooled_are_counts_without_an_interval():
    table = _table(make_row("a", "react"), make_row("a", "coa"),
                   make_row("b", "react", status="fail"), make_row("b", "coa"))
    pooled = _line(table, "All 2 compared scenarios")

    assert pooled.values[("react", None)].text("pass_rate") == "1/2 passed"
    assert pooled.best == [("coa", None)]


def test_a_sampled_rate_ties_with_a_single_run_only_when_the_run_lies_in_its_interval():
    assert _line(_table(_sampled("a", "react", 5, 5), make_row("a", "coa")), "a").tie
    line = _line(_table(_sampled("a", "react", 4, 5), make_row("a", "coa")), "a")

    assert line.best == [("coa", None)]


def test_no_cost_star_lands_on_a_failed_run():
    table = _table(make_row("a", "react", prompt_tokens=500, llm_calls=5, wall_time=5.0),
                   make_row("a", "coa", status="fail", prompt_tokens=10, llm_calls=1,
                            wall_time=0.1, critical_path=0.1))

    for label, _ in COST_LINES:
        line = _line(table, label)
        assert line.best == [("react", None)], label
        assert line.values[("coa", None)].text(line.kind) == "failed"


def test_a_pair_is_compared_on_every_scenario_both_ran_whatever_a_third_type_ran():
    table = _table(make_row("a", "react"), make_row("a", "coa"), make_row("a", "llm_compiler"),
                   make_row("b", "react"), make_row("b", "coa", status="fail"),
                   make_row("c", "react", prompt_tokens=99), make_row("c", "coa",
                                                                     prompt_tokens=9))
    pair = next(p for p in table.pairs if p.contenders == (("react", None), ("coa", None)))

    assert table.scenarios == ["a"]  # the overall table: what all three ran
    assert pair.scenarios == ["a", "b", "c"] and pair.passes == (3, 2)
    assert [d.scenario for d in pair.wins(("react", None))] == ["b"]
    assert pair.both_passed == ["a", "c"]  # costs: over the runs both passed only
    tokens = next(c for c in pair.costs if c.label == "Tokens per run")
    assert tokens.means == (51.0, 6.0) and tokens.cheaper == ("coa", None)
    assert [p.scenarios for p in table.pairs if ("llm_compiler", None) in p.contenders] == [
        ["a"], ["a"]]
    data = table.to_dict()["pairs"][0]
    assert (data["pair"], data["passes"], data["better"]) == (
        ["react", "coa"], {"react": 3, "coa": 2}, {"react": ["b"], "coa": []})


def test_a_pair_too_close_to_call_says_how_many_samples_would_decide_it():
    table = _table(_sampled("a", "react", 2, 5), _sampled("a", "coa", 5, 5))
    decision = table.pairs[0].decisions[0]

    assert decision.better is None and decision.thin
    assert decision.decide_at == 6  # 6/6 against 2/6 (rounded 33%): Fisher's p under 5%
