"""The replaying MCP server over streamable HTTP (``agentkit mcp-proxy --http``,
:class:`MCPReplayServer`), offline on a loopback port: the handshake and the tool requests from
the cassette, as often as they are asked; a request it lacks answered with the miss; web pages
and DNS-rebound names refused; nothing pushed. The MCP conformance lane
(tests/mcp_conformance) runs the whole suite against it."""

from __future__ import annotations

import http.client
import io
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentkit.tools.mcp import MCPServer
from agentkit.tools.mcp.proxy import ProxyError
from agentkit.tools.mcp.proxy_http import MCPReplayServer

pytestmark = pytest.mark.agentkit_allow_loopback

ROOT = Path(__file__).resolve().parents[2]
CASSETTE = ROOT / "mocks" / "mcp" / "conformance_server.2025-11-25.yaml"
CASSETTE_2026 = ROOT / "mocks" / "mcp" / "conformance_server.2026-07-28.yaml"
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}}


@pytest.fixture
def served() -> Iterator[MCPReplayServer]:
    with MCPReplayServer(MCPServer(name="conformance", command="-"), CASSETTE,
                         err=io.StringIO()) as server:
        yield server


def _post(server: MCPReplayServer, body: object, **headers: str
          ) -> tuple[int, dict[str, str], bytes]:
    port = int(server.url.split(":")[2].split("/")[0])
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        connection.request("POST", headers.pop("path", "/mcp"), data,
                           {"content-type": "application/json", **headers})
        answer = connection.getresponse()
        return answer.status, {k.lower(): v for k, v in answer.getheaders()}, answer.read()
    finally:
        connection.close()


def _call(tool: str, ident: int = 2, **params: object) -> dict:
    return {"jsonrpc": "2.0", "id": ident, "method": "tools/call",
            "params": {"name": tool, **params}}


def test_it_answers_initialize_as_recorded_with_a_session_id(served):
    status, headers, body = _post(served, {
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "test", "version": "1"}}})

    assert status == 200
    assert headers["content-type"] == "application/json"
    assert headers["mcp-session-id"] == "agentkit-replay-1"
    answer = json.loads(body)
    assert answer["id"] == 1
    assert answer["result"]["protocolVersion"] == "2025-11-25"
    assert answer["result"]["serverInfo"]["name"] == "agentkit-conformance-fixture"


def test_a_recorded_call_is_answered_as_often_as_it_is_asked(served):
    answers = [json.loads(_post(served, _call("test_simple_text", ident))[2])
               for ident in (7, 8, 9)]

    assert [a["id"] for a in answers] == [7, 8, 9]
    assert {a["result"]["content"][0]["text"] for a in answers} == {
        "This is a simple text response for testing."}
    assert served.misses == 0


def test_a_call_without_arguments_is_the_recorded_call_with_none(served):
    with_none = json.loads(_post(served, _call("test_image_content", arguments={}))[2])
    without = json.loads(_post(served, _call("test_image_content"))[2])

    assert with_none["result"] == without["result"]
    assert without["result"]["content"][0]["mimeType"] == "image/png"


def test_a_request_the_cassette_lacks_gets_the_miss_as_its_error(served):
    status, _, body = _post(served, _call("test_sampling", arguments={"prompt": "hi"}))

    assert status == 200
    error = json.loads(body)["error"]
    assert error["code"] == -32603
    assert "no recorded exchange matches this request" in error["message"]
    assert "tools/call test_sampling" in error["message"]
    assert served.misses == 1


def test_a_2026_request_is_matched_without_its_meta_and_discover_is_replayed():
    with MCPReplayServer(MCPServer(name="conformance", command="-"), CASSETTE_2026,
                         err=io.StringIO()) as server:
        discover = json.loads(_post(server, {"jsonrpc": "2.0", "id": 1,
                                             "method": "server/discover",
                                             "params": {"_meta": META}})[2])
        call = json.loads(_post(server, _call("test_error_handling", arguments={},
                                              _meta=META),
                                mcp_protocol_version="2026-07-28")[2])

    assert discover["result"]["supportedVersions"] == ["2026-07-28"]
    assert call["result"]["isError"] is True
    assert call["result"]["resultType"] == "complete"


def test_notifications_and_responses_are_accepted_without_a_body(served):
    status, _, body = _post(served, {"jsonrpc": "2.0", "method": "notifications/initialized"})

    assert (status, body) == (202, b"")


def test_a_batch_gets_its_answers_in_a_list(served):
    status, _, body = _post(served, [_call("test_simple_text", 1),
                                     {"jsonrpc": "2.0", "method": "notifications/initialized"},
                                     {"jsonrpc": "2.0", "id": 2, "method": "ping"}])

    assert status == 200
    assert [(a["id"], "result" in a) for a in json.loads(body)] == [(1, True), (2, True)]


@pytest.mark.parametrize("headers", [{"host": "evil.example.com"},
                                     {"origin": "http://evil.example.com"}])
def test_a_request_from_another_host_or_origin_is_refused(served, headers):
    status, _, body = _post(served, _call("test_simple_text"), **headers)

    assert status == 403
    assert "the replaying MCP server answers" in json.loads(body)["error"]["message"]


def test_it_answers_at_its_path_only_and_pushes_nothing(served):
    port = int(served.url.split(":")[2].split("/")[0])
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    connection.request("GET", "/mcp", headers={"accept": "text/event-stream"})
    pushed = connection.getresponse()
    pushed.read()
    connection.close()
    elsewhere = _post(served, _call("test_simple_text"), path="/other")

    assert (pushed.status, pushed.getheader("allow")) == (405, "POST")
    assert elsewhere[0] == 404


def test_a_body_that_is_not_json_is_a_parse_error(served):
    status, _, body = _post(served, b"{not json")

    assert status == 400
    assert json.loads(body)["error"]["code"] == -32700


def test_a_port_in_use_is_an_error_naming_it(served):
    port = int(served.url.split(":")[2].split("/")[0])

    with pytest.raises(ProxyError, match=f"port {port} on 127.0.0.1 is in use"):
        MCPReplayServer(MCPServer(name="conformance", command="-"), CASSETTE, port)


@pytest.mark.slow  # the command in a fresh interpreter
def test_the_command_prints_its_url_first_and_stops_on_sigterm():
    process = subprocess.Popen(
        [sys.executable, "-m", "agentkit", "mcp-proxy", "--cassette", str(CASSETTE),
         "--name", "conformance", "--http", "0"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert process.stdout is not None
    url = process.stdout.readline().strip()
    process.terminate()

    assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp")
    assert process.wait(timeout=60) == 0


@pytest.mark.slow  # the command in a fresh interpreter
def test_the_command_serves_no_recording_mode():
    done = subprocess.run(
        [sys.executable, "-m", "agentkit", "mcp-proxy", "--cassette", str(CASSETTE),
         "--name", "conformance", "--http", "0", "--mode", "once", "--", "python", "-V"],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)

    assert done.returncode == 2
    assert "mcp-proxy --http serves a recording (--mode none)" in done.stderr
