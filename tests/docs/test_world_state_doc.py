"""docs/world-state.md: every shell command of the guide runs, in order, in a copy of the
world-state example (and the files the guide shows), with the exit status the guide gives
it (``# exits N``; 0 otherwise); every output it shows (a ```text block) is in what the
command before it printed (or in the report it wrote)."""

from __future__ import annotations

import re
import shutil

from tests.docs.pages import DOCS, ROOT, Shell, shown_files, write_files

DOC = (DOCS / "world-state.md").read_text(encoding="utf-8")
_EXITS = re.compile(r"\s+# exits (\d+)\b.*$")


def _guide() -> list[tuple[str, str]]:
    return re.findall(r"```(bash|text)\n(.*?)```", DOC, flags=re.DOTALL)


def test_every_command_of_the_guide_runs_as_it_says(shell: Shell) -> None:
    shutil.copytree(ROOT / "examples" / "world_state", shell.folder / "examples" / "world_state",
                    ignore=shutil.ignore_patterns("__pycache__"))
    write_files(shell.folder, shown_files(DOC))
    output, ran = "", 0
    for kind, text in _guide():
        if kind == "text":
            missing = [line.strip() for line in text.splitlines()
                       if line.strip() and line.strip() not in output]
            assert missing == [], f"not in the output of the command before:\n{output[-3000:]}"
            continue
        for line in filter(str.strip, text.splitlines()):
            found = _EXITS.search(line)
            command = _EXITS.sub("", line)
            code, output = shell(command)
            out = re.search(r"--out (\S+)", command)
            if out is not None:
                output += (shell.folder / out.group(1) / "report.html").read_text(encoding="utf-8")
            assert code == (int(found.group(1)) if found else 0), f"{command}\n{output[-3000:]}"
            ran += 1
    assert ran == 5


def test_the_guide_shows_the_example_as_it_is() -> None:
    scenario = (ROOT / "examples/world_state/scenarios/book_after_confirming.yaml").read_text(
        encoding="utf-8")
    shown = re.search(r"```yaml\n(.*?)```", DOC, flags=re.DOTALL)

    assert shown is not None
    for line in shown.group(1).splitlines():
        assert line.split("#")[0].rstrip() in scenario, line
