"""What a command imports: `agentkit run` compares snapshots without syrupy, so a command
does not pay for importing syrupy and pytest (a quarter of a second per command)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

_PROBE = """
import sys
from agentkit.cli import main
code = main(["run", "scenarios/single_tool_call.yaml"])
print("exit", code)
print(sorted(name for name in ("pytest", "syrupy", "_pytest") if name in sys.modules))
"""


@pytest.mark.slow  # the command in a fresh interpreter
def test_agentkit_run_checks_snapshots_without_importing_syrupy_or_pytest():
    done = subprocess.run([sys.executable, "-c", _PROBE], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert lines[-2] == "exit 0", done.stdout
    assert lines[-1] == "[]", done.stdout
