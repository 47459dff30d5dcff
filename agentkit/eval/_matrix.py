"""The evaluation matrix: every scenario × agent type × model, N samples each.

:func:`plan` finds the cases (the agent types each scenario declares, among those asked, for
every model) and :func:`shard` keeps one CI job's share of them. :class:`Evaluation` then

1. opens each case's sampled cassette (``cassettes/eval/<scenario>.<agent type>.<model>.yaml``
   beside the scenario, or in a folder of your choice) and checks it holds the samples and
   the model asked, before anything is spent;
2. records the samples not recorded yet against the live model -- concurrently, every request
   through one :class:`~agentkit.eval._live.AdaptiveConcurrency` limiter and one
   :class:`~agentkit.eval._live.Budget` -- saving each cassette after every exchange, so an
   interrupted evaluation (Ctrl-C, a spent budget, a crash) resumes where it stopped without
   asking the model anything twice. A sample is marked complete only when its run ended with
   an answer, or with an error of the agent or the model, while nothing was stopping it; a
   call that agentkit itself lost (:class:`~agentkit.eval._live.LostCallError`: an executor
   shut down under it) is never recorded, and its sample resumes;
3. replays every recorded sample offline and judges each case on them
   (:func:`~agentkit.eval._samples.run_samples`): the same judgement however the samples were
   recorded, in one run or several, on one machine or split into shards.

A sample whose model call ended in an infrastructure error (a timeout, a 5xx, a rate limit
after every retry) is counted apart and asked again by the next run; its answers before the
error are kept.
"""

from __future__ import annotations

import hashlib
import queue
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future
from concurrent.futures import wait as wait_futures
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from agentkit.core.errors import BadInputError
from agentkit.core.sim import real_time
from agentkit.eval._live import AdaptiveConcurrency, Budget, LiveModel
from agentkit.eval._models import parse_model
from agentkit.eval._samples import SampleBook, SampledResult, run_samples, unjudged
from agentkit.harness import (
    RoleModels,
    UnknownAgentTypeError,
    check_agent_type,
    load,
    run_scenario,
    with_limits,
)
from agentkit.llms.base import LLM
from agentkit.llms.errors import APIConnectionError
from agentkit.scenario._layout import eval_cassette_path
from agentkit.scenario._loader import ScenarioError, discover_scenarios
from agentkit.scenario._model import Scenario

__all__ = ["Case", "plan", "parse_shard", "shard", "Progress", "CaseResult", "Evaluation"]


@dataclass(frozen=True)
class Case:
    """One scenario × agent type × model of the matrix, with the cassette of its samples."""

    scenario: Scenario
    agent_type: str
    model: str
    cassette: Path

    @property
    def key(self) -> str:
        return f"{self.scenario.name}[{self.agent_type}@{self.model}]"


def plan(paths: Sequence[str | Path], agent_types: Sequence[str], models: Sequence[str], *,
         cassettes: Path | None = None) -> list[Case]:
    """The cases of the matrix, in scenario-file, agent-type, then model order: each
    scenario under each of ``agent_types`` it declares (one-agent types: a team records one
    run), for each of ``models``. An unknown agent type, a malformed scenario or a matrix
    with no case is a :class:`~agentkit.core.errors.BadInputError`."""
    for name in agent_types:
        try:
            check_agent_type(name)
        except UnknownAgentTypeError as exc:
            raise BadInputError(f"--agents: {exc}") from None
    found: dict[Path, Path] = {}
    for root in paths:
        for path in discover_scenarios(root):
            found.setdefault(path.resolve(), path)
    cases: list[Case] = []
    names: dict[str, Path] = {}
    for path in found.values():
        scenario = load(path)
        if scenario.name in names:
            raise ScenarioError(f"{path}: scenario name `{scenario.name}` is already used by "
                                f"{names[scenario.name]}; scenario names must be unique")
        names[scenario.name] = path
        for agent_type in agent_types:
            spec = scenario.agents.get(agent_type)
            if spec is None or spec.team is not None:
                continue
            cases += [Case(scenario, agent_type, model,
                           eval_cassette_path(scenario, agent_type, model, cassettes))
                      for model in models]
    if not cases:
        raise BadInputError(f"no scenario under {', '.join(map(str, paths))} declares the "
                            f"agent type(s) {', '.join(agent_types)} (one-agent types only)")
    return cases


def parse_shard(text: str) -> tuple[int, int]:
    """``i/n`` (1 <= i <= n) as ``(i, n)``; anything else is a ValueError saying so."""
    index, _, count = text.partition("/")
    try:
        i, n = int(index), int(count)
    except ValueError:
        raise ValueError(f"{text!r} is not i/n (e.g. 2/4: the second of four shards)") from None
    if not 1 <= i <= n:
        raise ValueError(f"{text!r}: the shard number is between 1 and {max(n, 1)}")
    return i, n


def shard_of(key: str, count: int) -> int:
    """The shard (1-based) a case key belongs to: a hash of the key, so a case stays in its
    shard whatever else is added to or removed from the suite."""
    digest = hashlib.sha256(key.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % count + 1


def shard(keys: Sequence[str], index: int, count: int) -> list[bool]:
    """For each key, whether it is in shard ``index`` of ``count``."""
    return [shard_of(key, count) == index for key in keys]


Progress = Callable[["Evaluation"], None]
"""Called after every recorded sample, once before the first, and every half second while
waiting for samples (a progress line that is due by time), to show progress."""


class _Workers:
    """Daemon threads running the samples. Not a ``ThreadPoolExecutor``: the process joins
    those threads at exit and first shuts down every executor, so samples still running
    would fail in agentkit's own machinery; an abandoned sample (:meth:`Evaluation.abandon`)
    must neither hold the exit up nor see such errors."""

    def __init__(self, count: int) -> None:
        self._jobs: queue.SimpleQueue[tuple[Future[None], Callable[[], None]] | None] = (
            queue.SimpleQueue())
        self._threads = [threading.Thread(target=self._work, name=f"agentkit-eval-{i}",
                                          daemon=True) for i in range(count)]
        for thread in self._threads:
            thread.start()

    def submit(self, job: Callable[[], None]) -> Future[None]:
        future: Future[None] = Future()
        self._jobs.put((future, job))
        return future

    def _work(self) -> None:
        while (item := self._jobs.get()) is not None:
            future, job = item
            if not future.set_running_or_notify_cancel():
                continue
            try:
                job()
            except BaseException as exc:  # noqa: BLE001 (handed to the waiting thread)
                future.set_exception(exc)
            else:
                future.set_result(None)

    def close(self) -> None:
        """Let every thread end once its job is done."""
        for _ in self._threads:
            self._jobs.put(None)


@dataclass
class CaseResult:
    """A case judged on its samples (those that hit infrastructure errors in this run
    counted apart: they are asked again next time, so the cassette does not hold them)."""

    case: Case
    sampled: SampledResult


@dataclass
class Evaluation:
    """Records what is missing of ``cases`` (``samples`` each) and judges them (module
    docstring). ``live(model, seed)`` builds the backend of one sample (None: offline, every
    sample must be recorded already); ``sampling`` goes into new cassettes (``seed``: sample
    i uses seed + i)."""

    cases: list[Case]
    samples: int
    live: Callable[[str, int], LLM] | None = None
    sampling: dict[str, Any] = field(default_factory=dict)
    limiter: AdaptiveConcurrency = field(default_factory=AdaptiveConcurrency)
    budget: Budget = field(default_factory=Budget)
    workers: int = 32
    retries: int = 6
    """Attempts after a retryable error (a 429, a 5xx, a timeout) before a sample gives up."""
    backoff: float = 0.5
    """Seconds before the first retry without a ``Retry-After`` (doubling each time)."""
    progress: Progress | None = None
    targets: dict[str, int] | None = None
    """Per case key, the samples it should hold instead of ``samples`` -- a sequential
    evaluation's: its cassettes grow to the target and are never cut (see
    :class:`~agentkit.eval._samples.SampleBook`'s ``grow``)."""
    on_interrupt: Progress | None = None
    """Called once on Ctrl-C, before :meth:`record` waits for the requests in flight."""
    stop: threading.Event = field(default_factory=threading.Event)
    done: int = 0
    passed: int = 0
    judged: int = 0
    infra: dict[str, dict[int, str]] = field(default_factory=dict)
    """Per case key, the samples that hit infrastructure errors in this run (index: error)."""
    unreachable: str | None = None
    """Why the model could not be reached at all (the evaluation stopped), if it could not."""
    started_at: float = field(default_factory=time.monotonic)
    _books: dict[str, SampleBook] = field(default_factory=dict)
    _todo: list[tuple[Case, int]] = field(default_factory=list)
    _pending: set[Future[None]] = field(default_factory=set)

    def open(self) -> None:
        """Open (or create) every case's cassette and find what is left to record; a
        cassette of another model or sample count is a
        :class:`~agentkit.eval._samples.SamplesMismatchError` before anything is spent."""
        if self.samples < 1:
            raise BadInputError(f"--samples must be at least 1, got {self.samples}")
        for case in self.cases:
            target = self.samples if self.targets is None else self.targets.get(case.key,
                                                                                self.samples)
            spec = parse_model(case.model)
            sampling = dict(self.sampling)
            if spec.temperature is not None:
                sampling["temperature"] = spec.temperature
            book = SampleBook(case.cassette, model=spec.name, samples=target,
                              grow=self.targets is not None,
                              scenario=case.scenario.name, agent_type=case.agent_type,
                              sampling=sampling, autosave=True)
            self._books[case.key] = book
            self._todo += [(case, index) for index in book.todo]

    @property
    def todo(self) -> list[tuple[Case, int]]:
        """The samples left to record, by case."""
        return list(self._todo)

    def missing(self) -> dict[str, int]:
        """Per case key, the samples not recorded to their end (cases with none left out)."""
        return {case.key: len(self._books[case.key].todo) for case in self.cases
                if self._books[case.key].todo}

    @property
    def total(self) -> int:
        return sum(self._books[case.key].cassette.samples or 1 for case in self.cases
                   if case.key in self._books) if self._books else len(self.cases) * self.samples

    @property
    def recorded(self) -> int:
        """Samples recorded to their end, before this run and in it."""
        return sum(len(book.cassette.complete) for book in self._books.values())

    def record(self) -> None:
        """Record every sample left, concurrently; stops early (leaving the rest for the next
        run) when the budget is spent or :attr:`stop` is set.

        On Ctrl-C (a ``KeyboardInterrupt`` in this thread) nothing new is sent: it calls
        :attr:`on_interrupt`, waits for the samples running -- their requests in flight are
        answered and saved, and each stops before its next request -- and re-raises. A second
        Ctrl-C while it waits, or any other exception, abandons them instead
        (:meth:`abandon`). Either way every cassette is whole and the next run resumes
        exactly what is missing."""
        if not self._todo:
            return
        if self.live is None:
            missing = len(self._todo)
            first = self._todo[0][0]
            raise BadInputError(
                f"{missing} sample(s) are not recorded yet (the first: {first.key}, in "
                f"{first.cassette}); give --base-url to record them against the model")
        workers = _Workers(max(1, min(self.workers, len(self._todo))))
        try:
            try:
                self._run(workers)
            except KeyboardInterrupt:
                self.stop.set()
                if self.on_interrupt is not None:
                    self.on_interrupt(self)
                while self._pending:
                    _, self._pending = wait_futures(self._pending, timeout=0.5)
                raise
        except BaseException:
            self.abandon()
            raise
        finally:
            workers.close()

    def _run(self, workers: _Workers) -> None:
        if self.progress is not None:
            self.progress(self)
        waiting = list(self._todo)
        while waiting or self._pending:
            # as many samples run as requests may be in flight: a sample mostly waits for one
            # call at a time, and a server that keeps a conversation's prompt cached
            # (llama.cpp) answers far faster when conversations do not interleave
            while waiting and len(self._pending) < min(self.workers, max(1, self.limiter.limit)):
                case, index = waiting.pop(0)
                self._pending.add(workers.submit(partial(self._record, case, index)))
            finished, self._pending = wait_futures(self._pending, timeout=0.5,
                                                   return_when=FIRST_COMPLETED)
            for future in finished:
                future.result()
            if self.progress is not None:
                self.progress(self)
            if self.budget.exhausted:
                self.stop.set()
            if self.stop.is_set():
                waiting.clear()

    def abandon(self) -> None:
        """Stop, and write nothing more: samples still running finish unseen (their answers
        are not kept) and every cassette stays as last saved -- each save is atomic, so whole.
        The next run asks what they had not saved."""
        self.stop.set()
        for book in self._books.values():
            book.close()

    def in_flight(self) -> int:
        """Requests sent and not answered yet."""
        return self.limiter.in_flight

    @property
    def calls_kept(self) -> int:
        """Exchanges the cassette files hold (complete samples and the started ones)."""
        return sum(book.kept for book in self._books.values())

    def _record(self, case: Case, index: int) -> None:
        if self.stop.is_set() or self.budget.exhausted:
            return
        live = self.live
        assert live is not None
        book = self._books[case.key]
        seed = int(self.sampling.get("seed") or 0) + index

        models: list[LiveModel] = []

        def limited(backend: LLM) -> LLM:
            models.append(LiveModel(backend, self.limiter, self.budget,
                                    stop=self.stop, retries=self.retries,
                                    backoff=self.backoff))
            return models[-1]

        # the agent's calls under its type's max_tokens and timeout; its roles' without
        model = limited(with_limits(case.scenario, case.agent_type, live(case.model, seed)))

        def role_model(named: str | None) -> LLM:
            # a judge or simulated user naming no model is played by the case's model; its
            # calls share the limiter and the budget with the agent's
            return model if named is None or named == parse_model(case.model).name else limited(
                live(named, seed))

        recorder = book.recorder(model, index)
        with real_time():
            result = run_scenario(case.scenario, case.agent_type, llm=recorder,
                                  roles=RoleModels(judge=role_model, user=role_model))
        if book.closed:  # abandoned: nothing of this run is kept or shown
            return
        # a run one of whose calls agentkit refused (a spent budget, a stopping evaluation)
        # was cut short by agentkit, whatever the agent made of the refusal: the sample
        # resumes, replaying what it saved. An error of the agent or the model while another
        # sample spent the budget is this sample's end, and kept
        cut = any(m.refused for m in models)
        # a judge that answered no verdict is the sample's failure (kept), not the server's
        stopped = (any(turn.error_kind == "infrastructure" for turn in result.trace.turns)
                   and not unjudged(result))
        refused = next((e for e in recorder.unrecorded if isinstance(e, APIConnectionError)
                        and not e.retryable), None)
        if refused is not None:  # nothing answers there: stop instead of failing every sample
            self.unreachable = str(refused)
            self.stop.set()
            book.finish(index, "paused")
        elif cut:  # every NotSentError the recorder saw was one of these refusals
            book.finish(index, "paused")
        elif stopped or recorder.unrecorded:
            book.finish(index, "failed")
            error = next((t.error for t in result.trace.turns if t.error), None) or str(
                recorder.unrecorded[0] if recorder.unrecorded else "infrastructure error")
            self.infra.setdefault(case.key, {})[index] = error
        else:  # counted first: a progress line that sees the sample recorded sees its verdict
            self.done += 1
            self.judged += 1
            self.passed += result.passed
            book.finish(index, "complete")
        if self.progress is not None:
            self.progress(self)

    def results(self) -> list[CaseResult]:
        """Every case judged offline on its recorded samples, with this run's
        infrastructure errors counted apart."""
        results = []
        for case in self.cases:
            book = self._books[case.key]
            sampled = run_samples(case.scenario, case.agent_type, cassette=book.cassette,
                                  infra=self.infra.get(case.key))
            results.append(CaseResult(case, sampled))
        return results
