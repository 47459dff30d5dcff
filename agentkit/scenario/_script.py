"""Scenario script items -> :mod:`agentkit.llms.mock` script items."""

from __future__ import annotations

import json
from typing import Any

from agentkit.core.ids import new_id
from agentkit.llms import errors
from agentkit.llms.mock import ScriptedResponse, tool_call
from agentkit.llms.types import ToolSelection, Usage
from agentkit.scenario._model import ErrorItem, ScriptItem, ScriptReply

__all__ = ["to_mock_items", "error_for", "parse_tool_arguments"]

_ERRORS: dict[str, tuple[type[errors.LLMError], str]] = {
    "rate_limit": (errors.RateLimitError, "Rate limit reached"),
    "server": (errors.ServerError, "The server had an error processing the request"),
    "timeout": (errors.APITimeoutError, "Request timed out"),
    "bad_request": (errors.BadRequestError, "Bad request"),
    "authentication": (errors.AuthenticationError, "invalid API key"),
}


def parse_tool_arguments(name: str, raw: str) -> ToolSelection:
    """A tool call from raw JSON arguments; undecodable ones set ``arguments_error``."""
    try:
        kwargs = json.loads(raw) if raw.strip() else {}
    except json.JSONDecodeError as exc:
        return ToolSelection(tool_id=new_id("call"), tool_name=name, tool_kwargs={},
                             arguments_error=f"the arguments of `{name}` are not valid JSON "
                                             f"({exc.msg} at position {exc.pos}): {raw}")
    if not isinstance(kwargs, dict):
        return ToolSelection(tool_id=new_id("call"), tool_name=name, tool_kwargs={},
                             arguments_error=f"the arguments of `{name}` must be a JSON object, "
                                             f"got: {raw}")
    return ToolSelection(tool_id=new_id("call"), tool_name=name, tool_kwargs=kwargs)


def error_for(item: ErrorItem) -> errors.LLMError:
    """The error of a scripted failure; a ``timeout`` is a read timeout, which the retry
    policy does not retry (the server may still be serving the request), as on the wire."""
    cls, default = _ERRORS[item.error.type]
    error = cls(item.error.message or default, retry_after=item.error.retry_after)
    if item.error.type == "timeout":
        error.retryable = False
    return error


def _reply(item: ScriptReply) -> ScriptedResponse:
    calls = [parse_tool_arguments(c.name, c.arguments) if c.arguments is not None
             else tool_call(c.name, **(c.args or {})) for c in item.tool_calls]
    return ScriptedResponse(text=item.text, tool_calls=calls,
                            usage=Usage(**item.usage) if item.usage else None,
                            latency=item.latency, chunks=item.chunks)


def to_mock_items(items: list[ScriptItem]) -> list[Any]:
    """Build the ScriptedLLM script (call inside the run's simulation: ids are drawn here)."""
    result: list[Any] = []
    for item in items:
        if isinstance(item, str):
            result.append(item)
        elif isinstance(item, ErrorItem):
            result.append(error_for(item))
        else:
            result.append(_reply(item))
    return result
