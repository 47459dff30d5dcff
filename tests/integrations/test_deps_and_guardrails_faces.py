"""The agents of examples/frameworks/support_agents.py made wrong on purpose fail every face --
`agentkit run`, `agentkit report`, pytest -- naming the cause: the pydantic-ai agent's `refund`
writes the wrong status into its deps (the scenario's world), the Agents SDK's output guardrail
trips on the answer, and the model hands off to the wrong agent. Each command runs in a
subprocess, as a user runs it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.frameworks

REPO = Path(__file__).resolve().parents[2]
TIMEOUT = 900  # seconds: each command imports the frameworks, on a busy machine
SCENARIOS = ["scenarios/deps.yaml", "scenarios/guardrails.yaml", "scenarios/wrong_handoff.yaml"]
CAUSES = {
    "deps[my_support]": 'orders.7.status: expected equals "refunded", got "cancelled"',
    "guardrails[my_triage]": ("GuardrailTrippedError: output guardrail `no_promises` of agent "
                              "`Refunds` tripped"),
    "wrong_handoff[my_triage]": "Triage -> Billing",
}


def _broken(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new))


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    """The example project, its support agents wrong on purpose."""
    root = tmp_path_factory.mktemp("wrong") / "frameworks"
    shutil.copytree(REPO / "examples" / "frameworks", root,
                    ignore=shutil.ignore_patterns("__pycache__", "reports"))
    agents = root / "support_agents.py"
    _broken(agents, 'orders[order_id]["status"] = "refunded"',
            'orders[order_id]["status"] = "cancelled"')
    _broken(agents, '"guarantee" in output.lower()', '"on its way" in output.lower()')
    scenario = (root / "scenarios" / "guardrails.yaml").read_text()
    (root / "scenarios" / "wrong_handoff.yaml").write_text(
        scenario.replace("name: guardrails", "name: wrong_handoff")
        .replace("transfer_to_refunds", "transfer_to_billing")
        .replace("The refund of order 7 is on its way.", "Your invoice is attached.")
        .replace('  answer: {contains: "on its way"}\n', ""))
    return root


def _run(project: Path, *command: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    env.pop("OPENAI_API_KEY", None)
    return subprocess.run(command, cwd=project, env=env, capture_output=True, text=True,
                          timeout=TIMEOUT)


def test_agentkit_run_fails_each_naming_its_cause(project):
    done = _run(project, "agentkit", "run", *SCENARIOS, "--snapshots", "off")

    assert done.returncode == 1, done.stdout + done.stderr
    for case, cause in CAUSES.items():
        shown = done.stdout.split(f"FAIL  {case}", 1)[1].split("\nFAIL  ", 1)[0]
        assert cause in shown, done.stdout
    assert "Traceback" not in done.stdout
    assert "0 passed, 3 failed" in done.stdout


def test_agentkit_report_says_each_cause(project):
    done = _run(project, "agentkit", "report", *SCENARIOS, "--out", "reports/wrong",
                "--snapshots", "off")

    report = (project / "reports" / "wrong" / "report.md").read_text()
    for cause in CAUSES.values():
        assert cause in report, done.stdout + done.stderr


def test_pytest_fails_each_item_naming_its_cause(project):
    done = _run(project, sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q",
                "-W", "ignore", *SCENARIOS)

    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    assert "3 failed" in done.stdout
    for cause in CAUSES.values():
        assert cause in done.stdout
