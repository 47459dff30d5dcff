"""docs/evaluation.md: every command it shows runs -- the offline ones here, on the bundled
live recordings, and the ``# live`` ones in the live lane (tests/live)."""

from __future__ import annotations

import json

import pytest

from tests.doc_commands import ROOT, blocks, project
from tests.docs.pages import Shell

GUIDE = ROOT / "docs" / "evaluation.md"


def test_the_guide_has_offline_and_live_commands():
    found = blocks(GUIDE)

    assert sum(b.live for b in found) >= 2 and sum(not b.live for b in found) >= 4
    assert all(b.commands for b in found)


@pytest.mark.slow  # the guide's whole walkthrough: five evaluations of ten samples each
def test_every_offline_command_of_the_guide_runs_and_succeeds(shell: Shell):
    folder = project(shell.folder)

    for block in (b for b in blocks(GUIDE) if not b.live):
        for command in block.commands:
            code, output = shell(command)
            assert code == 0, f"{command}\n{output[-3000:]}"

    report = json.loads((folder / "reports" / "eval" / "report.json").read_text("utf-8"))
    sampled = [row for row in report["rows"] if row.get("samples")]
    assert sampled and all(row["samples"] == 10 for row in sampled)
    assert report["head_to_head"]["lines"]
    merged = (folder / "reports" / "eval-merged" / "report.json").read_bytes()
    assert merged == (folder / "reports" / "eval" / "report.json").read_bytes()


def test_the_readme_links_the_guide():
    assert "(docs/evaluation.md)" in (ROOT / "README.md").read_text(encoding="utf-8")
