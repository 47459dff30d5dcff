"""``--help`` of the command and of every subcommand says what it does and how to call it."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from cli_helpers import Outcome

COMMANDS = ["list", "run", "record", "replay", "diff", "report", "eval", "serve", "mcp-proxy"]


@pytest.mark.slow  # the installed command in a fresh interpreter
def test_installed_agentkit_help_lists_every_command() -> None:
    executable = Path(sys.executable).with_name("agentkit")

    done = subprocess.run([str(executable), "--help"], capture_output=True, text=True,
                          timeout=60, check=False)

    assert done.returncode == 0
    assert "Deterministic, offline tests for LLM agents" in done.stdout
    for command in COMMANDS:  # a long name has its help on the next line
        assert re.search(rf"^    {command}( |\n)", done.stdout, re.MULTILINE), command
    assert ("Exit codes: 0 ok, 1 failure/difference/regression, 2 bad usage or input, 3 an "
            "evaluation is incomplete.") in " ".join(done.stdout.split())


@pytest.mark.parametrize("command, expected", [
    ("list", ["List scenario files with their agent types.", "paths",
              "`scenarios` under [tool.agentkit] in pyproject.toml, else scenarios/"]),
    ("run", ["check expectations", "--agents", "comma-separated", "--trace-dir",
             "<dir>/<scenario>.<agent>.json", "--verbose"]),
    ("record", ["live model", "progress line per LLM and tool call",
                "__snapshots__/<scenario>/<agent type>.json beside the scenario",
                "$OPENAI_API_KEY", "--agent", "--model", "--base-url",
                "OpenAI-compatible server", "--mode", "{once,new_episodes,all,rewrite}",
                "--timeout"]),
    ("replay", ["from its cassette", "the trace equals the one `record` saved",
                "cassette miss", "--agent"]),
    ("diff", ["inserted/dropped/changed steps", "old", "new", "trace JSON"]),
    ("report", ["report.md", "report.json", "report.html", "--out", "--baseline", "--merge",
                "--shard", "--junit-xml"]),
    ("eval", ["every agent type", "--agents", "--models", "--samples", "--base-url",
              "--max-calls", "--max-tokens", "--concurrency", "--shard", "--junit-xml",
              "Exit codes", "3"]),
    ("serve", ["/v1/chat/completions", "127.0.0.1", "first line", "SIGTERM",
               "exit 1 when they fail", "--agent", "--port", "--trace-out"]),
    ("mcp-proxy", ["MCP server", "tools/list and tools/call", "--cassette", "--name",
                   "--mode", "{none,once,new_episodes,all,rewrite}", "--env", "nearest recorded",
                   "exit 1"]),
])
def test_command_help_describes_it_and_its_arguments(cli: Callable[..., Outcome], command: str,
                                                     expected: list[str]) -> None:
    result = cli(command, "--help")

    assert result.code == 0
    assert result.out.startswith(f"usage: agentkit {command}")
    text = " ".join(result.out.split())  # argparse wraps lines anywhere
    for phrase in expected:
        assert phrase in text


def test_record_help_names_the_snapshot_it_writes_not_the_old_trace_file(
        cli: Callable[..., Outcome]) -> None:
    # before agentkit 0.2 a recording's trace was <cassette>.trace.json; record no longer writes it
    result = cli("record", "--help")

    assert "trace.json" not in result.out


def test_unknown_command_is_a_usage_error(cli: Callable[..., Outcome]) -> None:
    result = cli("rnu")

    assert result.code == 2
    assert "invalid choice: 'rnu'" in result.err


def test_version_prints_the_installed_version(cli: Callable[..., Outcome]) -> None:
    from agentkit import __version__

    result = cli("--version")

    assert (result.code, result.out) == (0, f"agentkit {__version__}\n")
