"""The one judgement of a run, and of a case of N samples.

A run ends in a :class:`Verdict`:

* ``error`` -- it could not run at all (a :class:`~agentkit.core.errors.HarnessError` before
  its first turn: a malformed file, an import ref that does not import, a factory that
  raised, a missing cassette); ``kind`` says whose the problem is;
* ``fail`` -- it ran and something is wrong: it stopped on an error the scenario did not
  expect (``stopped_by``: the root cause, reported alone -- the expectations and the snapshot
  that follow from it would only repeat it), a check found a problem (:mod:`._checks`), or
  its trace differs from its snapshot;
* ``pass`` -- none of that.

The snapshot part goes through the session's store (:class:`~._snapshots.SnapshotSession`):
a run that stopped on an error is never compared (``not_checked``), a run with problems is
compared but never accepted. A sampled case (:func:`judge_samples`) is judged on its samples'
verdicts, its statistics and the snapshot of all its samples' traces.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from agentkit.core.errors import ErrorKind, HarnessError, kind_of
from agentkit.recording import CassetteLLM, CassetteMissError
from agentkit.trace._trace import SampledTrace, Trace
from agentkit.verdict._attribution import Attribution, attribute
from agentkit.verdict._cases import CaseStats, SampleOutcome, case_stats
from agentkit.verdict._checks import run_checks
from agentkit.verdict._outcomes import FaultOutcome, classify, injected_faults
from agentkit.verdict._problems import Problem, ProblemKind
from agentkit.verdict._snapshots import NOT_CHECKED, SnapshotSession, SnapshotState

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from agentkit.scenario._model import Scenario
    from agentkit.verdict._run import Run

__all__ = ["Verdict", "Outcome", "SampleRun", "COST_KEYS", "judge", "judge_error", "judge_fault",
           "judge_samples", "sample_outcome", "unjudged", "cassette_miss"]

Outcome = Literal["pass", "fail", "error"]


@dataclass(frozen=True)
class Verdict:
    """How a run (or a sampled case) ended (module docstring)."""

    outcome: Outcome
    problems: tuple[Problem, ...] = ()
    stopped_by: str | None = None
    """The unexpected error the run stopped on (or could not start for), when it did."""
    stopped_in: int | None = None
    """The turn (1-based) the run stopped in; None when it could not start."""
    kind: ErrorKind | None = None
    """Whose problem the stopping error is (:mod:`agentkit.core.errors`), when there is one."""
    snapshot: SnapshotState | None = None
    """How the trace compares with its snapshot (None: not compared, policy ``off``)."""
    snapshot_diff: tuple[str, ...] = ()
    snapshot_stored: dict[str, Any] | None = field(default=None, repr=False, compare=False)
    """The stored snapshot's trace when it was read (to show the diff in another style)."""
    hint: str | None = None
    """What to run to accept a snapshot change (or re-record), for messages."""
    snapshot_fails: bool = field(default=False, repr=False)
    snapshot_at: Path | None = field(default=None, repr=False)
    tracebacks: tuple[str, ...] = field(default=(), repr=False, compare=False)
    """The tracebacks of the user's code behind the run's errors (a factory, a tool or the
    agent's own code that raised), which verbose output adds to the lines."""
    fault: FaultOutcome | None = None
    """For a run that met faults under ``expect.on_fault``: its outcome class and why."""
    cause: Attribution | None = None
    """Whose failure a failed run is -- the agent, the simulated user, a judge or the
    infrastructure -- where the trace shows it (:mod:`._attribution`)."""

    @property
    def passed(self) -> bool:
        return self.outcome == "pass"

    @property
    def snapshot_differs(self) -> bool:
        return self.snapshot in ("changed", "stale", "missing")

    @property
    def snapshot_written(self) -> Path | None:
        """The snapshot file this judgement wrote (created or updated), if it wrote one."""
        return self.snapshot_at if self.snapshot in ("created", "updated") else None

    def has(self, kind: ProblemKind) -> bool:
        """Whether a check found a problem of ``kind``."""
        return any(problem.kind == kind for problem in self.problems)

    def _where(self) -> str:
        if self.snapshot_at is None:
            return ""
        cwd = Path.cwd()
        at = self.snapshot_at
        return f" ({at.relative_to(cwd) if at.is_relative_to(cwd) else at})"

    def snapshot_problems(self) -> list[str]:
        """The snapshot difference as one problem line, when it fails the run (its diff is
        kept in ``snapshot_diff``)."""
        if not self.snapshot_fails:
            return []
        if self.snapshot == "missing":
            return [f"no snapshot of this trace yet{self._where()}; create it with {self.hint}"]
        if self.snapshot == "stale":
            return list(self.snapshot_diff)
        return [f"the trace differs from its snapshot; accept the change with {self.hint}"]

    def lines(self, verbose: bool = False) -> list[str]:
        """What went wrong, one problem per line (indented continuation lines), for every
        command's output: the root cause alone when the run stopped, else the problems the
        checks found, then the snapshot difference; ``verbose`` (pytest ``-v``, ``agentkit
        run --verbose``) adds the user's tracebacks behind them."""
        lines = self._lines()
        return [*lines, *self.tracebacks] if verbose and lines else lines

    def _lines(self) -> list[str]:
        if self.stopped_by is not None:
            if self.stopped_in is None:
                return [self.stopped_by]
            return [f"the run stopped on an error in turn {self.stopped_in}:", self.stopped_by]
        lines = [f"- {problem}" for problem in self.problems]
        if self.snapshot == "missing":
            lines.append(f"- no snapshot of this trace yet{self._where()}; create it with "
                         f"{self.hint}")
        elif self.snapshot == "stale":
            lines += [f"- {line}" for line in self.snapshot_diff]
        elif self.snapshot == "changed" and self.snapshot_diff:
            lines.append(f"- the trace differs from its snapshot (accept the change with "
                         f"{self.hint}):")
            lines += [f"  {line}" for line in self.snapshot_diff]
        return lines


def _compared(snapshots: SnapshotSession, trace: Trace | SampledTrace, path: Path | None,
              problems: Sequence[Problem]) -> Verdict:
    """The verdict of a run (or case) that got through, with its snapshot compared."""
    hint = snapshots.update_hint()
    accept = not problems
    if not accept:
        # a run that fails its own checks is compared, never accepted: the committed snapshot
        # (the last behaviour that passed) stays as it is under --snapshot-update too
        hint += " once the run passes; a failing run is never written as its snapshot"
    state, diff, stored = snapshots.compare(trace, path, accept=accept)
    fails = snapshots.policy == "check" and state in ("changed", "stale", "missing")
    return Verdict("fail" if problems or fails else "pass", tuple(problems),
                   snapshot=state, snapshot_diff=tuple(diff), snapshot_stored=stored,
                   hint=hint, snapshot_fails=fails, snapshot_at=path)


def judge(run: Run, snapshots: SnapshotSession | None = None,
          snapshot_path: Path | None = None) -> Verdict:
    """The verdict of a run that produced a trace: its checks (:data:`~._checks.CHECKS`),
    then, unless it stopped on an error, its snapshot through ``snapshots``. Sets the run's
    ``problems`` and ``verdict``. A run that met faults while its expectations say
    ``on_fault`` is judged by its outcome class instead (:func:`judge_fault`)."""
    on_fault = run.scenario.expect_for(run.agent_type).on_fault
    if on_fault is not None and injected_faults(run):
        verdict = judge_fault(run, on_fault)
        if snapshots is not None:
            snapshots.settle(snapshot_path)
        return verdict
    run.problems = run_checks(run)
    verdict = _judged(run, snapshots, snapshot_path)
    if not verdict.passed:
        verdict = replace(verdict, cause=attribute(run, verdict))
    run.verdict = verdict
    if snapshots is not None:
        snapshots.settle(snapshot_path)
    return verdict


def judge_fault(run: Run, allowed: Sequence[str]) -> Verdict:
    """The verdict of a run that met faults: its outcome class
    (:func:`~agentkit.verdict._outcomes.classify`) is one of ``allowed``, or a problem saying
    which it is and why. Its trace is not compared with a snapshot (a variant has none)."""
    plan = run.scenario.faults
    outcome = classify(run, plan.safe) if plan is not None else classify(run)
    for double in run.doubles:  # what of the script the run left is in its class already
        # (a script was written for the run without the fault); a recording is of this
        # very run, so what it leaves over is the agent asking less than it did
        if double.excused is None and not isinstance(double, CassetteLLM):
            double.excuse(f"the run is judged by its fault class ({outcome.outcome})")
    problems: tuple[Problem, ...] = ()
    if outcome.outcome == "failed":  # the agent's own failure: reported as any run's
        problems = outcome.problems
    elif outcome.outcome not in allowed:
        problems = (Problem(f"under {', '.join(outcome.faults)} the run {outcome.outcome.replace('_', ' ')}"
                            f" ({outcome.why}); expect.on_fault allows "
                            f"{', '.join(allowed)}", "fault_outcome"),)
    problems += tuple(Problem(text, "leftover") for double in run.doubles
                      if double.excused is None for text in double.leftovers())
    run.problems = list(problems)
    verdict = Verdict("fail" if problems else "pass", problems,
                      tracebacks=_tracebacks(run.trace), fault=outcome)
    if outcome.outcome == "failed":
        verdict = replace(verdict, cause=attribute(run, verdict))
    run.verdict = verdict
    return verdict


def _judged(run: Run, snapshots: SnapshotSession | None,
            snapshot_path: Path | None) -> Verdict:
    stopped = run.stopped_by
    tracebacks = _tracebacks(run.trace)
    if stopped is not None:
        number, turn = next((i, t) for i, t in enumerate(run.trace.turns, start=1) if t.error)
        if turn.raised is not None:
            stopped += f" (raised at {turn.raised.at})"
        return Verdict("fail", tuple(run.problems), stopped_by=stopped, stopped_in=number,
                       kind=turn.error_kind, snapshot="not_checked" if snapshots else None,
                       tracebacks=tracebacks)
    if snapshots is None or snapshots.policy == "off":
        return Verdict("fail" if run.problems else "pass", tuple(run.problems),
                       tracebacks=tracebacks)
    return replace(_compared(snapshots, run.trace, snapshot_path, run.problems),
                   tracebacks=tracebacks)


def _tracebacks(trace: Trace) -> tuple[str, ...]:
    """The user's tracebacks of the run's errors: its tools' that failed unscheduled, and the
    turn that stopped on the user's code, each once."""
    found = [call.raised.traceback for turn in trace.turns for call in turn.tool_calls
             if call.raised is not None and not call.scheduled]
    found += [turn.raised.traceback for turn in trace.turns if turn.raised is not None]
    return tuple(dict.fromkeys(found)) if found else ()


def judge_error(error: HarnessError, snapshots: SnapshotSession | None = None,
                snapshot_path: Path | None = None) -> Verdict:
    """The verdict of a run that could not start (or run) at all; its snapshot is kept."""
    if snapshots is not None:
        snapshots.settle(snapshot_path)
    raised = error.user_code
    return Verdict("error", stopped_by=str(error), kind=kind_of(error),
                   snapshot="not_checked" if snapshots else None,
                   tracebacks=(raised.traceback,) if raised is not None else ())


def cassette_miss(result: Run) -> str | None:
    """The cassette-miss message a replayed run stopped on, if it did."""
    prefix = f"{CassetteMissError.__name__}: "
    for turn in result.trace.turns:
        if turn.error and turn.error.startswith(prefix):
            return str(turn.error).removeprefix(prefix)
    return None


def unjudged(result: Run | None) -> bool:
    """Whether an LLM judge of this run answered something that is not a verdict. Its server
    worked, so the run is not an infrastructure error left out of the pass rate: nothing
    showed that the agent passed, so the sample counts as failed."""
    return result is not None and any(
        entry.get("verdict") == "error"
        for turn in result.trace.turns for entry in turn.details.get("judged") or [])


def sample_outcome(verdict: Verdict, result: Run | None) -> SampleOutcome | None:
    """What one sample's verdict says about the agent (None: nothing -- it could not run, or
    its recording no longer fits). A judge that answered no verdict fails the sample
    (:func:`unjudged`), never an infrastructure error left out of the pass rate."""
    if verdict.outcome == "error" or verdict.kind == "recording":
        return None
    if verdict.passed:
        return "pass"
    return "infra" if verdict.kind == "infrastructure" and not unjudged(result) else "fail"


#: The costs whose spread over the samples a case reports (a trace's totals, tokens in + out).
COST_KEYS = ("steps", "llm_calls", "tool_calls", "tokens", "wall_time", "serial_time")


@dataclass
class SampleRun:
    """One run of a case (sample ``index`` of a sampled one): its result (None: it could not
    run), its verdict, and what it says about the agent (``outcome``; None when it says
    nothing: it could not run or its recording no longer fits)."""

    index: int
    result: Run | None
    verdict: Verdict
    outcome: SampleOutcome | None

    def costs(self) -> dict[str, float]:
        """This run's totals by :data:`COST_KEYS` (empty when it has no trace)."""
        if self.result is None:
            return {}
        totals = self.result.trace.totals()
        return {"steps": totals.steps, "llm_calls": totals.llm_calls,
                "tool_calls": totals.tool_calls,
                "tokens": totals.prompt_tokens + totals.completion_tokens,
                "wall_time": totals.wall_time, "serial_time": totals.serial_time}


def judge_samples(scenario: Scenario, samples: Sequence[SampleRun],
                  snapshots: SnapshotSession | None, path: Path | None,
                  infra: Mapping[int, str]) -> tuple[CaseStats, Verdict]:
    """The statistics of a sampled case and its verdict: a sample that could not run makes
    the case an error; samples whose recording no longer fits, a pass rate under
    ``min_pass_rate`` (with each failed sample) fail it; then the snapshot of all samples'
    traces. ``infra`` are samples (index: error) that hit infrastructure errors while being
    recorded."""
    outcomes: list[SampleOutcome] = [s.outcome for s in samples if s.outcome is not None]
    outcomes += ["infra"] * len(infra)
    stats = case_stats(outcomes, scenario.confidence)
    try:
        return stats, _sampled_verdict(scenario, samples, snapshots, path, infra, stats)
    finally:
        if snapshots is not None:
            snapshots.settle(path)


def _sampled_verdict(scenario: Scenario, samples: Sequence[SampleRun],
                     snapshots: SnapshotSession | None, path: Path | None,
                     infra: Mapping[int, str], stats: CaseStats) -> Verdict:
    broken = next((s for s in samples if s.verdict.outcome == "error"), None)
    if broken is not None:
        return replace(broken.verdict, stopped_by=f"sample {broken.index}: "
                                                  f"{broken.verdict.stopped_by}")
    problems = [Problem(f"sample {s.index}: the recording no longer fits the agent: "
                        f"{cassette_miss(s.result) or s.verdict.stopped_by}",
                        "recording_mismatch")
                for s in samples if s.verdict.kind == "recording" and s.result is not None]
    if not stats.judged and not problems:
        if not stats.samples:
            return Verdict("error", stopped_by="no sample is recorded yet")
        first = next((s.verdict.stopped_by for s in samples if s.outcome == "infra"),
                     next(iter(infra.values()), ""))
        return Verdict("error", stopped_by=f"all {stats.samples} samples hit infrastructure "
                                           f"errors; the first: {first}", kind="infrastructure")
    gate = stats.gate(scenario.min_pass_rate)
    if gate is not None:
        problems.insert(0, Problem(gate, "pass_rate"))
        problems += [Problem(f"sample {s.index} failed: {_first(s.verdict)}", "sample_failed")
                     for s in samples if s.outcome == "fail"]
    if snapshots is None or snapshots.policy == "off":
        return Verdict("fail" if problems else "pass", tuple(problems))
    trace = SampledTrace([s.result.trace for s in samples if s.result is not None])
    state, diff, _ = (snapshots.compare(trace, path) if path is not None else NOT_CHECKED)
    fails = snapshots.policy == "check" and state in ("changed", "stale", "missing")
    return Verdict("fail" if problems or fails else "pass", tuple(problems), snapshot=state,
                   snapshot_diff=tuple(diff), hint=snapshots.update_hint(),
                   snapshot_fails=fails, snapshot_at=path)


def _first(verdict: Verdict) -> str:
    lines = verdict.lines()
    return lines[-1].removeprefix("- ").splitlines()[0] if lines else "it failed"

