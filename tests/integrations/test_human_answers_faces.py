"""A framework agent wrong about asking a human fails the case in every face -- pytest,
`agentkit run`, `agentkit report` -- naming the cause: for LangGraph and LlamaIndex, the agent
that ignores the answer (its tool's output), asks twice (the request left unanswered) and never
asks (the answer never asked for); the right one passes. A user's project (in a temporary
folder) declares the agents of tests/integrations/human_agents.py; each command runs in a
subprocess, as a user runs it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.frameworks

REPO = Path(__file__).resolve().parents[2]
TIMEOUT = 900  # seconds: each command imports two frameworks, on a busy machine
FRAMEWORKS = ["lg", "li"]
WRONG = {"_ignores": "output contains 'declined by a human'",
         "_asks_twice": "no scripted `human:` answer left",
         "_never_asks": "scripted `human:` answer(s) of the turn were never asked for"}
"""Each wrong agent, and what its failure says."""

AGENTS = [f"{framework}_hitl{variant}" for framework in FRAMEWORKS
          for variant in ["", *WRONG]]


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("hitl") / "support"
    (root / "scenarios").mkdir(parents=True)
    types = "\n".join(f'{agent} = {{ ref = "tests.integrations.human_agents:{agent}" }}'
                      for agent in AGENTS)
    (root / "pyproject.toml").write_text(f"""\
[project]
name = "support"
version = "0.1.0"

[tool.agentkit]
scenarios = ["scenarios"]

[tool.agentkit.agent_types]
{types}
""")
    script = """\
    script:
      - tool_calls: [{name: refund, args: {order_id: "7", amount: 40.0}}]
      - The refund of order 7 was declined.
"""
    agents = "".join(f"  {agent}:\n{script}" for agent in AGENTS)
    (root / "scenarios" / "approval.yaml").write_text(f"""\
format: 1
name: approval
turns:
  - user: Please refund 40 EUR of order 7.
    human: [decline]
expect:
  tool_calls:
    calls: [{{name: refund, args: {{order_id: "7", amount: 40.0}},
              output: {{contains: declined by a human}}}}]
agents:
{agents}""")
    # the right agents' traces, snapshotted as a user does once their runs pass
    done = _run(root, "agentkit", "run", "scenarios/approval.yaml", "--agents",
                ",".join(f"{framework}_hitl" for framework in FRAMEWORKS), "--snapshot-update",
                ci=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return root


def _run(project: Path, *command: str, ci: bool = True) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    env.pop("OPENAI_API_KEY", None)
    if not ci:
        env.pop("CI", None)
    return subprocess.run(command, cwd=project, env=env, capture_output=True, text=True,
                          timeout=TIMEOUT)


def test_agentkit_run_fails_each_wrong_agent_naming_the_cause(project):
    done = _run(project, "agentkit", "run", "scenarios/approval.yaml")

    assert done.returncode == 1, done.stdout + done.stderr
    out = done.stdout
    for framework in FRAMEWORKS:
        assert f"PASS  approval[{framework}_hitl] " in out, out
        for variant, said in WRONG.items():
            assert f"approval[{framework}_hitl{variant}]" in out
            block = out.split(f"approval[{framework}_hitl{variant}]", 1)[1]
            assert said in block.split("approval[", 1)[0], (variant, out)
    assert "2 passed, 6 failed" in out, out


def test_agentkit_report_says_so_for_each_agent(project):
    done = _run(project, "agentkit", "report", "scenarios/approval.yaml", "--out", "reports/hitl")

    assert "2 passed, 6 failed" in done.stdout, done.stdout + done.stderr
    report = (project / "reports" / "hitl" / "report.md").read_text()
    for said in WRONG.values():
        assert said in report, report


def test_pytest_fails_each_wrong_agent_naming_the_cause(project):
    done = _run(project, sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q",
                "-W", "ignore", "scenarios/approval.yaml")

    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    assert "6 failed, 2 passed" in done.stdout, done.stdout[-3000:]
    failed = [line for line in done.stdout.splitlines() if line.startswith("FAILED")]
    for framework in FRAMEWORKS:
        for variant in WRONG:
            assert any(f"approval.yaml::{framework}_hitl{variant} " in line
                       for line in failed), failed
    for said in WRONG.values():
        assert said in done.stdout, done.stdout[-3000:]
