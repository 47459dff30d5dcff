"""An old import path: these names moved to :mod:`agentkit.trace`
(``agentkit.trace._trace``), as agentkit.scenario is the file format only; importing them
from here keeps working."""

from agentkit.trace._trace import (
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

__all__ = ["build_turn", "critical_path", "extend_turn", "IdNormalizer", "LLMCallTrace",
           "RoleCallTrace", "SampledTrace", "SimulatedToolError", "StepTrace", "ToolCallTrace",
           "Trace", "trace_handler", "TraceHandler", "TraceTotals", "TurnBuilder", "TurnTrace"]
