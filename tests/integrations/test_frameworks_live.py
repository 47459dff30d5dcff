"""The live lane for the framework integrations (``pytest -m live``, after the frameworks lane
installed the extras): framework agents recorded against the real local model through
``agentkit record`` and replayed offline to the same trace.

The OpenAI Agents SDK agent and the LangGraph graph are offered the ``add`` tool (SmolLM2-135M
answers them in text); LlamaIndex's FunctionAgent and pydantic-ai are asked a question without
tools, because with ``add`` each called the tool again after every result until the run was
stopped (FunctionAgent's 20 iterations; pydantic-ai has no call limit an agent type's
``params`` can set). All four also record and replay through the bridge against a scripted
server in test_frameworks.py."""

from __future__ import annotations

import json

import pytest

from tests.live import test_live_lane as lane
from tests.live.conftest import live_url as _lane_live_url

pytestmark = [pytest.mark.live, pytest.mark.frameworks]
live_url = _lane_live_url  # the lane's fixture: the local model's URL, or a skip saying why

TOOLS = """\
tools:
  - ref: mocks.tools:add
turns:
  - user: What is 2 + 3? Use the add tool.
"""
NO_TOOLS = """\
turns:
  - user: What is the capital of France?
"""
SCENARIO = """\
format: 1
name: live_framework
{turns}expect:
  max_llm_calls: 4
agents:
  {agent}:
    recording: cassettes/live_framework.{agent}.yaml
"""


@pytest.mark.parametrize("agent, turns", [("openai_agents", TOOLS), ("langgraph", TOOLS),
                                          ("li_function", NO_TOOLS),
                                          ("pydantic_ai", NO_TOOLS)])
def test_a_framework_agent_records_against_the_live_model_and_replays_offline(tmp_path, live_url,
                                                                            agent, turns):
    path = tmp_path / "scenarios" / "live_framework.yaml"
    path.parent.mkdir()
    path.write_text(SCENARIO.format(agent=agent, turns=turns))

    recorded = lane._agentkit("record", str(path), "--agent", agent, *lane._live(live_url))

    assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    assert (path.parent / "cassettes" / f"live_framework.{agent}.yaml").is_file()
    trace = json.loads((path.parent / "__snapshots__" / "live_framework" / f"{agent}.json")
                       .read_text())
    (turn,) = trace["turns"]
    assert turn["response"]
    assert all(c["latency"] > 0 for s in turn["steps"] for c in s["llm_calls"])

    replayed = lane._agentkit("replay", str(path), "--agent", agent)
    assert "replay reproduces the recorded trace" in replayed.stdout, replayed.stdout
