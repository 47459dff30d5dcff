"""Ctrl-C in ``agentkit eval``: a real SIGINT to the command while a request is in flight. The
request's answer is still saved, nothing new is sent, the command says what it kept and exits
130, and the same command again records the rest without asking any call twice."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Self

import pytest
import yaml

from tests.scenario_text import adding_scenario

pytestmark = pytest.mark.agentkit_allow_loopback

ROOT = Path(__file__).resolve().parents[2]


class _Model:
    """An OpenAI-compatible model on 127.0.0.1 answering the `adding` conversation: an `add`
    call, then "2 + 3 = 5" once the tool's result is in. Its ``interrupt_at``-th request
    sends SIGINT to ``target`` and is answered only once the command said it waits for it."""

    def __init__(self, interrupt_at: int | None = None) -> None:
        self.interrupt_at = interrupt_at
        self.target: subprocess.Popen[str] | None = None
        self.waiting = threading.Event()
        self.requests = 0
        model = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                return None

            def do_GET(self) -> None:
                self._send({"object": "list", "data": [{"id": "m1", "object": "model"}]})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                model.requests += 1
                if model.requests == model.interrupt_at and model.target is not None:
                    model.target.send_signal(signal.SIGINT)
                    assert model.waiting.wait(120), "the command never said it waits"
                self._send(model.answer(body["messages"]))

            def _send(self, data: dict[str, Any]) -> None:
                raw = json.dumps(data).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def answer(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        if any(m["role"] == "tool" for m in messages):
            message: dict[str, Any] = {"role": "assistant", "content": "2 + 3 = 5"}
            finish = "stop"
        else:
            message = {"role": "assistant", "content": None, "tool_calls": [{
                "id": f"call_{self.requests}", "type": "function",
                "function": {"name": "add", "arguments": '{"a": 2, "b": 3}'}}]}
            finish = "tool_calls"
        return {"id": f"c{self.requests}", "object": "chat.completion", "created": 0,
                "model": "m1", "choices": [{"index": 0, "message": message,
                                            "finish_reason": finish}],
                "usage": {"prompt_tokens": 20, "completion_tokens": 5, "total_tokens": 25}}

    def __enter__(self) -> Self:
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Path]:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "p"\nversion = "0"\n',
                                             encoding="utf-8")
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "one.yaml").write_text(adding_scenario("one", """\
expect:
  answer: {contains: "5"}
agents:
  function_calling:
    script: []
"""), encoding="utf-8")
    yield tmp_path


def _eval(folder: Path, url: str) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "AGENTKIT_"))}
    env["PYTHONPATH"] = str(ROOT)  # the scenario's tool, mocks.tools:add
    return subprocess.Popen(
        [sys.executable, "-m", "agentkit", "eval", "scenarios", "--agents", "function_calling",
         "--models", "m1", "--samples", "3", "--base-url", url, "--concurrency", "1",
         "--max-concurrency", "1", "--out", "report"],
        cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        # a shell's background job (a CI runner's, say) starts with SIGINT ignored; a user's
        # terminal does not
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


def _exchanges(folder: Path) -> list[dict[str, Any]]:
    cassette = folder / "scenarios" / "cassettes" / "eval" / "one.function_calling.m1.yaml"
    return yaml.safe_load(cassette.read_text(encoding="utf-8"))["exchanges"]


@pytest.mark.slow  # a whole evaluation in a process of its own, interrupted
def test_ctrl_c_saves_the_request_in_flight_and_the_rerun_asks_no_call_twice(project: Path):
    with _Model(interrupt_at=3) as model:  # the first call of the second sample
        command = _eval(project, model.url)
        model.target = command
        assert command.stderr is not None
        said: list[str] = []
        for line in command.stderr:
            said.append(line)
            if "interrupted: waiting for the 1 requests in flight to be saved" in line:
                model.waiting.set()
        out = command.stdout.read() if command.stdout else ""
        assert command.wait(300) == 130, out + "".join(said)
        first = model.requests

    assert first == 3  # nothing was sent after the interrupt
    assert "1 of 3 samples recorded and kept (3 calls in the cassettes)" in "".join(said)
    kept = _exchanges(project)
    assert [e["sample"] for e in kept] == [0, 0, 1]  # the answer in flight was saved

    with _Model() as model:
        again = _eval(project, model.url)
        out, err = again.communicate(timeout=300)
        rest = model.requests

    assert again.returncode == 0, out + err
    assert "1 recorded, 2 to record" in out
    assert rest == 3  # the second sample's last call, then the third sample's two
    assert len(_exchanges(project)) == first + rest == 6
