"""An old import path: these names moved to :mod:`agentkit.trace`
(``agentkit.trace._diff``), as agentkit.scenario is the file format only; importing them
from here keeps working."""

from agentkit.trace._diff import (
    TraceError,
    check_trace,
    diff_traces,
    step_signature,
    trace_diff,
)

__all__ = ["check_trace", "diff_traces", "step_signature", "trace_diff", "TraceError"]
