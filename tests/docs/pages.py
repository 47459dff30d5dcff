"""The documentation as data: its pages, their fenced blocks, the files a page shows, and a
user's project built from them, with commands run as a user runs them (outside this
repository, with the installed ``agentkit`` and ``python`` first on PATH)."""

from __future__ import annotations

import contextlib
import io
import os
import re
import shlex
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = ROOT / "docs"

_FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)


def pages() -> list[Path]:
    """README.md and every page under docs/, the scenario folder's pointer and the examples'
    READMEs too."""
    return [README, ROOT / "scenarios" / "README.md", *sorted(ROOT.glob("examples/*/README.md")),
            *sorted(DOCS.rglob("*.md"))]


def section(page: Path, title: str) -> str:
    """The text of the ``## title`` section of ``page`` (up to the next ``## ``)."""
    text = f"\n{page.read_text(encoding='utf-8')}"
    heading = f"\n## {title}\n"
    assert heading in text, f"{page.relative_to(ROOT)} has no `## {title}` section"
    return text.split(heading, 1)[1].split("\n## ", 1)[0]


def fenced(text: str, language: str | None = None) -> list[str]:
    """The fenced blocks of ``text`` (only those of ``language`` if given), in order."""
    return [body for lang, body in _FENCE.findall(text) if language in (None, lang)]


def shown_files(text: str) -> dict[str, str]:
    """The files ``text`` shows: each non-shell block whose first line is a comment naming a
    path (``# weather.py``), by that path."""
    found: dict[str, str] = {}
    for lang, body in _FENCE.findall(text):
        first = body.split("\n", 1)[0]
        named = re.fullmatch(r"# ([\w./-]+\.(?:py|toml|yaml))\b.*", first)
        if lang != "bash" and named:
            found[named.group(1)] = body
    return found


def commands(text: str) -> list[str]:
    """The command lines of the ```bash blocks of ``text`` (comment lines left out)."""
    return [line for block in fenced(text, "bash") for line in block.splitlines()
            if line.strip() and not line.lstrip().startswith("#")]


def write_files(folder: Path, files: dict[str, str]) -> None:
    for relative, body in files.items():
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body, encoding="utf-8")


def user_env() -> dict[str, str]:
    """The environment of a user's shell: this interpreter's bin first on PATH, nothing of
    this repository or of the pytest session running the test."""
    env = {name: value for name, value in os.environ.items()
           if not name.startswith(("PYTEST_", "PYTHONPATH", "COV_", "OTEL_"))}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    return env


def run(command: str, folder: Path) -> subprocess.CompletedProcess[str]:
    """Run one command line with bash in ``folder``, as the user would."""
    return subprocess.run(["bash", "-c", command], cwd=folder, env=user_env(),
                          capture_output=True, text=True, timeout=600)



_SHELL = re.compile(r"[|&;<>$`(){}*?\\\\'\"]")


class Shell:
    """Runs a page's command lines in ``pytester``'s folder as the page shows them.

    ``agentkit ...`` and ``python -m pytest ...`` lines without shell syntax run in this
    process, through the same entries the console scripts call (``agentkit.cli.main``,
    ``pytest.main`` by pytester, with sys.modules and sys.path restored after), which is what
    the line runs, without the cost of a new interpreter per line; any other line runs with
    bash, as :func:`run` runs it."""

    def __init__(self, pytester: pytest.Pytester) -> None:
        self.pytester = pytester
        self.folder = pytester.path

    def __call__(self, command: str) -> tuple[int, str]:
        """The exit code of ``command`` and what it printed (stdout, then stderr)."""
        words = None if _SHELL.search(command) else shlex.split(command, comments=True)
        if words and words[0] == "agentkit":
            return self._agentkit(words[1:])
        if words and words[:3] == ["python", "-m", "pytest"]:
            # the inner run reports its own warnings in its output; pytest's configure lets
            # them through to this test's record too (pytest-asyncio's about its ini option).
            # Under pytest-xdist the inner run is not a worker (syrupy reads the variables).
            with pytest.MonkeyPatch.context() as env, warnings.catch_warnings(record=True):
                for name in [n for n in os.environ if n.startswith("PYTEST_XDIST")]:
                    env.delenv(name)
                result = self.pytester.runpytest_inprocess(*words[3:])
            return int(result.ret), "\n".join([*result.outlines, *result.errlines])
        done = run(command, self.folder)
        return done.returncode, done.stdout + done.stderr

    def _agentkit(self, argv: list[str]) -> tuple[int, str]:
        from agentkit.cli import main

        out, err = io.StringIO(), io.StringIO()
        before = set(sys.modules)
        with contextlib.chdir(self.folder), contextlib.redirect_stderr(err):
            code = main(argv, out=out)
        for name in set(sys.modules) - before:  # the project's modules: another copy imports its own
            if (getattr(sys.modules[name], "__file__", None) or "").startswith(str(self.folder)):
                del sys.modules[name]
        return code, out.getvalue() + err.getvalue()
