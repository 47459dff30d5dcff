"""`agentkit mcp-proxy` recordings replay for the MCP clients that made them (the `mcp` lane:
`pytest -m mcp`, after `pip install -e '.[mcp-servers]'`): the official SDK's client, in the
2026-07-28 era it negotiates by default (`server/discover`, then `_meta` stamped on every
request) and in the initialize handshake's, records mcp-server-time through the proxy and
replays with the server gone -- the same protocol version, server and answers."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

pytestmark = pytest.mark.mcp

ROOT = Path(__file__).resolve().parents[2]
CALLS = [("convert_time", {"source_timezone": "UTC", "time": "09:30",
                           "target_timezone": "Asia/Tokyo"}),
         ("get_current_time", {"timezone": "no/such_zone"}),  # the server's error result
         ("convert_time", {"source_timezone": "UTC", "time": "23:15",
                           "target_timezone": "Europe/Paris"})]


async def _session(cassette: Path, mode: str, era: str) -> dict[str, Any]:
    """What an agent's MCP client (the SDK's, negotiating ``era``) sees of the proxy."""
    from mcp.client import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    args = ["-m", "agentkit", "mcp-proxy", "--cassette", str(cassette), "--name", "time",
            "--mode", mode]
    if mode != "none":
        args += ["--", "mcp-server-time", "--local-timezone", "UTC"]
    bin_dir = str(Path(sys.executable).parent)
    params = StdioServerParameters(command=sys.executable, args=args, cwd=str(ROOT),
                                   env={"PATH": bin_dir})
    async with Client(stdio_client(params), mode=era, cache=None) as client:
        tools = [tool.name for tool in (await client.list_tools()).tools]
        results = []
        for name, arguments in CALLS:
            result = await client.call_tool(name, arguments)
            results.append((result.is_error, [block.text for block in result.content]))
        info = client.server_info
        return {"version": client.protocol_version, "server": info and info.name,
                "tools": tools, "results": results}


@pytest.mark.parametrize(("era", "handshake", "version"), [
    ("auto", "server/discover", "2026-07-28"),
    ("legacy", "initialize", "2025-11-25"),
])
def test_a_recording_replays_without_the_server_in_the_protocol_it_was_recorded_in(
        tmp_path, era, handshake, version):
    cassette = tmp_path / "time.yaml"
    recorded = asyncio.run(_session(cassette, "rewrite", era))
    assert recorded["version"] == version
    assert recorded["server"] == "mcp-time"

    data = yaml.safe_load(cassette.read_text())
    kept = data["mcp_exchanges"]
    assert kept[0]["request"] == {"method": handshake, "server": "time"}
    assert [e["request"]["method"] for e in kept[1:]] == ["tools/list"] + ["tools/call"] * 3
    assert not any("_meta" in (e["request"].get("params") or {}) for e in kept)

    replayed = asyncio.run(_session(cassette, "none", era))
    assert replayed == recorded
    assert recorded["results"][1][0] is True  # the bad zone: the server's error, replayed
