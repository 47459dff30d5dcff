"""docs/faults.md: its commands run in a copy of the bundled example and print what it shows;
the scenario it shows is the example's."""

from __future__ import annotations

import re
import shutil

from tests.docs.pages import DOCS, ROOT, Shell

DOC = (DOCS / "faults.md").read_text(encoding="utf-8")
EXAMPLE = ROOT / "examples" / "faults"


def test_every_command_of_the_page_runs_and_prints_what_it_shows(shell: Shell) -> None:
    shutil.copytree(EXAMPLE, shell.folder / "examples" / "faults",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "examples" / "world_state", shell.folder / "examples" / "world_state",
                    ignore=shutil.ignore_patterns("__pycache__"))
    output, ran = "", 0
    for kind, text in re.findall(r"```(bash|text)\n(.*?)```", DOC, flags=re.DOTALL):
        if kind == "text":
            missing = [line for line in text.splitlines() if line and line not in output]
            assert missing == [], output
            continue
        if text.startswith("# live"):  # needs a model server: tests/live/test_faults_live.py
            continue
        for command in filter(str.strip, text.splitlines()):
            code, output = shell(command)
            assert code == 0, output
            ran += 1
    assert ran == 2
    report = (shell.folder / "reports" / "faults" / "faults.md").read_text(encoding="utf-8")
    assert "| react | 3 | 6 | 0 | 0 | 0 | 0 |" in report


def test_the_page_shows_the_example_as_it_is() -> None:
    scenario = (EXAMPLE / "scenarios" / "order_support.yaml").read_text(encoding="utf-8")
    shown = re.findall(r"```yaml\n(.*?)```", DOC, flags=re.DOTALL)[-1]

    for line in shown.splitlines():
        assert line in scenario, line
