"""Moved: the verdict of a run is :mod:`agentkit.verdict`'s, the case runner
:mod:`agentkit.harness`'s; these names stay importable from here."""

from agentkit.verdict import (
    Compared,
    SnapshotFiles,
    SnapshotPolicy,
    SnapshotState,
    Verdict,
    judge,
    judge_error,
)
from agentkit.verdict import SnapshotSession as SnapshotCheck

__all__ = ["Verdict", "SnapshotCheck", "SnapshotFiles", "SnapshotPolicy", "SnapshotState",
           "Compared", "judge", "judge_error"]
