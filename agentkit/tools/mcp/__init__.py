"""MCP servers as tools (``agentkit.tools.mcp``): a server's tools become agentkit tools for
every agent type, sync and async, with their names, descriptions and JSON schemas; their
``tools/list`` and ``tools/call`` exchanges are recorded into cassettes and replayed offline
without the server (see docs/mcp.md).

The live side runs on the official ``mcp`` SDK (``pip install 'agentkit[mcp]'``), imported
only when a server is really started: replaying a cassette needs neither the SDK nor the
servers."""

from agentkit.tools.mcp.live import LiveConnection
from agentkit.tools.mcp.server import (
    Lifetime,
    MCPCallError,
    MCPProtocolError,
    MCPServer,
    MCPServerError,
)
from agentkit.tools.mcp.session import MCPRecording, MCPSession, canonical_mcp_request
from agentkit.tools.mcp.tools import (
    MCPTool,
    MCPToolMetadata,
    MCPToolset,
    UnknownMCPToolError,
    result_text,
    select_tools,
)

__all__ = [
    "MCPServer",
    "Lifetime",
    "MCPToolset",
    "MCPTool",
    "MCPToolMetadata",
    "MCPSession",
    "MCPRecording",
    "LiveConnection",
    "MCPServerError",
    "MCPProtocolError",
    "MCPCallError",
    "UnknownMCPToolError",
    "canonical_mcp_request",
    "result_text",
    "select_tools",
]
