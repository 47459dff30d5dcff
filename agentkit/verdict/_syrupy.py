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
from typing import Any

from syrupy.extensions.json import JSONSnapshotExtension
from syrupy.location import PyTestLocation
from syrupy.types import SerializedData

from agentkit.scenario._layout import snapshot_file
from agentkit.trace._compare import (
    SnapshotComparison,
    SnapshotStatus,
    compare_with_snapshot,
    diff_snapshots,
    is_snapshot,
    stale_reason,
    stale_snapshot,
)
from agentkit.trace._diff import TraceError
from agentkit.trace._trace import SampledTrace, Trace

__all__ = ["TraceSnapshotExtension", "Verbatim", "SnapshotStatus", "SnapshotComparison",
           "compare_with_snapshot", "stale_snapshot", "diff_snapshots"]


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
        """The folder of the test's snapshots: :func:`agentkit.scenario._layout.snapshot_file`'s
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
        except (TypeError, ValueError):
            yield from super().diff_lines(serialized_data, snapshot_data)
            return
        try:
            stored = json.loads(str(snapshot_data))
        except json.JSONDecodeError as exc:
            if is_snapshot(received):  # a damaged file (a cut write, a merge conflict's marks)
                yield (f"the snapshot file cannot be read: line {exc.lineno} column {exc.colno}: "
                       f"not valid JSON: {exc.msg}; rewrite it with --snapshot-update once the "
                       "run passes")
                return
            yield from super().diff_lines(serialized_data, snapshot_data)
            return
        if not (is_snapshot(received) and is_snapshot(stored)):
            yield from super().diff_lines(serialized_data, snapshot_data)
            return
        stale = stale_reason(stored)
        if stale is not None:
            yield stale
            return
        try:
            lines = diff_snapshots(stored, received)
        except TraceError as exc:
            yield f"the snapshot cannot be read: {exc}"
            return
        # no header of its own: syrupy's assertion or the caller says what is compared
        yield from lines or [
            "the trace is the same; only the snapshot file's formatting differs (key order or "
            "whitespace): rewrite it with --snapshot-update"]


def _ordered(value: Any) -> Any:
    if isinstance(value, dict):
        return OrderedDict((key, _ordered(item)) for key, item in value.items())
    if isinstance(value, list):
        return [_ordered(item) for item in value]
    return value
