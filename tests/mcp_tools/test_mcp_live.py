"""Live MCP servers (the `mcp` lane: `pytest -m mcp`, after `pip install -e '.[mcp-servers]'`):
the real mcp-server-time and mcp-server-git from PyPI, and the suite's own misbehaving server
(mocks/mcp/misbehaving.py) -- started, recorded, stopped on every exit path, and replayed
offline without them."""

from __future__ import annotations

import io
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from agentkit.cli import main
from agentkit.core.sim import now, run
from agentkit.harness._mcp import close_session_servers
from agentkit.harness._record import record_scenario
from agentkit.llms.mock import ScriptedLLM, tool_call
from agentkit.scenario import run_scenario
from agentkit.tools.mcp import (
    LiveConnection,
    MCPCallError,
    MCPProtocolError,
    MCPServer,
    MCPServerError,
    MCPToolset,
)

pytestmark = pytest.mark.mcp

ROOT = Path(__file__).resolve().parents[2]
ALL_AGENT_TYPES = ["react", "function_calling", "llm_compiler", "coa", "function_agent",
                   "react_agent", "react_multimodal", "agent_workflow"]


def _misbehaving(*options: str, name: str = "bad", timeout: float = 60.0,
                 env: dict[str, str] | None = None) -> MCPServer:
    return MCPServer(name=name, command="python", args=("-m", "mocks.mcp.misbehaving", *options),
                     cwd=str(ROOT), timeout=timeout, env=env or {})


def _gone(pid: int) -> bool:
    """Whether process ``pid`` has ended (and been reaped)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    status = Path(f"/proc/{pid}/status")
    return status.exists() and "\nState:\tZ" in status.read_text()


def _pid(path: Path) -> int:
    return int(path.read_text())


def _block_live_servers(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(self: LiveConnection) -> None:
        raise AssertionError(f"a replay started MCP server `{self.server.name}`")

    monkeypatch.setattr(LiveConnection, "start", refuse)


# ------------------------------------------------------------------------ the real servers
def test_the_time_servers_tools_answer_live_sync_and_async():
    server = MCPServer(name="time", command="mcp-server-time", args=("--local-timezone", "UTC"))
    with MCPToolset(server, ["convert_time"]) as (convert,):
        arguments = {"source_timezone": "UTC", "time": "09:30", "target_timezone": "Asia/Tokyo"}
        sync = convert.call(**arguments)
        async_ = run(convert.acall(**arguments))
    assert "T18:30:00+09:00" in sync.content
    assert async_.content == sync.content
    assert convert.metadata.get_parameters_dict()["required"] == [
        "source_timezone", "time", "target_timezone"]


@pytest.fixture
def bundled(tmp_path: Path) -> Path:
    """The bundled MCP scenario in a folder of its own, beside the project's mocks."""
    folder = tmp_path / "scenarios"
    folder.mkdir()
    shutil.copy(ROOT / "scenarios" / "mcp_time_git.yaml", folder)
    (tmp_path / "mocks").symlink_to(ROOT / "mocks")
    return folder / "mcp_time_git.yaml"


def _cli(*argv: object) -> tuple[int, str]:
    out = io.StringIO()
    code = main([str(arg) for arg in argv], out=out)
    return code, out.getvalue()


def test_the_bundled_scenario_records_live_under_every_agent_type_and_replays_without_servers(
        bundled, monkeypatch):
    for agent_type in ALL_AGENT_TYPES:
        code, out = _cli("record", bundled, "--agent", agent_type, "--mode", "rewrite")
        assert code == 0, out
        assert "the offline replay reproduces the recorded trace" in out
    _block_live_servers(monkeypatch)
    code, out = _cli("replay", bundled)
    assert code == 0, out
    assert out.count("replay reproduces the recorded trace") == len(ALL_AGENT_TYPES)


def test_the_committed_cassettes_hold_the_requests_a_fresh_recording_makes(bundled):
    """The bundled recordings are current: recorded again live, every agent type asks the
    servers the same tools/list and tools/call requests."""
    for agent_type in ALL_AGENT_TYPES:
        recording = record_scenario(bundled, agent_type, {}, "rewrite")
        assert recording.ok, recording.problems
        fresh = _requests(recording.cassettes[-1])
        committed = _requests(ROOT / "scenarios" / "cassettes" / recording.cassettes[-1].name)
        assert fresh == committed, agent_type  # in the order the agent asked


def _requests(path: Path) -> list[dict]:
    return [exchange["request"] for exchange in yaml.safe_load(path.read_text())["mcp_exchanges"]]


def test_a_git_server_rerecorded_unchanged_leaves_its_cassette_byte_for_byte(tmp_path):
    folder = tmp_path / "s"
    folder.mkdir()
    (folder / "git.yaml").write_text(f"""\
format: 1
name: git
tools:
  - mcp: {{name: git, command: python, args: [-m, mocks.mcp.git_sandbox], cwd: {ROOT}}}
    only: [git_log]
turns:
  - user: What was the last commit?
trajectory:
  - call: git_log
    args: {{repo_path: ".", max_count: 1}}
  - answer: "{{$1}}"
agents: [function_calling]
""")
    first = record_scenario(folder / "git.yaml", "function_calling", {}, "rewrite")
    before = [path.read_bytes() for path in [*first.cassettes, first.snapshot]]
    again = record_scenario(folder / "git.yaml", "function_calling", {}, "rewrite")
    assert again.ok and again.written
    assert [path.read_bytes() for path in [*again.cassettes, again.snapshot]] == before


# ------------------------------------------------------------------- record and replay
def test_calls_recorded_live_replay_without_the_server(tmp_path):
    cassette = tmp_path / "c.yaml"
    with MCPToolset(_misbehaving(), ["count", "echo"], cassette=cassette,
                    mode="rewrite") as (count, echo):
        live = [count.call().content, count.call().content, echo.call(text="hi").content]
    with MCPToolset(MCPServer(name="bad", command="no-such-server"), ["count", "echo"],
                    cassette=cassette) as (count, echo):
        replayed = [count.call().content, count.call().content, echo.call(text="hi").content]
    assert live == replayed == ["1", "2", "hi"]
    text = cassette.read_text()
    assert "jsonrpc" not in text and "\n  id:" not in text  # requests without JSON-RPC ids


def test_a_slow_calls_latency_is_recorded_and_replayed_on_the_virtual_clock(tmp_path):
    cassette = tmp_path / "c.yaml"
    with MCPToolset(_misbehaving(), ["slow"], cassette=cassette, mode="rewrite") as (slow,):
        slow.call(seconds=0.3)
    recorded = yaml.safe_load(cassette.read_text())["mcp_exchanges"][1]["latency"]
    assert recorded >= 0.3
    with MCPToolset(_misbehaving(), ["slow"], cassette=cassette) as (slow,):
        before = now()
        slow.call(seconds=0.3)
        assert now() - before == pytest.approx(recorded)


def test_a_refused_call_is_recorded_and_replayed_as_the_tools_error(tmp_path):
    cassette = tmp_path / "c.yaml"
    recording = MCPToolset(_misbehaving(), ["refuse"], cassette=cassette, mode="rewrite")
    with recording as (refuse,), pytest.raises(MCPCallError, match="refused: this call is not "
                                                                  "allowed") as live:
        refuse.call()
    with MCPToolset(_misbehaving(), ["refuse"], cassette=cassette) as (refuse,), \
            pytest.raises(MCPCallError) as replayed:
        refuse.call()
    assert str(replayed.value) == str(live.value)


def test_an_error_result_is_an_error_output_live(tmp_path):
    with MCPToolset(_misbehaving(), ["fail"]) as (fail,):
        output = fail.call()
    assert (output.content, output.is_error) == ("the tool failed", True)


def test_the_servers_env_values_never_reach_the_cassette(tmp_path):
    secret = "s3cret-value-0123456"
    cassette = tmp_path / "c.yaml"
    server = _misbehaving(env={"MY_SERVICE": secret})
    with MCPToolset(server, ["echo"], cassette=cassette, mode="rewrite") as (echo,):
        assert echo.call(text=f"token {secret}").content == f"token {secret}"
    assert secret not in cassette.read_text()
    with MCPToolset(server, ["echo"], cassette=cassette) as (echo,):  # and it still replays
        assert "<redacted" in echo.call(text=f"token {secret}").content


# ------------------------------------------------------------------------- bad servers
def test_a_server_that_exits_at_start_is_an_infrastructure_error_with_its_stderr():
    with pytest.raises(MCPServerError) as caught:
        MCPToolset(_misbehaving("--exit-at-start")).__enter__()
    message = str(caught.value)
    assert message.startswith("MCP server `bad` (python -m mocks.mcp.misbehaving --exit-at-start) "
                              "did not start")
    assert "misbehaving: refusing to start (--exit-at-start)" in message


def test_a_malformed_schema_is_an_error_naming_server_and_tool():
    with pytest.raises(MCPProtocolError, match=r"MCP server `bad` .* offers tool `echo` with a "
                                               r"malformed input schema"):
        MCPToolset(_misbehaving("--bad-schema")).__enter__()


def test_a_result_that_is_not_mcp_shaped_is_an_error_naming_server_and_tool_and_is_not_recorded(
        tmp_path):
    cassette = tmp_path / "c.yaml"
    toolset = MCPToolset(_misbehaving(), ["malformed"], cassette=cassette, mode="rewrite")
    with pytest.raises(MCPProtocolError) as caught, toolset as (malformed,):
        malformed.call()
    assert "MCP server `bad`" in str(caught.value) and "`malformed`" in str(caught.value)
    assert "not MCP-shaped" in str(caught.value)
    assert not cassette.exists()  # nothing half-written


def test_an_answer_that_is_not_json_rpc_is_named_as_such_not_a_timeout(tmp_path, capfd):
    cassette = tmp_path / "c.yaml"
    toolset = MCPToolset(_misbehaving(timeout=600), ["garbled"], cassette=cassette,
                         mode="rewrite")
    with pytest.raises(MCPProtocolError) as caught, toolset as (garbled,):
        garbled.call()  # (before: waited the 600 s timeout, then "did not answer")
    assert "MCP server `bad`" in str(caught.value)
    assert "sent a message that is not valid JSON-RPC" in str(caught.value)
    assert "Traceback" not in capfd.readouterr().err
    assert not cassette.exists()


def test_a_call_that_outlasts_the_timeout_stops_the_server(tmp_path):
    pidfile = tmp_path / "pid"
    toolset = MCPToolset(_misbehaving("--pidfile", str(pidfile), timeout=2), ["slow"])
    with pytest.raises(MCPServerError, match=r"calling `slow` did not answer within 2 s"), \
            toolset as (slow,):
        slow.call(seconds=60)
    assert _gone(_pid(pidfile))


SCENARIO = """\
format: 1
name: bad
tools:
  - mcp:
      name: bad
      command: python
      args: [-m, mocks.mcp.misbehaving, --pidfile, {pidfile}{options}]
      cwd: {root}
turns:
  - user: Go.
agents:
  function_calling:
    script:
      - tool_calls: [{{name: {tool}, args: {{}}}}]
      - Done.
"""


def _scenario(tmp_path: Path, tool: str, *options: str) -> Path:
    path = tmp_path / "bad.yaml"
    extra = "".join(f", {option}" for option in options)
    path.write_text(SCENARIO.format(pidfile=tmp_path / "pid", options=extra, root=ROOT, tool=tool))
    return path


def test_a_server_that_dies_mid_run_stops_it_as_an_infrastructure_error(tmp_path):
    path = _scenario(tmp_path, "crash")
    recording = record_scenario(path, "function_calling", {}, "rewrite")
    live = recording.live
    assert live is not None and live.verdict.kind == "infrastructure"
    error = live.trace.turns[0].error
    assert error.startswith("MCPServerError: MCP server `bad` (python -m mocks.mcp.misbehaving")
    assert "calling `crash`" in error
    assert "misbehaving: crashing in the middle of `crash`" in error
    assert not recording.written and not (tmp_path / "cassettes").exists()  # nothing written
    assert _gone(_pid(tmp_path / "pid"))


def test_a_recording_stopped_by_its_server_reports_that_alone(tmp_path):
    recording = record_scenario(_scenario(tmp_path, "crash"), "function_calling", {}, "rewrite")
    assert len(recording.problems) == 1, recording.problems
    assert recording.problems[0].startswith("the recorded run failed: the run stopped on an "
                                            "error in turn 1: MCPServerError: MCP server `bad`")


def test_agentkit_record_of_a_server_that_does_not_start_says_so_and_writes_nothing(
        tmp_path, monkeypatch):
    path = _scenario(tmp_path, "echo", "--exit-at-start")
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    code = main(["record", str(path), "--agent", "function_calling", "--mode", "rewrite"], out)
    lines = out.getvalue().splitlines()
    assert code == 1
    assert lines[1] == "ERROR  bad[function_calling]"
    assert lines[2].startswith(f"      {path}:5: tools.0.mcp: MCP server `bad` (python -m "
                               "mocks.mcp.misbehaving")
    assert "misbehaving: refusing to start (--exit-at-start)" in out.getvalue()
    assert lines[-1] == (f"      nothing written: {tmp_path}/cassettes/bad.function_calling.yaml"
                         f" and {tmp_path}/__snapshots__/bad/function_calling.json are as they "
                         "were")
    assert not (tmp_path / "cassettes").exists() and not (tmp_path / "__snapshots__").exists()


def test_a_servers_stderr_in_an_error_holds_none_of_its_secrets():
    secret = "s3cret-value-0123456"
    server = _misbehaving("--print-env", "MY_SERVICE", "--exit-at-start",
                          env={"MY_SERVICE": secret})
    with pytest.raises(MCPServerError) as caught:
        MCPToolset(server).__enter__()
    assert "MY_SERVICE=<redacted" in str(caught.value)
    assert secret not in str(caught.value)


def test_a_server_that_does_not_start_in_a_scenario_names_its_place(tmp_path):
    path = _scenario(tmp_path, "echo", "--exit-at-start")
    with pytest.raises(MCPServerError, match=rf"{path}:5: tools.0.mcp: MCP server `bad`"):
        record_scenario(path, "function_calling", {}, "rewrite")


def test_the_server_is_stopped_after_a_good_run(tmp_path):
    recording = record_scenario(_scenario(tmp_path, "count"), "function_calling", {}, "rewrite")
    assert recording.ok, recording.problems
    assert _gone(_pid(tmp_path / "pid"))


def test_the_server_is_stopped_when_the_run_is_interrupted(tmp_path):
    path = _scenario(tmp_path, "count")

    def interrupt(messages, tools):
        raise KeyboardInterrupt

    llm = ScriptedLLM([tool_call("count"), interrupt])
    with pytest.raises(KeyboardInterrupt):
        run_scenario(path, "function_calling", llm=llm, mcp=_live_recording(path))
    assert _gone(_pid(tmp_path / "pid"))


def test_the_server_is_stopped_when_the_agent_fails(tmp_path):
    path = _scenario(tmp_path, "count")

    def broken(messages, tools):
        raise RuntimeError("the model broke")

    result = run_scenario(path, "function_calling", llm=ScriptedLLM([tool_call("count"), broken]),
                          mcp=_live_recording(path))
    assert result.trace.turns[0].error == "RuntimeError: the model broke"
    assert _gone(_pid(tmp_path / "pid"))


def test_a_server_that_ignores_the_end_of_its_input_is_still_stopped(tmp_path):
    recording = record_scenario(_scenario(tmp_path, "count", "--hang-on-close"),
                                "function_calling", {}, "rewrite")
    assert recording.ok, recording.problems
    assert _gone(_pid(tmp_path / "pid"))


def _live_recording(path: Path):
    from agentkit.llms.cassette import Cassette
    from agentkit.tools.mcp import MCPRecording

    return MCPRecording(Cassette(path=path.parent / "c.yaml"), "rewrite")


def test_a_session_lifetime_server_serves_several_runs_until_the_session_ends(tmp_path):
    path = _scenario(tmp_path, "count")
    path.write_text(path.read_text().replace("      cwd: ", "      lifetime: session\n      cwd: "))
    try:
        outputs = []
        for _ in range(2):
            result = run_scenario(path, "function_calling", mcp=_live_recording(path))
            outputs.append(result.trace.turns[0].steps[0].tool_calls[0].output)
        pid = _pid(tmp_path / "pid")
        assert outputs == ["1", "2"]  # one process counted both runs' calls
        assert not _gone(pid)
    finally:
        close_session_servers()
    assert _gone(pid)


# ------------------------------------------------------------------ streamable HTTP
@pytest.fixture
def http_server() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen([sys.executable, "-m", "mocks.mcp.http_server", str(port)],
                               cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        for _ in range(600):  # until it accepts connections (it never takes this many tries)
            if process.poll() is not None:
                pytest.fail(f"the HTTP MCP server exited: {process.stderr.read().decode()}")
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(10)


@pytest.mark.agentkit_allow_loopback
def test_a_streamable_http_server_records_and_replays_and_its_headers_stay_off_disk(
        tmp_path, http_server):
    token = "Bearer abcdefghijklmnop123"
    cassette = tmp_path / "c.yaml"
    server = MCPServer(name="greeter", url=http_server, headers={"Authorization": token})
    with MCPToolset(server, ["greet", "whoami"], cassette=cassette,
                    mode="rewrite") as (greet, whoami):
        live = [greet.call(name="Ada").content, whoami.call().content]
    offline = MCPServer(name="greeter", url="http://127.0.0.1:9/mcp")  # nothing listens there
    with MCPToolset(offline, ["greet", "whoami"], cassette=cassette) as (greet, whoami):
        replayed = [greet.call(name="Ada").content, whoami.call().content]
    assert live == replayed == ["Hello, Ada!", "authorised"]
    assert "abcdefghijklmnop123" not in cassette.read_text()


# ------------------------------------------------------------------ pytest --record-mode
def test_pytest_record_mode_records_the_servers_and_the_default_run_replays_them(pytester):
    pytester.makeini("[pytest]\n")
    (pytester.path / "scenarios").mkdir()
    (pytester.path / "scenarios" / "echo.yaml").write_text(f"""\
format: 1
name: echo
tools:
  - mcp: {{name: bad, command: python, args: [-m, mocks.mcp.misbehaving], cwd: {ROOT}}}
    only: [echo]
turns:
  - user: Echo hi.
trajectory:
  - call: echo
    args: {{text: hi}}
  - answer: "It said {{$1}}."
agents: [function_calling]
""")
    recorded = pytester.runpytest_subprocess("--record-mode=rewrite", "-p", "no:cacheprovider")
    recorded.assert_outcomes(passed=1)
    cassette = pytester.path / "scenarios" / "cassettes" / "echo.function_calling.yaml"
    assert "tools/call" in cassette.read_text()
    (pytester.path / "scenarios" / "echo.yaml").write_text(
        (pytester.path / "scenarios" / "echo.yaml").read_text().replace(
            "command: python", "command: no-such-server"))  # replays need no server
    replayed = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    replayed.assert_outcomes(passed=1)


# ------------------------------------------------------------- the recording stdio proxy
def _proxied(cassette: Path, mode: str, *server: str) -> MCPServer:
    """The misbehaving server behind `agentkit mcp-proxy`, as an agent of another framework
    would start it (its own MCP client, here the SDK's, talks to the proxy)."""
    command = ["-m", "agentkit", "mcp-proxy", "--cassette", str(cassette), "--name", "bad",
               "--mode", mode]
    if server:
        command += ["--", *server]
    return MCPServer(name="proxied", command="python", args=tuple(command), cwd=str(ROOT))


def test_the_proxy_records_a_servers_exchanges_and_replays_them_without_it(tmp_path):
    cassette = tmp_path / "proxy.yaml"
    live = _proxied(cassette, "rewrite", sys.executable, "-m", "mocks.mcp.misbehaving")
    with MCPToolset(live, ["count", "echo"]) as (count, echo):
        recorded = [count.call().content, count.call().content, echo.call(text="hi").content]
    with MCPToolset(_proxied(cassette, "none"), ["count", "echo"]) as (count, echo):
        replayed = [count.call().content, count.call().content, echo.call(text="hi").content]
    assert recorded == replayed == ["1", "2", "hi"]


def test_the_proxys_cassette_replays_in_agentkit_itself(tmp_path):
    cassette = tmp_path / "proxy.yaml"
    live = _proxied(cassette, "rewrite", sys.executable, "-m", "mocks.mcp.misbehaving")
    with MCPToolset(live, ["echo"]) as (echo,):
        echo.call(text="hi")
    nowhere = MCPServer(name="bad", command="no-such-server")  # the name the proxy recorded
    with MCPToolset(nowhere, ["echo"], cassette=cassette) as (echo,):
        assert echo.call(text="hi").content == "hi"


def test_a_request_the_proxys_cassette_lacks_is_an_error_naming_the_nearest(tmp_path):
    cassette = tmp_path / "proxy.yaml"
    live = _proxied(cassette, "rewrite", sys.executable, "-m", "mocks.mcp.misbehaving")
    with MCPToolset(live, ["echo"]) as (echo,):
        echo.call(text="hi")
    with MCPToolset(_proxied(cassette, "none"), ["echo"]) as (echo,), \
            pytest.raises(MCPCallError) as caught:
        echo.call(text="bye")
    assert "no recorded exchange matches this request" in str(caught.value)
    assert "first difference (recorded -> now), at params.arguments.text" in str(caught.value)
