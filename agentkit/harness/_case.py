"""The case runner: a case is one scenario × agent type, run once or, for a sampled recording,
once per recorded sample -- and judged exactly once (each run by
:func:`agentkit.verdict.judge`, a sampled case then by :func:`agentkit.verdict.judge_samples`).
Every command and the pytest items run their cases here and print the :class:`CaseResult`."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentkit.core.errors import BadInputError, HarnessError
from agentkit.harness._roles import RoleModels
from agentkit.harness._runner import (
    RunChange,
    ScenarioResult,
    execute_scenario,
)
from agentkit.llms.base import LLM
from agentkit.recording import Cassette, CassetteError, CassetteLLM, replayed_cassette
from agentkit.scenario._layout import cassette_path, recording_files, records, snapshot_path
from agentkit.scenario._model import Scenario
from agentkit.trace._trace import SampledTrace, Trace
from agentkit.verdict import (
    COST_KEYS,
    SampleRun,
    SnapshotSession,
    Verdict,
    cassette_miss,
    judge,
    judge_error,
    judge_samples,
    sample_outcome,
)
from agentkit.verdict._cases import CaseStats, case_stats, gate_warning
from agentkit.verdict._stats import Spread, spread

__all__ = ["Case", "CaseResult", "run_case", "sample_count", "RunObserver", "observing_runs"]


@dataclass(frozen=True)
class Case:
    """What to run: ``agent_type`` of ``scenario`` with ``seed`` and ``state`` (the factory's
    ``context.state``). ``cassette`` replays an evaluation's sampled cassette instead of the
    agent type's ``recording:``, counting ``infra`` (sample index: error) as samples that hit
    infrastructure errors while being recorded. ``prepare`` runs first, as part of the case
    (the pytest plugin's ``--record-mode`` records the case there)."""

    scenario: Scenario
    agent_type: str
    seed: int | str = 0
    state: Mapping[str, Any] | None = None
    cassette: Cassette | None = field(default=None, repr=False)
    infra: Mapping[int, str] = field(default_factory=dict)
    prepare: Callable[[], None] | None = field(default=None, repr=False)
    roles: RoleModels | None = field(default=None, repr=False)
    """Live models of the run's roles, its judges and simulated user (a test's functions)."""
    llm: LLM | None = field(default=None, repr=False)
    """The agent type's model instead of its script or recording (``agentkit serve --mode``:
    a :class:`~agentkit.recording.RecordingLLM` recording through a live model)."""
    change: RunChange | None = field(default=None, repr=False)
    """A deliberate change to the run (a mutant's: :func:`~agentkit.harness.execute_scenario`'s
    ``change``)."""
    samples: bool | None = None
    """Whether to replay the recording as samples (None: when it is a sampled one, or
    ``cassette`` is given; True: also a recording of one run, as its one sample)."""

    @property
    def name(self) -> str:
        return f"{self.scenario.name}[{self.agent_type}]"

    @property
    def sampled(self) -> bool:
        """Whether the case replays the samples of a sampled recording."""
        if self.samples is not None:
            return self.samples
        return self.cassette is not None or sample_count(self.scenario,
                                                         self.agent_type) is not None

    def missing_cassettes(self) -> list[Path]:
        """The cassettes of the agent type's recording (and its MCP servers') not on disk yet,
        without which the case cannot run: each face says how to record them."""
        if self.cassette is not None or not records(self.scenario, self.agent_type):
            return []
        return [path for path in recording_files(self.scenario, self.agent_type)[1:]
                if not path.exists()]


@dataclass
class CaseResult:
    """A case judged once: its runs (one, or one per replayed sample), the statistics of
    their outcomes, the one verdict every face reports, and the samples not recorded yet
    (``missing``: a partial result)."""

    case: Case
    runs: list[SampleRun]
    stats: CaseStats
    verdict: Verdict
    sampled: bool = False
    missing: list[int] = field(default_factory=list)

    @property
    def scenario(self) -> Scenario:
        return self.case.scenario

    @property
    def agent_type(self) -> str:
        return self.case.agent_type

    @property
    def passed(self) -> bool:
        return self.verdict.passed

    @property
    def result(self) -> ScenarioResult | None:
        """The run of an unsampled case (None: it could not start)."""
        result = self.runs[0].result if self.runs and not self.sampled else None
        assert result is None or isinstance(result, ScenarioResult), "the case runner's run"
        return result

    @property
    def trace(self) -> Trace | SampledTrace | None:
        """The run's trace, or every sample's in sample order (None when one has none)."""
        if not self.sampled:
            result = self.result
            return result.trace if result is not None else None
        if any(run.result is None for run in self.runs):
            return None
        return SampledTrace([run.result.trace for run in self.runs if run.result is not None])

    @property
    def gate_warning(self) -> str | None:
        """Why the scenario's ``min_pass_rate`` cannot fail at this sampled case's sample count,
        naming the samples needed (None: it can, or there is none): the commands print it, the
        pytest plugin warns it."""
        return gate_warning(self.scenario.min_pass_rate, self.stats.judged,
                            self.stats.confidence)

    @property
    def snapshot_written(self) -> Path | None:
        """The snapshot file judging the case wrote, if it wrote one."""
        return self.verdict.snapshot_written

    def rerecord_hint(self, pytest_node: str | None = None) -> str | None:
        """``to re-record: <command>`` for a run that stopped on a cassette miss (None: it did
        not): the ``agentkit record`` command, or with ``pytest_node`` the pytest one, with
        the model and server of the recording (:func:`~agentkit.harness.rerecord_command`,
        the command ``agentkit replay`` prints too)."""
        from agentkit.harness._record import rerecord_command

        result = self.result
        if result is None or cassette_miss(result) is None:
            return None
        command = rerecord_command(self.scenario, self.agent_type, pytest_node=pytest_node)
        return f"to re-record: {command}"

    def spread(self) -> dict[str, Spread]:
        """Mean and spread of each cost over the samples that say something about the agent."""
        costs = [run.costs() for run in self.runs if run.outcome in ("pass", "fail")]
        return {key: spread([c[key] for c in costs]) for key in COST_KEYS} if costs else {}

    def mean_totals(self, *, judged_only: bool = True) -> dict[str, float]:
        """Each trace total (steps, LLM calls, tokens in/out, times) averaged over the samples
        that say something about the agent (empty when none does); with ``judged_only``
        False, over every sample that has a trace (also those whose recording no longer
        fits: what they did before the request the recording lacks)."""
        results = [run.result for run in self.runs if run.result is not None
                   and (run.outcome in ("pass", "fail") or not judged_only)]
        if not results:
            return {}
        totals = [vars(result.trace.totals()) for result in results]
        # the roles' calls (a judge's, a simulated user's) are counted apart, not averaged here
        return {key: round(sum(t[key] for t in totals) / len(totals), 6) for key in totals[0]
                if isinstance(totals[0][key], (int, float))}


RunObserver = Callable[["ScenarioResult | None", Verdict], None]
"""Told of every judged run: its result (None when it could not start) and its verdict."""

_OBSERVERS: list[RunObserver] = []


@contextmanager
def observing_runs(observer: RunObserver) -> Iterator[RunObserver]:
    """Tell ``observer`` of every run :func:`run_case` judges while the block runs, in any
    thread (how an exporter such as :mod:`agentkit.otel` sees the runs of any command without
    a hook of its own in each)."""
    _OBSERVERS.append(observer)
    try:
        yield observer
    finally:
        _OBSERVERS.remove(observer)


def _judged(execute: Callable[[], ScenarioResult], snapshots: SnapshotSession | None,
            path: Path | None) -> tuple[ScenarioResult | None, Verdict]:
    """One run, judged once; a run that cannot start is an ``error`` verdict."""
    result: ScenarioResult | None
    try:
        result = execute()
    except HarnessError as exc:
        result, verdict = None, judge_error(exc, snapshots, path)
    else:
        verdict = judge(result, snapshots, path)
    for observer in tuple(_OBSERVERS):
        observer(result, verdict)
    return result, verdict


def run_case(case: Case, snapshots: SnapshotSession | None = None) -> CaseResult:
    """Run ``case`` and judge it once, its snapshot compared through ``snapshots`` (when
    given); whatever happens -- an error, Ctrl-C -- a snapshot the case did not compare is
    kept as it is."""
    path = snapshot_path(case.scenario, case.agent_type) if case.cassette is None else None
    try:
        if case.sampled:
            if case.prepare is not None:
                case.prepare()
            return _run_samples(case, snapshots, path)

        def execute() -> ScenarioResult:
            if case.prepare is not None:
                case.prepare()
            return execute_scenario(case.scenario, case.agent_type, seed=case.seed,
                                    llm=case.llm, state=case.state, change=case.change,
                                    roles=case.roles)

        result, verdict = _judged(execute, snapshots, path)
        outcome = sample_outcome(verdict, result)
        return CaseResult(case, [SampleRun(0, result, verdict, outcome)],
                          case_stats([outcome] if outcome else [], case.scenario.confidence),
                          verdict)
    finally:
        if snapshots is not None:
            snapshots.settle(path)


def _run_samples(case: Case, snapshots: SnapshotSession | None,
                 path: Path | None) -> CaseResult:
    """Every recorded sample replayed offline and judged, then the case on them."""
    scenario, agent_type = case.scenario, case.agent_type
    if scenario.agents[agent_type].team is not None:
        raise BadInputError(f"{scenario.where('agents', agent_type)}: agents.{agent_type}: "
                            "samples are recorded for one-agent types; a team records one run")
    cassette = case.cassette
    if cassette is None:
        try:
            cassette = replayed_cassette(cassette_path(scenario, agent_type))
        except CassetteError as exc:
            error = Verdict("error", stopped_by=str(exc), kind="input")
            return CaseResult(case, [], case_stats([]), error, sampled=True)
    count = cassette.samples or 1
    done = sorted(set(cassette.complete)) if cassette.sampled else [0]
    runs = []
    for index in done:
        def execute(index: int = index, cassette: Cassette = cassette) -> ScenarioResult:
            replay = CassetteLLM(cassette, sample=index if cassette.sampled else None)
            return execute_scenario(scenario, agent_type, seed=case.seed, llm=replay,
                                    state=case.state, change=case.change, roles=case.roles,
                                    sample=index if cassette.sampled else None)

        result, verdict = _judged(execute, None, None)
        runs.append(SampleRun(index, result, verdict, sample_outcome(verdict, result)))
    stats, verdict = judge_samples(scenario, runs, snapshots, path, case.infra)
    return CaseResult(case, runs, stats, verdict, sampled=True,
                      missing=[i for i in range(count)
                               if i not in done and i not in case.infra])


def _header(path: Path) -> Cassette | None:
    """The cassette at ``path`` (None when there is none or it is unreadable: the run says
    why)."""
    try:
        return replayed_cassette(path) if path.is_file() else None
    except CassetteError:
        return None


def sample_count(scenario: Scenario, agent_type: str) -> int | None:
    """How many samples the agent type's ``recording:`` holds (None: not a sampled one)."""
    spec = scenario.agents.get(agent_type)
    if spec is None or spec.team is not None or spec.recording is None:
        return None
    cassette = _header(cassette_path(scenario, agent_type))
    return cassette.samples if cassette is not None else None
