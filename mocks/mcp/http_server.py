"""A streamable HTTP MCP server built with the official SDK, for the HTTP tests:
``python -m mocks.mcp.http_server PORT`` serves ``http://127.0.0.1:PORT/mcp`` (loopback
only). Tools: ``greet(name)`` and ``whoami()``, which answers whether the request carried an
``Authorization`` header (never its value)."""

from __future__ import annotations

import sys

from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("greeter", log_level="WARNING")


@server.tool()
def greet(name: str) -> str:
    """Greet someone by name."""
    return f"Hello, {name}!"


@server.tool()
def whoami(ctx: Context) -> str:
    """Say whether the request was authorised."""
    request = ctx.request_context.request
    headers = getattr(request, "headers", {}) or {}
    return "authorised" if "authorization" in headers else "anonymous"


if __name__ == "__main__":
    server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[1]))
