"""The live lane's run of examples/retail_desk/README.md: its ``# live`` block records the
example's live_order_status against the local model, with the shop's policy as the system
prompt, and replays it offline to the same trace, in a copy of the example (beside a copy of
scripts/, which the block starts the model with). The recording is written only when the run
met the scenario's expectations: find_order called, the shop unchanged, no rule broken.

Like the rest of the lane it skips without a model server, and fails instead with
AGENTKIT_LIVE_REQUIRED=1 (CI)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tests.doc_commands import ROOT, Block, blocks, run_block

pytestmark = pytest.mark.live

EXAMPLE = ROOT / "examples" / "retail_desk"


def test_the_readme_live_block_records_the_example_and_replays_it(tmp_path: Path,
                                                                   live_url: str):
    folder = tmp_path / "examples" / "retail_desk"
    shutil.copytree(EXAMPLE, folder, ignore=shutil.ignore_patterns("__pycache__", "reports"))
    shutil.copytree(ROOT / "scripts", tmp_path / "scripts")
    (block,) = [b for b in blocks(EXAMPLE / "README.md") if b.live]
    commands = block.commands
    if os.environ.get("AGENTKIT_LIVE_BASE_URL"):  # a server scripts/live-model did not start
        commands = [c.replace("$(../../scripts/live-model start)", live_url) for c in commands]
    snapshot = folder / "scenarios" / "__snapshots__" / "live_order_status"
    (snapshot / "desk_function_calling.json").unlink()

    result = run_block(Block(True, commands), folder)

    assert result.returncode == 0, "\n".join([*commands, result.stdout[-3000:],
                                              result.stderr[-3000:]])
    assert "replay reproduces the recorded trace" in result.stdout
    trace = json.loads((snapshot / "desk_function_calling.json").read_text(encoding="utf-8"))
    first_step = trace["turns"][0]["steps"][0]
    assert [call["name"] for call in first_step["tool_calls"]] == ["find_order"]
    assert "Change nothing without the customer's explicit yes" in \
        first_step["llm_calls"][0]["messages"][0]["content"]
    assert trace["turns"][-1]["world"]["changes"] == []
