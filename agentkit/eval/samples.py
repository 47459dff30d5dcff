"""Samples: several independent live runs of one case in one cassette, recorded together and
judged together.

* :func:`run_samples` replays every recorded sample of a scenario × agent type offline (its
  ``recording:``, or an evaluation's cassette) and judges the case on all of them: each
  sample as a run is judged (:mod:`agentkit.scenario.judge`), then the case --
  :class:`~agentkit.eval.cases.CaseStats`, the scenario's ``min_pass_rate``, and the snapshot
  of all the samples' traces. pytest's item, ``agentkit run``, ``replay``, ``report`` and
  ``eval`` all call it, so a change to the agent is judged against the whole recorded
  distribution everywhere.
* :class:`SampleBook` is a sampled cassette being recorded: the recorders of its samples share
  it, it is checked against what is asked (the number of samples, the model) before anything
  is spent, and it can be saved after every exchange so an interrupted evaluation resumes
  where it stopped.
* :func:`record_samples` records N samples of a scenario's ``recording:`` (``agentkit record
  --samples N``, ``pytest --record-mode ... --samples N``) and writes the cassette and the
  snapshot together, only when every sample's replay reproduces its live run.

Sample i is drawn with seed ``seed + i`` (``sampling`` in the cassette keeps the temperature and
the seed), so a re-record against the same server draws the same samples.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from agentkit.core.errors import BadInputError
from agentkit.core.files import replace_together
from agentkit.core.secrets import Redactor
from agentkit.core.sim import real_time
from agentkit.core.yamlsafe import parse_yaml
from agentkit.eval.cases import CaseStats, SampleOutcome, case_stats
from agentkit.eval.stats import Spread, spread
from agentkit.instrumentation import dispatcher
from agentkit.llms.base import LLM, LLMRequest, WrappingLLM
from agentkit.llms.cassette import Cassette, CassetteError, CassetteLLM, RecordingLLM
from agentkit.llms.types import ChatResponse
from agentkit.scenario.diff import diff_traces
from agentkit.scenario.judge import SnapshotCheck, Verdict, attempt
from agentkit.scenario.layout import cassette_path, snapshot_path
from agentkit.scenario.model import Scenario
from agentkit.scenario.record import cassette_miss
from agentkit.scenario.roles import RoleModels
from agentkit.scenario.runner import ScenarioResult, load, run_scenario
from agentkit.scenario.trace import SampledTrace

__all__ = ["SamplesMismatchError", "SampleRun", "SampledResult", "COST_KEYS", "sample_count",
           "unjudged", "run_samples", "SampleBook", "Seeded", "SampleRoles", "SampledRecording",
           "record_samples"]


class SamplesMismatchError(BadInputError):
    """A sampled cassette holds another number of samples, or another model, than asked:
    never reused silently."""


#: The costs whose spread over the samples a case reports (a trace's totals, tokens in + out).
COST_KEYS = ("steps", "llm_calls", "tool_calls", "tokens", "wall_time", "serial_time")


@dataclass
class SampleRun:
    """One sample's replay: its result (None: it could not run), its judgement, and what it
    says about the agent (``outcome``; None when it says nothing: it could not run or its
    recording no longer fits)."""

    index: int
    result: ScenarioResult | None
    verdict: Verdict
    outcome: SampleOutcome | None

    def costs(self) -> dict[str, float]:
        """This sample's totals by :data:`COST_KEYS` (empty when it has no trace)."""
        if self.result is None:
            return {}
        totals = self.result.trace.totals()
        return {"steps": totals.steps, "llm_calls": totals.llm_calls,
                "tool_calls": totals.tool_calls,
                "tokens": totals.prompt_tokens + totals.completion_tokens,
                "wall_time": totals.wall_time, "serial_time": totals.serial_time}


@dataclass
class SampledResult:
    """A case judged on its samples: each sample's run, the statistics, the one verdict (as
    every command reports it) and the samples not recorded yet (``missing``: a partial
    result)."""

    scenario: Scenario
    agent_type: str
    runs: list[SampleRun]
    stats: CaseStats
    verdict: Verdict
    missing: list[int] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return self.verdict.passed

    @property
    def trace(self) -> SampledTrace | None:
        """Every sample's trace, in sample order (None when one of them has none)."""
        if any(run.result is None for run in self.runs):
            return None
        return SampledTrace([run.result.trace for run in self.runs if run.result is not None])

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


def _header(path: Path) -> Cassette | None:
    """The cassette at ``path`` (None when there is none or it is unreadable: the run says
    why)."""
    try:
        return Cassette.load(path) if path.is_file() else None
    except CassetteError:
        return None


def sample_count(scenario: Scenario, agent_type: str) -> int | None:
    """How many samples the agent type's ``recording:`` holds (None: not a sampled one)."""
    spec = scenario.agents.get(agent_type)
    if spec is None or spec.team is not None or spec.recording is None:
        return None
    cassette = _header(cassette_path(scenario, agent_type))
    return cassette.samples if cassette is not None else None


def unjudged(result: ScenarioResult | None) -> bool:
    """Whether an LLM judge of this run answered something that is not a verdict. Its server
    worked, so the run is not an infrastructure error left out of the pass rate: nothing
    showed that the agent passed, so the sample counts as failed."""
    return result is not None and any(
        entry.get("verdict") == "error"
        for turn in result.trace.turns for entry in turn.details.get("judged") or [])


def _outcome(verdict: Verdict, result: ScenarioResult | None) -> SampleOutcome | None:
    if verdict.outcome == "error" or verdict.kind == "recording":
        return None
    if verdict.passed:
        return "pass"
    return "infra" if verdict.kind == "infrastructure" and not unjudged(result) else "fail"


def _judge_case(scenario: Scenario, agent_type: str, runs: list[SampleRun],
                snapshots: SnapshotCheck | None, path: Path | None,
                infra: Mapping[int, str]) -> tuple[CaseStats, Verdict]:
    """The statistics of the samples and the verdict on the case (module docstring)."""
    outcomes: list[SampleOutcome] = [run.outcome for run in runs if run.outcome is not None]
    outcomes += ["infra"] * len(infra)
    stats = case_stats(outcomes, scenario.confidence)
    broken = next((run for run in runs if run.verdict.outcome == "error"), None)
    if broken is not None:
        if snapshots is not None and snapshots.policy != "off":
            snapshots.keep(path)
        return stats, replace(broken.verdict, stopped_by=f"sample {broken.index}: "
                                                        f"{broken.verdict.stopped_by}")
    problems = [f"sample {run.index}: the recording no longer fits the agent: "
                f"{cassette_miss(run.result) or run.verdict.stopped_by}"
                for run in runs if run.verdict.kind == "recording" and run.result is not None]
    if not stats.judged and not problems:
        if snapshots is not None and snapshots.policy != "off":
            snapshots.keep(path)
        if not stats.samples:
            return stats, Verdict("error", stopped_by="no sample is recorded yet")
        first = next((run.verdict.stopped_by for run in runs if run.outcome == "infra"),
                     next(iter(infra.values()), ""))
        return stats, Verdict("error", stopped_by=f"all {stats.samples} samples hit "
                                                  f"infrastructure errors; the first: {first}",
                              kind="infrastructure")
    gate = stats.gate(scenario.min_pass_rate)
    if gate is not None:
        problems.insert(0, gate)
        problems += [f"sample {run.index} failed: {_first(run.verdict)}"
                     for run in runs if run.outcome == "fail"]
    if snapshots is None or snapshots.policy == "off":
        return stats, Verdict("fail" if problems else "pass", tuple(problems))
    trace = SampledTrace([run.result.trace for run in runs if run.result is not None])
    state, diff, _ = snapshots.compare(trace, path)
    fails = snapshots.policy == "check" and state in ("changed", "stale", "missing")
    return stats, Verdict("fail" if problems or fails else "pass", tuple(problems),
                          snapshot=state, snapshot_diff=tuple(diff), hint=snapshots.update_hint(),
                          snapshot_fails=fails, snapshot_at=path)


def _first(verdict: Verdict) -> str:
    lines = verdict.lines()
    return lines[-1].removeprefix("- ").splitlines()[0] if lines else "it failed"


def run_samples(scenario: Scenario | str | Path, agent_type: str, *,
                cassette: Cassette | None = None, snapshots: SnapshotCheck | None = None,
                seed: int | str = 0, state: Mapping[str, Any] | None = None,
                infra: Mapping[int, str] | None = None) -> SampledResult:
    """Replay every sample of ``agent_type``'s sampled recording (or of ``cassette``, an
    evaluation's) offline and judge the case on them (module docstring); samples the cassette
    does not list as complete are ``missing`` and not run, except those in ``infra`` (index:
    error), which hit infrastructure errors while being recorded and count as such."""
    infra = dict(infra or {})
    scenario = load(scenario)
    spec = scenario.agents[agent_type]
    if spec.team is not None:
        raise BadInputError(f"{scenario.where('agents', agent_type)}: agents.{agent_type}: "
                            "samples are recorded for one-agent types; a team records one run")
    path = None if cassette is not None else snapshot_path(scenario, agent_type)
    if cassette is None:
        file = cassette_path(scenario, agent_type)
        try:
            cassette = Cassette.load(file)
        except CassetteError as exc:
            error = Verdict("error", stopped_by=str(exc), kind="input")
            if snapshots is not None and snapshots.policy != "off":
                snapshots.keep(path)
            return SampledResult(scenario, agent_type, [], case_stats([]), error)
    count = cassette.samples or 1
    done = sorted(set(cassette.complete)) if cassette.sampled else [0]
    runs = []
    for index in done:
        def run(index: int = index) -> ScenarioResult:
            replay = CassetteLLM(cassette, sample=index if cassette.sampled else None)
            return run_scenario(scenario, agent_type, seed=seed, llm=replay, state=state)

        result, verdict = attempt(run, None, None)
        runs.append(SampleRun(index, result, verdict, _outcome(verdict, result)))
    stats, verdict = _judge_case(scenario, agent_type, runs, snapshots, path, infra)
    return SampledResult(scenario, agent_type, runs, stats, verdict,
                         missing=[i for i in range(count) if i not in done and i not in infra])


class Seeded(WrappingLLM):
    """A live model with a sampling ``seed`` sent on every request (sample i of a recording:
    ``seed + i``). The seed goes to the server only, not into the recorded request, so every
    sample's requests hash as a replay's do."""

    def __init__(self, llm: LLM, seed: int) -> None:
        super().__init__(llm)
        self.seed = seed

    def _seeded(self, request: LLMRequest) -> LLMRequest:
        return replace(request, kwargs={**request.kwargs, "seed": self.seed})

    async def _achat(self, request: LLMRequest) -> ChatResponse:
        return await self.llm._achat(self._seeded(request))

    async def _astream_chat(self, request: LLMRequest) -> Any:
        async for chunk in self.llm._astream_chat(self._seeded(request)):
            yield chunk


SampleRoles = Callable[[int], RoleModels]
"""The live models of the roles (LLM judges, a simulated user) of sample i: each sample is
judged, and its user simulated, by its own calls, recorded with that sample's exchanges."""


class SampleBook:
    """A sampled cassette being recorded (module docstring).

    ``mode`` ``resume`` keeps what an existing cassette recorded (it must hold ``samples``
    samples of ``model``, else :class:`SamplesMismatchError`) and records the samples it has
    not completed; ``rewrite`` starts an empty one. With ``autosave`` the file is rewritten
    (atomically, secrets redacted) after every exchange and every finished sample."""

    def __init__(self, path: Path, *, model: str, samples: int, scenario: str,
                 agent_type: str, sampling: Mapping[str, Any] | None = None,
                 mode: Literal["resume", "rewrite"] = "resume", autosave: bool = False) -> None:
        if samples < 1:
            raise BadInputError(f"samples must be at least 1, got {samples}")
        self.path = path
        self.autosave = autosave
        self.secrets: dict[str, str] = {}
        self.closed = False
        self.kept = 0
        """Exchanges the file holds (as of the last save)."""
        self._lock = threading.Lock()
        existing = Cassette.load(path) if mode == "resume" and path.is_file() else None
        if existing is not None:
            # `agentkit eval` resumes: it has no --mode, so the file is what goes
            check_recorded(existing, path, model=model, samples=samples,
                           anew="remove the file, then run the command again")
            self.cassette = existing
            self.kept = len(existing.exchanges)
        else:
            self.cassette = Cassette(path=path, model=model, samples=samples,
                                     sampling=dict(sampling or {}), scenario=scenario,
                                     agent_type=agent_type)

    @property
    def todo(self) -> list[int]:
        """The samples not recorded to their end yet."""
        done = set(self.cassette.complete)
        return [i for i in range(self.cassette.samples or 1) if i not in done]

    def recorder(self, live: LLM, sample: int) -> RecordingLLM:
        """The LLM sample ``sample`` records through: what that sample recorded before
        (an interrupted run) is replayed, the rest asked of ``live`` (the sample's roles
        through their own live models, whose secrets are redacted too)."""
        with self._lock:
            self.secrets.update(live.secrets)
        recorder = RecordingLLM(live, self.cassette, "new_episodes", sample=sample,
                                autosave=False, agent_type=self.cassette.agent_type,
                                scenario=self.cassette.scenario,
                                on_record=lambda: self._recorded(recorder))
        return recorder

    def _recorded(self, recorder: RecordingLLM) -> None:
        with self._lock:
            self.secrets.update(recorder.secrets)
        if self.autosave:
            self.save()

    def finish(self, sample: int, how: Literal["complete", "paused", "failed"]) -> None:
        """After a sample's run: ``complete`` (it went to its end), ``paused`` (stopped before
        a request was sent -- a spent budget, Ctrl-C: what it recorded stays, so it resumes
        without asking anything twice) or ``failed`` (the model's answer was an
        infrastructure error: that answer is forgotten, to be asked again next time)."""
        with self._lock:
            if self.closed:
                return
            if how == "complete":
                self.cassette.complete = sorted({*self.cassette.complete, sample})
            elif how == "failed":
                self.cassette.exchanges = [e for e in self.cassette.exchanges
                                           if e.sample != sample or e.error is None]
        if self.autosave:
            self.save()

    def text(self) -> str:
        with self._lock:
            return self.cassette.dumps(secrets=self.secrets)

    def save(self) -> None:
        with self._lock:
            if not self.closed:
                self.cassette.save(secrets=self.secrets)
                self.kept = len(self.cassette.exchanges)

    def close(self) -> None:
        """Write nothing more (a save under way ends first): the file stays as last saved,
        whatever the recorders still running do."""
        with self._lock:
            self.closed = True


def check_recorded(cassette: Cassette, path: Path, *, model: str, samples: int,
                   anew: str = "--mode rewrite, or remove the file") -> None:
    """A :class:`SamplesMismatchError` when ``cassette`` holds another model or another
    number of samples than asked; ``anew`` says how the command at hand records anew."""
    if cassette.model != model:
        raise SamplesMismatchError(
            f"{path}: recorded with model `{cassette.model}`, not `{model}`; evaluate "
            f"`{cassette.model}` (--model/--models), or record `{model}` anew ({anew})")
    if cassette.samples != samples:
        held = (f"{cassette.samples} samples" if cassette.samples is not None
                else "one run (no samples)")
        raise SamplesMismatchError(
            f"{path}: holds {held}, but {samples} were asked; give --samples "
            f"{cassette.samples or 1} to use what is recorded, or record {samples} anew "
            f"({anew})")


@dataclass
class SampledRecording:
    """What :func:`record_samples` did: each sample's live run, the offline judgement of the
    recorded samples, whether the cassette and snapshot were written, and why not."""

    cassette: Path
    snapshot: Path | None
    live: list[ScenarioResult | None] = field(default_factory=list)
    replay: SampledResult | None = None
    written: bool = False
    existing: bool = False
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    @property
    def files(self) -> str:
        paths = [str(self.cassette), *([str(self.snapshot)] if self.snapshot else [])]
        return " and ".join(paths)


def record_samples(scenario: Scenario | str | Path, agent_type: str,
                   live: Callable[[int], LLM], samples: int, mode: str = "once", *,
                   sampling: Mapping[str, Any] | None = None, listener: Any = None,
                   state: Mapping[str, Any] | None = None,
                   roles: SampleRoles | None = None) -> SampledRecording:
    """Record ``samples`` runs of ``agent_type``'s ``recording:`` through ``live(i)`` (the
    model of sample i) and write the cassette and the snapshot (every sample's trace)
    together, only when each sample's offline replay reproduces its live run.

    The scenario's LLM judges and simulated user without a script are recorded per sample,
    with that sample's exchanges, through ``roles(i)`` -- by default sample i's own model
    plays them (as :func:`~agentkit.scenario.record.record_scenario` does for one run); a
    replay of sample i replays its own verdicts and user messages.

    Mode ``once`` with the cassette there records nothing (``existing``) when it holds
    ``samples`` samples of the model; another count or model is a
    :class:`SamplesMismatchError`. Any other mode records all samples anew. Unlike a single
    recording, a sample that misses the expectations is kept: it is a measurement of the
    pass rate, judged by the scenario's ``min_pass_rate`` on the replay."""
    scenario = load(scenario)
    if samples < 1:
        raise BadInputError(f"--samples must be at least 1, got {samples}")
    spec = scenario.agents.get(agent_type)
    if spec is None or spec.team is not None or spec.recording is None:
        raise BadInputError(f"{scenario.where('agents', agent_type)}: agents.{agent_type}: "
                            "samples are recorded into a `recording:` of a one-agent type")
    path = cassette_path(scenario, agent_type)
    snapshot = snapshot_path(scenario, agent_type)
    outcome = SampledRecording(cassette=path, snapshot=snapshot)
    first = live(0)
    model = first.metadata.model_name
    if mode == "once" and path.is_file():
        check_recorded(Cassette.load(path), path, model=model, samples=samples)
        outcome.existing = True
        outcome.replay = run_samples(scenario, agent_type, state=state)
        return outcome
    book = SampleBook(path, model=model, samples=samples, scenario=scenario.name,
                      agent_type=agent_type, sampling=sampling, mode="rewrite")
    for index in range(samples):
        model_of_sample = first if index == 0 else live(index)
        recorder = book.recorder(model_of_sample, index)
        cast = (roles(index) if roles is not None
                else RoleModels(judge=model_of_sample, user=model_of_sample))
        with ExitStack() as stack:
            stack.enter_context(real_time())
            if listener is not None:
                stack.enter_context(dispatcher.listen(listener))
            result = run_scenario(scenario, agent_type, llm=recorder, state=state, roles=cast)
        outcome.live.append(result)
        if recorder.unrecorded:  # the model was never asked: nothing to keep
            error = recorder.unrecorded[0]
            outcome.problems = [f"sample {index}: {type(error).__name__}: {error}"]
            return outcome
        book.finish(index, "complete")
    text = book.text()
    data, where = parse_yaml(text)
    recorded = Cassette.from_dict(data, path, where)
    outcome.replay = run_samples(scenario, agent_type, cassette=recorded, state=state)
    redactor = Redactor(secrets=book.secrets)
    for run, live_result in zip(outcome.replay.runs, outcome.live, strict=True):
        assert live_result is not None
        miss = cassette_miss(run.result) if run.result is not None else run.verdict.stopped_by
        if miss is not None:
            outcome.problems.append(f"sample {run.index}: the fresh recording does not replay "
                                    f"(are the agent's requests deterministic?): {miss}")
            continue
        assert run.result is not None
        differences = diff_traces(live_result.trace.to_dict(redactor),
                                  run.result.trace.to_dict())
        if differences:
            outcome.problems.append(f"sample {run.index}: replaying the fresh recording gives a "
                                    "different trace:\n" + "\n".join(f"  {line}"
                                                                     for line in differences))
    if outcome.problems:
        return outcome
    trace = outcome.replay.trace
    assert trace is not None
    writes: list[tuple[str | Path, str]] = [(path, text)]
    if snapshot is not None:
        writes.insert(0, (snapshot, trace.to_json()))
    replace_together(writes)
    outcome.written = True
    return outcome
