"""The bundled live scenarios with an LLM judge and a simulated user (scenarios/live_roles/) catch
an agent that answers wrongly: their recordings are edited here as a changed agent would
answer, and the run must fail saying why -- with snapshots off, so the judgement alone
decides."""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml

from agentkit.scenario import run_scenario

LIVE = Path(__file__).resolve().parents[2] / "scenarios" / "live_roles"


def _copy(tmp_path: Path, name: str, agent_type: str) -> Path:
    (tmp_path / "cassettes").mkdir()
    shutil.copy(LIVE / f"{name}.yaml", tmp_path)
    shutil.copy(LIVE / "cassettes" / f"{name}.{agent_type}.yaml", tmp_path / "cassettes")
    return tmp_path / f"{name}.yaml"


def _agent_answers(scenario: Path, agent_type: str, change) -> None:
    """Change every answer the recording holds of the agent (not of the judge or user)."""
    path = scenario.parent / "cassettes" / f"{scenario.stem}.{agent_type}.yaml"
    cassette = yaml.safe_load(path.read_text(encoding="utf-8"))
    for exchange in cassette["exchanges"]:
        if exchange.get("role") is None:
            message = exchange["response"]["message"]
            message["content"] = change(message["content"])
    path.write_text(yaml.safe_dump(cassette, sort_keys=False), encoding="utf-8")


def test_the_judged_scenario_fails_an_agent_that_names_the_wrong_capital(tmp_path):
    scenario = _copy(tmp_path, "live_judged_answer", "react")
    _agent_answers(scenario, "react", lambda text: text.replace("Paris", "Berlin"))

    result = run_scenario(scenario, "react")

    assert not result.verdict.passed
    assert result.problems == [
        "turn 1: answer 'The capital of France is Berlin.' does not match contains 'Paris'"]


def test_the_simulated_conversation_does_not_go_on_past_what_its_user_was_recorded_to_say(
        tmp_path):
    scenario = _copy(tmp_path, "live_simulated_user", "react")
    _agent_answers(scenario, "react",
                   lambda text: text.replace("I hope this helps.", "Goodbye."))

    result = run_scenario(scenario, "react")

    assert not result.verdict.passed and result.verdict.stopped_in == 3
    assert "no recorded message of the simulated user for user" in (result.verdict.stopped_by
                                                                     or "")
    assert "the transcript it saw changed" in (result.verdict.stopped_by or "")
