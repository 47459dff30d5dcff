"""Runs the real ``mcp-server-git`` (from PyPI) on a fresh temporary Git repository, removed
when the server stops: ``python -m mocks.mcp.git_sandbox``. The repository is the same every
time (fixed author, dates and branch), so its commits have the same ids; the server runs in
it, confined to it (``--repository``), so tools take ``repo_path: "."``."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from types import FrameType

FILES = {
    "README.md": "# Sandbox\n\nA repository for the MCP examples.\n",
    "greeting.txt": "Hello, MCP!\n",
}
COMMITS = [("README.md", "Start the sandbox"), ("greeting.txt", "Add the greeting")]


def make_repository(folder: Path) -> None:
    """Two commits with fixed authors and dates on branch ``main``."""
    env = {**os.environ, "GIT_AUTHOR_NAME": "Sandbox", "GIT_AUTHOR_EMAIL": "sandbox@example.com",
           "GIT_COMMITTER_NAME": "Sandbox", "GIT_COMMITTER_EMAIL": "sandbox@example.com",
           "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}

    def git(*args: str, date: str = "2026-01-01T12:00:00+00:00") -> None:
        subprocess.run(["git", *args], cwd=folder, check=True, stdout=subprocess.DEVNULL,
                       env={**env, "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date})

    git("init", "-q", "-b", "main")
    for day, (name, message) in enumerate(COMMITS, start=1):
        (folder / name).write_text(FILES[name], encoding="utf-8")
        git("add", name)
        git("commit", "-q", "-m", message, date=f"2026-01-0{day}T12:00:00+00:00")


def main() -> int:
    scripts = Path(sys.executable).parent
    server = shutil.which("mcp-server-git", path=str(scripts)) or shutil.which("mcp-server-git")
    if server is None:
        print("git_sandbox: mcp-server-git is not installed (pip install "
              "'agentkit[mcp-servers]')", file=sys.stderr)
        return 127
    with tempfile.TemporaryDirectory(prefix="agentkit-git-sandbox-") as folder:
        make_repository(Path(folder))
        child = subprocess.Popen([server, "--repository", folder], cwd=folder)

        def stop(signum: int, frame: FrameType | None) -> None:
            child.terminate()

        signal.signal(signal.SIGTERM, stop)
        return child.wait()


if __name__ == "__main__":
    sys.exit(main())
