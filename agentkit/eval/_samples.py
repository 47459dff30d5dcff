"""Samples: several independent live runs of one case in one cassette, recorded together and
judged together.

* :func:`run_samples` replays every recorded sample of a scenario × agent type offline (its
  ``recording:``, or an evaluation's cassette) and judges the case on all of them: it is
  :func:`agentkit.harness.run_case` of a sampled case (each sample judged once, then the case
  -- :class:`~agentkit.eval._cases.CaseStats`, the scenario's ``min_pass_rate``, and the
  snapshot of all the samples' traces), as pytest's item, ``agentkit run``, ``replay``,
  ``report`` and ``eval`` run it, so a change to the agent is judged against the whole
  recorded distribution everywhere.
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
from agentkit.harness import (
    Case,
    CaseResult,
    RoleModels,
    ScenarioResult,
    load,
    run_case,
    run_scenario,
    sample_count,
    with_limits,
)
from agentkit.instrumentation import dispatcher
from agentkit.llms.base import LLM, LLMRequest, WrappingLLM
from agentkit.llms.types import ChatResponse
from agentkit.recording import Cassette, RecordingLLM
from agentkit.scenario._layout import cassette_path, snapshot_path
from agentkit.scenario._model import Scenario
from agentkit.trace import diff_traces
from agentkit.verdict import COST_KEYS, SampleRun, SnapshotSession, cassette_miss, unjudged

__all__ = ["SamplesMismatchError", "SampleRun", "SampledResult", "COST_KEYS", "sample_count",
           "unjudged", "run_samples", "SampleBook", "Seeded", "SampleRoles", "SampledRecording",
           "record_samples"]


class SamplesMismatchError(BadInputError):
    """A sampled cassette holds another number of samples, or another model, than asked:
    never reused silently."""


SampledResult = CaseResult
"""A case judged on its samples (:class:`agentkit.harness.CaseResult`)."""


def run_samples(scenario: Scenario | str | Path, agent_type: str, *,
                cassette: Cassette | None = None, snapshots: SnapshotSession | None = None,
                seed: int | str = 0, state: Mapping[str, Any] | None = None,
                infra: Mapping[int, str] | None = None) -> CaseResult:
    """Replay every sample of ``agent_type``'s sampled recording (or of ``cassette``, an
    evaluation's) offline and judge the case on them (module docstring); samples the cassette
    does not list as complete are ``missing`` and not run, except those in ``infra`` (index:
    error), which hit infrastructure errors while being recorded and count as such."""
    case = Case(load(scenario), agent_type, seed=seed, state=state, infra=dict(infra or {}),
                cassette=cassette, samples=True)
    return run_case(case, snapshots)


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
    (atomically, secrets redacted) after every exchange and every finished sample.

    With ``grow`` (a sequential evaluation drawing samples in batches) an existing cassette
    may hold another count: fewer are extended to ``samples`` (what is recorded stays, the
    new samples continue its seeds), more are kept as they are."""

    def __init__(self, path: Path, *, model: str, samples: int, scenario: str,
                 agent_type: str, sampling: Mapping[str, Any] | None = None,
                 mode: Literal["resume", "rewrite"] = "resume", autosave: bool = False,
                 grow: bool = False) -> None:
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
            if grow and existing.samples is not None:
                samples = max(samples, existing.samples)
                existing.samples = samples
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
    plays them (as :func:`~agentkit.harness._record.record_scenario` does for one run); a
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
        recorder = book.recorder(with_limits(scenario, agent_type, model_of_sample), index)
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
