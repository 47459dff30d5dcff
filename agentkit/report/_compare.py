"""Run every scenario under every agent type it declares and collect one row per run.

A row holds the run's totals, its trace and timeline (for the report page and later
baselines), the scenario's own cost thresholds, and how the trace compares with its committed
snapshot. A scenario that cannot be loaded or run (a :class:`ScenarioError`, an unusable
recording) becomes an ``error`` row, so one broken file does not hide the rest of the report.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

from agentkit.core.errors import ErrorKind
from agentkit.core.secrets import Redactor
from agentkit.core.textfiles import TextFileError, read_text
from agentkit.core.yamlsafe import YamlError, parse_yaml
from agentkit.eval._matrix import CaseResult, shard_of
from agentkit.harness import (
    Case,
    Judgement,
    UnknownAgentTypeError,
    check_agent_type,
    disagreements,
    judged_entries,
    load,
    observing_runs,
    run_case,
)
from agentkit.harness import CaseResult as JudgedCase
from agentkit.quality import Coverage, calibration_of
from agentkit.report._model import (
    AgentSummary,
    Comparison,
    CostSpread,
    FailureCause,
    JudgeCalibrationNote,
    JudgeDisagreement,
    JudgeVerdict,
    RoleCost,
    Row,
    SampleVerdict,
    speedup,
)
from agentkit.report._store import RunStore
from agentkit.report._timeline import spans_of
from agentkit.scenario import (
    Scenario,
    ScenarioError,
    discover_scenarios,
)
from agentkit.verdict import SnapshotFiles, SnapshotSession, SnapshotState

__all__ = ["Comparison", "Row", "AgentSummary", "run_comparison", "row_from_result",
           "row_from_samples", "sampled_verdicts", "disagreement_lines", "eval_comparison"]


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


#: A row's snapshot field: a snapshot the run wrote is the run's trace, so the same.
_ROW_SNAPSHOT: dict[SnapshotState, Literal["same", "changed", "missing", "not_checked"]] = {
    "same": "same", "created": "same", "updated": "same", "changed": "changed", "stale": "changed",
    "missing": "missing", "not_checked": "not_checked"}


def _error_row(scenario: str, agent_type: str | None, message: str,
               tags: Sequence[str] = (), kind: ErrorKind | None = "input") -> Row:
    return Row(scenario=scenario, agent_type=agent_type, tags=list(tags), status="error",
               problems=[message], kind=kind)


def row_from_result(scenario: Scenario, agent_type: str, *, seed: int | str = 0,
                    snapshots: SnapshotSession | None = None) -> Row:
    """Run one scenario × agent type and turn its judgement and trace totals into a row."""
    return _run_row(scenario, agent_type, seed, snapshots or SnapshotFiles("report"))[0]


def row_from_samples(sampled: JudgedCase, model: str | None = None) -> Row:
    """The row of a case judged on its samples: its statistics, and as metrics the means
    over the samples that say something about the agent."""
    scenario, stats, verdict = sampled.scenario, sampled.stats, sampled.verdict
    interval = stats.interval
    common: dict[str, Any] = {
        "scenario": scenario.name, "agent_type": sampled.agent_type, "model": model,
        "tags": list(scenario.tags),
        "samples": stats.samples, "passes": stats.passed, "infra_errors": stats.infra_errors,
        "not_recorded": len(sampled.missing) or None, "pass_rate": _rate(stats.pass_rate),
        "interval": interval, "confidence": stats.confidence,
        "min_pass_rate": scenario.min_pass_rate,
        "pass_at_k": {str(k): v for k, v in stats.pass_at_k.items()} or None,
        "pass_all_k": {str(k): v for k, v in stats.pass_all_k.items()} or None,
        "class": stats.case_class if stats.samples else None,
        "sample_outcomes": [run.outcome for run in sampled.runs if run.outcome is not None]}
    trace = sampled.trace
    # when no sample replays to its end (the agent no longer fits its recording), the case
    # failed all the same: its metrics are then those of the partial runs, as a single run's
    means = sampled.mean_totals() or (sampled.mean_totals(judged_only=False)
                                      if verdict.outcome == "fail" else {})
    if verdict.outcome == "error" or not means:
        return Row(status="error", problems=[verdict.stopped_by or "no sample could run"],
                   kind=verdict.kind, **common)
    own = scenario.thresholds if scenario.thresholds.model_fields_set else None
    state = verdict.snapshot
    problems = list(verdict.problems) + verdict.snapshot_problems()
    metrics: dict[str, Any] = {key: _count(value) for key, value in means.items()}
    judged, disagree = sampled_verdicts(sampled)
    return Row(status="pass" if verdict.passed else "fail", problems=problems, thresholds=own,
               judged=judged, disagreements=disagree, roles=_mean_roles(sampled),
               snapshot=None if state is None else _ROW_SNAPSHOT[state],
               snapshot_diff=list(verdict.snapshot_diff),
               trace=trace.to_dict() if trace is not None else None,
               cost={key: CostSpread(**value.to_dict())
                     for key, value in sampled.spread().items()},
               speedup=speedup(means["serial_time"], means["wall_time"]), **metrics, **common)


def _verdict(judgement: Judgement, scenario: Scenario,
             sample: int | None = None) -> JudgeVerdict:
    calibration = calibration_of(judgement, scenario.path)
    return JudgeVerdict(at=judgement.at, rubric=judgement.rubric, verdict=judgement.verdict,
                        reason=judgement.reason, score=judgement.score,
                        votes=max(len(judgement.votes), 1), split=judgement.split,
                        sample=sample, calibration=JudgeCalibrationNote(
                            calibrated=calibration.calibrated, why=calibration.why))


def sampled_verdicts(sampled: JudgedCase) -> tuple[list[JudgeVerdict],
                                                      list[JudgeDisagreement]]:
    """Every sample's verdicts, and the judged expectations whose verdict differs between
    the samples (those that ran), with each sample's verdict and reason."""
    runs = [(run.index, run.result) for run in sampled.runs if run.result is not None]
    judged = [_verdict(judgement, sampled.scenario, index) for index, result in runs
              for judgement in result.judgements]
    if not judged:
        return [], []
    traces = [result.trace.to_dict() for _, result in runs]
    entries = [judged_entries(trace) for trace in traces]
    found = []
    for at, each in disagreements(traces).items():
        rubric = next(str(e[at].get("rubric")) for e in entries if at in e)
        found.append(JudgeDisagreement(at=at, rubric=rubric, samples=[
            SampleVerdict(sample=index, verdict=verdict,  # type: ignore[arg-type]
                          reason=str(entry.get(at, {}).get("reason")
                                     or entry.get(at, {}).get("error") or ""))
            for (index, _), verdict, entry in zip(runs, each, entries, strict=True)]))
    return judged, found


def disagreement_lines(sampled: JudgedCase) -> list[str]:
    """Each judged expectation whose verdict differs between the samples of ``sampled``: a
    header, then each sample's verdict and its reason, secrets redacted -- the lines the
    commands and the pytest plugin's terminal summary print."""
    found = sampled_verdicts(sampled)[1]
    redact = Redactor().text
    return [line for each in found for line in each.lines(redact)]


def _mean_roles(sampled: JudgedCase) -> dict[str, RoleCost]:
    """The roles' calls and tokens per sample (judges, a simulated user), averaged over the
    samples whose metrics are (those that say something about the agent, else all that ran)."""
    results = [run.result for run in sampled.runs if run.result is not None
               and run.outcome in ("pass", "fail")] or [
        run.result for run in sampled.runs if run.result is not None]
    sums: dict[str, dict[str, int]] = {}
    for result in results:
        for role, counts in result.trace.totals().roles.items():
            into = sums.setdefault(role, dict.fromkeys(counts, 0))
            for key, value in counts.items():
                into[key] += value
    return {role: RoleCost(**{key: _count(round(value / len(results), 6))
                              for key, value in counts.items()})
            for role, counts in sums.items()}


def _rate(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


def _count(value: float) -> float | int:
    """A mean shown as an int when it is one (5.0 steps in every sample: 5)."""
    return int(value) if float(value).is_integer() else value


def _run_row(scenario: Scenario, agent_type: str, seed: int | str,
             snapshots: SnapshotSession) -> tuple[Row, str | None]:
    """The row of one run (of all samples of a sampled recording), and the run's workflow
    diagram (workflow agent types)."""
    case = run_case(Case(scenario, agent_type, seed=seed), snapshots)
    if case.sampled:
        return row_from_samples(case), None
    result, verdict = case.result, case.verdict
    if result is None:
        return _error_row(scenario.name, agent_type, verdict.stopped_by or "",
                          scenario.tags, verdict.kind), None
    totals = result.trace.totals()
    trace = result.trace.to_dict()
    own = scenario.thresholds if scenario.thresholds.model_fields_set else None
    problems = ([verdict.stopped_by] if verdict.stopped_by is not None
                else list(verdict.problems) + verdict.snapshot_problems())
    state = verdict.snapshot
    judged = [_verdict(judgement, scenario) for judgement in result.judgements]
    cause = verdict.cause
    return Row(scenario=scenario.name, agent_type=agent_type, tags=list(scenario.tags),
               status="pass" if verdict.passed else "fail", problems=problems,
               stopped=verdict.stopped_by is not None, kind=verdict.kind,
               cause=None if cause is None else FailureCause(cause=cause.cause, why=cause.why),
               thresholds=own,
               snapshot=None if state is None else _ROW_SNAPSHOT[state],
               snapshot_diff=list(verdict.snapshot_diff),
               snapshot_trace=verdict.snapshot_stored, judged=judged,
               roles={role: RoleCost(**sums) for role, sums in totals.roles.items()},
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
                   progress: Progress | None = None,
                   snapshots: SnapshotSession | None = None,
                   shard: tuple[int, int] | None = None,
                   runs_folder: str | Path | None = None) -> Comparison:
    """Run each scenario found under ``paths_or_dir`` (files or directories) under each agent
    type it declares (only those in ``agent_types``, if given) and collect the rows, each run
    judged with ``snapshots`` (default: compared with its snapshot file, a difference failing
    the run: :class:`~agentkit.verdict.SnapshotFiles`).

    Rows follow the (sorted) scenario files, then the agent-type order: ``agent_types`` as
    given, else the order in which the scenarios first declare them. A path that does not
    exist or an unknown agent type raises :class:`ScenarioError`; a scenario that fails to
    load or run becomes an ``error`` row. Every scenario is loaded before the first run, so
    ``progress`` knows the total, and let go once its runs are done. With ``shard``
    ``(i, n)`` only the rows of shard i of n run
    (:func:`agentkit.eval._matrix.shard_of`: by the row's key, stable as the suite changes);
    the comparison keeps the whole run's plan, for :func:`~agentkit.report.merge_shards`.

    With ``runs_folder`` each run's trace and timeline are written there as the run
    finishes and its row keeps none of them (:attr:`Comparison.runs` reads them back), so
    the memory a large comparison takes grows with its rows only; the folder must outlive
    the comparison's use (writing its report).
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
            scenario = load(path)
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
    keys = [step.key if isinstance(step, Row) else f"{step[0].name}[{step[1]}]" for step in plan]
    if shard is not None:
        plan = [step for step, key in zip(plan, keys, strict=True)
                if shard_of(key, shard[1]) == shard[0]]
    total = sum(not isinstance(step, Row) for step in plan)
    rows: list[Row] = []
    diagrams: dict[str, str] = {}
    done = 0
    coverage = Coverage()
    store = RunStore(runs_folder) if runs_folder is not None else None
    steps = deque(plan)
    del plan  # each scenario is dropped once its last run is done: the rows are what stays
    while steps:
        step = steps.popleft()
        if isinstance(step, Row):
            rows.append(step)
            continue
        scenario, name = step
        with observing_runs(coverage.observe):
            row, diagram = _run_row(scenario, name, seed, snapshots or SnapshotFiles("check"))
        if store is not None:
            row = store.keep(row)
        rows.append(row)
        if diagram is not None:
            diagrams.setdefault(name, diagram)
        done += 1
        if progress is not None:
            progress(done, total, row)
    return Comparison(agent_types=order, rows=rows,
                      diagrams={n: diagrams[n] for n in order if n in diagrams},
                      shard=shard, plan=keys if shard is not None else [],
                      coverage=coverage.to_dict()).keeping_runs(store)


def eval_comparison(results: Sequence[CaseResult], agent_types: Sequence[str],
                    models: Sequence[str], *, shard: tuple[int, int] | None = None,
                    plan: Sequence[str] = ()) -> Comparison:
    """The comparison of an evaluation: a row per case, judged on its samples
    (:class:`~agentkit.eval._matrix.Evaluation`); ``plan`` is the whole matrix's case keys when
    ``shard`` is given."""
    return Comparison(agent_types=list(agent_types), models=list(models),
                      rows=[row_from_samples(r.sampled, model=r.case.model) for r in results],
                      shard=shard, plan=list(plan) if shard is not None else [])
