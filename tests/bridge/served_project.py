"""examples/served as a user runs it: a copy of the project, ``agentkit serve`` in one process
and one of support_agents.py's agents -- each on its vendor's official SDK -- in another,
pointed at the served URL through the environment, as in production. Used by the live lane
(tests/live/test_served_live.py: recording against the live model) and the slow lane
(tests/bridge/test_served_agents.py: the bundled recordings replayed offline)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
PROJECT = ROOT / "examples" / "served"
SCENARIO = "scenarios/served_add.yaml"
QUESTION = "What is 2 + 3? Use the add tool."
AGENTS = {"sdk_agent": "openai", "claude_calculator": "anthropic"}
"""The agent types of the scenario and the SDK each one's agent speaks."""
WIRES = {"sdk_agent": "openai_responses", "claude_calculator": "anthropic_messages"}


def copy_project(tmp_path: Path) -> Path:
    """A copy of examples/served (its recordings included) to serve from."""
    folder = tmp_path / "served"
    shutil.copytree(PROJECT, folder, ignore=shutil.ignore_patterns("__pycache__"))
    return folder


def _env(**more: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("OPENAI_", "ANTHROPIC_", "AGENTKIT_MODEL"))}
    return {**env, "PYTHONPATH": str(ROOT), **more}


@dataclass
class Served:
    """One ``agentkit serve`` session: its exit code, output and the trace it wrote."""

    code: int
    out: str
    err: str
    answer: str
    agent_out: str
    trace: dict[str, Any] | None

    def ok(self) -> str:
        """Everything printed, for an assertion's message."""
        return f"serve:\n{self.out}{self.err}\nagent:\n{self.agent_out}"


def serve(project: Path, agent_type: str, *options: str, question: str = QUESTION,
          trace: str = "trace.json") -> Served:
    """Serve ``agent_type`` of the scenario (``options``: e.g. ``--mode rewrite --base-url
    ...``), run its agent once in its own process against the URL, stop the server with
    SIGINT and collect what both printed."""
    (project / trace).unlink(missing_ok=True)
    server = subprocess.Popen(
        [sys.executable, "-m", "agentkit", "serve", SCENARIO, "--agent", agent_type,
         "--trace-out", trace, *options], cwd=project, env=_env(),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        url = server.stdout.readline().strip()
        if not url.startswith("http://127.0.0.1:"):
            out, err = server.communicate(timeout=60)
            return Served(server.returncode, url + out, err, "", "", None)
        sdk = AGENTS[agent_type]
        env = _env(OPENAI_BASE_URL=url, OPENAI_API_KEY="sk-not-a-key",
                   OPENAI_AGENTS_DISABLE_TRACING="1",
                   ANTHROPIC_BASE_URL=url.removesuffix("/v1"),
                   ANTHROPIC_API_KEY="sk-ant-not-a-key")
        agent = subprocess.run([sys.executable, "support_agents.py", sdk, question],
                               cwd=project, env=env, capture_output=True, text=True,
                               timeout=600)
        server.send_signal(signal.SIGINT)
        out, err = server.communicate(timeout=120)
    finally:
        if server.poll() is None:
            server.kill()
            server.communicate(timeout=60)
    path = project / trace
    return Served(server.returncode, out, err, agent.stdout.strip(),
                  agent.stdout + agent.stderr,
                  json.loads(path.read_text()) if path.exists() else None)
