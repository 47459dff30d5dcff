"""The MCP conformance lane (``pytest -m conformance tests/mcp_conformance``, run by .ci/run
after ``npm ci`` here): the npm suite's scenarios that each spec revision requires, run against
agentkit's MCP client (client.py) and against agentkit's replaying MCP server over streamable
HTTP (``agentkit mcp-proxy --http``, serving a recording of mocks/mcp/conformance_server.py).
Every scenario passes or is an expected failure (expected-failures.<revision>.yaml, each entry
with its reason); agentkit made wrong on purpose fails the lane naming the scenario."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import yaml

from tests.mcp_conformance import suite

pytestmark = [pytest.mark.conformance, pytest.mark.agentkit_allow_loopback]

CASSETTES = suite.ROOT / "mocks" / "mcp"


def cassette(revision: str) -> Path:
    return CASSETTES / f"conformance_server.{revision}.yaml"


@contextmanager
def replaying_server(recording: Path) -> Iterator[str]:
    """``agentkit mcp-proxy --http 0`` serving ``recording``; its URL (the first line it
    prints), stopped on leaving."""
    process = subprocess.Popen(
        [sys.executable, "-m", "agentkit", "mcp-proxy", "--cassette", str(recording),
         "--name", "conformance", "--http", "0"],
        cwd=suite.ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:"), process.communicate(timeout=30)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)


def failure_report(outcome: suite.Outcome) -> str:
    return (f"exit {outcome.code}; failing scenarios: {outcome.failed}\n"
            + "\n".join(outcome.unexpected()))


@pytest.mark.parametrize("revision", suite.REVISIONS)
def test_agentkits_mcp_client_passes_the_client_scenarios_of(revision, tmp_path):
    outcome = suite.run("client", revision, ["--command", " ".join(suite.CLIENT)], tmp_path)

    assert outcome.scenarios, outcome.output[-3000:]
    assert outcome.code == 0, failure_report(outcome)
    assert "tools_call" in outcome.scenarios and "tools_call" not in outcome.failed


@pytest.mark.parametrize("revision", suite.REVISIONS)
def test_the_replaying_http_server_passes_the_server_scenarios_of(revision, tmp_path):
    with replaying_server(cassette(revision)) as url:
        outcome = suite.run("server", revision, ["--url", url], tmp_path)

    assert outcome.scenarios, outcome.output[-3000:]
    assert outcome.code == 0, failure_report(outcome)
    assert not {"tools-list", "tools-call-simple-text", "tools-call-image",
                "dns-rebinding-protection"} & set(outcome.failed)


def test_a_replaying_server_that_lost_a_tools_answer_fails_the_lane_naming_its_scenario(
        tmp_path):
    recording = yaml.safe_load(cassette("2025-11-25").read_text(encoding="utf-8"))
    recording["mcp_exchanges"] = [
        exchange for exchange in recording["mcp_exchanges"]
        if (exchange["request"].get("params") or {}).get("name") != "test_image_content"]
    broken = tmp_path / "broken.yaml"
    broken.write_text(yaml.safe_dump(recording), encoding="utf-8")
    results = tmp_path / "results"
    results.mkdir()

    with replaying_server(broken) as url:
        outcome = suite.run("server", "2025-11-25", ["--url", url], results)

    assert outcome.code != 0
    assert set(outcome.failed) - expected_failures("2025-11-25", "server") == {"tools-call-image"}
    assert [line.strip() for line in outcome.unexpected()[1:]] == ["✗ tools-call-image"], (
        outcome.output)


def test_a_client_that_drops_a_calls_arguments_fails_the_lane_naming_its_scenario(tmp_path):
    # agentkit's client made wrong: every tools/call goes out without its arguments
    wrong = tmp_path / "client_wrong.py"
    client = str(suite.HERE / "client.py")
    wrong.write_text(
        "import runpy, sys\n"
        "from agentkit.tools.mcp import MCPSession\n"
        "calling = MCPSession.call_tool\n"
        "async def forgetful(self, name, arguments):\n"
        "    return await calling(self, name, {})\n"
        "MCPSession.call_tool = forgetful\n"
        f"sys.argv[0] = {client!r}\n"
        f"runpy.run_path({client!r}, run_name='__main__')\n",
        encoding="utf-8")
    results = tmp_path / "results"
    results.mkdir()

    outcome = suite.run("client", "2025-11-25", ["--command", f"{sys.executable} {wrong}"],
                        results)

    assert outcome.code != 0
    assert "tools_call" in outcome.failed
    assert [line.strip() for line in outcome.unexpected()[1:]] == ["✗ tools_call"], outcome.output


def expected_failures(revision: str, leg: str) -> set[str]:
    return set(yaml.safe_load(suite.expected_failures(revision).read_text())[leg])


@pytest.mark.parametrize("revision", suite.REVISIONS)
def test_every_expected_failure_says_why(revision):
    text = suite.expected_failures(revision).read_text(encoding="utf-8")
    entries = yaml.safe_load(text)

    assert set(entries) == {"client", "server"}
    lines = text.splitlines()
    for number, line in enumerate(lines):
        if line.startswith("  - ") and not lines[number - 1].startswith("  - "):
            assert lines[number - 1].lstrip().startswith("#"), (
                f"{suite.expected_failures(revision).name}:{number + 1}: an entry with no "
                "comment above it saying why agentkit fails it")


def test_the_commands_of_docs_mcp_md_run_the_lane_by_hand(tmp_path):
    doc = (suite.ROOT / "docs" / "mcp.md").read_text(encoding="utf-8")
    (block,) = [b for b in re.findall(r"```bash\n(.*?)```", doc, flags=re.DOTALL)
                if "# the conformance lane's commands" in b]
    install, serve, server, client = [line for line in block.splitlines()
                                      if line and not line.startswith("#")]
    # npm ci is what .ci/run runs before the lane (installed already); a free port for 8765
    assert install == "npm ci"
    assert "cd tests/mcp_conformance && npm ci" in (suite.ROOT / ".ci" / "run").read_text()
    port = _free_port()
    script = (f"{serve.replace('8765', str(port))}\n"
              f"trap 'kill %1' EXIT\n"
              f"until curl -s -o /dev/null http://127.0.0.1:{port}/mcp; do sleep 0.2; done\n"
              f"{server.replace('8765', str(port))} -o {tmp_path}/server\n"
              f"{client} -o {tmp_path}/client\n")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "NO_COLOR": "1"}

    done = subprocess.run(["bash", "-euc", script], cwd=suite.HERE, env=env, text=True,
                          capture_output=True, timeout=600, check=False)

    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "✓ tools-call-simple-text: " in done.stdout
    assert "OVERALL: PASSED" in done.stdout + done.stderr


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
