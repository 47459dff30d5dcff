"""The live lane's evaluation (``pytest -m live``): a small ``agentkit eval`` against the local
model -- stopped by its budget, resumed without asking any call twice, then replayed offline to
the same report -- and the ``# live`` commands of docs/evaluation.md.

Like the rest of the lane these tests skip without a model server, and fail instead with
AGENTKIT_LIVE_REQUIRED=1 (CI)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.doc_commands import ROOT, Block, blocks, project, run_block

pytestmark = pytest.mark.live

MODEL = os.environ.get("AGENTKIT_LIVE_MODEL", "smollm2-135m-instruct")


def _agentkit(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "agentkit", *args], cwd=folder,
                          capture_output=True, text=True, timeout=1800)


def _calls(output: str) -> int:
    """The calls a run made that were answered (its attempts less those it made again)."""
    found = re.search(r"live: ([\d,]+) calls(?: \((\d+) of them retries\))?", output)
    if not found:
        return 0
    return int(found.group(1).replace(",", "")) - int(found.group(2) or 0)


def test_a_small_evaluation_stops_on_its_budget_resumes_without_repeating_a_call_and_replays(
        tmp_path: Path, live_url: str):
    folder = project(tmp_path / "project")
    eval_cassettes = folder / "scenarios" / "live" / "cassettes" / "eval"
    for old in eval_cassettes.glob("*.yaml"):
        old.unlink()
    command = ["eval", "scenarios/live/live_compare.yaml", "--agents", "react,function_calling",
               "--models", MODEL, "--samples", "2", "--concurrency", "1", "--out",
               "reports/eval"]

    first = _agentkit(folder, *command, "--base-url", live_url, "--max-calls", "4")
    assert first.returncode == 3, first.stdout + first.stderr
    assert "INCOMPLETE  the budget ran out" in first.stdout
    rest = _agentkit(folder, *command, "--base-url", live_url)
    assert rest.returncode in (0, 1), rest.stdout + rest.stderr
    kept = sum(len(yaml.safe_load(p.read_text("utf-8"))["exchanges"])
               for p in eval_cassettes.glob("*.yaml"))
    assert kept == _calls(first.stdout) + _calls(rest.stdout)  # no call asked twice

    report = json.loads((folder / "reports" / "eval" / "report.json").read_text("utf-8"))
    assert [row["samples"] for row in report["rows"]] == [2, 2]
    offline = _agentkit(folder, *command)
    assert offline.returncode == rest.returncode, offline.stdout + offline.stderr
    assert "0 to record" in offline.stdout
    assert json.loads((folder / "reports" / "eval" / "report.json").read_text("utf-8")) == report


def test_every_live_command_of_the_evaluation_guide_runs(tmp_path: Path, live_url: str):
    folder = project(tmp_path / "guide")
    for block in (b for b in blocks(ROOT / "docs" / "evaluation.md") if b.live):
        commands = block.commands
        if os.environ.get("AGENTKIT_LIVE_BASE_URL"):  # a server scripts/live-model did not start
            commands = [c.replace("$(scripts/live-model url)", live_url) for c in commands]
        result = run_block(Block(True, commands), folder)
        assert result.returncode == 0, "\n".join([*commands, result.stdout[-3000:],
                                                  result.stderr[-3000:]])
