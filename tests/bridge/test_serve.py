"""``agentkit serve`` for real: a subprocess listening on 127.0.0.1, driven with HTTP requests
the way an agent in another process drives it, stopped with SIGINT/SIGTERM (or killed), its
exit code saying whether the agent's run met the scenario's expectations.

Each test that starts the command is marked slow (a fresh interpreter per test): the slow
lane runs them (`pytest -m slow`); the in-process endpoint is tested in test_endpoint.py."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from agentkit.bridge.server import LoopbackServer

pytestmark = pytest.mark.agentkit_allow_loopback

ROOT = Path(__file__).resolve().parents[2]
ADD = {"type": "function", "function": {"name": "add", "parameters": {
    "type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}}}}
QUESTION = {"role": "user", "content": "What is 2 + 3?"}


class Served:
    """``agentkit serve ARGS`` in a subprocess; ``url`` is the first line it printed."""

    def __init__(self, *args: str, cwd: Path = ROOT) -> None:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        self.process = subprocess.Popen([sys.executable, "-m", "agentkit", "serve", *args],
                                        cwd=cwd, env=env, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        self.url = self.process.stdout.readline().strip()
        self.http = httpx.Client(base_url=self.url, timeout=30)

    def ask(self, *messages: dict[str, Any], **fields: Any) -> httpx.Response:
        return self.http.post("/chat/completions", json={
            "model": "m", "messages": list(messages) or [QUESTION], "tools": [ADD], **fields})

    def stop(self, signum: int = signal.SIGINT) -> tuple[int, str, str]:
        """Send ``signum``; the exit code and what it printed after the URL."""
        self.http.close()
        self.process.send_signal(signum)
        out, err = self.process.communicate(timeout=60)
        return self.process.returncode, out, err

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.communicate(timeout=60)


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Any]:
    started: list[Served] = []

    def start(scenario: str = "scenarios/single_tool_call.yaml", agent: str = "function_calling",
              *more: str) -> Served:
        served = Served(scenario, "--agent", agent, "--trace-out", str(tmp_path / "trace.json"),
                        *more)
        started.append(served)
        return served

    yield start
    for served in started:
        served.kill()


def _answer_tool_call(served: Served) -> list[dict[str, Any]]:
    """The first request and the tool result sent back: the conversation so far."""
    reply = served.ask().json()["choices"][0]["message"]
    (call,) = reply["tool_calls"]
    return [QUESTION, reply, {"role": "tool", "tool_call_id": call["id"], "content": "5"}]


def _port_is_free(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


# ----------------------------------------------------------------- serving
@pytest.mark.slow
def test_serve_prints_its_loopback_url_first_and_answers_with_the_scenarios_script(serve):
    served = serve()

    assert re.fullmatch(r"http://127\.0\.0\.1:\d+/v1", served.url)
    assert [m["id"] for m in served.http.get("/models").json()["data"]] == [
        "single_tool_call/function_calling"]
    conversation = _answer_tool_call(served)
    assert conversation[1]["tool_calls"][0]["function"] == {
        "name": "add", "arguments": json.dumps({"a": 2, "b": 3})}
    assert served.ask(*conversation).json()["choices"][0]["message"]["content"] == "2 + 3 = 5"


@pytest.mark.slow
def test_an_openai_client_streams_from_it_like_from_any_server(serve):
    served = serve()
    client = openai.OpenAI(base_url=served.url, api_key="anything", max_retries=0)

    reply = client.chat.completions.create(model="m", messages=[QUESTION], tools=[ADD])
    call = reply.choices[0].message.tool_calls[0]
    chunks = client.chat.completions.create(model="m", stream=True, messages=[
        QUESTION, reply.choices[0].message.model_dump(exclude_none=True),
        {"role": "tool", "tool_call_id": call.id, "content": "5"}])

    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "2 + 3 = 5"


@pytest.mark.slow
def test_an_openai_client_on_the_responses_api_runs_the_scenario_to_a_pass(serve, tmp_path):
    served = serve()
    client = openai.OpenAI(base_url=served.url, api_key="anything", max_retries=0)
    tool = {"type": "function", "name": "add", "parameters": ADD["function"]["parameters"]}

    first = client.responses.create(model="m", input="What is 2 + 3?", tools=[tool])
    (call,) = first.output
    with client.responses.stream(model="m", previous_response_id=first.id, tools=[tool], input=[
            {"type": "function_call_output", "call_id": call.call_id, "output": "5"}]) as stream:
        answer = stream.get_final_response().output_text
    code, out, err = served.stop(signal.SIGINT)

    assert (call.name, json.loads(call.arguments), answer) == ("add", {"a": 2, "b": 3},
                                                               "2 + 3 = 5")
    assert code == 0, out + err
    (turn,) = json.loads((tmp_path / "trace.json").read_text())["turns"]
    assert [(c["name"], c["output"]) for c in turn["steps"][0]["tool_calls"]] == [("add", "5")]


@pytest.mark.slow
def test_an_anthropic_client_on_the_messages_api_runs_the_scenario_to_a_pass(serve, tmp_path):
    import anthropic

    served = serve()
    client = anthropic.Anthropic(base_url=served.url.removesuffix("/v1"), api_key="anything",
                                 max_retries=0)
    tool = {"name": "add", "input_schema": ADD["function"]["parameters"]}

    first = client.messages.create(model="m", max_tokens=100, messages=[QUESTION], tools=[tool])
    (use,) = first.content
    with client.messages.stream(model="m", max_tokens=100, tools=[tool], messages=[
            QUESTION, {"role": "assistant", "content": [use.model_dump(exclude_none=True)]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use.id,
                                          "content": "5"}]}]) as stream:
        answer = stream.get_final_text()
    code, out, err = served.stop(signal.SIGINT)

    assert (use.name, use.input, answer) == ("add", {"a": 2, "b": 3}, "2 + 3 = 5")
    assert code == 0, out + err
    (turn,) = json.loads((tmp_path / "trace.json").read_text())["turns"]
    assert [(c["name"], c["output"]) for c in turn["steps"][0]["tool_calls"]] == [("add", "5")]


@pytest.mark.slow
def test_sigint_stops_it_writes_the_wire_trace_and_exits_0_when_expectations_hold(serve,
                                                                                   tmp_path):
    served = serve()
    served.ask(*_answer_tool_call(served))

    code, out, err = served.stop(signal.SIGINT)

    assert code == 0, out + err
    assert out.startswith("PASS  single_tool_call[function_calling]")
    trace = json.loads((tmp_path / "trace.json").read_text())
    (turn,) = trace["turns"]
    assert [len(s["llm_calls"]) for s in turn["steps"]] == [1, 1]
    assert [(c["name"], c["args"], c["output"]) for c in turn["steps"][0]["tool_calls"]] == [
        ("add", {"a": 2, "b": 3}, "5")]
    assert turn["response"] == "2 + 3 = 5"


@pytest.mark.slow
def test_sigterm_stops_it_the_same_way(serve):
    served = serve()
    served.ask(*_answer_tool_call(served))

    code, out, _ = served.stop(signal.SIGTERM)

    assert code == 0 and "PASS" in out


@pytest.mark.slow
def test_unmet_expectations_exit_1_saying_what_failed(serve):
    served = serve()
    _answer_tool_call(served)  # the agent never asks for the answer

    code, out, _ = served.stop()

    assert code == 1
    assert out.startswith("FAIL  single_tool_call[function_calling]")
    assert "the script has 1 unused reply" in out


@pytest.mark.slow
def test_stopped_before_any_request_the_run_fails_saying_so(serve):
    code, out, _ = serve().stop()

    assert code == 1
    assert "no model call reached the bridge in turn 1" in out


@pytest.mark.slow
def test_a_multi_turn_scenario_is_driven_turn_by_turn(serve):
    served = serve("scenarios/multi_turn_memory.yaml", "function_calling")
    first = {"role": "user", "content": "What is the capital of France?"}
    conversation = [first]
    # the client offers the tools the script calls (one it did not offer is a failed call)
    tools = [{"type": "function", "function": {"name": name, "parameters": {"type": "object"}}}
             for name in ("capital", "weather")]
    for user, output in ((None, "Paris"),
                         ({"role": "user", "content": "And what is the weather there today?"},
                          "18°C, light rain")):
        if user is not None:
            conversation.append(user)
        reply = served.ask(*conversation, tools=tools).json()["choices"][0]["message"]
        call = reply["tool_calls"][0]
        conversation += [reply, {"role": "tool", "tool_call_id": call["id"], "content": output}]
        conversation.append(served.ask(*conversation, tools=tools).json()["choices"][0]["message"])

    code, out, _ = served.stop()

    assert code == 0, out
    assert "steps=4 llm=4 tools=2" in out


# ----------------------------------------------------------------- bad input
@pytest.mark.slow
def test_a_request_after_the_script_ran_out_is_a_400_and_fails_the_run(serve):
    served = serve()
    conversation = _answer_tool_call(served)
    served.ask(*conversation)

    extra = served.ask(*conversation)
    code, out, _ = served.stop()

    assert extra.status_code == 400
    assert extra.json()["error"]["message"].startswith(
        "agentkit bridge: scenario `single_tool_call`, turn 1 (\"What is 2 + 3?\"): "
        "ScriptExhaustedError:")
    assert code == 1
    assert "ScriptExhaustedError: ScriptedLLM 'single_tool_call/function_calling' ran out" in out


@pytest.mark.slow
def test_a_malformed_body_and_an_unknown_path_get_openai_style_errors(serve):
    served = serve()

    malformed = served.http.post("/chat/completions", content=b"{oops",
                                 headers={"content-type": "application/json"})
    unknown = served.http.get("/v2/nothing")

    assert (malformed.status_code, unknown.status_code) == (400, 404)
    assert "not valid JSON" in malformed.json()["error"]["message"]
    assert unknown.json()["error"]["code"] == "unknown_url"


@pytest.mark.slow
def test_a_request_beginning_a_turn_the_scenario_lacks_is_refused(serve):
    served = serve()
    served.ask(*_answer_tool_call(served))

    another = served.ask({"role": "user", "content": "And 4 + 4?"})

    assert another.status_code == 400
    assert another.json()["error"]["code"] == "no_more_turns"
    assert "has 1 turn(s), and this request begins another" in \
        another.json()["error"]["message"]


@pytest.mark.slow
def test_a_port_in_use_is_a_one_line_error_with_exit_2(serve):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        served = serve("scenarios/single_tool_call.yaml", "function_calling", "--port",
                       str(port))
        code = served.process.wait(timeout=60)
        err = served.process.stderr.read()

    assert (code, served.url) == (2, "")
    assert err == (f"agentkit: error: port {port} on 127.0.0.1 is in use; choose another "
                   "--port (or --port 0 for any free one)\n")


@pytest.mark.slow
def test_an_agent_type_the_scenario_lacks_is_exit_2(serve):
    served = serve("scenarios/single_tool_call.yaml", "coa")

    assert served.process.wait(timeout=60) == 2
    assert "has no agent type `coa`" in served.process.stderr.read()


# ----------------------------------------------------------------- no process left behind
@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL])
def test_however_it_is_stopped_the_process_ends_and_its_port_is_free(serve, signum):
    served = serve()
    _answer_tool_call(served)  # a connection was open, a turn was waiting
    port = int(served.url.rsplit(":", 1)[1].split("/")[0])

    served.stop(signum)

    assert served.process.returncode in (0, 1, -signal.SIGKILL)
    assert _port_is_free(port)


def test_the_server_listens_on_the_loopback_interface_only():
    server = LoopbackServer(0)
    try:
        assert server._server.socket.getsockname()[0] == "127.0.0.1"
    finally:
        server.close()


@pytest.mark.slow  # the guide's commands: the command in a fresh interpreter, with curl
def test_the_bridge_guides_serve_commands_run_as_it_says(tmp_path):
    guide = (ROOT / "docs" / "bridge.md").read_text(encoding="utf-8")
    section = guide.split("## An agent in another process", 1)[1]
    block = re.search(r"```bash\n(.*?)```", section, flags=re.DOTALL).group(1)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    script = block.replace("8765", str(port)).replace("/tmp/served.json",
                                                       str(tmp_path / "served.json"))
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}

    done = subprocess.run(["bash", "-c", script], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=120)

    lines = done.stdout.splitlines()
    assert lines[0] == f"http://127.0.0.1:{port}/v1"
    answer = json.loads(next(line for line in lines if line.startswith("{")))
    (call,) = answer["choices"][0]["message"]["tool_calls"]
    assert (call["function"]["name"], json.loads(call["function"]["arguments"])) == (
        "add", {"a": 2, "b": 3})
    assert "FAIL  single_tool_call[function_calling]" in done.stdout
    assert "steps=1 llm=1 tools=1" in done.stdout
    assert "- the script has 1 unused reply" in done.stdout
    assert done.stdout.rstrip().endswith("exit 1")
    assert (tmp_path / "served.json").is_file()


@pytest.mark.parametrize("length, status", [("abc", 400), (str(1 << 40), 413)])
def test_a_request_with_a_bad_content_length_is_refused_unread(length, status):
    with LoopbackServer(0) as server, socket.create_connection(("127.0.0.1", server.port),
                                                               timeout=30) as sock:
        sock.sendall(f"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                     f"Content-Length: {length}\r\n\r\n".encode())
        answer = b"".join(iter(lambda: sock.recv(65536), b"")).decode()  # it closes

    assert answer.startswith(f"HTTP/1.1 {status} ")
    assert "Content-Length" in answer.split("\r\n\r\n", 1)[1]


@pytest.mark.slow
def test_a_trace_out_that_is_a_folder_is_refused_before_serving(tmp_path):
    served = Served("scenarios/single_tool_call.yaml", "--agent", "function_calling",
                    "--trace-out", str(tmp_path))

    assert (served.process.wait(timeout=60), served.url) == (2, "")
    assert served.process.stderr.read() == (f"agentkit: error: --trace-out {tmp_path}: is a "
                                            "folder; give the trace file's path\n")


@pytest.mark.slow
def test_trace_out_redacts_a_secret_environment_value_a_tool_returned(serve, tmp_path,
                                                                      monkeypatch):
    secret = "s3cr3t-value-of-the-service"
    monkeypatch.setenv("MY_SERVICE_TOKEN", secret)
    served = serve()
    conversation = _answer_tool_call(served)
    conversation[2]["content"] = f"5 (token {secret})"
    served.ask(*conversation)

    served.stop(signal.SIGINT)

    text = (tmp_path / "trace.json").read_text()
    assert secret not in text
    assert "<redacted:MY_SERVICE_TOKEN>" in text
