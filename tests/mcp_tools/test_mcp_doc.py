"""docs/mcp.md: every command in it runs, in a copy of the project -- the offline ones with
the servers' commands made unreachable (they must not be needed), the recording ones (the
`mcp` lane) against the real servers."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.docs.pages import Shell

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "mcp.md").read_text(encoding="utf-8")
LIVE = "# needs the servers"
CONFORMANCE = "# the conformance lane's commands"
"""The block tests/mcp_conformance runs (it needs Node.js and the npm suite)."""


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", DOC, flags=re.DOTALL)


def _commands(live: bool) -> list[str]:
    return [line for block in _blocks("bash") if (LIVE in block) == live
            and CONFORMANCE not in block
            for line in block.splitlines() if line.strip() and not line.startswith("#")]


def _project(tmp_path: Path, *, servers: bool) -> Path:
    """The bundled MCP scenario, its cassettes and snapshots in a project of their own; without
    ``servers`` its servers' commands name nothing that exists."""
    scenarios = tmp_path / "scenarios"
    (scenarios / "cassettes").mkdir(parents=True)
    text = (ROOT / "scenarios" / "mcp_time_git.yaml").read_text(encoding="utf-8")
    if not servers:
        text = text.replace("command: mcp-server-time", "command: no-such-mcp-server-time")
        text = text.replace("mocks.mcp.git_sandbox", "mocks.mcp.no_such_module")
    (scenarios / "mcp_time_git.yaml").write_text(text, encoding="utf-8")
    for cassette in (ROOT / "scenarios" / "cassettes").glob("mcp_time_git.*.yaml"):
        shutil.copy(cassette, scenarios / "cassettes")
    shutil.copytree(ROOT / "scenarios" / "__snapshots__" / "mcp_time_git",
                    scenarios / "__snapshots__" / "mcp_time_git")
    (tmp_path / "mocks").symlink_to(ROOT / "mocks")
    return tmp_path


def _run(command: str, cwd: Path, stdin: str | None = None) -> str:
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    done = subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True,
                          text=True, check=False, input=stdin)
    assert done.returncode == 0, f"{command}\n{done.stdout}\n{done.stderr}"
    return done.stdout


def test_the_readme_links_the_mcp_guide():
    assert "(docs/mcp.md)" in (ROOT / "README.md").read_text(encoding="utf-8")


@pytest.mark.slow  # the guide's commands, end to end
def test_the_offline_commands_of_the_guide_run_without_the_servers(shell: Shell):
    project = _project(shell.folder, servers=False)
    commands = _commands(live=False)
    assert len(commands) == 5
    outputs = []
    for command in commands:
        code, output = shell(command)
        assert code == 0, f"{command}\n{output}"
        outputs.append(output)
    replies = [json.loads(line) for line in outputs[4].splitlines()]  # the proxy, replaying
    assert replies[0]["result"]["serverInfo"]["name"] == "time"
    assert "T18:30:00+09:00" in replies[1]["result"]["content"][0]["text"]
    assert "8 passed, 0 failed" in outputs[0]
    assert outputs[1].count("replay reproduces the recorded trace") == 8
    assert "8 passed" in outputs[2]
    report = (project / "reports" / "mcp-guide" / "report.md").read_text(encoding="utf-8")
    # the MCP calls count as tool calls: two per run
    assert re.search(r"\| mcp_time_git \| llm_compiler +\| pass +\| +1 \| +2 \| +2 \|", report)
    assert "convert_time" in (project / "reports" / "mcp-guide" / "report.html").read_text()


def test_the_python_example_of_the_guide_replays(tmp_path, monkeypatch):
    project = _project(tmp_path, servers=False)
    (example,) = _blocks("python")
    monkeypatch.chdir(project)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(example, "docs/mcp.md", "exec"), {})
    assert '"datetime": "2026-' in out.getvalue() and "T18:30:00+09:00" in out.getvalue()


@pytest.mark.mcp
def test_the_recording_commands_of_the_guide_record_against_the_live_servers(tmp_path):
    project = _project(tmp_path, servers=True)
    commands = _commands(live=True)
    assert len(commands) == 4
    for command in commands[:2]:
        out = _run(command, project)
        assert "the offline replay reproduces the recorded trace" in out, out
    # the proxy, as an agent would drive it: the requests of the guide's offline example
    requests = re.findall(r"'(\{.*?\})'", _commands(live=False)[4])
    out = _run(commands[2], project, stdin="".join(f"{r}\n" for r in requests))
    assert "T18:30:00+09:00" in out
    assert "convert_time" in (project / "cassettes" / "my_agent.mcp.yaml").read_text()


@pytest.mark.mcp
def test_the_guides_recording_of_the_conformance_fixture_is_the_one_the_lane_serves(tmp_path):
    project = _project(tmp_path, servers=True)
    record = _commands(live=True)[3]

    _run(record, project)

    def exchanges(path: Path) -> list[dict]:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        return [{k: v for k, v in e.items() if k not in ("latency", "notifications")}
                for e in data["mcp_exchanges"]]

    def notes(path: Path) -> dict[str, list[str]]:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        return {e["request"]["params"]["name"]: [n["method"] for n in e["notifications"]]
                for e in data["mcp_exchanges"] if e.get("notifications")}

    recorded = project / "cassettes" / "conformance_server.2025-11-25.yaml"
    bundled = ROOT / "mocks" / "mcp" / "conformance_server.2025-11-25.yaml"
    assert exchanges(recorded) == exchanges(bundled)
    assert [e["request"]["method"] for e in exchanges(recorded)] == [
        "initialize", "logging/setLevel", "logging/setLevel", "tools/list", *["tools/call"] * 7,
        "resources/subscribe", "resources/unsubscribe", "tools/call", "resources/list",
        "resources/templates/list", *["resources/read"] * 4, "prompts/list",
        *["prompts/get"] * 4, "completion/complete"]
    # progress goes with the call that gave its token; a log message (stdio says not whose)
    # with the earliest call still waiting -- the one that logs, unless the machine is slow
    progress = ["notifications/progress"] * 3
    assert notes(recorded)["test_tool_with_progress"] == progress
    assert sum(len(n) for n in notes(recorded).values()) == 6
    assert notes(bundled) == {"test_tool_with_logging": ["notifications/message"] * 3,
                              "test_tool_with_progress": progress}
