"""Chain-of-Abstraction runs in traces: the parsed chain and each level run are step details
(the coa family's trace handlers: agentkit.harness._families.coa)."""

from __future__ import annotations

from pathlib import Path

from agentkit.scenario import Scenario, run_scenario

SCENARIOS = Path(__file__).parents[2] / "scenarios"


def coa_scenario(*script: str) -> Scenario:
    return Scenario.model_validate({
        "format": 1, "name": "coa", "tools": [{"ref": "mocks.tools:add", "latency": 1.0}],
        "turns": [{"user": "Add"}], "agents": {"coa": {"script": list(script)}}})


def test_the_chain_step_shows_the_parsed_chain_and_each_level():
    trace = run_scenario(coa_scenario("[FUNC add(1, 2) = y1] [FUNC add(3, 4) = y2] "
                                      "[FUNC add(y1, y2) = y3] [FUNC add(y9, 1) = y4]",
                                      "10")).trace

    chain_step, refine_step = trace.to_dict()["turns"][0]["steps"]
    assert chain_step["chain"]["levels"] == [["y1", "y2", "y4"], ["y3"]]
    assert [c["inputs"] for c in chain_step["chain"]["calls"]] == [[], [], ["y1", "y2"], []]
    assert chain_step["chain"]["calls"][3]["error"].endswith(
        "input y9 is not defined by any FUNC")
    assert chain_step["chain_levels"] == [
        {"level": 0, "calls": ["y1", "y2", "y4"], "failed": ["y4"], "wall": 1.0},
        {"level": 1, "calls": ["y3"], "failed": [], "wall": 1.0}]
    assert "chain" not in refine_step and "chain_levels" not in refine_step


def test_a_direct_answer_has_no_chain_in_its_trace():
    (step,) = run_scenario(coa_scenario("No calls needed.")).trace.to_dict()["turns"][0]["steps"]

    assert "chain" not in step and "chain_levels" not in step


def test_the_long_chain_scenario_runs_ten_calls_in_one_level():
    step = run_scenario(SCENARIOS / "coa_long_chain.yaml").trace.to_dict()["turns"][0]["steps"][0]

    assert [(level["calls"], level["wall"]) for level in step["chain_levels"]] == [
        ([f"y{n}" for n in range(1, 11)], 0.5), (["y11"], 0.5), (["y12"], 0.5)]
