"""A trace compared with its committed snapshot file, without syrupy (the commands' way; the
pytest plugin compares through :mod:`agentkit.verdict._syrupy`'s syrupy extension). Kept apart
so that a command does not import syrupy, and with it pytest."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, NamedTuple

from agentkit.core.textfiles import TextFileError, parse_json, read_text
from agentkit.trace._diff import TraceError, diff_traces
from agentkit.trace._read import expand_trace
from agentkit.trace._trace import TRACE_FORMAT

__all__ = ["SnapshotStatus", "SnapshotComparison", "compare_with_snapshot", "stale_snapshot",
           "stale_reason", "diff_snapshots", "is_snapshot"]

SnapshotStatus = Literal["same", "changed", "stale", "missing"]


def is_snapshot(data: Any) -> bool:
    """A trace (``turns``) or the traces of a sampled recording (``samples``)."""
    return isinstance(data, dict) and ("turns" in data or "samples" in data)


def diff_snapshots(stored: dict[str, Any], current: dict[str, Any]) -> list[str]:
    """How ``current`` differs from the ``stored`` snapshot, step-aligned: one trace's diff,
    or, for sampled recordings, each sample's diff under ``sample N:``."""
    old, new = stored.get("samples"), current.get("samples")
    if not isinstance(old, list) and not isinstance(new, list):
        return diff_traces(stored, current)
    if not isinstance(old, list) or not isinstance(new, list):
        was, now = (("one run", f"{len(new)} samples") if isinstance(new, list)
                    else (f"{len(old or [])} samples", "one run"))
        return [f"the snapshot holds {was}; the recording now holds {now}: accept it with "
                "--snapshot-update"]
    lines = [f"samples: {len(old)} -> {len(new)}"] if len(old) != len(new) else []
    for index, (before, after) in enumerate(zip(old, new, strict=False)):
        found = diff_traces(before, after)
        if found:
            lines += [f"sample {index}:", *(f"  {line}" for line in found)]
    return lines


def stale_reason(stored: Any) -> str | None:
    """What to do about a stored trace of another trace format (``None`` for this one's)."""
    if not isinstance(stored, dict) or stored.get("format") == TRACE_FORMAT:
        return None
    found = stored.get("format")
    writer = ("an older" if isinstance(found, int) and found < TRACE_FORMAT
              else "a newer" if isinstance(found, int) else "another")
    return (f"this snapshot was written by {writer} agentkit (trace format {found}); run "
            "--snapshot-update to rewrite it")


def stale_snapshot(path: Path) -> str | None:
    """For a snapshot file written in another trace format than this agentkit's (an upgrade
    changed what traces hold): the one line to show instead of its diff; ``None`` otherwise
    (also for a file that is missing or unreadable: the comparison reports those)."""
    try:
        return stale_reason(parse_json(path, read_text(path)))
    except (OSError, TextFileError):
        return None


class SnapshotComparison(NamedTuple):
    """How a trace compares with its committed snapshot."""

    status: SnapshotStatus
    diff: list[str]
    """How it differs (step-aligned, snapshot -> now, plain text), or why it cannot be diffed."""
    stored: dict[str, Any] | None = None
    """The snapshot's trace when ``diff`` is the diff of the two (to show it again in another
    :class:`~agentkit.core.textdiff.Style`)."""


def compare_with_snapshot(current: dict[str, Any], path: Path) -> SnapshotComparison:
    """Whether ``current`` (a trace's ``to_dict()``, which the caller keeps too) is its
    committed snapshot at ``path``, and if not, how it differs (step-aligned, snapshot -> now;
    an unreadable snapshot is a change that says so)."""
    if not path.is_file():
        return SnapshotComparison("missing", [])
    try:
        stored = parse_json(path, read_text(path))
    except (OSError, TextFileError) as exc:
        return SnapshotComparison("changed", [f"the snapshot {path} cannot be read: {exc}"])
    if stored == current:
        return SnapshotComparison("same", [])
    if not isinstance(stored, dict):
        return SnapshotComparison("changed", [f"the snapshot {path} is not a trace"])
    stale = stale_reason(stored)
    if stale is not None:
        return SnapshotComparison("stale", [f"{path}: {stale}"])
    sampled = "samples" in stored or "samples" in current
    try:
        for at, trace in _traces(stored):  # a reference it cannot follow is named in the file
            expand_trace(trace, f"{path}{at}")
        diff = diff_snapshots(stored, current)
    except TraceError as exc:
        return SnapshotComparison("changed", [f"the snapshot cannot be read: {exc}"])
    if not diff:  # the same messages, referenced otherwise (written by hand or another writer)
        return SnapshotComparison("same", [])
    # a sampled snapshot has no single step-aligned diff to redraw
    return SnapshotComparison("changed", diff, None if sampled else stored)


def _traces(stored: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """The traces a snapshot holds (a sampled one's each with where it is)."""
    samples = stored.get("samples")
    if not isinstance(samples, list):
        return [("", stored)]
    return [(f" (sample {i})", trace) for i, trace in enumerate(samples)
            if isinstance(trace, dict)]
