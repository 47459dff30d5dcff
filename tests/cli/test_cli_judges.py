"""The commands with LLM judges and simulated users: ``record --judge-model`` records the
judge into the agent type's cassette, ``run`` prints the verdicts, ``replay`` names a changed
rubric, ``report`` lists verdicts and reasons."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from cli_helpers import FAKE_URL, Outcome
from mocks.openai_server import FakeOpenAIServer

ANSWER = "Thought: I can answer.\nAnswer: Your refund is 42.50 EUR."
VERDICT = '{"verdict": "pass", "reason": "It states 42.50 EUR.", "score": 1}'

JUDGED = """\
format: 1
name: refund
turns:
  - user: How much is my refund for order A-1?
expect:
  answer: {judge: "states the refund amount, 42.50 EUR"}
agents:
  react:
    recording: cassettes/refund.react.yaml
"""


@pytest.fixture
def judged(write: Callable[[str, str], Path]) -> Path:
    return write("scenarios/refund.yaml", JUDGED)


@pytest.fixture
def recorded(cli: Callable[..., Outcome], judged: Path,
             fake_openai_endpoint: Callable[..., FakeOpenAIServer]) -> Path:
    fake_openai_endpoint([ANSWER, VERDICT])
    result = cli("record", judged, "--agent", "react", "--base-url", FAKE_URL,
                 "--model", "agent-model", "--judge-model", "judge-model")
    assert result.code == 0, result.out + result.err
    return judged


@pytest.mark.slow  # records against a served model
def test_record_asks_the_judge_model_and_writes_its_verdict_into_the_agents_cassette(
        cli, judged, fake_openai_endpoint):
    server = fake_openai_endpoint([ANSWER, VERDICT])

    result = cli("record", judged, "--agent", "react", "--base-url", FAKE_URL,
                 "--model", "agent-model", "--judge-model", "judge-model")

    assert result.code == 0, result.out + result.err
    assert [request["model"] for request in server.requests] == ["agent-model", "judge-model"]
    assert "  judge expect.answer.judge: pass -- It states 42.50 EUR." in result.out.splitlines()
    cassette = yaml.safe_load((judged.parent / "cassettes" / "refund.react.yaml").read_text())
    assert [(e.get("role"), e.get("key", {}).get("model")) for e in cassette["exchanges"]] == [
        (None, None), ("judge", "judge-model")]


def test_a_judge_model_the_scenario_names_is_the_one_recorded(cli, judged,
                                                              fake_openai_endpoint):
    judged.write_text(JUDGED.replace("agents:", "judge: {model: named-judge}\nagents:"))
    server = fake_openai_endpoint([ANSWER, VERDICT])

    result = cli("record", judged, "--agent", "react", "--base-url", FAKE_URL)

    assert result.code == 0, result.out + result.err
    assert server.requests[1]["model"] == "named-judge"


def test_a_judge_model_option_that_contradicts_the_scenario_is_a_usage_error(cli, judged):
    judged.write_text(JUDGED.replace("agents:", "judge: {model: named-judge}\nagents:"))

    result = cli("record", judged, "--agent", "react", "--base-url", FAKE_URL,
                 "--judge-model", "other")

    assert result.code == 2
    assert (f"agentkit: error: {judged}:7: judge: the judge names model `named-judge`, and "
            "--judge-model says `other`; drop --judge-model or change the scenario (verdicts "
            "are keyed by the judge's model)") in result.err


def test_run_prints_each_verdict_and_the_judges_calls_apart(cli, recorded):
    result = cli("run", recorded, "--snapshots", "off")

    assert result.code == 0, result.out
    first, verdict = result.out.splitlines()[:2]
    assert first.startswith("PASS  refund[react]") and " llm=1 " in first
    assert " judge=1:" in first
    assert verdict == "      judged expect.answer.judge: pass -- It states 42.50 EUR."


def test_replay_after_a_rubric_change_names_the_rubric_and_how_to_re_record(cli, recorded):
    recorded.write_text(JUDGED.replace("42.50 EUR\"}", "42.50 EUR, no date\"}"))

    result = cli("replay", recorded)

    assert result.code == 1
    assert "cassette miss: " in result.out
    assert "the rubric changed (recorded " in result.out
    assert (f"to re-record: agentkit record {recorded} --agent react --mode rewrite --model "
            f"agent-model --base-url {FAKE_URL} --judge-model judge-model") in result.out


def test_report_lists_the_verdicts_with_their_reasons(cli, recorded, tmp_path):
    out = tmp_path / "report"

    result = cli("report", recorded, "--out", out, "--snapshots", "off")

    assert result.code == 0, result.out
    markdown = (out / "report.md").read_text()
    assert ("| `refund[react]` | `expect.answer.judge` | states the refund amount, 42.50 EUR | "
            "pass (judge uncalibrated) | It states 42.50 EUR. |") in markdown
    assert "- `refund[react]`: judge: 1 LLM call, " in markdown
    row = json.loads((out / "report.json").read_text())["rows"][0]
    calibration = row["judged"][0].pop("calibration")
    assert row["judged"] == [{"at": "expect.answer.judge",
                              "rubric": "states the refund amount, 42.50 EUR",
                              "verdict": "pass", "reason": "It states 42.50 EUR.",
                              "score": 1.0}]
    assert calibration["calibrated"] is False
    assert "no labels file in" in calibration["why"]
    assert row["llm_calls"] == 1 and row["roles"]["judge"]["llm_calls"] == 1
    assert "It states 42.50 EUR." in (out / "report.html").read_text()


def _edit_recorded_answer(scenario: Path, role: str | None, text: str) -> None:
    """Change what the recording says ``role`` (None: the agent) answered."""
    path = scenario.parent / "cassettes" / "refund.react.yaml"
    cassette = yaml.safe_load(path.read_text())
    exchange = next(e for e in cassette["exchanges"] if e.get("role") == role)
    exchange["response"]["message"]["content"] = text
    path.write_text(yaml.safe_dump(cassette, sort_keys=False))


COMMANDS = [("run", "--snapshots", "off"), ("replay",), ("report", "--out", "{out}")]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
def test_every_command_says_a_recorded_judge_answer_that_is_not_a_verdict_stopped_the_run(
        cli, recorded, tmp_path, command):
    _edit_recorded_answer(recorded, "judge", "Looks fine to me.")

    result = cli(command[0], recorded, *(a.format(out=tmp_path / "r") for a in command[1:]))

    assert result.code == 1
    assert (f"JudgeAnswerError: {recorded.name}:6: expect.answer.judge: the judge's answer is not a "
            "verdict (not a JSON object (Expecting value at position 0)): 'Looks fine to "
            "me.'") in result.out
    assert "PASS" not in result.out and "reproduces" not in result.out


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
def test_every_command_says_a_changed_answer_of_the_agent_is_not_judged_again(
        cli, recorded, tmp_path, command):
    _edit_recorded_answer(recorded, None,
                          "Thought: I can answer.\nAnswer: Your refund is on its way.")

    result = cli(command[0], recorded, *(a.format(out=tmp_path / "r") for a in command[1:]))

    assert result.code == 1
    assert (f"no recorded verdict of the judge for expect.answer.judge ({recorded.name}:6): the "
            "transcript it saw changed") in result.out
    assert "~Assistant: Your refund is [-42.50 EUR-]{+on its way+}." in result.out
    assert "PASS" not in result.out


def test_replay_of_a_run_that_stopped_says_it_was_not_compared_with_the_recorded_trace(
        cli, recorded):
    _edit_recorded_answer(recorded, "judge", "Looks fine to me.")

    result = cli("replay", recorded)

    assert ("not compared with the recorded trace "
            f"{recorded.parent / '__snapshots__' / 'refund' / 'react.json'}: the replay "
            "stopped on an error") in result.out


SAMPLED = """\
format: 1
name: sampled
turns:
  - user: What is 2 + 3?
expect:
  answer: {judge: "says the sum is 5", samples: 3}
judge:
  script:
    - '{"verdict": "pass", "reason": "It says 5."}'
    - '{"verdict": "fail", "reason": "It shows no working."}'
    - '{"verdict": "pass", "reason": "It says 5."}'
agents:
  function_calling:
    script: [2 + 3 = 5]
"""


def test_report_marks_a_verdict_whose_samples_disagree(cli, write, tmp_path):
    scenario = write("scenarios/sampled.yaml", SAMPLED)
    out = tmp_path / "report"

    result = cli("report", scenario, "--out", out, "--snapshots", "off")

    assert result.code == 0, result.out
    assert ("| `sampled[function_calling]` | `expect.answer.judge` | says the sum is 5 | "
            "pass (split, 3 votes) (judge uncalibrated) | It says 5.") in (
        out / "report.md").read_text()
    row = json.loads((out / "report.json").read_text())["rows"][0]
    assert (row["judged"][0]["votes"], row["judged"][0]["split"]) == (3, True)
    assert "pass (split, 3 votes) -- It says 5." in (out / "report.html").read_text()
