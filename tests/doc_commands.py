"""The shell commands of a guide in docs/, and a throwaway project to run them in.

A guide's ```bash blocks are its commands; a block whose first line is a ``# live`` comment
needs a live model server and is run by the live lane (``tests/live``), the others by the
offline suite. Commands run with bash in a copy of the project's live scenarios, mocks and
scripts, with this interpreter's ``bin`` first on PATH (``agentkit``, ``python``)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

__all__ = ["ROOT", "Block", "blocks", "project", "run_block"]

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Block:
    live: bool
    commands: list[str]


def blocks(guide: Path) -> list[Block]:
    """The ```bash blocks of ``guide``, in order."""
    found = []
    for text in re.findall(r"```bash\n(.*?)```", guide.read_text(encoding="utf-8"), re.DOTALL):
        lines = [line for line in text.splitlines() if line.strip()]
        live = bool(lines) and lines[0].startswith("# live")
        found.append(Block(live, [line for line in lines if not line.startswith("#")]))
    return found


def project(folder: Path) -> Path:
    """A copy of what the guides' commands need: scenarios/live (recordings included),
    mocks/, examples/, scripts/ and a pyproject.toml declaring only the project's own agent
    types (a bundled live scenario runs the example openai-SDK agent)."""
    for name in ("scenarios/live", "mocks", "examples", "scripts"):
        shutil.copytree(ROOT / name, folder / name,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    settings = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    types = settings.get("tool", {}).get("agentkit", {}).get("agent_types", {})
    lines = ['[project]', 'name = "guide"', 'version = "0"', "", "[tool.agentkit.agent_types]"]
    for name, fields in types.items():
        inline = ", ".join(f"{key} = {json.dumps(value)}" for key, value in fields.items())
        lines.append(f"{name} = {{ {inline} }}")
    (folder / "pyproject.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def run_block(block: Block, folder: Path, env: dict[str, str] | None = None,
              timeout: float = 900) -> subprocess.CompletedProcess[str]:
    """Run the block's commands in one bash, stopping at the first that fails."""
    environment = {**os.environ, **(env or {})}
    environment["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{environment['PATH']}"
    script = "set -euo pipefail\n" + "\n".join(block.commands) + "\n"
    return subprocess.run(["bash", "-c", script], cwd=folder, env=environment,
                          capture_output=True, text=True, timeout=timeout)
