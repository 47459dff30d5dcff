"""The live lane for agents in their own processes on their vendors' wires (issue 32 item 6):
examples/served's OpenAI Agents SDK agent, on the SDK's default Responses API, and its tool loop
on Anthropic's SDK (the Messages API), each run as in production and pointed at ``agentkit
serve``, are recorded against the real local model (``serve --mode rewrite``: the bridge asks
it over chat completions, the only API llama.cpp speaks) and then replayed offline by ``serve``
to the same agents, with no model anywhere, to the same trace.

The model is found as the rest of the lane finds it (the ``live_url`` fixture of
tests/live/conftest.py), sampled greedily with a fixed seed.
"""

from __future__ import annotations

import os
import shutil
import socket
from pathlib import Path

import pytest
import yaml

from tests.bridge import served_project as project
from tests.doc_commands import ROOT, Block, blocks, run_block
from tests.live import test_live_lane as lane

pytestmark = pytest.mark.live


@pytest.mark.parametrize("agent_type", list(project.AGENTS))
def test_an_sdk_agent_records_through_serve_and_replays_offline_to_the_same_trace(
        tmp_path, live_url, agent_type):
    pytest.importorskip("agents" if agent_type == "sdk_agent" else "anthropic")
    folder = project.copy_project(tmp_path)
    cassette = folder / "scenarios" / "cassettes" / f"served_add.{agent_type}.yaml"
    cassette.unlink()

    recorded = project.serve(folder, agent_type, "--mode", "rewrite", *lane._live(live_url),
                             trace="recorded.json")

    assert recorded.code == 0, recorded.ok()
    assert f"recorded 2 exchanges into scenarios/cassettes/served_add.{agent_type}.yaml" \
        in recorded.out, recorded.ok()
    data = yaml.safe_load(cassette.read_text())
    assert (data["format"], data["model"]) == (4, lane.MODEL)
    assert [e["wire"] for e in data["exchanges"]] == [project.WIRES[agent_type]] * 2
    first, second = (e["request"] for e in data["exchanges"])
    assert first["tool_choice"] == {"type": "function", "function": {"name": "add"}}
    assert [t["name"] for t in first["tools"]] == ["add"]  # the agent's own tool
    assert second["messages"][-1]["role"] == "tool"  # it ran the tool and sent the result
    assert recorded.trace is not None
    (turn,) = recorded.trace["turns"]
    assert [[c["name"] for c in s["tool_calls"]] for s in turn["steps"]] == [["add"], []]
    assert turn["steps"][0]["tool_calls"][0]["output"] == "5"
    assert all(c["latency"] > 0 for s in turn["steps"] for c in s["llm_calls"])

    replayed = project.serve(folder, agent_type, trace="replayed.json")

    assert replayed.code == 0, replayed.ok()
    assert "recorded" not in replayed.out  # a replay, offline
    assert replayed.answer == recorded.answer
    assert replayed.trace == recorded.trace


def test_the_bridge_guides_recording_commands_run_as_it_says(tmp_path: Path, live_url: str):
    pytest.importorskip("anthropic")
    guide = ROOT / "docs" / "bridge.md"
    (block,) = [b for b in blocks(guide) if b.live]
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    commands = [c.replace("8766", str(port)) for c in block.commands]
    if os.environ.get("AGENTKIT_LIVE_BASE_URL"):  # a server scripts/live-model did not start
        commands = [c.replace("$(scripts/live-model start)", live_url) for c in commands]
    folder = tmp_path / "guide"
    for name in ("examples/served", "scripts"):
        shutil.copytree(ROOT / name, folder / name)
    (folder / "examples" / "served" / "scenarios" / "cassettes"
     / "served_add.claude_calculator.yaml").unlink()

    done = run_block(Block(True, commands), folder, env={"PYTHONPATH": str(ROOT)})

    assert done.returncode == 0, "\n".join([*commands, done.stdout[-3000:], done.stderr[-3000:]])
    passed = [line for line in done.stdout.splitlines() if line.startswith("PASS  ")]
    assert [line.split()[1] for line in passed] == ["served_add[claude_calculator]"] * 2
    assert ("recorded 2 exchanges into scenarios/cassettes/served_add.claude_calculator.yaml"
            in done.stdout)
    answers = [line for line in done.stdout.splitlines()
               if line and not line.startswith(("PASS", "http", "recorded", "wrote", " "))]
    assert len(answers) == 2 and answers[0] == answers[1], done.stdout
