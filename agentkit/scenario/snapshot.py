"""Syrupy integration: traces stored as readable JSON, failures shown as step-aligned diffs.

Use it in a test with ``snapshot.use_extension(TraceSnapshotExtension)``; the pytest plugin's
scenario items use it for every scenario × agent type.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, NamedTuple

from syrupy.extensions.json import JSONSnapshotExtension
from syrupy.location import PyTestLocation
from syrupy.types import SerializedData

from agentkit.core.textfiles import TextFileError, parse_json, read_text
from agentkit.scenario.diff import diff_traces
from agentkit.scenario.layout import snapshot_file
from agentkit.scenario.trace import TRACE_FORMAT, SampledTrace, Trace

__all__ = ["TraceSnapshotExtension", "Verbatim", "SnapshotStatus", "SnapshotComparison",
           "compare_with_snapshot", "stale_snapshot", "diff_snapshots"]

SnapshotStatus = Literal["same", "changed", "stale", "missing"]


@dataclass(frozen=True)
class Verbatim:
    """A snapshot's stored text, serialized as itself: comparing it with the snapshot makes
    syrupy count the snapshot as used without writing it (a run that stopped keeps it)."""

    text: str


class TraceSnapshotExtension(JSONSnapshotExtension):
    """One ``.json`` file per snapshot; a :class:`Trace` is stored as its ``to_json()`` (the
    same bytes ``agentkit run --trace-dir`` writes, in the trace's readable key order). A
    difference is the step-aligned diff alone (snapshot -> now), with no header line: pytest
    shows syrupy's ``assert [+ received] == [- snapshot]`` above it, and a caller printing it
    says once what differs. A snapshot in another trace format is reported as such
    (:func:`stale_snapshot`), not diffed."""

    @classmethod
    def dirname(cls, *, test_location: PyTestLocation) -> str:
        """The folder of the test's snapshots: :func:`agentkit.scenario.layout.snapshot_file`'s
        (one rule for syrupy and the commands)."""
        return str(snapshot_file(Path(test_location.filepath), "-").parent)

    def serialize(self, data: Any, **kwargs: Any) -> SerializedData:
        if isinstance(data, Verbatim):
            return data.text
        if isinstance(data, (Trace, SampledTrace)):
            data = _ordered(data.to_dict())  # syrupy keeps an OrderedDict's key order
        return super().serialize(data, **kwargs)

    def diff_lines(self, serialized_data: Any, snapshot_data: Any) -> Iterator[str]:
        try:
            received = json.loads(str(serialized_data))
            stored = json.loads(str(snapshot_data))
        except (TypeError, ValueError):
            yield from super().diff_lines(serialized_data, snapshot_data)
            return
        if not (_is_snapshot(received) and _is_snapshot(stored)):
            yield from super().diff_lines(serialized_data, snapshot_data)
            return
        stale = _stale(stored)
        if stale is not None:
            yield stale
            return
        # no header of its own: syrupy's assertion or the caller says what is compared
        yield from diff_snapshots(stored, received) or [
            "the trace is the same; only the snapshot file's formatting differs (key order or "
            "whitespace): rewrite it with --snapshot-update"]


def _is_snapshot(data: Any) -> bool:
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


def _stale(stored: Any) -> str | None:
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
        return _stale(parse_json(path, read_text(path)))
    except (OSError, TextFileError):
        return None


def _ordered(value: Any) -> Any:
    if isinstance(value, dict):
        return OrderedDict((key, _ordered(item)) for key, item in value.items())
    if isinstance(value, list):
        return [_ordered(item) for item in value]
    return value


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
    stale = _stale(stored)
    if stale is not None:
        return SnapshotComparison("stale", [f"{path}: {stale}"])
    if "samples" in stored or "samples" in current:  # no step-aligned single diff to redraw
        return SnapshotComparison("changed", diff_snapshots(stored, current))
    return SnapshotComparison("changed", diff_traces(stored, current), stored)
