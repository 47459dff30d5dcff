"""Every recording committed with the bundled scenarios still replays to the trace it recorded.

A change to an agent's behaviour that alters how a recorded conversation plays out must come
with a new recording (``agentkit record``), not leave a pair that ``agentkit replay`` rejects.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentkit.eval._samples import run_samples, sample_count
from agentkit.harness._runner import recording_files
from agentkit.scenario import discover_scenarios, load_scenario, run_scenario
from agentkit.trace._diff import diff_traces
from agentkit.verdict._syrupy import diff_snapshots

SCENARIOS = Path(__file__).parents[2] / "scenarios"
RECORDED = [(path, name) for path in discover_scenarios(SCENARIOS)
            for name, spec in load_scenario(path).agents.items() if spec.recorded()]


def test_the_bundled_scenarios_include_recordings():
    assert len(RECORDED) >= 2


@pytest.mark.parametrize(("path", "agent"), RECORDED, ids=[f"{p.stem}-{a}" for p, a in RECORDED])
def test_a_committed_recording_replays_to_its_recorded_trace(path, agent):
    scenario = load_scenario(path)
    recorded = json.loads(recording_files(scenario, agent)[0].read_text("utf-8"))

    if sample_count(scenario, agent) is not None:  # every sample against its recorded trace
        trace = run_samples(scenario, agent).trace
        assert trace is not None
        assert diff_snapshots(recorded, trace.to_dict()) == []
        return
    replayed = run_scenario(scenario, agent).trace.to_dict()

    assert diff_traces(recorded, replayed) == []
