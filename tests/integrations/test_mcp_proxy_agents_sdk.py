"""The OpenAI Agents SDK's own MCP client (`agents.mcp.MCPServerStdio`, which negotiates the
2026-07-28 protocol with a server that speaks it and stamps `_meta` on every request) records
a server through `agentkit mcp-proxy` and replays the recording with the server gone
(mocks/mcp/orders.py: a server written with the MCP SDK, serving both protocol eras)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

pytestmark = pytest.mark.frameworks

ROOT = Path(__file__).resolve().parents[2]


async def _agents_sdk_session(cassette: Path, mode: str, run: str) -> dict[str, Any]:
    """What an Agents SDK agent's MCP server object sees through the proxy: the tools it
    would offer its model, and two calls (``run`` goes into each call's `_meta`, as a
    `tool_meta_resolver` would put the run's own ids there)."""
    from agents.mcp import MCPServerStdio

    args = ["-m", "agentkit", "mcp-proxy", "--cassette", str(cassette), "--name", "orders",
            "--mode", mode]
    if mode != "none":
        args += ["--", sys.executable, "-m", "mocks.mcp.orders"]
    # a loaded machine starts Python slowly: the SDK's 5 s default is for a warm one
    server = MCPServerStdio({"command": sys.executable, "args": args, "cwd": str(ROOT)},
                            client_session_timeout_seconds=120)
    async with server:
        tools = [(tool.name, tool.description) for tool in await server.list_tools()]
        results = []
        for order in ("7", "9"):
            result = await server.call_tool("lookup_order", {"order_id": order},
                                            meta={"run": run})
            results.append((result.is_error, [block.text for block in result.content]))
        session: Any = server.session
        return {"version": session.protocol_version, "tools": tools, "results": results}


def test_the_agents_sdk_records_an_mcp_server_and_replays_it_with_the_server_gone(tmp_path):
    cassette = tmp_path / "orders.yaml"
    recorded = asyncio.run(_agents_sdk_session(cassette, "rewrite", "run-1"))
    assert recorded["version"] == "2026-07-28"
    assert recorded["tools"] == [("lookup_order", "Look an order up by its number.")]
    assert recorded["results"] == [(False, ["order 7: a kettle, 40.00 EUR, delivered"]),
                                   (True, ["Error executing tool lookup_order: no order 9"])]
    kept = yaml.safe_load(cassette.read_text())["mcp_exchanges"]
    assert [e["request"]["method"] for e in kept] == ["server/discover", "tools/list",
                                                      "tools/call", "tools/call"]

    replayed = asyncio.run(_agents_sdk_session(cassette, "none", "run-2"))
    assert replayed == recorded
