"""`agentkit mcp-proxy` given wrong things: a cassette that is not there or not readable, a
line that is not JSON, a server command that does not exist (offline, no server runs), and --
in the `mcp` lane -- a server that exits at start, crashes mid-call or sends a result or a
schema that is not MCP-shaped: each said on stderr, exit 1 or 2, and no cassette written."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUNDLED = ROOT / "scenarios" / "cassettes" / "mcp_time_git.function_calling.yaml"

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "test", "version": "1"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}


def _call(tool: str, arguments: dict | None = None, ident: int = 3) -> dict:
    return {"jsonrpc": "2.0", "id": ident, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments or {}}}


def _proxy(*args: str, lines: list[dict | str]) -> subprocess.CompletedProcess[str]:
    """The proxy as an agent starts it, fed ``lines`` (messages, or raw text) on stdin."""
    text = "".join((line if isinstance(line, str) else json.dumps(line)) + "\n"
                   for line in lines)
    # the timeout only turns a hung proxy into a failure instead of a hung suite
    return subprocess.run([sys.executable, "-m", "agentkit", "mcp-proxy", *args], cwd=ROOT,
                          input=text, capture_output=True, text=True, timeout=300, check=False)


def _replies(done: subprocess.CompletedProcess[str]) -> list[dict]:
    return [json.loads(line) for line in done.stdout.splitlines()]


def _recording(cassette: Path, *options: str) -> list[str]:
    return ["--cassette", str(cassette), "--name", "bad", "--mode", "rewrite", "--",
            sys.executable, "-m", "mocks.mcp.misbehaving", *options]


# ------------------------------------------------------------------ offline: no server runs
@pytest.mark.slow  # the command in a fresh interpreter
def test_a_cassette_that_is_not_there_is_an_error_before_anything_is_read(tmp_path):
    done = _proxy("--cassette", str(tmp_path / "none.yaml"), "--name", "time",
                  lines=[INITIALIZE, LIST])
    assert done.returncode == 2
    assert done.stdout == ""
    assert f"mcp-proxy: {tmp_path / 'none.yaml'}: no such cassette; record it first" in done.stderr


@pytest.mark.slow  # the command in a fresh interpreter
def test_a_cassette_that_is_not_readable_is_an_error_at_its_line(tmp_path):
    cassette = tmp_path / "bad.yaml"
    cassette.write_text("format: 9\n")
    done = _proxy("--cassette", str(cassette), "--name", "time", lines=[INITIALIZE, LIST])
    assert done.returncode == 2
    assert f"mcp-proxy: {cassette}:1: format: unsupported cassette format 9" in done.stderr


@pytest.mark.slow  # the command in a fresh interpreter
def test_a_line_that_is_not_json_gets_a_parse_error_and_the_proxy_exits_1():
    done = _proxy("--cassette", str(BUNDLED), "--name", "time",
                  lines=[INITIALIZE, "this is not json", LIST])
    replies = _replies(done)
    assert replies[1] == {"jsonrpc": "2.0", "id": None,
                          "error": {"code": -32700, "message": "agentkit: not JSON: this is not "
                                                               "json"}}
    assert [tool["name"] for tool in replies[2]["result"]["tools"]][:1] == ["get_current_time"]
    assert "a line that is not JSON-RPC: this is not json" in done.stderr
    assert done.returncode == 1


@pytest.mark.slow  # the command in a fresh interpreter
def test_a_server_command_that_does_not_exist_is_an_error_naming_it(tmp_path):
    done = _proxy("--cassette", str(tmp_path / "c.yaml"), "--name", "x", "--mode", "rewrite",
                  "--", "no-such-mcp-server-anywhere", lines=[INITIALIZE])
    assert done.returncode == 2
    assert "MCP server `x`: cannot start `no-such-mcp-server-anywhere`: command " \
           "`no-such-mcp-server-anywhere` not found" in done.stderr
    assert not (tmp_path / "c.yaml").exists()


# ------------------------------------------------------------------ the mcp lane: live servers
@pytest.mark.mcp
def test_a_server_that_exits_at_start_ends_the_proxy_naming_its_exit_code(tmp_path):
    cassette = tmp_path / "c.yaml"
    done = _proxy(*_recording(cassette, "--exit-at-start"), lines=[INITIALIZE, LIST])
    assert done.returncode == 1
    assert "misbehaving: refusing to start (--exit-at-start)" in done.stderr  # its own stderr
    assert "MCP server `bad` (" in done.stderr
    assert "exited with code 3 before the agent was done; nothing recorded" in done.stderr
    assert not cassette.exists()


@pytest.mark.mcp
def test_a_server_that_crashes_mid_call_ends_the_proxy_and_nothing_is_recorded(tmp_path):
    cassette = tmp_path / "c.yaml"
    done = _proxy(*_recording(cassette), lines=[INITIALIZE, INITIALIZED, LIST, _call("crash"),
                                                _call("echo", {"text": "after"}, ident=4)])
    assert done.returncode == 1
    assert [reply["id"] for reply in _replies(done)] == [1, 2]  # the crash was never answered
    assert "exited with code 7 before the agent was done; nothing recorded" in done.stderr
    assert not cassette.exists()


@pytest.mark.mcp
def test_a_result_that_is_not_mcp_shaped_is_relayed_but_not_recorded(tmp_path):
    cassette = tmp_path / "c.yaml"
    done = _proxy(*_recording(cassette), lines=[INITIALIZE, INITIALIZED, LIST,
                                                _call("malformed")])
    assert done.returncode == 1
    assert _replies(done)[2]["result"] == {"content": "not a list"}  # what the server sent
    assert "answered `malformed` with a result that is not MCP-shaped (`content` is not a list " \
           "of content blocks)" in done.stderr
    assert not cassette.exists()


@pytest.mark.mcp
def test_a_malformed_schema_is_named_and_not_recorded(tmp_path):
    cassette = tmp_path / "c.yaml"
    done = _proxy(*_recording(cassette, "--bad-schema"), lines=[INITIALIZE, INITIALIZED, LIST])
    assert done.returncode == 1
    assert "offers tool `echo` with a malformed input schema" in done.stderr
    assert not cassette.exists()


@pytest.mark.slow  # the command in a fresh interpreter
def test_a_message_of_a_megabyte_is_relayed_and_recorded(tmp_path):
    cassette = tmp_path / "c.yaml"
    text = "x" * (1 << 20)

    done = _proxy(*_recording(cassette), lines=[INITIALIZE, INITIALIZED, LIST,
                                                _call("echo", {"text": text})])

    assert done.returncode == 0, done.stderr[-2000:]
    assert _replies(done)[2]["result"]["content"][0]["text"] == text
    assert text in cassette.read_text()
