"""Syrupy integration: traces stored as readable JSON, failures shown as step-aligned diffs.

Use it in a test with ``snapshot.use_extension(TraceSnapshotExtension)``; the pytest plugin's
scenario items use it for every scenario × agent type.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Iterator
from typing import Any

from syrupy.extensions.json import JSONSnapshotExtension

from agentkit.scenario.diff import diff_traces
from agentkit.scenario.trace import Trace

__all__ = ["TraceSnapshotExtension"]


class TraceSnapshotExtension(JSONSnapshotExtension):
    """One ``.json`` file per snapshot; a :class:`Trace` is stored as its ``to_json()`` (the
    same bytes ``agentkit run --trace-dir`` writes, in the trace's readable key order)."""

    def serialize(self, data: Any, **kwargs: Any) -> str:
        if isinstance(data, Trace):
            data = _ordered(data.to_dict())  # syrupy keeps an OrderedDict's key order
        return super().serialize(data, **kwargs)

    def diff_lines(self, serialized_data: Any, snapshot_data: Any) -> Iterator[str]:
        try:
            received = json.loads(str(serialized_data))
            stored = json.loads(str(snapshot_data))
        except (TypeError, ValueError):
            yield from super().diff_lines(serialized_data, snapshot_data)
            return
        if not (isinstance(received, dict) and "turns" in received
                and isinstance(stored, dict) and "turns" in stored):
            yield from super().diff_lines(serialized_data, snapshot_data)
            return
        lines = diff_traces(stored, received)
        if not lines:
            yield ("the trace is the same; only the snapshot file's formatting differs (key "
                   "order or whitespace): rewrite it with --snapshot-update")
            return
        yield "trace differs from the snapshot (step-aligned; snapshot -> now):"
        yield from lines


def _ordered(value: Any) -> Any:
    if isinstance(value, dict):
        return OrderedDict((key, _ordered(item)) for key, item in value.items())
    if isinstance(value, list):
        return [_ordered(item) for item in value]
    return value
