"""Ctrl-C in ``agentkit eval``: a SIGINT while requests are in flight. Their answers are still
saved, nothing new is sent, the command says what it kept and exits 130, and the same command
again records the rest without asking any call twice -- at any concurrency, at random
moments (in this process, :mod:`tests.eval.interrupts`), and when the pipe the command's
messages went to is gone (a ``| tee`` that the same Ctrl-C ended)."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Self

import pytest
import yaml

from agentkit.llms.mock import FunctionLLM, tool_call
from tests.eval.interrupts import (
    Campaign,
    Live,
    ctrl_c_delivered,
    evaluate,
    outcome,
    uninterrupted,
    write_suite,
)
from tests.scenario_text import adding_scenario

pytestmark = pytest.mark.agentkit_allow_loopback

ROOT = Path(__file__).resolve().parents[2]


class _Model:
    """An OpenAI-compatible model on 127.0.0.1 answering the `adding` conversation: an `add`
    call, then "2 + 3 = 5" once the tool's result is in. Its ``interrupt_at``-th request
    sends SIGINT to ``target`` and is answered only once the command said it waits for it."""

    def __init__(self, interrupt_at: int | None = None, *, pace: float = 0.0,
                 cut: int | None = None) -> None:
        self.interrupt_at = interrupt_at
        self.target: subprocess.Popen[str] | None = None
        self.waiting = threading.Event()
        self.requests = 0
        self.pace = pace
        """Seconds each answer takes, one at a time (a one-slot server, as llama.cpp's)."""
        self.cut = cut
        """A pipe's read end closed along with the SIGINT (the `tee` the Ctrl-C ended)."""
        self.slot = threading.Lock()
        model = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                return None

            def do_GET(self) -> None:
                self._send({"object": "list", "data": [{"id": "m1", "object": "model"}]})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["content-length"])))
                with model.slot:
                    model.requests += 1
                    if model.requests == model.interrupt_at and model.target is not None:
                        model.target.send_signal(signal.SIGINT)
                        if model.cut is not None:
                            os.close(model.cut)
                        else:
                            assert model.waiting.wait(120), "the command never said it waits"
                    time.sleep(model.pace)
                    answer = model.answer(body["messages"])
                self._send(answer)

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


def _eval(folder: Path, url: str, *, samples: int = 3, concurrency: int = 1,
          stderr: int = subprocess.PIPE) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "AGENTKIT_"))}
    env["PYTHONPATH"] = str(ROOT)  # the scenario's tool, mocks.tools:add
    return subprocess.Popen(
        [sys.executable, "-m", "agentkit", "eval", "scenarios", "--agents", "function_calling",
         "--models", "m1", "--samples", str(samples), "--base-url", url, "--concurrency",
         str(concurrency), "--max-concurrency", str(concurrency), "--out", "report"],
        cwd=folder, env=env, stdout=subprocess.PIPE, stderr=stderr, text=True,
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


@pytest.mark.slow  # a whole evaluation in a process of its own, interrupted
def test_ctrl_c_that_also_ends_the_tee_reading_the_command_keeps_every_sample_whole(
        project: Path):
    # the user's report: Ctrl-C at concurrency 20 through `| tee` -- the interrupt message
    # met a closed pipe, the process exited 0 under its running samples, and those saved
    # "cannot schedule new futures after shutdown" as the agent's error, marked complete
    read, write = os.pipe()
    with _Model(interrupt_at=25, pace=0.02, cut=read) as model:
        command = _eval(project, model.url, samples=20, concurrency=20, stderr=write)
        os.close(write)
        model.target = command
        out, _ = command.communicate(timeout=300)
        first = model.requests

    assert command.returncode == 130, out
    saved = yaml.safe_load((project / "scenarios" / "cassettes" / "eval" /
                            "one.function_calling.m1.yaml").read_text(encoding="utf-8"))
    assert [e for e in saved["exchanges"] if e.get("error")] == []
    finished = {e["sample"] for e in saved["exchanges"]
                if (e["response"]["message"].get("content") or "").endswith("= 5")}
    assert set(saved["complete"]) == finished  # only samples that got their answer

    with _Model() as model:
        again = _eval(project, model.url, samples=20, concurrency=20)
        out, err = again.communicate(timeout=300)
        rest = model.requests

    assert again.returncode == 0, out + err
    assert "pass rate 100% (20/20" in out
    assert first + rest == 40  # two calls a sample: not one asked twice


@pytest.fixture
def ctrl_c() -> Iterator[None]:
    with ctrl_c_delivered():
        yield


@pytest.mark.parametrize(("concurrency", "scenarios", "samples"), [
    (1, 2, 3), (4, 2, 3),
    # at full size: the same campaign the slow lane runs thirty times below
    pytest.param(20, 4, 5, marks=pytest.mark.slow)])
def test_ctrl_c_at_random_moments_then_resuming_ends_as_an_uninterrupted_evaluation(
        tmp_path: Path, ctrl_c: None, concurrency: int, scenarios: int, samples: int):
    expected, calls = uninterrupted(tmp_path / "whole", scenarios, samples, concurrency)
    campaign = Campaign(tmp_path / "cut", scenarios, samples, concurrency,
                        random.Random(concurrency))

    got = campaign.run(most=2)

    assert campaign.interrupts == 2
    assert got == expected
    assert campaign.calls == calls  # nothing asked twice, nothing lost


@pytest.mark.slow
def test_thirty_random_ctrl_cs_at_concurrency_20_each_resume_ends_as_an_uninterrupted_run(
        tmp_path: Path, ctrl_c: None):
    expected, calls = uninterrupted(tmp_path / "whole", 4, 5, 20)
    rng = random.Random(20)
    campaigns: list[Campaign] = []
    while sum(c.interrupts for c in campaigns) < 30:
        campaign = Campaign(tmp_path / f"cut{len(campaigns)}", 4, 5, 20, rng)
        campaigns.append(campaign)

        got = campaign.run()

        assert got == expected, f"campaign {len(campaigns)}"
        assert campaign.calls == calls, f"campaign {len(campaigns)}"
    assert sum(c.interrupts for c in campaigns) >= 30


@pytest.mark.slow  # an evaluation's many samples
def test_a_second_ctrl_c_abandons_the_requests_in_flight_and_writes_nothing_more(
        tmp_path: Path, ctrl_c: None):
    expected, calls = uninterrupted(tmp_path / "whole", 2, 3, 4)
    suite = write_suite(tmp_path / "cut", 2)
    live = Live(interrupt_at=3, jitter=random.Random(0))
    live.hold.clear()  # the request that brings the Ctrl-C stays in flight
    evaluation = evaluate(suite, live, 3, 4)
    evaluation.on_interrupt = lambda _: signal.pthread_kill(threading.main_thread().ident or 0,
                                                            signal.SIGINT)
    with pytest.raises(KeyboardInterrupt):
        evaluation.record()
    before = {path: path.read_bytes() for path in suite.rglob("*.yaml")}

    live.hold.set()  # the abandoned request is answered now, after the command has quit
    for thread in threading.enumerate():
        if thread.name.startswith("agentkit-eval-"):
            thread.join(60)

    assert {path: path.read_bytes() for path in suite.rglob("*.yaml")} == before
    resumed = Live(None, random.Random(0))
    again = evaluate(suite, resumed, 3, 4)
    again.record()
    assert outcome(again) == expected
    kept = sum(len(yaml.safe_load(text)["exchanges"]) for path, text in before.items()
               if "cassettes" in path.parts)
    assert resumed.requests == calls - kept  # exactly what the files did not hold


class _Broken:
    """Live models, one per sample, whose ``broken``-th request fails in agentkit's own
    machinery (what an executor shut down under a running sample raises), not the model."""

    def __init__(self, broken: int | None) -> None:
        self.broken = broken
        self.requests = 0
        self.lock = threading.Lock()

    def __call__(self, model: str, seed: int) -> FunctionLLM:
        def reply(messages, tools):
            with self.lock:
                self.requests += 1
                number = self.requests
            if number == self.broken:
                raise RuntimeError("cannot schedule new futures after shutdown")
            if not any(m.role == "tool" for m in messages):
                return tool_call("add", a=2, b=3)
            return "2 + 3 = 6" if seed % 3 == 2 else "2 + 3 = 5"

        return FunctionLLM(reply, name=model)


@pytest.mark.parametrize("broken", [1, 2])  # the sample's first call, its second
def test_a_call_lost_to_agentkits_own_shutdown_is_never_recorded_and_its_sample_resumes(
        tmp_path: Path, broken: int):
    expected, calls = uninterrupted(tmp_path / "whole", 1, 2, 1)
    suite = write_suite(tmp_path / "cut", 1)
    models = _Broken(broken)
    evaluation = evaluate(suite, models, 2, 1)

    evaluation.record()

    text = (suite / "cassettes" / "eval" / "s0.function_calling.m1.yaml").read_text("utf-8")
    assert "RuntimeError" not in text and "cannot schedule" not in text
    assert evaluation.missing() == {"s0[function_calling@m1]": 1}
    healthy = _Broken(None)
    again = evaluate(suite, healthy, 2, 1)
    again.record()
    assert outcome(again) == expected
    assert models.requests - 1 + healthy.requests == calls  # only the lost call asked again
