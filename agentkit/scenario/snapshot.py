"""An old import path: these names moved to :mod:`agentkit.verdict`
(``agentkit.verdict._syrupy``), as agentkit.scenario is the file format only; importing them
from here keeps working."""

from agentkit.verdict._syrupy import (
    SnapshotComparison,
    SnapshotStatus,
    TraceSnapshotExtension,
    Verbatim,
    compare_with_snapshot,
    diff_snapshots,
    stale_snapshot,
)

__all__ = ["compare_with_snapshot", "diff_snapshots", "SnapshotComparison", "SnapshotStatus",
           "stale_snapshot", "TraceSnapshotExtension", "Verbatim"]
