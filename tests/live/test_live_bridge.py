"""The live lane for the bridge (``pytest -m live``): the plain openai-SDK agent of
examples/openai_sdk_agent.py, seen by agentkit only through the bridge, recorded against a real
local model through ``agentkit record`` (the bridge proxies its requests to the model and
records them into the cassette) and replayed offline to the same trace.

The model is found as the rest of the lane finds it (the ``live_url`` fixture of
tests/live/conftest.py): ``scripts/live-model url`` or AGENTKIT_LIVE_BASE_URL, sampled greedily
with a fixed seed.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from tests.live import test_live_lane as lane

pytestmark = pytest.mark.live

SCENARIO = "live_openai_sdk"
AGENT = "openai_sdk_agent"


def _copy(tmp_path: Path) -> tuple[Path, Path]:
    folder = tmp_path / "scenarios"
    folder.mkdir()
    path = folder / f"{SCENARIO}.yaml"
    shutil.copy(lane.LIVE_SCENARIOS / f"{SCENARIO}.yaml", path)
    return path, folder / "cassettes" / f"{SCENARIO}.{AGENT}.yaml"


def test_the_bridged_sdk_agent_records_against_the_live_model_and_replays_offline(tmp_path,
                                                                                 live_url):
    path, cassette = _copy(tmp_path)

    recorded = lane._agentkit("record", str(path), "--agent", AGENT, *lane._live(live_url))

    assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    exchanges = yaml.safe_load(cassette.read_text())["exchanges"]
    first, second = (e["request"] for e in exchanges)
    assert first["tool_choice"] == {"type": "function", "function": {"name": "add"}}
    assert [t["name"] for t in first["tools"]] == ["population", "add"]  # the agent's own tools
    assert second["tool_choice"] == "none"
    assert second["messages"][-1]["role"] == "tool"  # the agent ran the tool and sent it back
    snapshot = path.parent / "__snapshots__" / SCENARIO / f"{AGENT}.json"
    trace = json.loads(snapshot.read_text())
    (turn,) = trace["turns"]
    assert [[c["name"] for c in s["tool_calls"]] for s in turn["steps"]] == [["add"], []]
    assert all(c["latency"] > 0 for s in turn["steps"] for c in s["llm_calls"])

    replayed = lane._agentkit("replay", str(path), "--agent", AGENT)
    assert "replay reproduces the recorded trace" in replayed.stdout, replayed.stdout


def test_recording_the_bridged_agent_twice_records_the_same_conversation(tmp_path, live_url):
    path, cassette = _copy(tmp_path)

    conversations = []
    for _ in range(2):
        recorded = lane._agentkit("record", str(path), "--agent", AGENT, "--mode", "rewrite",
                             *lane._live(live_url))
        assert recorded.returncode == 0, recorded.stdout + recorded.stderr
        exchanges = yaml.safe_load(cassette.read_text())["exchanges"]
        conversations.append([(e["request_hash"], e["response"]) for e in exchanges])

    assert conversations[0] == conversations[1]
