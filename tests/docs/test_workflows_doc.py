"""docs/workflows.md: every shell command of the guide runs, in order, in a copy of the
project's scenarios, with the exit status the guide gives it (``# exits N``; 0 otherwise), and
every output it shows (a ```text block) is in what the command before it printed (or in the
report it wrote)."""

from __future__ import annotations

import re
import shutil

import pytest

from tests.docs.pages import DOCS, README, ROOT, Shell

DOC = (DOCS / "workflows.md").read_text(encoding="utf-8")
_EXITS = re.compile(r"\s+# exits (\d+)\b.*$")


def guide() -> list[tuple[str, str]]:
    """The guide's ```bash and ```text blocks, in order, as (kind, text)."""
    return re.findall(r"```(bash|text)\n(.*?)```", DOC, flags=re.DOTALL)


def test_the_guide_runs_commands_and_shows_their_output():
    kinds = [kind for kind, _ in guide()]

    assert kinds.count("bash") >= 4 and kinds.count("text") >= 4


@pytest.mark.slow  # the guide's commands, end to end
def test_every_command_of_the_guide_runs_as_it_says(shell: Shell):
    for name in ("scenarios", "mocks"):
        shutil.copytree(ROOT / name, shell.folder / name,
                        ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", shell.folder / "pyproject.toml")
    output, ran = "", 0
    for kind, text in guide():
        if kind == "text":
            shown = [line.strip() for line in text.splitlines() if line.strip()]
            missing = [line for line in shown if line not in output]
            assert missing == [], f"not in the output of the command before:\n{output[-3000:]}"
            continue
        for line in filter(str.strip, text.splitlines()):
            found = _EXITS.search(line)
            expected = int(found.group(1)) if found else 0
            command = _EXITS.sub("", line)
            code, output = shell(command)
            out = re.search(r"--out (\S+)", command)
            if out is not None:
                output += (shell.folder / out.group(1) / "report.md").read_text(encoding="utf-8")
            assert code == expected, f"{command}: exit {code}, not {expected}\n{output[-3000:]}"
            ran += 1
    assert ran >= 8


def test_the_readme_links_the_guide():
    assert "(docs/workflows.md)" in README.read_text(encoding="utf-8")
