"""The live lane's BFCL evaluation (docs/suites.md, "A live evaluation, recorded"): the first
case of each single-turn category -- five of the 50 committed under tests/suites/bfcl_live/,
no bfcl-eval needed -- evaluated with ``agentkit eval`` against the local model, every sample
recorded, then replayed offline to the same scores and the same report. The whole 50-case
recording replays in the slow lane (tests/suites/test_bfcl_live_recording.py).

Like the rest of the lane it skips without a model server, and fails instead with
AGENTKIT_LIVE_REQUIRED=1 (CI)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from agentkit.suites import bfcl
from tests.suites._scoring import bfcl_scores
from tests.suites.test_bfcl_live_recording import SCENARIOS, eval_command

pytestmark = pytest.mark.live

MODEL = os.environ.get("AGENTKIT_LIVE_MODEL", "smollm2-135m-instruct")


def _agentkit(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "agentkit", *args], cwd=folder,
                          capture_output=True, text=True, timeout=1800)


def test_the_first_case_of_every_category_is_recorded_live_and_replays_to_its_scores(
        tmp_path: Path, live_url: str):
    scenarios = tmp_path / "bfcl"
    for category, stem in bfcl.CATEGORIES.items():
        (scenarios / category).mkdir(parents=True)
        shutil.copy(SCENARIOS / category / f"{stem}_0.yaml", scenarios / category)
    cassettes = tmp_path / "cassettes"

    live = _agentkit(tmp_path, *eval_command(scenarios, cassettes, tmp_path / "live", MODEL),
                     "--base-url", live_url)
    assert live.returncode in (0, 1), live.stdout + live.stderr  # 3 would be samples missing
    assert "evaluating 5 cases × 1 samples: 0 recorded, 5 to record" in live.stdout
    calls = re.search(r"live: ([\d,]+) calls", live.stdout)
    assert calls is not None and "retries" not in live.stdout, live.stdout
    kept = [yaml.safe_load(path.read_text("utf-8"))
            for path in sorted(cassettes.glob("*.yaml"))]
    assert [cassette["complete"] for cassette in kept] == [[0]] * 5  # every sample recorded
    assert sum(len(cassette["exchanges"]) for cassette in kept) == int(calls.group(1))

    offline = _agentkit(tmp_path, *eval_command(scenarios, cassettes, tmp_path / "replay",
                                                MODEL))
    assert offline.returncode == live.returncode, offline.stdout + offline.stderr
    assert "5 recorded, 0 to record" in offline.stdout
    recorded = json.loads((tmp_path / "live" / "report.json").read_text("utf-8"))
    replayed = json.loads((tmp_path / "replay" / "report.json").read_text("utf-8"))
    assert sorted(bfcl_scores(recorded)["accuracy"]) == sorted(bfcl.CATEGORIES)
    assert bfcl_scores(replayed) == bfcl_scores(recorded)
    assert replayed == recorded
