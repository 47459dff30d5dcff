"""A report of a thousand scenarios stays small in memory and readable: each run's trace is
kept on disk as the run finishes (the rows keep none, and share their set of fields), the
files are written as they are made (report.json a row at a time, the Markdown table a chunk
of rows at a time, the page a section at a time), and the Which is best table pools its
scenarios per tag, then lists those where the agent types differ."""

from __future__ import annotations

import gc
import json
import weakref
from pathlib import Path, PurePath
from typing import Any

import pytest
from tabulate import tabulate

from agentkit.core import files
from agentkit.report import (
    Comparison,
    Row,
    _markdown,
    _standings,
    render_json,
    render_markdown,
    run_comparison,
    write_report,
)
from agentkit.report._render import json_pieces
from agentkit.report._standings import SCENARIO_LINES, head_to_head
from agentkit.report._store import RunStore
from agentkit.report._wording import LISTED, verdict

from .conftest import AGENT_TYPES, SCENARIOS

METRICS = {"steps": 1, "llm_calls": 1, "tool_calls": 0, "tool_errors": 0, "prompt_tokens": 1,
           "completion_tokens": 1, "wall_time": 0.0, "serial_time": 0.0, "critical_path": 0.0,
           "speedup": 1.0}


def _row(scenario: str, agent_type: str, passed: bool, tag: str) -> Row:
    return Row(scenario=scenario, agent_type=agent_type, status="pass" if passed else "fail",
               tags=["bfcl", tag], problems=[] if passed else ["it failed"], **METRICS)


def _suite(scenarios: int, react_fails: int = 1) -> Comparison:
    """``scenarios`` cases (a third `parallel`, the rest `simple`) under react and
    function_calling; react fails the first ``react_fails`` parallel ones."""
    rows = []
    for index in range(scenarios):
        tag = "parallel" if index % 3 == 0 else "simple"
        name = f"{tag}_{index:03d}"
        rows += [_row(name, "react", not (tag == "parallel" and index // 3 < react_fails), tag),
                 _row(name, "function_calling", True, tag)]
    return Comparison(agent_types=["react", "function_calling"], rows=rows)


def test_a_head_to_head_over_many_scenarios_pools_them_per_tag_failures_first():
    table = head_to_head(_suite(30))

    assert table.summarized
    assert [line.label for line in table.lines[:3]] == [
        "tag bfcl (30 scenarios)", "tag parallel (10 scenarios)", "tag simple (20 scenarios)"]
    parallel = table.lines[1].values
    assert (parallel[("react", None)].passes, parallel[("react", None)].judged) == (9, 10)
    assert table.lines[1].best == [("function_calling", None)]


def test_then_it_lists_only_the_scenarios_where_the_agent_types_differ():
    table = head_to_head(_suite(30, react_fails=2))
    labels = [line.label for line in table.lines]

    assert table.differ == ["parallel_000", "parallel_003"]
    assert labels[3:6] == ["parallel_000", "parallel_003", "All 30 compared scenarios"]
    assert "simple_001" not in labels


def test_the_scenarios_that_differ_have_a_line_each_up_to_the_limit():
    table = head_to_head(_suite(3 * (SCENARIO_LINES + 5), react_fails=SCENARIO_LINES + 5))

    assert len(table.differ) == SCENARIO_LINES + 5
    assert sum(line.label in table.differ for line in table.lines) == SCENARIO_LINES


def test_a_head_to_head_of_up_to_the_limit_keeps_a_line_per_scenario():
    table = head_to_head(_suite(SCENARIO_LINES))

    assert not table.summarized
    assert [line.label for line in table.lines[:SCENARIO_LINES]] == [
        f"{'parallel' if i % 3 == 0 else 'simple'}_{i:03d}" for i in range(SCENARIO_LINES)]


def test_the_markdown_table_says_it_is_summarized_and_how():
    text = render_markdown(_suite(300, react_fails=2))
    best = text.split("## Which is best", 1)[1].split("\n## ", 1)[0]

    assert ("(more than 25: pooled per tag of the scenarios, tags with failures first, then 2 "
            "where their results differ; every run is in the Scenarios × agent types table)"
            in best)
    assert "| tag parallel (100 scenarios) " in best and "| parallel_003 " in best
    assert "simple_001" not in best and best.count("\n|") == 2 + 3 + 2 + 1 + 4


def test_the_json_head_to_head_names_every_scenario_that_differs():
    data = json.loads(render_json(_suite(30, react_fails=2)))["head_to_head"]

    assert data["summarized"] is True and data["differ"] == ["parallel_000", "parallel_003"]
    assert len(data["lines"]) == 3 + 2 + 1 + 4


def test_the_verdict_names_the_first_failures_and_counts_the_rest():
    sentence = verdict(head_to_head(_suite(3 * (LISTED + 4), react_fails=LISTED + 4)))

    assert f"react passes {2 * (LISTED + 4)} of the {3 * (LISTED + 4)} scenarios" in sentence
    assert "parallel_027 and 4 more" in sentence and "parallel_030" not in sentence


def test_runs_kept_on_disk_leave_no_trace_in_the_rows_and_read_back(tmp_path: Path):
    comparison = run_comparison(SCENARIOS / "parallel_lookups.yaml", AGENT_TYPES,
                                runs_folder=tmp_path / "runs")

    assert comparison.rows and all(r.trace is None and r.timeline is None
                                   for r in comparison.rows)
    row = comparison.with_trace(comparison.rows[0])
    assert row.trace is not None and row.trace["turns"] and row.timeline


def test_a_report_from_runs_kept_on_disk_is_byte_for_byte_the_same(tmp_path: Path):
    paths = [SCENARIOS / "single_tool_call.yaml", SCENARIOS / "checkpoint_resume.yaml"]
    write_report(run_comparison(paths, AGENT_TYPES), tmp_path / "memory")
    write_report(run_comparison(paths, AGENT_TYPES, runs_folder=tmp_path / "runs"),
                 tmp_path / "disk")

    def files(folder: Path) -> dict[str, bytes]:
        return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
                if p.is_file()}

    memory, disk = files(tmp_path / "memory"), files(tmp_path / "disk")
    assert any(name.startswith("traces/") for name in memory)
    assert disk == memory


@pytest.mark.slow  # a report of hundreds of runs, ~13 s on one core: the slow lane runs it
def test_a_scenario_is_let_go_once_its_runs_are_done(tmp_path: Path):
    import gc

    from agentkit.scenario import Scenario

    paths = [SCENARIOS / f"{name}.yaml" for name in (
        "single_tool_call", "parallel_lookups", "dependent_chain", "failing_task")]
    names = {path.name for path in paths}
    alive: list[int] = []
    # scenarios other tests in this process left alive are not this run's (held here, so
    # their ids stay theirs)
    before = [o for o in gc.get_objects() if isinstance(o, Scenario)]
    others = {id(o) for o in before}

    def count(done: int, total: int, row: Row) -> None:
        gc.collect()
        alive.append(sum(isinstance(o, Scenario) and id(o) not in others
                         and Path(str(o.path)).name in names for o in gc.get_objects()))

    comparison = run_comparison(paths, progress=count, runs_folder=tmp_path / "runs")

    assert len(comparison.scenarios) == 4 and len(alive) >= 4
    assert alive[0] == 4 and alive[-1] <= 1, alive


def test_report_json_is_made_a_row_at_a_time():
    comparison = _suite(40, react_fails=3)

    pieces = list(json_pieces(comparison))

    holding = [piece.count('"scenario": ') for piece in pieces]
    assert sum(holding) == len(comparison.rows) == 80
    assert max(holding) == 1  # never two rows' JSON in one piece
    assert "".join(pieces) == render_json(comparison)


def test_the_markdown_table_of_the_rows_is_tabulated_a_chunk_of_rows_at_a_time(monkeypatch):
    comparison = _suite(40, react_fails=3)
    whole = render_markdown(comparison)
    handed: list[int] = []

    def counted(rows: list[list[str]], headers: Any = (), **kwargs: Any) -> str:
        if headers and headers[0] == "Scenario":  # the table of every row
            handed.append(len(rows))
        return tabulate(rows, headers, **kwargs)

    monkeypatch.setattr(_markdown, "TABLE_CHUNK", 7)
    monkeypatch.setattr(_markdown, "tabulate", counted)

    assert render_markdown(comparison) == whole
    # the 80 rows measured 7 at a time, then written 7 at a time with a row as wide as the
    # widest (left out of the text)
    assert handed == [7] * 11 + [3] + [7 + 1] * 11 + [3 + 1]


def test_at_most_two_runs_traces_are_read_back_at_once_while_a_report_is_written(
        tmp_path: Path, monkeypatch):
    paths = [SCENARIOS / f"{name}.yaml" for name in (
        "single_tool_call", "parallel_lookups", "dependent_chain", "failing_task")]
    comparison = run_comparison(paths, AGENT_TYPES, runs_folder=tmp_path / "runs")
    alive, most, read = [0], [0], [0]
    with_trace = Comparison.with_trace

    def counted(self: Comparison, row: Row) -> Row:
        found = with_trace(self, row)
        if found is not row:
            read[0] += 1
            alive[0] += 1
            most[0] = max(most[0], alive[0])
            weakref.finalize(found, lambda: alive.__setitem__(0, alive[0] - 1))
        return found

    monkeypatch.setattr(Comparison, "with_trace", counted)
    write_report(comparison, tmp_path / "report")
    gc.collect()

    assert read[0] >= sum(row.has_metrics for row in comparison.rows) >= 8
    assert most[0] <= 2 and alive[0] == 0  # one at a time (and the one before it)


def test_a_kept_row_holds_no_trace_and_shares_its_set_of_fields(tmp_path: Path):
    store = RunStore(tmp_path)
    rows = [_row(f"simple_{i}", "react", True, "simple").model_copy(update={
        "trace": {"turns": [], "n": i}, "snapshot_trace": {"turns": [], "old": i}})
        for i in range(3)]

    kept = [store.keep(row) for row in rows]

    assert all(r.trace is None and r.snapshot_trace is None for r in kept)
    assert len({id(r.model_fields_set) for r in kept}) == 1
    assert kept == [r.model_copy(update={"trace": None, "snapshot_trace": None}) for r in rows]
    back = Comparison(agent_types=["react"], rows=kept).keeping_runs(store).with_trace(kept[2])
    assert back.trace == {"turns": [], "n": 2} and back.snapshot_trace == {"turns": [], "old": 2}


def test_a_report_builds_its_head_to_head_table_once_for_all_its_files(tmp_path: Path,
                                                                        monkeypatch):
    comparison = _suite(40, react_fails=3)
    built = [0]
    real = _standings.pairs

    def counted(of: Comparison) -> list[_standings.Pair]:
        built[0] += 1
        return real(of)

    monkeypatch.setattr(_standings, "pairs", counted)
    write_report(comparison, tmp_path / "report")

    # report.md, report.json, the page and summary.md all say who is best: one table
    assert built[0] == 1
    assert (tmp_path / "report" / "report.json").read_text(encoding="utf-8") == render_json(
        comparison)


def test_a_pair_keeps_a_decision_only_for_the_scenarios_it_does_not_tie():
    table = head_to_head(_suite(300, react_fails=2))

    (pair,) = table.pairs
    assert len(pair.scenarios) == 300
    assert [d.scenario for d in pair.decisions] == ["parallel_000", "parallel_003"]
    assert table.to_dict()["pairs"][0]["better"] == {
        "react": [], "function_calling": ["parallel_000", "parallel_003"]}


@pytest.mark.slow  # a report of hundreds of runs, ~13 s on one core: the slow lane runs it
def test_no_path_per_trace_is_held_while_the_report_folder_is_written(tmp_path: Path,
                                                                      monkeypatch):
    paths = [SCENARIOS / f"{name}.yaml" for name in (
        "single_tool_call", "parallel_lookups", "dependent_chain", "failing_task")]
    comparison = run_comparison(paths, AGENT_TYPES, runs_folder=tmp_path / "runs")
    taken, most = [0], [0]
    real = files._take_synced

    def counted(source: Path, to: Path, *, mode_of: Path) -> None:
        taken[0] += 1
        gc.collect()
        most[0] = max(most[0], sum(isinstance(o, PurePath) and "traces" in o.parts
                                   for o in gc.get_objects()))
        real(source, to, mode_of=mode_of)

    monkeypatch.setattr(files, "_take_synced", counted)
    write_report(comparison, tmp_path / "report")

    # report.md, report.json, the page and every trace, taken from the runs' folder
    assert taken[0] == 3 + len(comparison.rows) >= 3 + 8
    assert most[0] <= 4, most  # the one being taken (from, to, beside), not one per run
