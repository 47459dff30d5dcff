"""The live lane's fault matrix (issue 39): examples/faults/scenarios/live_order.yaml recorded
again against the local model -- the unfaulted run, then each variant continuing from it --
and replayed offline, every cell classified."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.doc_commands import blocks, project, run_block

pytestmark = pytest.mark.live

ROOT = Path(__file__).resolve().parents[2]
MODEL = os.environ.get("AGENTKIT_LIVE_MODEL", "smollm2-135m-instruct")


def _agentkit(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "agentkit", *args], cwd=folder,
                          capture_output=True, text=True, timeout=1800)


def test_a_live_matrix_records_each_variant_from_the_shared_prefix_and_replays(
        tmp_path: Path, live_url: str) -> None:
    folder = tmp_path / "faults"
    shutil.copytree(ROOT / "examples" / "faults", folder,
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc", "__snapshots__"))
    cassette = folder / "scenarios" / "cassettes" / "live_order.function_calling.yaml"
    cassette.unlink()
    scenario = "scenarios/live_order.yaml"

    prefix = _agentkit(folder, "record", scenario, "--agent", "function_calling",
                       "--base-url", live_url, "--model", MODEL, "--temperature", "0",
                       "--seed", "0")
    assert prefix.returncode == 0, prefix.stdout + prefix.stderr
    recorded = _agentkit(folder, "faults", scenario, "--base-url", live_url, "--model", MODEL,
                         "--out", "reports/live")
    offline = _agentkit(folder, "faults", scenario, "--out", "reports/offline")

    assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    assert ": 2 exchanges of the recorded run, shared;" in recorded.stdout
    exchanges = yaml.safe_load(cassette.read_text("utf-8"))["exchanges"]
    assert all(e["request"]["messages"][0].get("count") == 2 for e in exchanges[2:])
    assert offline.returncode == 0, offline.stdout + offline.stderr
    header = next(line for line in offline.stdout.splitlines() if "fault variants" in line)
    assert int(header.split(": ")[1].split()[0]) >= 10, offline.stdout
    assert "error" not in offline.stdout.split(header, 1)[1].splitlines()[0]


def test_the_live_commands_of_docs_faults_run(tmp_path: Path, live_url: str) -> None:
    (live,) = [block for block in blocks(ROOT / "docs" / "faults.md") if block.live]
    folder = project(tmp_path / "project")

    result = run_block(live, folder)

    assert result.returncode == 0, result.stdout + result.stderr
    assert ": 2 exchanges of the recorded run, shared;" in result.stdout
    assert (folder / "reports" / "faults-live" / "faults.md").is_file()
