"""Calling a tool the way agents do: never raising, always a :class:`ToolOutput`.

A tool that raises, gets bad arguments, or does not exist yields an ``is_error`` output whose
content the model can read (``"Error: ..."``). Every call emits a tool-call start/end event
pair. Tools are duck-typed (``.metadata.name`` and ``acall``/``call``), so this module needs
nothing from the tools layer above it.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any

from agentkit.core.events import ToolCallEndEvent, ToolCallStartEvent, dispatcher
from agentkit.core.sim import now, run_sync
from agentkit.llms.types import ToolOutput, ToolSelection

__all__ = [
    "acall_tool",
    "call_tool",
    "acall_tool_with_selection",
    "call_tool_with_selection",
    "no_such_tool_output",
    "error_output",
]


def error_output(tool_name: str, arguments: dict[str, Any], message: str,
                 raw_output: Any = None) -> ToolOutput:
    content = f"Error: {message}"
    return ToolOutput(content=content, tool_name=tool_name, raw_input=_raw_input(arguments),
                      raw_output=raw_output if raw_output is not None else content, is_error=True)


def _raw_input(arguments: dict[str, Any]) -> dict[str, Any]:
    """The ``raw_input`` shape of every ToolOutput: positional and keyword arguments."""
    return {"args": (), "kwargs": arguments}


def no_such_tool_output(tool_name: str, arguments: dict[str, Any]) -> ToolOutput:
    return error_output(tool_name, arguments, f"No such tool named `{tool_name}`.")


async def _invoke(tool: Any, arguments: dict[str, Any]) -> Any:
    acall = getattr(tool, "acall", None)
    if acall is not None:
        return await acall(**arguments)
    result = (tool.call if hasattr(tool, "call") else tool)(**arguments)
    return await result if inspect.isawaitable(result) else result


async def acall_tool(tool: Any | None, arguments: dict[str, Any], *, tool_name: str | None = None,
                     tool_id: str | None = None, arguments_error: str | None = None) -> ToolOutput:
    """Call ``tool`` (``None`` = unknown tool ``tool_name``) and return its output or an error."""
    name = tool.metadata.name if tool is not None else (tool_name or "unknown")
    with dispatcher.span():
        dispatcher.emit(ToolCallStartEvent(tool_name=name, tool_id=tool_id, arguments=arguments))
        started = now()
        if tool is None:
            output = no_such_tool_output(name, arguments)
        elif arguments_error is not None:
            output = error_output(name, arguments, arguments_error)
        else:
            try:
                result = await _invoke(tool, arguments)
            except Exception as exc:  # a failing tool is an observation, not a crash
                output = error_output(name, arguments, str(exc) or type(exc).__name__,
                                      raw_output=exc)
            else:
                output = result if isinstance(result, ToolOutput) else ToolOutput(
                    content=str(result), tool_name=name, raw_input=_raw_input(arguments),
                    raw_output=result)
        dispatcher.emit(ToolCallEndEvent(tool_name=name, tool_id=tool_id, arguments=arguments,
                                         output=output, is_error=output.is_error,
                                         latency=now() - started))
    return output


def call_tool(tool: Any | None, arguments: dict[str, Any], **kwargs: Any) -> ToolOutput:
    return run_sync(acall_tool(tool, arguments, **kwargs))


async def acall_tool_with_selection(selection: ToolSelection, tools: Sequence[Any]) -> ToolOutput:
    """Call the tool named by ``selection`` among ``tools``."""
    tool = next((t for t in tools if t.metadata.name == selection.tool_name), None)
    return await acall_tool(tool, selection.tool_kwargs, tool_name=selection.tool_name,
                            tool_id=selection.tool_id, arguments_error=selection.arguments_error)


def call_tool_with_selection(selection: ToolSelection, tools: Sequence[Any]) -> ToolOutput:
    return run_sync(acall_tool_with_selection(selection, tools))
