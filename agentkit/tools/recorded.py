"""A tool that answers from a table of recorded calls: the tool world of an imported trace.

``agentkit import-trace`` writes the calls the trace recorded as a JSON table beside the
scenario, and a tools module whose text is always the same (:data:`MODULE_TEXT`): it makes one
:class:`RecordedTool` per tool of the table (:func:`load_recorded_tools`). Nothing of the trace
is ever part of the module's code, so a crafted trace cannot run anything. Each call of the
replay is matched by its arguments to a recorded one, which gives its output (or raises its
error) after its recorded latency. A call the table does not have is an error naming the nearest recorded
arguments, so a changed agent shows where it left the recorded path.
"""

from __future__ import annotations

import json
import keyword
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, create_model

from agentkit.core.errors import BadInputError
from agentkit.core.sim import MAX_LATENCY, asleep, run_sync
from agentkit.core.textfiles import parse_json, read_text
from agentkit.tools.types import AsyncBaseTool, ToolMetadata, ToolOutput

__all__ = ["RecordedCall", "RecordedTool", "RecordedToolError", "UnrecordedCallError",
           "RecordedTableError", "load_recorded_tools", "attribute_names", "MODULE_TEXT"]

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


class RecordedTableError(BadInputError):
    """A recorded tools table that cannot be read; the message names the file and field."""


MODULE_TEXT = '''"""The tool world of the scenario beside this module, written by `agentkit import-trace`.

Each tool answers the calls recorded for it in the table of the JSON file of the same name
beside this module (name, description, parameters; each call's arguments, output or error,
and latency), matched by name and arguments. Edit the table to change what a tool answers.
"""

from agentkit.tools.recorded import load_recorded_tools

globals().update(load_recorded_tools(__file__))
'''
"""The whole text of an imported tools module: the same for every trace (the trace is data,
in the table beside it)."""


def attribute_names(names: Sequence[str]) -> list[str]:
    """A distinct ASCII Python identifier for each tool name, in order: the attribute of the
    tools module a scenario's ``ref:`` names (``get-weather`` -> ``get_weather``)."""
    taken: set[str] = set()
    chosen = []
    for name in names:
        base = re.sub(r"[^A-Za-z0-9_]+", "_", name).strip("_") or "tool"
        if base[0].isdigit() or keyword.iskeyword(base):
            base = f"t_{base}"
        attribute, n = base, 1
        while attribute in taken or attribute == "load_recorded_tools":
            n += 1
            attribute = f"{base}_{n}"
        taken.add(attribute)
        chosen.append(attribute)
    return chosen


def _table_problem(path: Path, field: str, problem: str) -> RecordedTableError:
    return RecordedTableError(f"{path}: {field}: {problem}; fix the table, or import the "
                              "trace again")


def _call(path: Path, where: str, data: Any) -> RecordedCall:
    if not isinstance(data, Mapping) or not isinstance(data.get("args"), Mapping):
        raise _table_problem(path, where, "a call is an object with `args` (an object)")
    unknown = sorted(set(data) - {"args", "output", "error", "latency"})
    if unknown:
        raise _table_problem(path, f"{where}.{unknown[0]}", "unknown field (a call has "
                             "args, output, error, latency)")
    output, error, latency = data.get("output", ""), data.get("error"), data.get("latency", 0)
    if not isinstance(output, str) or not (error is None or isinstance(error, str)):
        raise _table_problem(path, where, "`output` and `error` are strings")
    if isinstance(latency, bool) or not isinstance(latency, (int, float)) \
            or not 0 <= latency <= MAX_LATENCY:
        raise _table_problem(path, f"{where}.latency", f"seconds from 0 to {MAX_LATENCY:g}")
    return RecordedCall(args=dict(data["args"]), output=output, error=error,
                        latency=float(latency))


def load_recorded_tools(module_file: str | Path) -> dict[str, RecordedTool]:
    """The tools of the table beside ``module_file`` (``NAME_tools.json`` beside
    ``NAME_tools.py``), by attribute name (:func:`attribute_names`)."""
    path = Path(module_file).with_suffix(".json")
    try:
        data = parse_json(path, read_text(path))
    except OSError as exc:
        raise RecordedTableError(f"{path}: cannot read the recorded tools table: "
                                 f"{exc.strerror or exc}") from None
    tools = data.get("tools") if isinstance(data, Mapping) else None
    if not isinstance(tools, list):
        raise _table_problem(path, "tools", "expected a list of tools")
    built = []
    for i, item in enumerate(tools):
        where = f"tools[{i}]"
        if not isinstance(item, Mapping) or not isinstance(item.get("name"), str):
            raise _table_problem(path, where, "a tool is an object with a `name` (a string)")
        description, parameters = item.get("description", ""), item.get("parameters", {})
        calls = item.get("calls", [])
        if not isinstance(description, str) or not isinstance(parameters, Mapping) \
                or not isinstance(calls, list):
            raise _table_problem(path, where, "`description` is a string, `parameters` an "
                                 "object, `calls` a list")
        built.append(RecordedTool(item["name"], description, parameters=parameters,
                                  calls=[_call(path, f"{where}.calls[{n}]", call)
                                         for n, call in enumerate(calls)]))
    return dict(zip(attribute_names([t.metadata.name for t in built]), built, strict=True))
