"""The OpenAI Agents SDK agent of examples/served, in its own process as in production -- its
model the SDK's default, spoken over the Responses API, never forced to chat completions --
tested through ``agentkit serve``: its bundled recording, made through ``serve --mode rewrite``
against the live model (tests/live/test_served_live.py), replays offline to the same agent, and
to the trace the same recording gives in process (``agentkit run`` in examples/served, through
agentkit's Agents SDK integration, which adds the SDK agent's name to each step and call)."""

from __future__ import annotations

import json

import pytest

from agentkit.recording import Cassette
from tests.bridge import served_project as project

pytestmark = [pytest.mark.frameworks, pytest.mark.agentkit_allow_loopback]

AGENT = "sdk_agent"
FOLDER = project.PROJECT / "scenarios"


def _without_agent_names(value: object) -> object:
    if isinstance(value, dict):
        return {k: _without_agent_names(v) for k, v in value.items() if k not in ("agent",
                                                                                   "agents")}
    if isinstance(value, list):
        return [_without_agent_names(v) for v in value]
    return value


def test_the_bundled_responses_api_recording_replays_offline_through_serve(tmp_path):
    recording = Cassette.load(FOLDER / "cassettes" / f"served_add.{AGENT}.yaml")
    assert [e.wire for e in recording.exchanges] == ["openai_responses"] * 2
    folder = project.copy_project(tmp_path)

    served = project.serve(folder, AGENT)

    assert served.code == 0, served.ok()
    assert served.out.startswith("PASS  served_add[sdk_agent]"), served.ok()
    assert served.trace is not None
    (turn,) = served.trace["turns"]
    assert [[(c["name"], c["output"]) for c in s["tool_calls"]] for s in turn["steps"]] == [
        [("add", "5")], []]
    assert served.answer == turn["response"]
    in_process = json.loads((FOLDER / "__snapshots__" / "served_add" / f"{AGENT}.json")
                            .read_text())
    assert served.trace == {**in_process, "turns": _without_agent_names(in_process["turns"])}
