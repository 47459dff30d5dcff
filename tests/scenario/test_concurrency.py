"""Scenarios run safely in threads: each run has its own clock, ids and fake endpoint."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from agentkit.scenario import run_scenario

ERROR_SCHEDULE = Path(__file__).parents[2] / "scenarios" / "error_schedule.yaml"


def test_backend_openai_scenarios_in_threads_each_get_their_own_replies():
    agents = ["react", "function_calling"] * 6
    expected = {agent: run_scenario(ERROR_SCHEDULE, agent).trace.to_json()
                for agent in set(agents)}

    with ThreadPoolExecutor(max_workers=4) as pool:
        traces = list(pool.map(lambda agent: run_scenario(ERROR_SCHEDULE, agent).trace.to_json(),
                               agents))

    wrong = [agent for agent, trace in zip(agents, traces, strict=True) if trace != expected[agent]]
    assert wrong == []
