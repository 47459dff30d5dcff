"""run_comparison: one row per scenario × declared agent type, metrics from the traces."""

from __future__ import annotations

import json

import pytest

from agentkit.harness import load
from agentkit.report import run_comparison
from agentkit.scenario import ScenarioError, discover_scenarios, load_scenario, run_scenario
from agentkit.scenario.judge import SnapshotFiles

from .conftest import AGENT_TYPES, SCENARIOS, passing_scenario


def _scenarios():
    return [load(p) for p in discover_scenarios(SCENARIOS)]


@pytest.mark.slow  # a comparison report of every bundled scenario
def test_there_is_a_row_per_scenario_and_declared_agent_type(bundled):
    expected = [(s.name, t) for s in _scenarios() for t in AGENT_TYPES if t in s.agents]

    assert [(r.scenario, r.agent_type) for r in bundled.rows] == expected


@pytest.mark.slow  # a comparison report of every bundled scenario
def test_row_metrics_are_the_trace_totals(bundled):
    files = {load_scenario(p).name: p for p in discover_scenarios(SCENARIOS)}
    for row in bundled.rows:
        if row.sampled:  # the means over its samples: tests/report/test_sampled_rows.py
            continue
        trace = run_scenario(files[row.scenario], row.agent_type).trace
        assert (row.steps, row.llm_calls, row.tool_calls) == (
            len(trace.steps), len(trace.llm_calls), len(trace.tool_calls)), row.key
        assert row.tool_errors == sum(c.is_error for c in trace.tool_calls), row.key
        assert row.prompt_tokens == sum(c.usage["prompt_tokens"] for c in trace.llm_calls)
        assert row.completion_tokens == sum(c.usage["completion_tokens"]
                                            for c in trace.llm_calls)


def test_concurrent_tool_calls_give_function_calling_a_speedup_on_slow_tools(bundled):
    scenario = load_scenario(SCENARIOS / "slow_tools.yaml")
    spec = scenario.agents["function_calling"]
    llm_time = len(spec.script) * spec.latency
    lookups = len(spec.script[0].tool_calls)
    tool_latency = scenario.tools[0].latency
    wall = llm_time + tool_latency
    serial = llm_time + lookups * tool_latency

    row = bundled.row("slow_tools", "function_calling")

    assert (row.wall_time, row.serial_time, row.critical_path) == (wall, serial, wall)
    assert row.speedup == serial / wall == 2.0


def test_sequential_react_on_slow_tools_has_no_speedup(bundled):
    scenario = load_scenario(SCENARIOS / "slow_tools.yaml")
    spec = scenario.agents["react"]
    lookups = len(spec.script) - 1
    expected = len(spec.script) * spec.latency + lookups * scenario.tools[0].latency

    row = bundled.row("slow_tools", "react")

    assert (row.wall_time, row.serial_time, row.speedup) == (expected, expected, 1.0)


def test_speedup_is_one_when_no_simulated_time_passed(write_scenario):
    path = write_scenario("instant.yaml", passing_scenario("instant"))
    row = run_comparison(path, ["function_calling"]).row("instant", "function_calling")

    assert (row.wall_time, row.speedup) == (0.0, 1.0)


def _compared_rows(comparison, agent_type):
    shared = comparison.compared().scenarios
    return [r for r in comparison.rows if r.agent_type == agent_type and r.scenario in shared]


def test_summary_counts_passed_runs_per_agent_type_on_the_shared_scenarios(bundled):
    for summary in bundled.summaries():
        rows = _compared_rows(bundled, summary.agent_type)
        assert (summary.runs, summary.passed) == (len(rows), sum(r.passed for r in rows))


def test_every_summary_totals_the_same_scenarios(bundled):
    shared = bundled.compared().scenarios
    assert shared and all(summary.runs == len(shared) for summary in bundled.summaries())


def test_an_agent_type_sharing_no_scenario_with_the_others_is_left_out_saying_why(lone_react):
    left_out = dict(lone_react.compared().left_out)

    assert list(left_out) == [("react", None)]
    assert "ran 1 scenario, none of them run by all the others" in left_out[("react", None)]
    assert [s.agent_type for s in lone_react.summaries()] == ["function_calling"]


def test_a_scenario_one_agent_type_lacks_is_not_in_the_summary(write_scenario):
    shared = write_scenario("shared.yaml", passing_scenario("shared"))
    only = write_scenario("only.yaml", passing_scenario("only").replace(
        "agents:\n", "agents:\n  react:\n    script: ['Answer: 5']\n"))

    comparison = run_comparison([shared, only], ["function_calling", "react"])

    assert comparison.compared().scenarios == ["only"]  # react did not run `shared`
    assert [s.runs for s in comparison.summaries()] == [1, 1]


def test_summary_totals_and_means_are_over_the_agent_types_rows(bundled):
    for summary in bundled.summaries():
        rows = _compared_rows(bundled, summary.agent_type)
        assert summary.total["tool_calls"] == sum(r.tool_calls for r in rows)
        assert summary.total["prompt_tokens"] == sum(r.prompt_tokens for r in rows)
        assert summary.mean["steps"] == round(sum(r.steps for r in rows) / len(rows), 6)
        serial, wall = sum(r.serial_time for r in rows), sum(r.wall_time for r in rows)
        assert summary.total["speedup"] == round(serial / wall, 6)


def test_agent_type_filter_keeps_only_the_listed_types():
    comparison = run_comparison(SCENARIOS / "slow_tools.yaml", ["function_calling"])

    assert [r.key for r in comparison.rows] == ["slow_tools[function_calling]"]
    assert comparison.agent_types == ["function_calling"]


def test_without_a_filter_every_declared_agent_type_runs_in_first_declared_order(
        write_scenario):
    path = write_scenario("one.yaml", passing_scenario("one"))

    comparison = run_comparison([SCENARIOS / "slow_tools.yaml", path])

    assert comparison.agent_types == ["react", "function_calling", "function_agent",
                                      "react_agent"]
    assert [r.key for r in comparison.rows] == [
        "slow_tools[react]", "slow_tools[function_calling]", "slow_tools[function_agent]",
        "slow_tools[react_agent]", "one[function_calling]"]


def test_workflow_agent_types_bring_their_workflow_diagram():
    comparison = run_comparison(SCENARIOS / "slow_tools.yaml")
    assert list(comparison.diagrams) == ["function_agent", "react_agent"]
    assert comparison.diagrams["function_agent"].startswith("flowchart TD\n")
    assert "step_call_tool" in comparison.diagrams["react_agent"]


def test_unknown_agent_type_in_the_filter_is_an_error_naming_it():
    with pytest.raises(ScenarioError, match=r"unknown agent type `reakt`.*did you mean `react`"):
        run_comparison(SCENARIOS, ["reakt"])


def test_missing_scenario_path_is_an_error():
    with pytest.raises(ScenarioError, match="no such scenario file or directory"):
        run_comparison(SCENARIOS / "nope")


def test_failing_expectation_gives_a_fail_row_with_its_problems(write_scenario):
    path = write_scenario("wrong.yaml", passing_scenario("wrong", answer="42"))

    row = run_comparison(path).rows[0]

    assert row.status == "fail"
    assert any("42" in problem for problem in row.problems)
    assert row.steps == 2


def test_unloadable_scenario_file_becomes_an_error_row_and_the_rest_still_run(write_scenario):
    write_scenario("a_good.yaml", passing_scenario("a_good"))
    broken = write_scenario("broken.yaml", "format: 1\nname: broken\nturns: [\n")

    comparison = run_comparison(broken.parent, snapshots=SnapshotFiles("off"))

    assert [(r.key, r.status) for r in comparison.rows] == [
        ("a_good[function_calling]", "pass"), ("broken", "error")]
    error = comparison.rows[1]
    assert error.agent_type is None
    assert str(broken) in error.problems[0] and "invalid YAML" in error.problems[0]


@pytest.mark.agentkit_allow_unused_script  # the run stops before the script is used
def test_scenario_that_cannot_run_becomes_an_error_row_per_agent_type(write_scenario):
    text = passing_scenario("bad_tool").replace("mocks.tools:add", "mocks.tools:nothing_here")
    path = write_scenario("bad_tool.yaml", text)

    row = run_comparison(path).rows[0]

    assert (row.key, row.status) == ("bad_tool[function_calling]", "error")
    assert "tools.0.ref" in row.problems[0]
    assert row.steps is None


def test_second_scenario_with_the_same_name_is_an_error_row(write_scenario):
    write_scenario("a.yaml", passing_scenario("twin"))
    write_scenario("b.yaml", passing_scenario("twin"))

    comparison = run_comparison(write_scenario("c.yaml", passing_scenario("c")).parent,
                                snapshots=SnapshotFiles("off"))

    assert [(r.key, r.status) for r in comparison.rows] == [
        ("twin[function_calling]", "pass"), ("twin", "error"), ("c[function_calling]", "pass")]
    assert "already used" in comparison.rows[1].problems[0]


def test_progress_is_told_each_run_with_the_total_known_from_the_start(write_scenario):
    write_scenario("a_one.yaml", passing_scenario("a_one"))
    write_scenario("b_broken.yaml", "format: 1\nname: broken\nturns: [\n")
    folder = write_scenario("c_two.yaml", passing_scenario("c_two")).parent
    seen: list[tuple[int, int, str]] = []

    comparison = run_comparison(folder, progress=lambda done, total, row:
                                 seen.append((done, total, row.key)))

    assert seen == [(1, 2, "a_one[function_calling]"), (2, 2, "c_two[function_calling]")]
    assert [r.key for r in comparison.rows] == ["a_one[function_calling]", "b_broken",
                                                "c_two[function_calling]"]


# ----------------------------------------------------------------- what a row keeps of its run
def test_a_row_keeps_its_trace_and_its_calls_on_simulated_time(bundled):
    row = next(r for r in bundled.rows if r.key == "slow_tools[function_calling]")

    assert row.trace == run_scenario(SCENARIOS / "slow_tools.yaml", "function_calling"
                                     ).trace.to_dict()
    tools = [s for s in row.timeline if s.kind == "tool"]
    assert [(s.label, s.start, s.end) for s in tools] == [("population", 1.0, 3.0)] * 3
    assert [(s.kind, s.start, s.end) for s in row.timeline if s.kind == "llm"] == [
        ("llm", 0.0, 1.0), ("llm", 3.0, 4.0)]  # the three 2 s look-ups at once


def test_a_row_keeps_the_scenarios_own_thresholds_only_when_it_has_some(write_scenario):
    write_scenario("plain.yaml", passing_scenario("plain"))
    path = write_scenario("own.yaml", passing_scenario("own")
                          + "thresholds:\n  tokens: {relative: 0.5}\n")

    own, plain = run_comparison(path.parent).rows

    assert (plain.scenario, plain.thresholds) == ("plain", None)
    assert own.thresholds is not None and own.thresholds.tokens.relative == 0.5
    assert own.to_dict()["thresholds"] == {"tokens": {"relative": 0.5}}
    assert "thresholds" not in plain.to_dict()


def test_a_bundled_run_matches_its_committed_snapshot(bundled):
    assert {r.snapshot for r in bundled.rows} == {"same"}


def test_a_run_without_a_snapshot_says_so(write_scenario):
    row = run_comparison(write_scenario("new.yaml", passing_scenario("new"))).rows[0]

    assert (row.snapshot, row.snapshot_diff) == ("missing", [])


def test_a_run_whose_trace_differs_from_its_snapshot_keeps_the_diff(write_scenario):
    path = write_scenario("snap.yaml", passing_scenario("snap"))
    trace = run_scenario(path).trace.to_dict()
    trace["turns"][0]["response"] = "2 + 3 = 6"
    snapshot = path.parent / "__snapshots__" / "snap" / "function_calling.json"
    snapshot.parent.mkdir(parents=True)
    snapshot.write_text(json.dumps(trace), encoding="utf-8")

    row = run_comparison(path).rows[0]

    assert row.snapshot == "changed"
    assert row.snapshot_diff == ['turn 1 ("What is 2 + 3?"):', '    response: "2 + 3 = 6" -> '
                                 '"2 + 3 = 5"']
