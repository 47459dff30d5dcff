"""Run every scenario under every agent type it declares and collect one row per run.

A row holds the run's totals, its trace and timeline (for the report page and later
baselines), the scenario's own cost thresholds, and how the trace compares with its committed
snapshot. A scenario that cannot be loaded or run (a :class:`ScenarioError`, an unusable
recording) becomes an ``error`` row, so one broken file does not hide the rest of the report.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from agentkit.core.textfiles import TextFileError, read_text
from agentkit.core.yamlsafe import YamlError, parse_yaml
from agentkit.llms.cassette import CassetteError, CassetteMissError
from agentkit.report.model import AgentSummary, Comparison, Row, speedup
from agentkit.report.timeline import spans_of
from agentkit.scenario import (
    Scenario,
    ScenarioError,
    discover_scenarios,
    load_scenario,
    run_scenario,
)
from agentkit.scenario.agent_types import UnknownAgentTypeError, check_agent_type
from agentkit.scenario.snapshot import compare_with_snapshot, snapshot_path

__all__ = ["Comparison", "Row", "AgentSummary", "run_comparison", "row_from_result"]

_RUN_ERRORS = (ScenarioError, CassetteError, CassetteMissError)


def _paths(paths_or_dir: str | Path | Sequence[str | Path]) -> list[Path]:
    roots = [paths_or_dir] if isinstance(paths_or_dir, (str, Path)) else list(paths_or_dir)
    seen: dict[Path, Path] = {}
    for root in roots:
        for path in discover_scenarios(root):
            seen.setdefault(path.resolve(), path)
    return list(seen.values())


def _name_of_broken(path: Path) -> str:
    """The ``name:`` of a file that failed to load, if readable, else its file stem."""
    try:
        data, _ = parse_yaml(read_text(path))
    except (OSError, YamlError, TextFileError):
        data = None
    name = data.get("name") if isinstance(data, dict) else None
    return name if isinstance(name, str) and name else path.stem.removesuffix(".scenario")


def _error_row(scenario: str, agent_type: str | None, message: str) -> Row:
    return Row(scenario=scenario, agent_type=agent_type, status="error", problems=[message])


def row_from_result(scenario: Scenario, agent_type: str, *, seed: int | str = 0) -> Row:
    """Run one scenario × agent type and turn its trace totals into a row."""
    return _run_row(scenario, agent_type, seed)[0]


def _run_row(scenario: Scenario, agent_type: str, seed: int | str) -> tuple[Row, str | None]:
    """The row of one run, and the run's workflow diagram (workflow agent types)."""
    try:
        result = run_scenario(scenario, agent_type, seed=seed)
    except _RUN_ERRORS as exc:
        return _error_row(scenario.name, agent_type, str(exc)), None
    totals = result.trace.totals()
    trace = result.trace.to_dict()
    snapshot = snapshot_path(scenario, agent_type)
    against = compare_with_snapshot(trace, snapshot) if snapshot is not None else None
    own = scenario.thresholds if scenario.thresholds.model_fields_set else None
    return Row(scenario=scenario.name, agent_type=agent_type,
               status="pass" if result.passed else "fail", problems=list(result.problems),
               thresholds=own, snapshot=against.status if against else None,
               snapshot_diff=against.diff if against else [],
               snapshot_trace=against.stored if against else None,
               trace=trace, timeline=spans_of(result.trace),
               steps=totals.steps, llm_calls=totals.llm_calls, tool_calls=totals.tool_calls,
               tool_errors=totals.tool_errors, prompt_tokens=totals.prompt_tokens,
               completion_tokens=totals.completion_tokens, wall_time=totals.wall_time,
               serial_time=totals.serial_time, critical_path=totals.critical_path,
               speedup=speedup(totals.serial_time, totals.wall_time)), result.diagram


Progress = Callable[[int, int, Row], None]
"""``progress(done, total, row)``: called after each scenario × agent type run."""


def run_comparison(paths_or_dir: str | Path | Sequence[str | Path],
                   agent_types: list[str] | None = None, *, seed: int | str = 0,
                   progress: Progress | None = None) -> Comparison:
    """Run each scenario found under ``paths_or_dir`` (files or directories) under each agent
    type it declares (only those in ``agent_types``, if given) and collect the rows.

    Rows follow the (sorted) scenario files, then the agent-type order: ``agent_types`` as
    given, else the order in which the scenarios first declare them. A path that does not
    exist or an unknown agent type raises :class:`ScenarioError`; a scenario that fails to
    load or run becomes an ``error`` row. Every scenario is loaded before the first run, so
    ``progress`` knows the total.
    """
    for name in agent_types or ():
        try:
            check_agent_type(name)
        except UnknownAgentTypeError as exc:
            raise ScenarioError(str(exc)) from None
    order: list[str] = list(agent_types or [])
    plan: list[Row | tuple[Scenario, str]] = []
    used: dict[str, Path] = {}
    for path in _paths(paths_or_dir):
        try:
            scenario = load_scenario(path, check_agent_types=True)
        except ScenarioError as exc:
            plan.append(_error_row(_name_of_broken(path), None, str(exc)))
            continue
        if scenario.name in used:
            plan.append(_error_row(scenario.name, None, (
                f"{path}: scenario name `{scenario.name}` is already used by {used[scenario.name]}"
                "; scenario names must be unique (they key the report rows)")))
            continue
        used[scenario.name] = path
        if agent_types is None:
            order += [name for name in scenario.agents if name not in order]
        plan += [(scenario, name) for name in
                 sorted((n for n in scenario.agents if n in order), key=order.index)]
    total = sum(not isinstance(step, Row) for step in plan)
    rows: list[Row] = []
    diagrams: dict[str, str] = {}
    done = 0
    for step in plan:
        if isinstance(step, Row):
            rows.append(step)
            continue
        scenario, name = step
        row, diagram = _run_row(scenario, name, seed)
        rows.append(row)
        if diagram is not None:
            diagrams.setdefault(name, diagram)
        done += 1
        if progress is not None:
            progress(done, total, row)
    return Comparison(agent_types=order, rows=rows,
                      diagrams={n: diagrams[n] for n in order if n in diagrams})
