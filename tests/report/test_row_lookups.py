"""A report's per-row lookups (a row by scenario × agent type, a row's change against the
baseline, the scenarios every agent type ran) are indexed once, so rendering a report costs
time in proportion to its rows, not their square; and the report reads exactly as before.

``lookups/`` holds the report files (Markdown, JSON, the page, the summary) of two
comparisons against a baseline as the linear-scan lookups wrote them: a large one (pooled per
tag, a load error, an agent type left out, regressions, new, removed and fixed rows) and an
evaluation (models, sampled rows). Regenerate them only for an intended change of the
report's wording: ``python -m tests.report.test_row_lookups``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from agentkit.report import Comparison, Row, compare_to_baseline, render_html, render_json, render_markdown
from agentkit.report._markdown import render_summary

GOLDEN = Path(__file__).resolve().parent / "lookups"
AGENTS = ("react", "function_calling", "function_agent")
TAGS = ("simple", "parallel", "irrelevance")


def _metrics(index: int, extra_steps: int = 0) -> dict[str, float | int]:
    steps = 1 + index % 3 + extra_steps
    return {"steps": steps, "llm_calls": steps, "tool_calls": index % 2, "tool_errors": 0,
            "prompt_tokens": 100 + 7 * index, "completion_tokens": 10 + index % 5,
            "wall_time": 0.5 * steps, "serial_time": 0.5 * steps, "critical_path": 0.5 * steps,
            "speedup": 1.0}


def _run(scenario: str, agent_type: str, index: int, status: str = "pass", tag: str = "simple",
         extra_steps: int = 0, name: Callable[[str], str] = str) -> Row:
    if status == "error":
        return Row(scenario=name(scenario), agent_type=agent_type, status="error",
                   tags=["bfcl", tag], problems=[f"{scenario}: the tool module did not import"])
    return Row(scenario=name(scenario), agent_type=agent_type, status=status,  # type: ignore[arg-type]
               tags=["bfcl", tag],
               problems=[] if status == "pass" else [f"expected call `{tag}_{index}` not made"],
               **_metrics(index, extra_steps))


def _large(scenarios: int, *, baseline: bool = False,
           name: Callable[[str], str] = str) -> Comparison:
    """``scenarios`` cases under three agent types, plus one case only ``solo`` ran (so it
    is left out of the head to head), a file that did not load; react fails every fourth
    case, function_agent cannot run the fifth. The baseline passes what react fails now
    (regressions) but the fourth, costs fewer steps on every tenth, has a case since removed
    and lacks the newest one; it fails a case function_calling passes now (fixed)."""
    rows: list[Row] = []
    for index in range(scenarios - (1 if baseline else 0)):
        tag = TAGS[index % 3]
        scenario = f"{tag}_{index:04d}"
        for agent_type in AGENTS:
            status = "pass"
            if agent_type == "react" and index % 4 == 0:
                status = "fail" if not baseline or index == 4 else "pass"
            if agent_type == "function_agent" and index == 5:
                status = "error"
            if agent_type == "function_calling" and index == 7 and baseline:
                status = "fail"
            extra = 2 if index % 10 == 0 and not baseline else 0
            rows.append(_run(scenario, agent_type, index, status, tag, extra, name))
    if baseline:
        rows += [_run("removed_0000", agent_type, 0, name=name) for agent_type in AGENTS]
    rows.append(_run("solo_only", "solo", 1, name=name))
    rows.append(Row(scenario=name("broken"), agent_type=None, status="error",
                    problems=["broken.yaml:3: turns: required field is missing"]))
    return Comparison(agent_types=[*AGENTS, "solo"], rows=rows)


def _sampled(scenario: str, agent_type: str, model: str, passes: int, index: int) -> Row:
    samples = 10
    return Row(scenario=scenario, agent_type=agent_type, model=model, tags=["eval"],
               status="pass" if passes >= 5 else "fail",
               problems=[] if passes >= 5 else [f"pass rate {passes}/10 under 50%"],
               samples=samples, passes=passes, infra_errors=0, pass_rate=passes / samples,
               interval=(max(0.0, passes / samples - 0.25), min(1.0, passes / samples + 0.2)),
               confidence=0.95, min_pass_rate=0.5,
               class_="stable_pass" if passes == samples else "stable_fail" if not passes
               else "flaky", sample_outcomes=["pass"] * passes + ["fail"] * (samples - passes),
               **_metrics(index))


def _evaluation(*, baseline: bool = False) -> Comparison:
    """Five cases under two agent types and two models, ten samples each."""
    rows = [_sampled(f"case_{index}", agent_type, model,
                     (10 - index - (model == "m2") * 3 + (3 if baseline else 0)) % 11, index)
            for index in range(5) for agent_type in AGENTS[:2] for model in ("m1", "m2")]
    return Comparison(agent_types=list(AGENTS[:2]), models=["m1", "m2"], rows=rows)


CASES: dict[str, Callable[[], tuple[Comparison, Comparison]]] = {
    "large": lambda: (_large(30), _large(30, baseline=True)),
    "evaluation": lambda: (_evaluation(), _evaluation(baseline=True)),
}
RENDERERS: dict[str, Callable[[Comparison, Comparison | None], str]] = {
    "report.md": render_markdown, "report.json": render_json, "report.html": render_html,
    "summary.md": render_summary}


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("file", RENDERERS)
def test_a_report_against_a_baseline_reads_as_the_linear_scan_lookups_wrote_it(case, file):
    current, baseline = CASES[case]()

    text = RENDERERS[file](current, baseline)

    assert text == (GOLDEN / case / file).read_text(encoding="utf-8"), (
        f"tests/report/lookups/{case}/{file} differs; if the report's wording changed on "
        "purpose, regenerate it: python -m tests.report.test_row_lookups")


def test_the_large_case_exercises_what_the_lookups_serve():
    current, baseline = CASES["large"]()
    diff = compare_to_baseline(current, baseline)
    compared = current.compared()

    assert compared.left_out and compared.left_out[0][0] == ("solo", None)
    assert {"new", "removed"} <= {d.change for d in diff.rows}
    assert diff.fixed and diff.regressions and diff.cost_regressions
    assert any(d.costs and d.regression is None for d in diff.rows)


def test_a_copy_with_other_rows_looks_up_its_own_rows():
    comparison = _large(30)
    first = comparison.row("simple_0000", "react")
    traced = [row.model_copy(update={"trace": {"turns": []}}) for row in comparison.rows]

    copy = comparison.model_copy(update={"rows": traced})

    assert first is comparison.rows[0] and first.trace is None
    assert copy.row("simple_0000", "react") is traced[0]
    assert comparison.row("simple_0000", "react") is first
    assert copy.row("simple_0000", "react", "some-model") is None


def test_the_index_is_no_part_of_a_comparisons_equality():
    looked_up, fresh = _large(30), _large(30)

    assert looked_up.row("broken", None) is not None

    assert looked_up == fresh


class _Name(str):
    """A scenario name that counts how often it is compared for equality with another."""

    compared = 0

    def __eq__(self, other: object) -> bool:
        _Name.compared += 1
        return str.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    __hash__ = str.__hash__


def _comparisons_of_names(scenarios: int) -> int:
    """How many times scenario names are compared while every renderer writes the report of
    ``scenarios`` cases under three agent types against its baseline (names kept as
    :class:`_Name` by building the rows unvalidated)."""
    def rows_of(comparison: Comparison) -> Comparison:
        rows = [Row.model_construct(**{**dict(row), "scenario": _Name(row.scenario)},
                                    _fields_set=row.model_fields_set) for row in comparison.rows]
        return comparison.model_copy(update={"rows": rows})

    current = rows_of(_large(scenarios))
    baseline = rows_of(_large(scenarios, baseline=True))
    _Name.compared = 0
    for render in RENDERERS.values():
        render(current, baseline)
    return _Name.compared


def test_scenario_names_are_compared_in_proportion_to_the_rows_not_their_square():
    small, large = _comparisons_of_names(60), _comparisons_of_names(240)

    assert 0 < large <= 4 * small + 200, (small, large)


def _write_golden() -> None:
    for case, make in CASES.items():
        current, baseline = make()
        (GOLDEN / case).mkdir(parents=True, exist_ok=True)
        for file, render in RENDERERS.items():
            (GOLDEN / case / file).write_text(render(current, baseline), encoding="utf-8")
            print(f"wrote {GOLDEN / case / file}", file=sys.stdout)


if __name__ == "__main__":
    _write_golden()
