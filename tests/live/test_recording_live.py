"""The live lane's run of docs/recording.md: its ``# live`` block records a scenario against
the local model, replays it offline and reports, in a copy of the project's live scenarios.

Like the rest of the lane it skips without a model server, and fails instead with
AGENTKIT_LIVE_REQUIRED=1 (CI)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.doc_commands import ROOT, Block, blocks, project, run_block

pytestmark = pytest.mark.live

GUIDE = ROOT / "docs" / "recording.md"


def test_the_recording_guide_has_one_live_block():
    assert [len(b.commands) for b in blocks(GUIDE) if b.live] == [4]


def test_every_live_command_of_the_recording_guide_runs(tmp_path: Path, live_url: str):
    folder = project(tmp_path / "guide")
    (block,) = [b for b in blocks(GUIDE) if b.live]
    commands = block.commands
    if os.environ.get("AGENTKIT_LIVE_BASE_URL"):  # a server scripts/live-model did not start
        commands = [c.replace("$(scripts/live-model start)", live_url) for c in commands]

    result = run_block(Block(True, commands), folder)

    assert result.returncode == 0, "\n".join([*commands, result.stdout[-3000:],
                                              result.stderr[-3000:]])
    assert "replay reproduces the recorded trace" in result.stdout
    assert (folder / "reports" / "latest" / "report.md").is_file()
