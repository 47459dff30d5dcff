"""The live lane's server: ``live_url`` is the base URL of a live OpenAI-compatible model
(``scripts/live-model``, or AGENTKIT_LIVE_BASE_URL); without one the live tests skip, saying
so, or fail with AGENTKIT_LIVE_REQUIRED=1 (as in CI)."""

from __future__ import annotations

import os
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _reachable(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/models", timeout=5) as response:
            return response.status == 200
    except OSError:
        return False


@pytest.fixture(scope="module")
def live_url() -> str:
    url = os.environ.get("AGENTKIT_LIVE_BASE_URL")
    if not url:
        found = subprocess.run([sys.executable, str(ROOT / "scripts" / "live-model"), "url"],
                               capture_output=True, text=True)
        url = found.stdout.strip() if found.returncode == 0 else ""
    if url and _reachable(url):
        return url
    reason = ("no live model server is answering: start one with `scripts/live-model start` "
              "or set AGENTKIT_LIVE_BASE_URL to an OpenAI-compatible /v1 URL")
    if os.environ.get("AGENTKIT_LIVE_REQUIRED"):
        pytest.fail(f"AGENTKIT_LIVE_REQUIRED is set but {reason}")
    pytest.skip(reason)
