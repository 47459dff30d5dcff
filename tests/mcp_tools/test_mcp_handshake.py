"""An MCP recording replays for the client that made it, whatever protocol era it speaks
(offline, no server runs): requests match without what the MCP protocol makes per-session
(the JSON-RPC id, ``params._meta`` with its progress token and the client info a 2026 client
stamps on every request), and `agentkit mcp-proxy` answers the handshake as the recorded
server did (its protocol version, capabilities and serverInfo), falling back to its own
handshake for a cassette recorded before it kept one."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path
from typing import Any

import pytest

from agentkit.recording import Cassette, CassetteError, CassettePlayer
from agentkit.tools.mcp import MCPServer, MCPToolset
from agentkit.tools.mcp.proxy import REPLAY_PROTOCOL_VERSION, _Proxy
from agentkit.tools.mcp.session import MCPRecording, canonical_mcp_request
from tests.mcp_tools import toy

MODERN = "2026-07-28"
META = {"io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientInfo": {"name": "mcp", "version": "0.1.0"},
        "io.modelcontextprotocol/clientCapabilities": {}, "progressToken": 7}
DISCOVERED = {"supportedVersions": [MODERN], "resultType": "complete",
              "capabilities": {"tools": {"listChanged": False}},
              "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "toy-server",
                                                               "version": "9.1"}}}
INITIALIZED = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
               "serverInfo": {"name": "toy-server", "version": "9.1"},
               "instructions": "Echo with care."}


def _handshake(method: str, result: dict[str, Any]) -> dict[str, Any]:
    return {"request": {"method": method, "server": "toy"}, "response": result, "latency": 0.0}


def _message(ident: int | None, method: str, params: dict[str, Any] | None = None) -> dict:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if ident is not None:
        message["id"] = ident
    if params is not None:
        message["params"] = params
    return message


def _replay(cassette: Path, messages: list[dict]) -> tuple[int, list[dict], str]:
    """`agentkit mcp-proxy --cassette C --name toy` (mode none) fed ``messages``: its exit
    code, its answers and its stderr."""
    out, err = io.BytesIO(), io.StringIO()
    proxy = _Proxy(MCPServer(name="toy", command="-"), cassette, "none", out, err)

    async def main() -> int:
        reader = asyncio.StreamReader()
        for message in messages:
            reader.feed_data((json.dumps(message) + "\n").encode())
        reader.feed_eof()
        return await proxy.run(reader)

    code = asyncio.run(main())
    return code, [json.loads(line) for line in out.getvalue().splitlines()], err.getvalue()


# ------------------------------------------------------------------ matching
def test_a_requests_meta_is_not_part_of_what_was_asked():
    plain = canonical_mcp_request("toy", "tools/call",
                                  {"name": "echo", "arguments": {"text": "hi"}})
    stamped = canonical_mcp_request("toy", "tools/call",
                                    {"name": "echo", "arguments": {"text": "hi"}, "_meta": META})
    assert stamped == plain == {"server": "toy", "method": "tools/call",
                                "params": {"name": "echo", "arguments": {"text": "hi"}}}


def test_a_request_whose_params_are_only_meta_is_one_without_params():
    assert canonical_mcp_request("toy", "tools/list", {"_meta": META}) == \
        canonical_mcp_request("toy", "tools/list", None) == {"server": "toy",
                                                             "method": "tools/list"}


def test_a_meta_inside_the_tools_arguments_is_the_tools_own_and_is_matched():
    with_meta = canonical_mcp_request("toy", "tools/call",
                                      {"name": "echo", "arguments": {"_meta": "x"}})
    assert with_meta["params"]["arguments"] == {"_meta": "x"}


def test_a_call_recorded_with_its_meta_replays_for_a_client_that_sends_none(tmp_path):
    recorded = toy.call("echo", {"text": "hi"}, "hi")
    recorded["request"]["params"]["_meta"] = META
    path = toy.write_cassette(tmp_path / "c.yaml", [toy.listing(), recorded])
    nowhere = MCPServer(name="toy", command="no-such-mcp-server-anywhere")
    with MCPToolset(nowhere, ["echo"], cassette=path) as (echo,):
        assert echo.call(text="hi").content == "hi"


def test_recorded_handshakes_are_neither_replayed_as_requests_nor_left_unused(tmp_path):
    path = toy.write_cassette(tmp_path / "c.yaml", [
        _handshake("server/discover", DISCOVERED), toy.listing(),
        toy.call("echo", {"text": "hi"}, "hi")])
    recording = MCPRecording(Cassette.load(path))
    assert recording.player.remaining() == 2
    assert recording.handshake("toy", "server/discover") == DISCOVERED
    assert recording.handshake("toy", "initialize") is None
    assert recording.handshake("other", "server/discover") is None
    recording.take(canonical_mcp_request("toy", "tools/list"))
    recording.take(canonical_mcp_request("toy", "tools/call",
                                         {"name": "echo", "arguments": {"text": "hi"}}))
    assert recording.unused == 0


def test_a_miss_never_names_a_handshake_as_the_nearest_request(tmp_path):
    path = toy.write_cassette(tmp_path / "c.yaml", [_handshake("initialize", INITIALIZED)])
    player = CassettePlayer(Cassette.load(path), "mcp_exchanges")
    miss = player.miss(canonical_mcp_request("toy", "tools/list"))
    assert "the cassette has no recorded MCP exchanges" in str(miss)


def test_a_kept_handshake_replaces_the_one_recorded_before_and_comes_first(tmp_path):
    path = toy.write_cassette(tmp_path / "c.yaml", [
        toy.listing(), _handshake("server/discover", {**DISCOVERED, "ttlMs": 5})])
    recording = MCPRecording(Cassette.load(path), "new_episodes")
    recording.keep_handshake("toy", "server/discover", DISCOVERED)
    recording.keep_handshake("toy", "server/discover", DISCOVERED)  # the same: nothing new
    methods = [e.request["method"] for e in recording.cassette.mcp_exchanges]
    assert methods == ["tools/list", "server/discover"]
    assert recording.handshake("toy", "server/discover") == DISCOVERED
    assert recording.recorded == 1


@pytest.mark.parametrize(("method", "result", "says"), [
    ("initialize", {"capabilities": {}}, "an `initialize` result needs `protocolVersion`"),
    ("server/discover", {"supportedVersions": "2026-07-28"},
     "a `server/discover` result needs `supportedVersions` (a list of protocol versions)"),
])
def test_a_malformed_recorded_handshake_is_an_error_at_its_line(tmp_path, method, result, says):
    path = toy.write_cassette(tmp_path / "c.yaml", [toy.listing(), _handshake(method, result)])
    with pytest.raises(CassetteError) as caught:
        Cassette.load(path)
    assert "c.yaml:" in str(caught.value) and "mcp_exchanges.1" in str(caught.value)
    assert says in str(caught.value)


# ------------------------------------------------------------------ the proxy's handshake
def test_the_proxy_answers_discovery_as_the_recorded_server_did_and_matches_without_meta(
        tmp_path):
    path = toy.write_cassette(tmp_path / "c.yaml", [
        _handshake("server/discover", DISCOVERED), toy.listing(),
        toy.call("echo", {"text": "hi"}, "hi")])
    code, answers, err = _replay(path, [
        _message(1, "server/discover", {"_meta": META}),
        _message(2, "tools/list", {"_meta": META}),
        _message(41, "tools/call", {"name": "echo", "arguments": {"text": "hi"},
                                    "_meta": {**META, "progressToken": 41}}),
    ])
    assert err == ""
    assert code == 0
    assert answers[0] == {"jsonrpc": "2.0", "id": 1, "result": DISCOVERED}
    assert [tool["name"] for tool in answers[1]["result"]["tools"]] == ["echo", "add"]
    assert answers[2] == {"jsonrpc": "2.0", "id": 41,
                          "result": {"content": [{"type": "text", "text": "hi"}]}}


def test_the_proxy_answers_initialize_as_the_recorded_server_did(tmp_path):
    path = toy.write_cassette(tmp_path / "c.yaml", [_handshake("initialize", INITIALIZED),
                                                    toy.listing()])
    code, answers, _ = _replay(path, [
        _message(1, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                   "clientInfo": {"name": "test", "version": "1"}}),
        _message(None, "notifications/initialized"),
        _message(2, "server/discover", {"_meta": META}),  # never recorded: refused
    ])
    assert code == 0
    assert answers[0]["result"] == INITIALIZED
    assert answers[1]["error"]["code"] == -32601


def test_without_a_recorded_handshake_the_proxy_answers_its_own(tmp_path):
    path = toy.write_cassette(tmp_path / "c.yaml", [toy.listing()])
    code, answers, _ = _replay(path, [
        _message(1, "server/discover", {"_meta": META}),
        _message(2, "initialize", {"protocolVersion": "1999-01-01", "capabilities": {},
                                   "clientInfo": {"name": "test", "version": "1"}}),
    ])
    assert code == 0
    assert answers[0]["error"]["code"] == -32601  # the client falls back to initialize
    assert answers[1]["result"] == {"protocolVersion": REPLAY_PROTOCOL_VERSION,
                                    "capabilities": {"tools": {}},
                                    "serverInfo": {"name": "toy",
                                                   "version": "agentkit replay"}}
