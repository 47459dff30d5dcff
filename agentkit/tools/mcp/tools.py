"""MCP tools as agentkit tools: name, description and JSON schema from the server's
``tools/list``; a call is a ``tools/call`` whose result becomes a :class:`ToolOutput`."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any

from agentkit.core.sim import run_sync
from agentkit.recording import Cassette, RecordMode
from agentkit.tools.mcp.server import MCPServer
from agentkit.tools.mcp.session import MCPRecording, MCPSession
from agentkit.tools.types import AsyncBaseTool, JSONSchemaToolMetadata, ToolMetadata, ToolOutput

__all__ = ["MCPToolMetadata", "MCPTool", "MCPToolset", "UnknownMCPToolError", "result_text",
           "select_tools"]


@dataclass
class MCPToolMetadata(JSONSchemaToolMetadata):
    """Tool metadata whose argument schema is the server's JSON schema, as it sent it."""


class UnknownMCPToolError(LookupError):
    """A tool asked for (``only:``) that the server does not offer; ``close`` is the nearest
    offered name, if any."""

    def __init__(self, server: str, name: str, offered: Sequence[str]) -> None:
        import difflib

        close = difflib.get_close_matches(name, list(offered), n=1)
        self.close = close[0] if close else None
        hint = f"did you mean `{self.close}`? " if self.close else ""
        super().__init__(f"MCP server `{server}` offers no tool `{name}`; {hint}(it offers: "
                         f"{', '.join(offered) or 'none'})")
        self.name = name
        self.offered = list(offered)


def result_text(result: dict[str, Any]) -> str:
    """What the model reads of a ``tools/call`` result: its text blocks joined by newlines;
    other blocks as a short placeholder (``[image image/png]``); with no blocks, the
    structured content as JSON."""
    parts: list[str] = []
    for block in result.get("content") or []:
        kind = block.get("type")
        if kind == "text":
            parts.append(str(block.get("text", "")))
        elif kind == "resource":
            resource = block.get("resource") or {}
            parts.append(str(resource.get("text")) if "text" in resource
                         else f"[resource {resource.get('uri', '')}]")
        elif kind == "resource_link":
            parts.append(f"[resource {block.get('uri', '')}]")
        else:
            parts.append(f"[{kind} {block.get('mimeType', '')}]".replace(" ]", "]"))
    if not parts and "structuredContent" in result:
        return json.dumps(result["structuredContent"], ensure_ascii=False, sort_keys=True)
    return "\n".join(parts)


class MCPTool(AsyncBaseTool):
    """One tool of an MCP server. ``remote_name`` is the server's name for it (``metadata``
    may rename it). A result with ``isError`` is an error output, as a raising function
    tool's is."""

    def __init__(self, session: MCPSession, tool: dict[str, Any], *, name: str | None = None,
                 description: str | None = None, return_direct: bool = False) -> None:
        self.session = session
        self.remote_name = str(tool["name"])
        self._metadata = MCPToolMetadata(
            name=name or self.remote_name,
            description=description if description is not None else
            str(tool.get("description") or self.remote_name),
            fn_schema=None, return_direct=return_direct,
            input_schema=json.dumps(tool["inputSchema"], ensure_ascii=False))

    @property
    def metadata(self) -> ToolMetadata:
        return self._metadata

    @property
    def takes_positional_input(self) -> bool:
        return False  # as LlamaIndex's MCP tools, whose function takes **kwargs only

    async def acall(self, *args: Any, **kwargs: Any) -> ToolOutput:
        if args:
            raise TypeError(f"{self.metadata.name}() takes keyword arguments only (an MCP tool's "
                            f"arguments are named), got {len(args)} positional")
        result = await self.session.call_tool(self.remote_name, kwargs)
        return ToolOutput(content=result_text(result), tool_name=self.metadata.name,
                          raw_input={"args": (), "kwargs": kwargs}, raw_output=result,
                          is_error=bool(result.get("isError", False)))

    def call(self, *args: Any, **kwargs: Any) -> ToolOutput:
        return run_sync(self.acall(*args, **kwargs))


def select_tools(session: MCPSession, only: Sequence[str] | None = None) -> list[MCPTool]:
    """The server's tools (all, or those named in ``only``, in that order) as agentkit tools;
    a name the server does not offer is an :class:`UnknownMCPToolError`."""
    listed = {str(tool["name"]): tool for tool in session.list_tools()}
    names = list(only) if only is not None else list(listed)
    for name in names:
        if name not in listed:
            raise UnknownMCPToolError(session.server.name, name, list(listed))
    return [MCPTool(session, listed[name]) for name in names]


class MCPToolset:
    """The Python API: an MCP server's tools for any agent, live or recorded.

    ``with MCPToolset(server) as tools:`` starts nothing until a request needs the live
    server, and stops the server on leaving the block however it is left. With a
    ``cassette`` (a path), requests are replayed and recorded per ``mode`` like an LLM's
    (``none`` replays only: the server is never started); the cassette is written when the
    block ends without an error, atomically and with secrets redacted."""

    def __init__(self, server: MCPServer, only: Sequence[str] | None = None, *,
                 cassette: str | Cassette | None = None, mode: RecordMode = "none") -> None:
        self.server = server
        self.only = list(only) if only is not None else None
        self.recording: MCPRecording | None = None
        if cassette is not None:
            from pathlib import Path

            if isinstance(cassette, Cassette):
                loaded = cassette
            else:
                path = Path(cassette)
                loaded = Cassette.load(path) if path.exists() and mode != "rewrite" else (
                    Cassette(path=path) if mode != "none" else Cassette.load(path))
            self.recording = MCPRecording(loaded, mode)
        self.session = MCPSession(server, self.recording)
        self.tools: list[MCPTool] = []

    def __enter__(self) -> list[MCPTool]:
        try:
            self.tools = select_tools(self.session, self.only)
        except BaseException:
            self.session.close()
            raise
        return self.tools

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self.session.close()
        if exc_type is None and self.recording is not None and self.recording.recorded:
            self.recording.cassette.save(secrets=self.server.secrets())
