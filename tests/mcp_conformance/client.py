"""The client the MCP conformance suite runs (``conformance client --command "python
tests/mcp_conformance/client.py"``): agentkit's own MCP client -- an :class:`MCPSession` on a
live :class:`MCPServer` reached over streamable HTTP, its tools as an agent gets them
(:func:`select_tools`) -- pointed at the suite's test server, whose URL the suite appends.

What it does is what an agent's tool calls do: list the server's tools, then call the ones the
scenario names in ``MCP_CONFORMANCE_CONTEXT`` (``toolCalls``) or, without a list, every listed
tool with arguments made from its input schema; given the schema-preservation scenario's echo
tool, the other tool's input schema as agentkit keeps it. A call the server answers with a JSON-RPC error
is the tool's error (an agent sees it so), not a failure of the client; an error of the
connection ends the client with exit code 1 and the error on stderr.

The authorization scenarios (``auth/...``) end at once with exit code 1, before agentkit is
imported: agentkit's MCP client runs no OAuth flow (it sends the ``headers:`` it is given, a
token among them), so they are expected failures, and the suite runs them all at the same
time."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentkit.tools.mcp import MCPTool

_FOCAL, _ECHOED = "json_schema_2020_12_tool", "json_schema_echo"
_SAMPLES: dict[str, Any] = {"number": 1, "integer": 1, "string": "agentkit", "boolean": True,
                            "array": [], "object": {}}


def arguments_for(tool: MCPTool) -> dict[str, Any]:
    """Arguments for each required parameter of ``tool``, from its JSON schema's types."""
    schema = json.loads(tool.metadata.input_schema or "{}")
    properties = schema.get("properties") or {}
    arguments: dict[str, Any] = {}
    for name in schema.get("required") or []:
        kind = (properties.get(name) or {}).get("type", "string")
        arguments[name] = _SAMPLES.get(kind if isinstance(kind, str) else kind[0], "agentkit")
    return arguments


async def exercise(url: str, context: dict[str, Any]) -> None:
    from agentkit.tools.mcp import MCPCallError, MCPServer, MCPSession, select_tools

    session = MCPSession(MCPServer(name="conformance", url=url, timeout=20))
    try:
        tools = {tool.remote_name: tool for tool in await asyncio.to_thread(select_tools, session)}
        calls = context.get("toolCalls")
        if _ECHOED in tools and _FOCAL in tools:
            # the scenario checks that a tool's input schema is kept as the server sent it
            schema = json.loads(tools[_FOCAL].metadata.input_schema or "{}")
            calls = [{"name": _ECHOED, "arguments": {"schema": schema}}]
        if calls is None:
            calls = [{"name": name, "arguments": arguments_for(tool)}
                     for name, tool in tools.items()]
        for call in calls:
            tool = tools.get(call["name"])
            if tool is None:
                print(f"client: the server lists no tool `{call['name']}`", file=sys.stderr)
                continue
            try:
                output = await tool.acall(**(call.get("arguments") or {}))
            except MCPCallError as exc:
                print(f"client: {exc}", file=sys.stderr)
                continue
            print(f"{tool.remote_name}: {output.content}")
    finally:
        await asyncio.to_thread(session.close)


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: client.py <server URL>", file=sys.stderr)
        return 2
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    if scenario.startswith("auth/"):
        print(f"client: {scenario}: agentkit's MCP client runs no OAuth flow", file=sys.stderr)
        return 1
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    from agentkit.core.errors import InfrastructureError

    try:
        asyncio.run(exercise(argv[0], context))
    except InfrastructureError as exc:
        print(f"client: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
