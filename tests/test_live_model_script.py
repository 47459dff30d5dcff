"""scripts/live-model, driven through its real install and start paths with a stub venv: the
stub's pip prints like pip does and its "server" answers /v1/models, so what the script puts on
stdout is exactly what `url=$(scripts/live-model start)` in .ci/run captures."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

#: the script's install and start paths in processes of their own: the slow lane's
pytestmark = pytest.mark.slow

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "live-model"

# Stands in for the live venv's python: `-m pip` chatters on stdout like pip (and records the
# install, with the CMAKE_ARGS it got), `-c` answers the script's two probes,
# `-m llama_cpp.server` writes its arguments to `server_args` and serves /v1/models and a
# one-word completion (or, with a `crash` file beside it, dies of SIGILL on the completion).
_STUB = textwrap.dedent('''\
    #!{python}
    import http.server, json, os, pathlib, sys
    here = pathlib.Path(__file__).resolve().parent
    installs = here / "installs"
    args = sys.argv[1:]
    if args[:2] == ["-m", "pip"]:
        for n in range(58):
            print(f"Collecting package-{{n}} (from -r requirements) ... done")
        with installs.open("a") as f:
            f.write(args[-1] + "\\n")
        if "CMAKE_ARGS" in os.environ:
            (here / "cmake_args").write_text(os.environ["CMAKE_ARGS"])
    elif args[:1] == ["-c"] and "rglob" in args[1]:
        print(here / "model.gguf")
    elif args[:1] == ["-c"]:
        done = installs.read_text().split() if installs.exists() else []
        sys.exit(0 if len(done) >= 2 else 1)
    elif args[:2] == ["-m", "llama_cpp.server"]:
        port = int(args[args.index("--port") + 1])
        (here / "server_args").write_text(" ".join(args))
        class Models(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                body = json.dumps({{"data": [{{"id": "stub"}}]}}).encode()
                self.send_response(200 if self.path == "/v1/models" else 404)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            def do_POST(self):
                if (here / "crash").exists():  # a runtime built for another CPU: SIGILL
                    import os, signal
                    os.kill(os.getpid(), signal.SIGILL)
                self.rfile.read(int(self.headers["content-length"]))
                body = json.dumps({{"choices": [{{"message": {{"role": "assistant",
                                                             "content": "OK"}}}}]}}).encode()
                self.send_response(200 if self.path == "/v1/chat/completions" else 404)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            def log_message(self, *a):
                print("request", *a)
        http.server.HTTPServer(("127.0.0.1", port), Models).serve_forever()
    else:
        sys.exit(f"stub python: unexpected arguments {{args}}")
    ''')


@pytest.fixture
def stub_env(tmp_path: Path):
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    python = venv / "bin" / "python"
    python.write_text(_STUB.format(python=sys.executable))
    python.chmod(0o755)
    env = {**{k: v for k, v in os.environ.items() if k != "CMAKE_ARGS"},
           "AGENTKIT_LIVE_VENV": str(venv),
           "AGENTKIT_LIVE_STATE": str(tmp_path / "state" / "live-model.json"),
           "AGENTKIT_LIVE_START_TIMEOUT": "30"}
    yield env
    subprocess.run([sys.executable, str(SCRIPT), "stop"], env=env, capture_output=True)


def _script(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *args], env=env, capture_output=True,
                          text=True, timeout=60)


def test_a_first_start_prints_only_the_url_on_stdout(stub_env):
    started = _script(stub_env, "start")

    assert started.returncode == 0, started.stderr
    lines = started.stdout.splitlines()
    assert len(lines) == 1, started.stdout
    url = lines[0]
    assert url.startswith("http://127.0.0.1:") and url.endswith("/v1")
    assert "Collecting package-57" in started.stderr  # pip's output went to stderr
    answering = _script(stub_env, "url")  # `url` prints it only if /models answers 200
    assert answering.stdout.strip() == url


def test_install_reports_on_stderr_only(stub_env):
    installed = _script(stub_env, "install")

    assert installed.returncode == 0, installed.stderr
    assert installed.stdout == ""
    assert "runtime and model installed" in installed.stderr


def test_a_second_start_reuses_the_running_server(stub_env):
    first = _script(stub_env, "start").stdout
    second = _script(stub_env, "start")

    assert second.stdout == first
    assert "pip" not in second.stderr


def test_the_runtime_is_built_for_any_cpu_of_the_machine_not_for_this_one(stub_env):
    assert _script(stub_env, "install").returncode == 0

    flags = (Path(stub_env["AGENTKIT_LIVE_VENV"]) / "bin" / "cmake_args").read_text().split()
    assert "-DGGML_NATIVE=OFF" in flags
    if os.uname().machine == "x86_64":
        assert {"-DGGML_AVX2=ON", "-DGGML_AMX_INT8=OFF", "-DGGML_AVX512=OFF"} <= set(flags)


def test_a_server_that_dies_on_its_first_completion_fails_start_with_the_fix(stub_env):
    (Path(stub_env["AGENTKIT_LIVE_VENV"]) / "bin" / "crash").write_text("")

    started = _script(stub_env, "start")

    assert started.returncode == 1
    assert started.stdout == ""
    assert "died on its first completion (exit -4, SIGILL" in started.stderr
    assert f"delete {stub_env['AGENTKIT_LIVE_VENV']}" in started.stderr
    assert _script(stub_env, "url").returncode == 1  # nothing left running


def _server_flag(env: dict[str, str], flag: str) -> str:
    args = (Path(env["AGENTKIT_LIVE_VENV"]) / "bin" / "server_args").read_text().split()
    return args[args.index(flag) + 1]


def test_the_context_is_4096_tokens_unless_agentkit_live_n_ctx_bounds_it(stub_env):
    assert _script(stub_env, "start").returncode == 0
    assert _server_flag(stub_env, "--n_ctx") == "4096"
    assert _script(stub_env, "stop").returncode == 0

    bounded = {**stub_env, "AGENTKIT_LIVE_N_CTX": "2048"}
    started = _script(bounded, "start")

    assert started.returncode == 0, started.stderr
    assert _server_flag(stub_env, "--n_ctx") == "2048"
    assert _script(bounded, "start").stdout == started.stdout  # the same size: reused


def test_a_running_server_of_another_context_size_is_not_reused(stub_env):
    url = _script({**stub_env, "AGENTKIT_LIVE_N_CTX": "2048"}, "start").stdout.strip()

    again = _script(stub_env, "start")  # asks the default, 4096

    assert again.returncode == 1
    assert again.stdout == ""
    assert (f"the server running at {url} has a context of 2048 tokens, not the 4096 asked "
            "(AGENTKIT_LIVE_N_CTX); stop it first") in again.stderr
    assert _script(stub_env, "url").stdout.strip() == url  # left running


@pytest.mark.parametrize("value", ["2k", "100"])
def test_a_context_size_that_is_no_number_of_tokens_is_refused_before_starting(stub_env, value):
    started = _script({**stub_env, "AGENTKIT_LIVE_N_CTX": value}, "start")

    assert started.returncode == 1
    assert f"AGENTKIT_LIVE_N_CTX must be a whole number of tokens, at least 256; got {value!r}" \
        in started.stderr
    assert _script(stub_env, "url").returncode == 1  # nothing started
