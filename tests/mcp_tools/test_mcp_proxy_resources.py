"""The replaying MCP server beyond tools, offline on a loopback port (and over stdio): a
recorded server's resources (listed, read as text or binary, through a template), prompts
(with arguments, an embedded resource, an image) and completions answered exactly as
recorded; a request the recording lacks answered with an error naming it; the log level a
client sets, and the progress notifications and log messages recorded during a call, replayed
in order before its answer -- progress under the caller's own token, log messages from the
level it asked for. The recordings are the conformance lane's (mocks/mcp/conformance_server.*);
the `mcp` lane records them afresh (tests/mcp_tools/test_mcp_doc.py)."""

from __future__ import annotations

import http.client
import io
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from agentkit.tools.mcp import MCPServer
from agentkit.tools.mcp.proxy_http import MCPReplayServer

pytestmark = pytest.mark.agentkit_allow_loopback

ROOT = Path(__file__).resolve().parents[2]
CASSETTE = ROOT / "mocks" / "mcp" / "conformance_server.2025-11-25.yaml"
CASSETTE_2026 = ROOT / "mocks" / "mcp" / "conformance_server.2026-07-28.yaml"
META_2026 = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
             "io.modelcontextprotocol/clientCapabilities": {}}


@pytest.fixture
def served() -> Iterator[MCPReplayServer]:
    with MCPReplayServer(MCPServer(name="conformance", command="-"), CASSETTE,
                         err=io.StringIO()) as server:
        yield server


def _post(server: MCPReplayServer, body: object) -> tuple[int, dict[str, str], bytes]:
    port = int(server.url.split(":")[2].split("/")[0])
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        connection.request("POST", "/mcp", json.dumps(body).encode(),
                           {"content-type": "application/json"})
        answer = connection.getresponse()
        return answer.status, {k.lower(): v for k, v in answer.getheaders()}, answer.read()
    finally:
        connection.close()


def _ask(server: MCPReplayServer, method: str, params: dict | None = None,
         ident: int = 5) -> list[dict]:
    """The messages the server answers ``method`` with: a JSON answer, or each event of an
    event stream, in order."""
    status, headers, body = _post(server, {"jsonrpc": "2.0", "id": ident, "method": method,
                                           **({"params": params} if params is not None else {})})
    assert status == 200
    if headers["content-type"] == "application/json":
        return [json.loads(body)]
    assert headers["content-type"] == "text/event-stream"
    events = body.decode().split("\n\n")
    assert events[-1] == ""
    assert all(event.startswith("event: message\ndata: ") for event in events[:-1])
    return [json.loads(event.split("data: ", 1)[1]) for event in events[:-1]]


def _recorded(path: Path, method: str, **params: object) -> dict:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    (exchange,) = [e for e in data["mcp_exchanges"] if e["request"]["method"] == method
                   and all((e["request"].get("params") or {}).get(k) == v
                           for k, v in params.items())]
    return exchange


@pytest.mark.parametrize(("method", "params"), [
    ("resources/list", None),
    ("resources/templates/list", None),
    ("resources/read", {"uri": "test://static-text"}),
    ("resources/read", {"uri": "test://static-binary"}),
    ("resources/read", {"uri": "test://template/123/data"}),
    ("prompts/list", None),
    ("prompts/get", {"name": "test_simple_prompt"}),
    ("prompts/get", {"name": "test_prompt_with_arguments",
                     "arguments": {"arg1": "testValue1", "arg2": "testValue2"}}),
    ("prompts/get", {"name": "test_prompt_with_embedded_resource",
                     "arguments": {"resourceUri": "test://example-resource"}}),
    ("prompts/get", {"name": "test_prompt_with_image"}),
    ("completion/complete", {"ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"},
                             "argument": {"name": "arg1", "value": "test"}}),
    ("resources/subscribe", {"uri": "test://watched-resource"}),
])
def test_a_recorded_resource_prompt_or_completion_is_answered_exactly(served, method, params):
    (answer,) = _ask(served, method, params)

    recorded = _recorded(CASSETTE, method, **(params or {}))
    assert answer == {"jsonrpc": "2.0", "id": 5, "result": recorded["response"]}
    assert served.misses == 0


def test_what_the_replies_hold_is_the_servers_own(served):
    (text,) = _ask(served, "resources/read", {"uri": "test://static-text"})
    (binary,) = _ask(served, "resources/read", {"uri": "test://static-binary"})
    (image,) = _ask(served, "prompts/get", {"name": "test_prompt_with_image"})

    assert text["result"]["contents"] == [{"uri": "test://static-text", "mimeType": "text/plain",
                                           "text": "This is the content of the static text "
                                                   "resource."}]
    assert binary["result"]["contents"][0]["blob"].startswith("iVBORw0KGgo")  # a PNG
    assert [m["content"]["type"] for m in image["result"]["messages"]] == ["image", "text"]


def test_a_list_is_matched_without_its_cursor(served):
    (first,) = _ask(served, "prompts/list")
    (paged,) = _ask(served, "prompts/list", {"cursor": "page-2"})

    assert first["result"] == paged["result"]


def test_a_recorded_error_is_replayed_as_the_server_sent_it(served):
    uri = "test://nonexistent-resource-for-conformance-testing"
    (answer,) = _ask(served, "resources/read", {"uri": uri})

    assert answer["error"]["code"] == -32602
    assert answer["error"]["data"] == {"uri": uri}
    assert served.misses == 0


@pytest.mark.parametrize(("method", "params", "named"), [
    ("resources/read", {"uri": "test://elsewhere"}, "resources/read"),
    ("prompts/get", {"name": "test_prompt_with_arguments",
                     "arguments": {"arg1": "other", "arg2": "testValue2"}}, "prompts/get"),
    ("completion/complete", {"ref": {"type": "ref/prompt", "name": "test_simple_prompt"},
                             "argument": {"name": "arg1", "value": "x"}}, "completion/complete"),
])
def test_a_request_the_recording_lacks_is_an_error_naming_it(served, method, params, named):
    (answer,) = _ask(served, method, params)

    assert answer["error"]["code"] == -32603
    message = answer["error"]["message"]
    assert "no recorded exchange matches this request" in message
    assert named in message
    assert served.misses == 1


def test_a_method_no_recording_keeps_is_method_not_found(served):
    (answer,) = _ask(served, "sampling/createMessage", {"messages": []})

    assert answer["error"]["code"] == -32601
    assert "sampling/createMessage" in answer["error"]["message"]


def test_progress_recorded_during_a_call_is_streamed_in_order_under_the_callers_token(served):
    messages = _ask(served, "tools/call", {"name": "test_tool_with_progress", "arguments": {},
                                           "_meta": {"progressToken": "mine-7"}})

    *progress, answer = messages
    assert [(m["method"], m["params"]["progressToken"], m["params"]["progress"])
            for m in progress] == [("notifications/progress", "mine-7", 0),
                                   ("notifications/progress", "mine-7", 50),
                                   ("notifications/progress", "mine-7", 100)]
    assert answer["id"] == 5
    assert answer["result"]["content"][0]["text"] == "Tool with progress executed successfully"


def test_a_call_without_a_progress_token_gets_no_progress(served):
    (answer,) = _ask(served, "tools/call", {"name": "test_tool_with_progress", "arguments": {}})

    assert answer["result"]["content"][0]["text"] == "Tool with progress executed successfully"


def _logged(server: MCPReplayServer, meta: dict | None = None) -> list[str]:
    params: dict = {"name": "test_tool_with_logging", "arguments": {}}
    if meta is not None:
        params["_meta"] = meta
    *notes, answer = _ask(server, "tools/call", params)
    assert answer["result"]["content"][0]["text"] == "Tool with logging executed successfully"
    assert {n["method"] for n in notes} <= {"notifications/message"}
    return [n["params"]["data"] for n in notes]


LOGGED = ["Tool execution started", "Tool processing data", "Tool execution completed"]


def test_log_messages_recorded_during_a_call_follow_the_level_the_client_set(tmp_path):
    data = yaml.safe_load(CASSETTE.read_text(encoding="utf-8"))
    data["mcp_exchanges"].append({"request": {"server": "conformance", "method": "logging/setLevel",
                                              "params": {"level": "warning"}},
                                  "response": {}})
    cassette = tmp_path / "levels.yaml"
    cassette.write_text(yaml.safe_dump(data), encoding="utf-8")

    with MCPReplayServer(MCPServer(name="conformance", command="-"), cassette,
                         err=io.StringIO()) as server:
        unset = _logged(server)  # no level set: every recorded message
        (set_level,) = _ask(server, "logging/setLevel", {"level": "warning"})
        at_warning = _logged(server)
        _ask(server, "logging/setLevel", {"level": "info"})
        at_info = _logged(server)
        (unrecorded,) = _ask(server, "logging/setLevel", {"level": "error"})
        still_info = _logged(server)

    assert unset == LOGGED
    assert set_level["result"] == {}
    assert at_warning == []  # the three were logged at info
    assert at_info == LOGGED
    assert "no recorded exchange matches this request" in unrecorded["error"]["message"]
    assert still_info == LOGGED  # a level the recording lacks changes nothing


def test_a_2026_request_gets_log_messages_only_from_the_level_in_its_meta(served):
    assert _logged(served, META_2026) == []
    assert _logged(served, {**META_2026, "io.modelcontextprotocol/logLevel": "info"}) == LOGGED
    assert _logged(served, {**META_2026, "io.modelcontextprotocol/logLevel": "error"}) == []


def test_the_2026_recording_streams_progress_too():
    with MCPReplayServer(MCPServer(name="conformance", command="-"), CASSETTE_2026,
                         err=io.StringIO()) as server:
        *progress, answer = _ask(server, "tools/call", {
            "name": "test_tool_with_progress", "arguments": {},
            "_meta": {**META_2026, "progressToken": 3}})

    assert [m["params"]["progressToken"] for m in progress] == [3, 3, 3]
    assert answer["result"]["resultType"] == "complete"


@pytest.mark.slow  # the command in a fresh interpreter
def test_the_stdio_proxy_writes_the_recorded_notifications_before_the_answer():
    lines = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                         "clientInfo": {"name": "test", "version": "1"}}},
             {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
              "params": {"name": "test_tool_with_progress", "arguments": {},
                         "_meta": {"progressToken": "p"}}},
             {"jsonrpc": "2.0", "id": 3, "method": "resources/read",
              "params": {"uri": "test://static-text"}}]
    done = subprocess.run(
        [sys.executable, "-m", "agentkit", "mcp-proxy", "--cassette", str(CASSETTE),
         "--name", "conformance"], cwd=ROOT, input="".join(json.dumps(m) + "\n" for m in lines),
        capture_output=True, text=True, timeout=300, check=False)

    assert done.returncode == 0, done.stderr
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r.get("id", r.get("method")) for r in replies] == [
        1, *["notifications/progress"] * 3, 2, 3]
    assert [r["params"]["progress"] for r in replies[1:4]] == [0, 50, 100]
    assert replies[5]["result"]["contents"][0]["uri"] == "test://static-text"


# ------------------------------------------------------------------ the stateless protocol
@pytest.fixture
def served_2026() -> Iterator[MCPReplayServer]:
    with MCPReplayServer(MCPServer(name="conformance", command="-"), CASSETTE_2026,
                         err=io.StringIO()) as server:
        yield server


def _post_2026(server: MCPReplayServer, method: str, params: dict, version: str | None
               ) -> tuple[int, dict]:
    port = int(server.url.split(":")[2].split("/")[0])
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    headers = {"content-type": "application/json"}
    if version is not None:
        headers["mcp-protocol-version"] = version
    try:
        connection.request("POST", "/mcp", json.dumps(
            {"jsonrpc": "2.0", "id": 41, "method": method, "params": params}).encode(), headers)
        answer = connection.getresponse()
        return answer.status, json.loads(answer.read())
    finally:
        connection.close()


@pytest.mark.parametrize(("meta", "version", "status", "code"), [
    (None, "2026-07-28", 400, -32602),
    ({"io.modelcontextprotocol/clientCapabilities": {}}, "2026-07-28", 400, -32602),
    ({"io.modelcontextprotocol/protocolVersion": "2026-07-28"}, "2026-07-28", 400, -32602),
    ({**META_2026, "io.modelcontextprotocol/protocolVersion": "v9"}, "2026-07-28", 400, -32020),
    ({**META_2026, "io.modelcontextprotocol/protocolVersion": "v9"}, "v9", 400, -32022),
])
def test_a_2026_request_without_the_meta_or_version_the_protocol_requires_is_refused(
        served_2026, meta, version, status, code):
    params = {"_meta": meta} if meta is not None else {}
    got_status, answer = _post_2026(served_2026, "server/discover", params, version)

    assert (got_status, answer["id"], answer["error"]["code"]) == (status, 41, code)
    if code == -32022:
        assert answer["error"]["data"] == {"supported": ["2026-07-28"], "requested": "v9"}
    assert served_2026.misses == 0


@pytest.mark.parametrize("method", ["initialize", "ping", "logging/setLevel",
                                    "resources/subscribe", "unknown/method"])
def test_a_method_the_2026_protocol_lacks_is_404_method_not_found(served_2026, method):
    status, answer = _post_2026(served_2026, method, {"_meta": META_2026}, "2026-07-28")

    assert (status, answer["error"]["code"]) == (404, -32601)
    assert method in answer["error"]["message"]


def test_a_2026_request_with_its_meta_is_answered_and_a_2025_one_is_not_held_to_it(
        served_2026):
    # no header: its _meta says the version
    status, answer = _post_2026(served_2026, "server/discover", {"_meta": META_2026}, None)
    assert (status, answer["result"]["supportedVersions"]) == (200, ["2026-07-28"])

    status, answer = _post_2026(served_2026, "ping", {}, "2025-11-25")
    assert (status, answer["result"]) == (200, {})


def test_a_recorded_missing_capability_error_is_http_400(served_2026):
    status, answer = _post_2026(served_2026, "tools/call", {
        "name": "test_missing_capability", "arguments": {}, "_meta": META_2026}, "2026-07-28")

    assert (status, answer["error"]["code"]) == (400, -32021)
    assert answer["error"]["data"] == {"requiredCapabilities": {"sampling": {}}}


def test_a_recorded_input_required_result_is_replayed_as_recorded(served_2026):
    status, answer = _post_2026(served_2026, "tools/call", {
        "name": "test_streaming_elicitation", "arguments": {},
        "_meta": {**META_2026, "io.modelcontextprotocol/clientCapabilities": {
            "elicitation": {}}}}, "2026-07-28")

    assert status == 200
    assert answer["result"]["resultType"] == "input_required"
    assert answer["result"]["inputRequests"]["confirm"]["method"] == "elicitation/create"


def test_a_2026_request_gets_no_log_message_it_did_not_ask_for(served_2026):
    quiet = _ask(served_2026, "tools/call", {"name": "test_logging_tool", "arguments": {},
                                             "_meta": META_2026})
    asked = _ask(served_2026, "tools/call", {"name": "test_logging_tool", "arguments": {},
                                             "_meta": {**META_2026,
                                                       "io.modelcontextprotocol/logLevel":
                                                           "info"}})

    assert [m.get("method") for m in quiet] == [None]
    assert [m.get("method") for m in asked] == ["notifications/message", None]
