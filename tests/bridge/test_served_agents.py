"""An agent on Anthropic's official SDK, in its own process as in production, tested through
``agentkit serve`` (examples/served): its bundled recording -- made through ``serve --mode
rewrite`` against the live model (tests/live/test_served_live.py) -- replays offline to the
same trace; a request that changed since is a cassette miss naming the first difference; and a
live model that drops the connection mid-stream while recording fails the run saying so,
leaving a valid cassette of what was recorded before it.

The agent's process imports Anthropic's SDK (3.4 CPU-s) and each test starts ``agentkit
serve``: the slow lane runs them. The Agents SDK agent's bundled recording is replayed in the
frameworks lane (tests/integrations/test_served_sdk_agent.py), where its SDK is installed.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from agentkit.recording import Cassette
from tests.bridge import served_project as project

pytestmark = [pytest.mark.slow, pytest.mark.agentkit_allow_loopback]

AGENT = "claude_calculator"
SNAPSHOT = project.PROJECT / "scenarios" / "__snapshots__" / "served_add" / f"{AGENT}.json"


def test_the_bundled_recording_replays_offline_through_serve_to_the_recorded_trace(tmp_path):
    folder = project.copy_project(tmp_path)

    served = project.serve(folder, AGENT)

    assert served.code == 0, served.ok()
    assert served.out.startswith("PASS  served_add[claude_calculator]"), served.ok()
    assert served.trace is not None
    (turn,) = served.trace["turns"]
    assert [[(c["name"], c["output"]) for c in s["tool_calls"]] for s in turn["steps"]] == [
        [("add", "5")], []]
    assert served.answer == turn["response"]  # what the live model said, word for word
    # the trace the same recording replays to in process (`agentkit run` in examples/served)
    assert served.trace == json.loads(SNAPSHOT.read_text())


def test_a_request_that_changed_since_the_recording_is_a_miss_naming_the_first_difference(
        tmp_path):
    folder = project.copy_project(tmp_path)
    agent = folder / "support_agents.py"
    agent.write_text(agent.read_text().replace("in one sentence", "in one word"))

    served = project.serve(folder, AGENT)

    assert served.code == 1, served.ok()
    assert "CassetteMissError" in served.out, served.ok()
    assert ('first difference (recorded -> now), at messages[0].content: "You are a '
            'calculator. Use the add tool, then give the result in one sentence." -> "You are '
            'a calculator. Use the add tool, then give the result in one word."') in served.out
    assert ("to re-record: agentkit serve scenarios/served_add.yaml --agent claude_calculator "
            "--mode rewrite --model smollm2-135m-instruct --base-url") in served.out
    assert "Error code: 400" in served.agent_out  # the agent was refused, not answered


class _DroppingModel(BaseHTTPRequestHandler):
    """A chat-completions server that answers a request in one piece with a call to ``add``,
    and drops the connection in the middle of a streamed answer."""

    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["content-length"])))
        if not body.get("stream"):
            answer = json.dumps({
                "id": "c1", "object": "chat.completion", "created": 0, "model": "m",
                "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                    "role": "assistant", "content": None, "tool_calls": [{
                        "id": "call_1", "type": "function",
                        "function": {"name": "add", "arguments": '{"a": 2, "b": 3}'}}]}}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}})
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer.encode())
            return
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        event = json.dumps({"id": "c2", "object": "chat.completion.chunk", "created": 0,
                            "model": "m", "choices": [{"index": 0, "finish_reason": None,
                                                       "delta": {"content": "2 + 3 is"}}]})
        chunk = f"data: {event}\n\n".encode()
        self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        self.wfile.flush()
        self.connection.shutdown(socket.SHUT_RDWR)  # gone, mid-answer
        self.close_connection = True


@pytest.fixture
def dropping_model() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _DroppingModel)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def test_a_live_model_dropping_mid_stream_while_recording_fails_the_run_naming_it(
        tmp_path, dropping_model):
    folder = project.copy_project(tmp_path)
    cassette = folder / "scenarios" / "cassettes" / f"served_add.{AGENT}.yaml"

    served = project.serve(folder, AGENT, "--mode", "rewrite", "--base-url", dropping_model,
                           "--model", "m", "--timeout", "30")

    assert served.code == 1, served.ok()
    assert served.out.startswith("FAIL  served_add[claude_calculator]"), served.ok()
    assert ("the live model failed while recording, so the recording is incomplete: "
            "APIConnectionError:") in served.out
    assert (f"scenarios/cassettes/served_add.{AGENT}.yaml keeps the 1 exchange recorded "
            "before it") in served.out
    assert "recorded 1 exchange into" in served.out
    # what was recorded is a valid cassette: the first exchange, made over the Messages API
    kept = Cassette.load(cassette)
    (exchange,) = kept.exchanges
    assert exchange.wire == "anthropic_messages" and exchange.error is None
    calls = exchange.response["message"]["additional_kwargs"]["tool_calls"]  # type: ignore[index]
    assert [c["tool_name"] for c in calls] == ["add"]

