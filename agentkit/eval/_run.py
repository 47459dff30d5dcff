"""An evaluation from start to end, as ``agentkit eval`` runs it: plan the cases of the
matrix (this shard's), open their cassettes, check that the server serves the models left
to record, record the missing samples against it, then judge every case and say what is
missing and why.

:class:`EvalRun` is the sequence, in steps so that its caller can say what happens between
them; the report (:func:`agentkit.report.eval_comparison`) is built from
:attr:`EvalOutcome.results`, one layer up. Every problem of the input (a cassette of another
model, an unknown model, a budget below one run, samples missing with no server to record
them) is a :class:`~agentkit.core.errors.BadInputError`; Ctrl-C while recording is the
``KeyboardInterrupt`` of :meth:`Evaluation.record <agentkit.eval._matrix.Evaluation.record>`
(every cassette whole)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentkit.core.errors import BadInputError
from agentkit.eval._live import AdaptiveConcurrency, Budget
from agentkit.eval._matrix import CaseResult, Evaluation, Progress, plan, shard_of
from agentkit.eval._models import parse_model
from agentkit.llms.base import LLM

__all__ = ["LiveSettings", "EvalRun", "EvalOutcome", "served_models"]


@dataclass(frozen=True)
class LiveSettings:
    """How the samples not recorded yet are recorded: the server (None: offline, every sample
    must be recorded), how new samples are drawn (sample i with ``seed`` + i), and the limits
    on the live calls."""

    base_url: str | None = None
    temperature: float = 0.8
    seed: int = 0
    timeout: float = 120.0
    concurrency: int = 20
    max_concurrency: int | None = None
    """The most requests in flight (None: ``concurrency``; the limit grows beyond it only when
    this allows)."""
    cooldown: float = 15.0
    max_calls: int | None = None
    max_tokens: int | None = None
    max_answer_tokens: int | None = None
    """The longest answer of each live call, in tokens (None: the server's); an agent type's
    ``max_tokens`` in the scenario wins."""

    def model(self, name: str, seed: int) -> LLM:
        """The backend of one sample of model ``name`` (a model spec: at its own temperature
        if it carries one; agentkit's limiter retries, so the client does not)."""
        from agentkit.llms.openai import OpenAI

        spec = parse_model(name)
        temperature = self.temperature if spec.temperature is None else spec.temperature
        return OpenAI(model=spec.name, base_url=self.base_url, timeout=self.timeout,
                      temperature=temperature, max_tokens=self.max_answer_tokens,
                      max_retries=0, additional_kwargs={"seed": seed})

    def sampling(self) -> dict[str, Any]:
        """How new samples are drawn, as their cassettes keep it."""
        drawn: dict[str, Any] = {"temperature": self.temperature, "seed": self.seed}
        if self.max_answer_tokens is not None:
            drawn["max_tokens"] = self.max_answer_tokens
        return drawn


@dataclass
class EvalOutcome:
    """What an evaluation ended with: every case judged on its recorded samples, and what is
    left to record (per case key) with why."""

    results: list[CaseResult]
    missing: dict[str, int]
    """Per case key, the samples not recorded to their end (complete cases left out)."""
    total: int
    budget: Budget
    unreachable: str | None
    infra_errors: bool
    """Whether samples hit infrastructure errors in this run."""

    @property
    def mismatched(self) -> set[str]:
        """The keys of the cases whose agent asked what its recorded samples do not hold
        (the agent or the scenario changed since they were recorded)."""
        return {result.case.key for result in self.results
                if result.sampled.verdict.has("recording_mismatch")}

    @property
    def incomplete(self) -> bool:
        """Whether samples are left to record or the model could not be reached: the report
        is partial and the same evaluation, run again, resumes."""
        return bool(self.missing) or self.unreachable is not None

    def why_missing(self) -> str:
        """Why samples are left to record: a spent budget, infrastructure errors, or a stop."""
        if self.budget.exhausted:
            return f"the budget ran out ({self.budget.describe()})"
        return "samples hit infrastructure errors" if self.infra_errors else "stopped"


class EvalRun:
    """Every scenario of ``paths`` under every agent type of ``agent_types`` with every model
    of ``models``, ``samples`` samples each, in ``cassettes`` (default: beside each scenario),
    only shard ``shard`` = (index, count) of the cases if given. Opening the cassettes is
    part of building it (a :class:`BadInputError` before anything is spent). ``backend(model,
    seed)`` builds a sample's live model when ``live`` has a server (default:
    :meth:`LiveSettings.model`). A sequential evaluation gives ``targets`` (per case key, the
    samples it should hold: see :attr:`Evaluation.targets
    <agentkit.eval._matrix.Evaluation.targets>`) and one ``budget`` shared by its rounds."""

    def __init__(self, paths: Sequence[str | Path], agent_types: Sequence[str],
                 models: Sequence[str], samples: int, live: LiveSettings, *,
                 cassettes: Path | None = None, shard: tuple[int, int] | None = None,
                 progress: Progress | None = None,
                 backend: Callable[[str, int], LLM] | None = None,
                 targets: dict[str, int] | None = None, budget: Budget | None = None) -> None:
        self.models = list(models)
        self.live = live
        cases = plan(paths, agent_types, models, cassettes=cassettes)
        self.keys = [case.key for case in cases]
        """Every case key of the plan, of every shard (a sharded report knows the whole)."""
        self.cassettes = {case.key: case.cassette for case in cases}
        if shard is not None:
            cases = [c for c in cases if shard_of(c.key, shard[1]) == shard[0]]
        self.evaluation = Evaluation(
            cases, samples, (backend or live.model) if live.base_url else None,
            sampling=live.sampling(),
            limiter=AdaptiveConcurrency(live.concurrency, maximum=live.max_concurrency,
                                        cooldown=live.cooldown),
            budget=budget or Budget(live.max_calls, live.max_tokens),
            workers=live.max_concurrency or live.concurrency,
            progress=progress, targets=targets)
        self.evaluation.open()
        self.todo = self.evaluation.todo
        """The samples left to record when the evaluation opened."""

    @property
    def records_live(self) -> bool:
        """Whether samples are left to record and a server to record them from."""
        return bool(self.todo) and self.live.base_url is not None

    def check_models(self) -> None:
        """A :class:`BadInputError` if a model left to record is not among those the server
        lists (a server that lists none is not checked)."""
        base_url = self.live.base_url
        if not self.records_live or base_url is None:
            return
        served = served_models(base_url, self.live.timeout)
        if served is None:
            return
        unknown = [parse_model(m).name for m in self.models if parse_model(m).name not in served
                   and any(case.model == m for case, _ in self.todo)]
        if unknown:
            raise BadInputError(f"--models: unknown model {unknown[0]!r}: the server at "
                                f"{base_url} serves {', '.join(served) or 'none'}")

    def record(self) -> None:
        """Record the samples left (:meth:`Evaluation.record
        <agentkit.eval._matrix.Evaluation.record>`)."""
        self.evaluation.record()

    def finish(self) -> EvalOutcome:
        """Every case judged on its recorded samples; a :class:`BadInputError` if the budget
        ran out before one run of a sample finished (it is below what one run takes)."""
        evaluation = self.evaluation
        spent = evaluation.budget
        missing = evaluation.missing()
        if spent.exhausted and missing and evaluation.done == 0 and evaluation.recorded == 0:
            raise BadInputError(f"the budget ({spent.describe()}) ran out before one run of a "
                                "sample finished: it is below what one run takes; give a "
                                "larger --max-calls / --max-tokens")
        return EvalOutcome(evaluation.results(), missing, evaluation.total, spent,
                           evaluation.unreachable, bool(evaluation.infra))


def served_models(base_url: str, timeout: float) -> list[str] | None:
    """The models an OpenAI-compatible server lists at ``/models`` (None: it lists none)."""
    import httpx

    try:
        answer = httpx.get(base_url.rstrip("/") + "/models", timeout=min(timeout, 30.0))
        data = answer.json() if answer.status_code == 200 else None
    except Exception:  # noqa: BLE001 (a probe: a server that cannot list its models is not checked)
        return None
    if not isinstance(data, dict) or not isinstance(data.get("data"), list):
        return None
    return [str(m.get("id")) for m in data["data"] if isinstance(m, dict) and m.get("id")]
