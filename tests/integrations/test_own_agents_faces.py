"""A tool removed from the user's own agent fails the case in every face -- pytest, `agentkit
run`, `agentkit report` -- naming the tool, for each framework: the example project
(examples/frameworks) with `add` taken out of each framework's agent. Each command runs in a
subprocess, as a user runs it."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.frameworks

REPO = Path(__file__).resolve().parents[2]
AGENTS = ["my_llama_index", "my_pydantic_ai", "my_openai_agents", "my_langgraph"]
TIMEOUT = 900  # seconds: each command imports four frameworks, on a busy machine


def _said(agent: str) -> str:
    return (f"agent type `{agent}`: the agent (framework_agents:{agent}) has no tool `add`, "
            "which the scenario's tools give it (the agent's tools: `population`)")


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    """The example project, its agents without `add`."""
    root = tmp_path_factory.mktemp("own") / "frameworks"
    shutil.copytree(REPO / "examples" / "frameworks", root,
                    ignore=shutil.ignore_patterns("__pycache__", "reports"))
    source = root / "framework_agents.py"
    text = source.read_text()
    lost = re.sub(r"\[(tool|function_tool)?\(?population\)?, (tool|function_tool)?\(?add\)?\]",
                  lambda m: m.group(0).split(",")[0] + "]", text)
    assert lost.count("add") == text.count("add") - 4  # the four agents lost it
    source.write_text(lost)
    return root


def _run(project: Path, *command: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    env.pop("OPENAI_API_KEY", None)
    return subprocess.run(command, cwd=project, env=env, capture_output=True, text=True,
                          timeout=TIMEOUT)


AGENT_LIST = ",".join(AGENTS)


def test_agentkit_run_fails_naming_the_removed_tool(project):
    done = _run(project, "agentkit", "run", "scenarios/trajectory.yaml", "--agents", AGENT_LIST)

    assert done.returncode == 1, done.stdout + done.stderr
    for agent in AGENTS:
        assert f"ERROR  trajectory[{agent}]" in done.stdout
        assert _said(agent) in done.stdout, done.stdout
    assert "0 passed, 0 failed, 4 could not run" in done.stdout


def test_agentkit_report_says_so_for_each_agent(project):
    done = _run(project, "agentkit", "report", "scenarios/trajectory.yaml", "--agents",
                AGENT_LIST, "--out", "reports/lost")

    assert "4 could not run" in done.stdout, done.stdout + done.stderr
    report = (project / "reports" / "lost" / "report.md").read_text()
    for agent in AGENTS:
        assert _said(agent) in report


def test_pytest_fails_each_item_naming_the_removed_tool(project):
    done = _run(project, sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q",
                "-W", "ignore", "scenarios/trajectory.yaml", "-k", " or ".join(AGENTS))

    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    assert "4 failed" in done.stdout
    for agent in AGENTS:
        assert _said(agent) in done.stdout
