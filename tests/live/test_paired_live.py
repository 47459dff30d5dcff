"""The live lane's paired comparisons (issue 35, docs/evaluation.md): two agent types, and one
agent type at two temperatures, recorded again against the local model with --until-decided
and replayed offline to the same verdicts (tests/cli/test_cli_paired_bundled.py replays the
bundled recordings)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.doc_commands import project

pytestmark = pytest.mark.live

MODEL = os.environ.get("AGENTKIT_LIVE_MODEL", "smollm2-135m-instruct")


def _agentkit(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "agentkit", *args], cwd=folder,
                          capture_output=True, text=True, timeout=3600)


def _verdict(output: str) -> str:
    return next(line for line in output.splitlines() if line.startswith("verdict: ")
                and ("better" in line or "worse" in line or "no difference" in line
                     or "differ" in line))


@pytest.mark.parametrize("agents,models,compare,cap", [
    ("react,function_calling", MODEL, ("react", "function_calling"), 24),
    ("function_calling", f"{MODEL}@temperature=0,{MODEL}@temperature=2",
     (f"{MODEL}@temperature=0", f"{MODEL}@temperature=2"), 4),
], ids=["two-agent-types", "two-temperatures"])
# the caps keep the live lane's time in CI's budget: the two types differ clearly and stop at 8
# samples (16 runs, ~8 minutes on 2 cores); the two temperatures, which SmolLM2 under a forced
# tool call barely tells apart, get one round of 4 (the bundled recording has 16)
def test_a_paired_comparison_records_live_and_replays_offline_to_its_verdict(
        tmp_path: Path, live_url: str, agents: str, models: str, compare: tuple[str, str],
        cap: int) -> None:
    folder = project(tmp_path / "project")
    paired = folder / "scenarios" / "live" / "cassettes" / "paired"
    shutil.rmtree(paired)
    command = ["eval", "scenarios/live/live_compare.yaml", "--agents", agents, "--models",
               models, "--samples", "4", "--compare", *compare, "--until-decided",
               "--max-samples", str(cap), "--concurrency", "1", "--cassettes",
               "scenarios/live/cassettes/paired", "--out", "reports/paired"]

    live = _agentkit(folder, *command, "--base-url", live_url)
    offline = _agentkit(folder, *command)

    assert live.returncode in (0, 1), live.stdout + live.stderr
    assert "flips by scenario (A pass -> B fail / A fail -> B pass): live_compare " in live.stdout
    assert offline.returncode == live.returncode
    assert _verdict(offline.stdout) == _verdict(live.stdout)
    assert "0 to record" in offline.stdout
    if "differs" in live.stdout:  # a clear difference stops before the cap
        row = next(line for line in live.stdout.splitlines()
                   if line.startswith("  live_compare["))
        assert int(row.split()[1]) < cap, row
