"""A trace compared with its committed snapshot file, without syrupy (the commands' way; the
pytest plugin compares through :mod:`agentkit.scenario.snapshot`'s syrupy extension). Kept apart
so that a command does not import syrupy, and with it pytest."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, NamedTuple

from agentkit.core.textfiles import TextFileError, parse_json, read_text
from agentkit.scenario.diff import diff_traces
from agentkit.scenario.trace import TRACE_FORMAT

__all__ = ["SnapshotStatus", "SnapshotComparison", "compare_with_snapshot", "stale_snapshot",
           "stale_reason"]

SnapshotStatus = Literal["same", "changed", "stale", "missing"]


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
    return SnapshotComparison("changed", diff_traces(stored, current), stored)
