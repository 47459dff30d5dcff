"""The one judgement of a run, used by every command: the pytest items, ``agentkit run``,
``agentkit replay``, ``agentkit report`` and ``agentkit record``.

A run ends in a :class:`Verdict`:

* ``error`` -- it could not run at all (a :class:`~agentkit.core.errors.HarnessError` before
  its first turn: a malformed file, an import ref that does not import, a factory that
  raised, a missing cassette); ``kind`` says whose the problem is;
* ``fail`` -- it ran and something is wrong: it stopped on an error the scenario did not
  expect (``stopped_by``: the root cause, reported alone -- the expectations and the snapshot
  that follow from it would only repeat it), an expectation is not met, a tool call failed
  unexpectedly, or its trace differs from its snapshot;
* ``pass`` -- none of that.

The snapshot part depends on the command, through a :class:`SnapshotCheck`: the pytest
plugin compares through syrupy (so ``--snapshot-update`` works), the commands through
:class:`SnapshotFiles`; ``policy`` says whether a difference fails the run (``check``), is
only shown (``report``) or is not looked at (``off``). A run that stopped on an error is
never compared: its snapshot is ``not_checked`` and stays as it is.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from agentkit.core.errors import ErrorKind, HarnessError, kind_of
from agentkit.core.files import atomic_write_text
from agentkit.core.textfiles import too_large_to_read
from agentkit.scenario.snapshot_compare import compare_with_snapshot

if TYPE_CHECKING:
    from agentkit.scenario.runner import ScenarioResult
    from agentkit.scenario.trace import SampledTrace, Trace

__all__ = ["Verdict", "SnapshotCheck", "SnapshotFiles", "SnapshotPolicy", "SnapshotState",
           "judge", "judge_error", "attempt", "RunObserver", "observing_runs"]

SnapshotPolicy = Literal["check", "report", "off"]
SnapshotState = Literal["same", "changed", "stale", "missing", "created", "updated",
                        "not_checked"]
Compared = tuple[SnapshotState, list[str], dict[str, Any] | None]
"""What :meth:`SnapshotCheck.compare` finds: state, diff lines, the stored trace if read."""
Outcome = Literal["pass", "fail", "error"]


class SnapshotCheck(Protocol):
    """How a command compares a run's trace with its committed snapshot."""

    policy: SnapshotPolicy

    def compare(self, trace: Trace | SampledTrace, path: Path | None) -> Compared:
        """``same``/``changed``/``missing`` (or ``created``/``updated`` when it writes), how
        the trace (or a sampled recording's traces) differs (step-aligned, snapshot -> now)
        and the stored trace when known."""
        ...

    def keep(self, path: Path | None) -> None:
        """The run stopped before it could be compared: keep its snapshot as it is (and, for
        syrupy, count it as used so that ``--snapshot-update`` does not delete it)."""
        ...

    def update_hint(self) -> str:
        """How to accept a change or create a missing snapshot, for messages."""
        ...


@dataclass
class SnapshotFiles:
    """Snapshots compared (and, with ``update``, written) as files: ``agentkit run`` and
    ``agentkit report``. ``update`` writes a missing or changed snapshot of a run that did
    not stop on an error, atomically."""

    policy: SnapshotPolicy = "check"
    update: bool = False
    hint: str = "agentkit run --snapshot-update"

    def compare(self, trace: Trace | SampledTrace, path: Path | None) -> Compared:
        if path is None:
            return "not_checked", [], None
        state, diff, stored = compare_with_snapshot(trace.to_dict(), path)
        if self.update and state != "same":
            text = trace.to_json()
            too_large = too_large_to_read(path, text)
            if too_large is not None:  # a snapshot no later run could read: not written
                return "stale", [f"the snapshot was not written: {too_large}; split the "
                                 "scenario's turns into several scenarios"], None
            atomic_write_text(path, text)
            return ("created" if state == "missing" else "updated"), diff, stored
        return state, diff, stored

    def keep(self, path: Path | None) -> None:
        return None

    def update_hint(self) -> str:
        return self.hint


@dataclass(frozen=True)
class Verdict:
    """How a run ended (module docstring)."""

    outcome: Outcome
    problems: tuple[str, ...] = ()
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

    @property
    def passed(self) -> bool:
        return self.outcome == "pass"

    @property
    def snapshot_differs(self) -> bool:
        return self.snapshot in ("changed", "stale", "missing")

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

    def lines(self) -> list[str]:
        """What went wrong, one problem per line (indented continuation lines), for every
        command's output: the root cause alone when the run stopped, else the unmet
        expectations, then the snapshot difference."""
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


def judge(result: ScenarioResult, snapshots: SnapshotCheck | None,
          snapshot_path: Path | None) -> Verdict:
    """The verdict of a run that produced a trace (``result.problems`` are the run's own
    checks: expectations, trajectory, tool errors, ordering, unused script)."""
    stopped = result.stopped_by
    if stopped is not None:
        if snapshots is not None and snapshots.policy != "off":
            snapshots.keep(snapshot_path)
        turn = next(i for i, t in enumerate(result.trace.turns, start=1) if t.error)
        kind = next(t.error_kind for t in result.trace.turns if t.error)
        return Verdict("fail", tuple(result.problems), stopped_by=stopped, stopped_in=turn,
                       kind=kind, snapshot="not_checked" if snapshots else None)
    if snapshots is None or snapshots.policy == "off":
        return Verdict("fail" if result.problems else "pass", tuple(result.problems))
    hint = snapshots.update_hint()
    compared: Compared
    if result.problems:
        # a run that fails its own checks is compared, never accepted: the committed snapshot
        # (the last behaviour that passed) stays as it is under --snapshot-update too
        snapshots.keep(snapshot_path)
        compared = (compare_with_snapshot(result.trace.to_dict(), snapshot_path)
                    if snapshot_path is not None else ("not_checked", [], None))
        hint += " once the run passes; a failing run is never written as its snapshot"
    else:
        compared = snapshots.compare(result.trace, snapshot_path)
    state, diff, stored = compared
    fails = snapshots.policy == "check" and state in ("changed", "stale", "missing")
    return Verdict("fail" if result.problems or fails else "pass", tuple(result.problems),
                   snapshot=state, snapshot_diff=tuple(diff), snapshot_stored=stored,
                   hint=hint, snapshot_fails=fails, snapshot_at=snapshot_path)


def judge_error(error: HarnessError, snapshots: SnapshotCheck | None = None,
                snapshot_path: Path | None = None) -> Verdict:
    """The verdict of a run that could not start (or run) at all."""
    if snapshots is not None and snapshots.policy != "off":
        snapshots.keep(snapshot_path)
    return Verdict("error", stopped_by=str(error), kind=kind_of(error),
                   snapshot="not_checked" if snapshots else None)


RunObserver = Callable[["ScenarioResult | None", Verdict], None]
"""Told of every judged run: its result (None when it could not start) and its verdict."""

_OBSERVERS: list[RunObserver] = []


@contextmanager
def observing_runs(observer: RunObserver) -> Iterator[RunObserver]:
    """Tell ``observer`` of every run :func:`attempt` judges while the block runs, in any
    thread (how an exporter such as :mod:`agentkit.otel` sees the runs of any command without
    a hook of its own in each)."""
    _OBSERVERS.append(observer)
    try:
        yield observer
    finally:
        _OBSERVERS.remove(observer)


def attempt(run: Callable[[], ScenarioResult], snapshots: SnapshotCheck | None,
            snapshot_path: Path | None) -> tuple[ScenarioResult | None, Verdict]:
    """Run (``run()``, a :func:`~agentkit.scenario.runner.run_scenario` call) and judge it;
    a run that cannot start is an ``error`` verdict, never an exception. Observers
    (:func:`observing_runs`) are told of it."""
    result: ScenarioResult | None
    try:
        result = run()
    except HarnessError as exc:
        result, verdict = None, judge_error(exc, snapshots, snapshot_path)
    else:
        verdict = judge(result, snapshots, snapshot_path)
    for observer in tuple(_OBSERVERS):
        observer(result, verdict)
    return result, verdict
