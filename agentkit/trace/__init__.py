"""The trace of a run: built from bus events, read back, diffed, compared with a snapshot.

Below :mod:`agentkit.scenario` (the file format) and :mod:`agentkit.verdict` (judging): a
trace knows nothing of scenario files, so both read it."""

from agentkit.trace._compare import (
    SnapshotComparison,
    SnapshotStatus,
    compare_with_snapshot,
    diff_snapshots,
    is_snapshot,
    stale_reason,
    stale_snapshot,
)
from agentkit.trace._diff import TraceError, check_trace, diff_traces, step_signature, trace_diff
from agentkit.trace._read import expand_trace, message_lists
from agentkit.trace._trace import (
    TRACED,
    IdNormalizer,
    LLMCallTrace,
    RoleCallTrace,
    SampledTrace,
    SimulatedToolError,
    StepTrace,
    ToolCallTrace,
    Trace,
    TraceHandler,
    TraceTotals,
    TurnBuilder,
    TurnTrace,
    build_turn,
    critical_path,
    extend_turn,
    trace_handler,
)
from agentkit.trace._world import MISSING, shown_value, state_changes, state_data, value_at

__all__ = ["TRACED", "IdNormalizer", "LLMCallTrace", "RoleCallTrace", "SampledTrace", "SimulatedToolError",
           "SnapshotComparison", "SnapshotStatus", "StepTrace", "ToolCallTrace", "Trace",
           "TraceError", "TraceHandler", "TraceTotals", "TurnBuilder", "TurnTrace", "build_turn",
           "check_trace", "compare_with_snapshot", "critical_path", "diff_snapshots",
           "diff_traces", "expand_trace", "extend_turn", "is_snapshot", "message_lists",
           "stale_reason", "stale_snapshot", "step_signature", "trace_diff", "trace_handler",
           "MISSING", "shown_value", "state_changes", "state_data", "value_at"]
