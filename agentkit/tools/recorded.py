"""A tool that answers from a table of recorded calls: the tool world of an imported trace.

``agentkit import-trace`` writes one :class:`RecordedTool` per tool of the trace into a module
beside the scenario, with the calls the trace recorded: each call of the replay is matched by
its arguments to a recorded one, which gives its output (or raises its error) after its
recorded latency. A call the table does not have is an error naming the nearest recorded
arguments, so a changed agent shows where it left the recorded path.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field, create_model

from agentkit.core.sim import asleep, run_sync
from agentkit.tools.types import AsyncBaseTool, ToolMetadata, ToolOutput

__all__ = ["RecordedCall", "RecordedTool", "RecordedToolError", "UnrecordedCallError"]

_JSON_TYPES: dict[str, Any] = {"string": str, "integer": int, "number": float,
                               "boolean": bool, "array": list, "object": dict}


class RecordedToolError(RuntimeError):
    """The recorded call failed with this error; the replay fails the same way."""


class UnrecordedCallError(LookupError):
    """The replay called the tool with arguments the table does not have."""


@dataclass(frozen=True)
class RecordedCall:
    """One recorded call: its arguments, and its output or its error, and how long it took
    (seconds of simulated time)."""

    args: Mapping[str, Any]
    output: str = ""
    error: str | None = None
    latency: float = 0.0


def _schema_model(name: str, parameters: Mapping[str, Any] | None) -> type[BaseModel]:
    """A pydantic model whose JSON schema has the recorded parameters (names, types,
    descriptions, which are required), in their recorded order: ReAct and LLMCompiler show it
    to the model and LLMCompiler binds positional arguments by it."""
    properties = (parameters or {}).get("properties") or {}
    required = set((parameters or {}).get("required") or ())
    fields: dict[str, Any] = {}
    for key, spec in properties.items():
        spec = spec if isinstance(spec, Mapping) else {}
        kind = _JSON_TYPES.get(str(spec.get("type")), Any)
        info = Field(default=... if key in required else None,
                     description=spec.get("description"))
        fields[str(key)] = (kind if key in required else kind | None, info)
    model: type[BaseModel] = create_model(f"{name}_args", **fields)
    return model


class RecordedTool(AsyncBaseTool):
    """A tool answering from ``calls`` (module docstring). Calls with the same arguments are
    answered in recorded order; once they are used up, the last one answers again."""

    def __init__(self, name: str, description: str = "", *,
                 parameters: Mapping[str, Any] | None = None,
                 calls: Sequence[RecordedCall | Mapping[str, Any]] = ()) -> None:
        self._metadata = ToolMetadata(name=name, description=description or f"{name} (recorded)",
                                      fn_schema=_schema_model(name, parameters))
        self.calls = [c if isinstance(c, RecordedCall) else RecordedCall(**c) for c in calls]
        self._answered: dict[tuple[int, ...], int] = {}

    @property
    def metadata(self) -> ToolMetadata:
        return self._metadata

    def _find(self, arguments: Mapping[str, Any]) -> RecordedCall:
        matching = [i for i, call in enumerate(self.calls) if dict(call.args) == dict(arguments)]
        if not matching:
            shown = json.dumps(dict(arguments), sort_keys=True, default=str)
            recorded = "; ".join(json.dumps(dict(c.args), sort_keys=True, default=str)
                                 for c in self.calls[:5]) or "none"
            raise UnrecordedCallError(f"no recorded call of `{self.metadata.name}` with "
                                      f"arguments {shown} (recorded: {recorded}); add it to "
                                      "the tool's table or re-import the trace")
        key = tuple(matching)
        used = self._answered.get(key, 0)
        self._answered[key] = used + 1
        return self.calls[matching[min(used, len(matching) - 1)]]

    async def acall(self, *args: Any, **kwargs: Any) -> ToolOutput:
        if args and len(args) == 1 and isinstance(args[0], Mapping) and not kwargs:
            kwargs = dict(args[0])
        elif args:
            names = list(self.metadata.get_parameters_dict().get("properties", {}))
            kwargs = {**dict(zip(names, args, strict=False)), **kwargs}
        call = self._find(kwargs)
        if call.latency:
            await asleep(call.latency)
        if call.error is not None:
            raise RecordedToolError(call.error)
        return ToolOutput(content=call.output, tool_name=self.metadata.name,
                          raw_input={"args": (), "kwargs": kwargs}, raw_output=call.output)

    def call(self, *args: Any, **kwargs: Any) -> ToolOutput:
        return run_sync(self.acall(*args, **kwargs))
