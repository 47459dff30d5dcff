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

import pytest
import yaml

from tests.bridge import served_project as project
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
