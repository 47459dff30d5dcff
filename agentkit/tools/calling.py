"""Calling tools as agents do (never raising); see :mod:`agentkit.llms.tool_calling`."""

from agentkit.llms.tool_calling import (
    CALL_TOOL_WORDING,
    ToolCallOutcome,
    ToolErrorWording,
    ToolRunner,
    acall_tool,
    acall_tool_with_selection,
    call_tool,
    call_tool_with_selection,
    error_output,
    no_such_tool_output,
)

__all__ = [
    "CALL_TOOL_WORDING",
    "ToolCallOutcome",
    "ToolErrorWording",
    "ToolRunner",
    "acall_tool",
    "acall_tool_with_selection",
    "call_tool",
    "call_tool_with_selection",
    "error_output",
    "no_such_tool_output",
]
