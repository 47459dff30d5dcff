"""Tool metadata and the tool base classes (``llama_index.core.tools.types`` shape)."""

from __future__ import annotations

import functools
import json
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from agentkit.core.models import Model
from agentkit.llms.types import ToolOutput

__all__ = [
    "ToolMetadata",
    "JSONSchemaToolMetadata",
    "ToolOutput",
    "BaseTool",
    "AsyncBaseTool",
    "BaseToolAsyncAdapter",
    "adapt_to_async_tool",
    "DefaultToolFnSchema",
    "MAX_OPENAI_DESCRIPTION_LENGTH",
]

MAX_OPENAI_DESCRIPTION_LENGTH = 1024


class DefaultToolFnSchema(Model):
    """The schema of a tool that takes one free-text ``input``."""

    input: str


_DEFAULT_PARAMETERS = {
    "type": "object",
    "properties": {"input": {"title": "input query string", "type": "string"}},
    "required": ["input"],
}
_SCHEMA_KEYS = ("type", "properties", "required", "definitions", "$defs")


@functools.lru_cache(maxsize=1024)
def _schema_text(fn_schema: type[BaseModel] | None) -> str:
    if fn_schema is None:
        parameters = _DEFAULT_PARAMETERS
    else:
        schema = fn_schema.model_json_schema()
        parameters = {key: value for key, value in schema.items() if key in _SCHEMA_KEYS}
    return json.dumps(parameters, ensure_ascii=False)


@dataclass
class ToolMetadata:
    """What a model is told about a tool. ``name`` must be a valid Python identifier."""

    name: str
    description: str
    fn_schema: type[BaseModel] | None = DefaultToolFnSchema
    return_direct: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.isidentifier():
            raise ValueError(
                f"tool name {self.name!r} is not a valid identifier: use letters, digits and "
                "underscores, not starting with a digit (pass name=... to name it)")

    def get_name(self) -> str:
        return self.name

    def get_parameters_dict(self) -> dict[str, Any]:
        """The JSON schema of the tool's arguments (a fresh copy: yours to change)."""
        schema: dict[str, Any] = json.loads(self.fn_schema_str)
        return schema

    @property
    def fn_schema_str(self) -> str:
        """The JSON schema as JSON text, built once per schema class (agents ask every call)."""
        return _schema_text(self.fn_schema)

    def to_openai_tool(self, skip_length_check: bool = False) -> dict[str, Any]:
        if not skip_length_check and len(self.description) > MAX_OPENAI_DESCRIPTION_LENGTH:
            raise ValueError(
                f"Tool description exceeds maximum length of {MAX_OPENAI_DESCRIPTION_LENGTH} "
                "characters. Please shorten your description or move it to the prompt.")
        return {"type": "function", "function": {
            "name": self.name, "description": self.description,
            "parameters": self.get_parameters_dict()}}


@dataclass
class JSONSchemaToolMetadata(ToolMetadata):
    """Tool metadata whose argument schema is a JSON schema kept as given (an MCP server's, an
    Agents SDK tool's), not made from a pydantic model."""

    input_schema: str = "{}"

    @property
    def fn_schema_str(self) -> str:
        return self.input_schema


class BaseTool(ABC):
    """A tool: metadata plus a call returning :class:`ToolOutput`."""

    @property
    @abstractmethod
    def metadata(self) -> ToolMetadata: ...

    @abstractmethod
    def __call__(self, input: Any) -> ToolOutput: ...

    @property
    def takes_positional_input(self) -> bool:
        """Whether ``tool(value)`` works for a tool of one parameter, as LlamaIndex's
        ``call_tool`` first calls such a tool (falling back to keywords when it raises). The
        function-calling worker calls by keyword but records ``raw_input`` in the form
        LlamaIndex's call would have: positional when this is true. A tool whose arguments
        must be named says False."""
        return True


class AsyncBaseTool(BaseTool):
    """A tool with both ``call`` and ``acall``."""

    def __call__(self, *args: Any, **kwargs: Any) -> ToolOutput:
        return self.call(*args, **kwargs)

    @abstractmethod
    def call(self, *args: Any, **kwargs: Any) -> ToolOutput: ...

    @abstractmethod
    async def acall(self, *args: Any, **kwargs: Any) -> ToolOutput: ...


class BaseToolAsyncAdapter(AsyncBaseTool):
    """Gives a sync-only tool an ``acall`` (run inline, so it stays deterministic)."""

    def __init__(self, tool: BaseTool) -> None:
        self.base_tool = tool

    @property
    def metadata(self) -> ToolMetadata:
        return self.base_tool.metadata

    @property
    def takes_positional_input(self) -> bool:
        return self.base_tool.takes_positional_input

    def call(self, *args: Any, **kwargs: Any) -> ToolOutput:
        return self.base_tool(*args, **kwargs)

    async def acall(self, *args: Any, **kwargs: Any) -> ToolOutput:
        return self.call(*args, **kwargs)


def adapt_to_async_tool(tool: BaseTool) -> AsyncBaseTool:
    return tool if isinstance(tool, AsyncBaseTool) else BaseToolAsyncAdapter(tool)
