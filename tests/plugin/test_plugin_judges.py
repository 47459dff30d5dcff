"""Judged scenarios in pytest: ``--record-mode`` records the judge through the ``judge_llm``
fixture beside the agent's calls, later runs replay it offline, and a changed rubric fails the
item with a message naming the rubric."""

from __future__ import annotations

import pytest
import yaml

from plugin_project import write

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

#: live_llm and judge_llm fixtures of the inner project: two fake live models
LIVE_CONFTEST = """\
import pytest

from agentkit.llms.mock import FunctionLLM

ANSWER = "Thought: I can answer.\\nAnswer: Your refund is 42.50 EUR."
VERDICT = '{"verdict": "pass", "reason": "It states 42.50 EUR."}'


@pytest.fixture
def live_llm():
    return FunctionLLM(lambda messages, tools: ANSWER, name="agent-model")


@pytest.fixture
def judge_llm():
    return FunctionLLM(lambda messages, tools: VERDICT, name="judge-model")
"""


@pytest.fixture
def judged_project(project: pytest.Pytester) -> pytest.Pytester:
    write(project, "scenarios/refund.yaml", JUDGED)
    write(project, "conftest.py", LIVE_CONFTEST)
    return project


def test_record_mode_records_the_judge_through_the_judge_llm_fixture(
        judged_project: pytest.Pytester) -> None:
    result = judged_project.runpytest("scenarios/refund.yaml", "--record-mode=once")

    result.assert_outcomes(passed=1)
    cassette = yaml.safe_load(
        (judged_project.path / "scenarios/cassettes/refund.react.yaml").read_text())
    assert [(e.get("role"), e.get("key", {}).get("model")) for e in cassette["exchanges"]] == [
        (None, None), ("judge", "judge-model")]


@pytest.mark.slow  # an inner pytest session (pytester)
def test_a_recorded_judged_scenario_replays_offline_and_a_rubric_change_fails_naming_it(
        judged_project: pytest.Pytester) -> None:
    judged_project.runpytest("scenarios/refund.yaml", "--record-mode=once"
                             ).assert_outcomes(passed=1)
    assert judged_project.runpytest("scenarios/refund.yaml").ret == 0

    write(judged_project, "scenarios/refund.yaml",
          JUDGED.replace("42.50 EUR\"}", "42.50 EUR and promises no date\"}"))
    result = judged_project.runpytest("scenarios/refund.yaml")

    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "*no recorded verdict of the judge for expect.answer.judge (*refund.yaml:6): the "
        "rubric changed*",
        "*to re-record: pytest --record-mode=rewrite --agentkit-model agent-model "
        "--agentkit-judge-model judge-model 'scenarios/refund.yaml::react'"])


def test_the_default_judge_llm_refuses_an_option_contradicting_the_judge_the_scenario_names(
        judged_project: pytest.Pytester) -> None:
    write(judged_project, "scenarios/refund.yaml",
          JUDGED.replace("agents:", "judge: {model: named-judge}\nagents:"))
    write(judged_project, "conftest.py", LIVE_CONFTEST.split("@pytest.fixture\ndef judge_llm")[0])

    result = judged_project.runpytest("scenarios/refund.yaml", "--record-mode=once",
                                      "--agentkit-judge-model=other")

    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*the scenario's judge names model `named-judge`, and "
                                 "--agentkit-judge-model says `other`*"])


@pytest.mark.parametrize(("verdict", "says"), [
    ('{"verdict": "fail", "reason": "It gives no amount."}',
     "*final answer 'Your refund is 42.50 EUR.' judged fail against the rubric 'states the "
     "refund amount, 42.50 EUR': It gives no amount.*"),
    ("Looks fine to me.",
     "*JudgeAnswerError: *refund.yaml:6: expect.answer.judge: the judge's answer is not a "
     "verdict (not a JSON object*'Looks fine to me.'*"),
], ids=["judged-fail", "not-a-verdict"])
def test_a_judge_that_fails_the_answer_or_answers_no_verdict_fails_the_item_saying_so(
        judged_project: pytest.Pytester, verdict: str, says: str) -> None:
    write(judged_project, "conftest.py", LIVE_CONFTEST.replace(
        """VERDICT = '{"verdict": "pass", "reason": "It states 42.50 EUR."}'""",
        f"VERDICT = {verdict!r}"))

    result = judged_project.runpytest("scenarios/refund.yaml", "--record-mode=once")

    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([says])


SIMULATED = """\
format: 1
name: late
user:
  simulate: a customer whose parcel is late
  goal: the assistant refunds the order
  max_turns: 3
expect:
  answer: {judge: "confirms the refund"}
agents:
  react:
    recording: cassettes/late.react.yaml
"""

#: one fake live model playing the agent, the simulated user and the judge (by its prompt)
ROLES_CONFTEST = """\
import json

import pytest

from agentkit.llms.mock import FunctionLLM


def play(messages, tools):
    system = messages[0].content or ""
    if system.startswith("You are a strict, fair judge"):
        done = "Assistant: I have refunded order A-1." in messages[1].content
        return json.dumps({"verdict": "pass" if done else "fail",
                           "reason": "It refunded." if done else "Not yet."})
    said = sum(m.role.value == "assistant" for m in messages)
    if system.startswith("You are playing a user"):
        return ["My parcel is late.", "Order A-1."][said]
    asked = sum(m.role.value == "user" for m in messages[1:])
    return ["Thought: I ask.\\nAnswer: What is your order number?",
            "Thought: Done.\\nAnswer: I have refunded order A-1."][asked - 1]


@pytest.fixture
def live_llm():
    return FunctionLLM(play, name="live-model")
"""


@pytest.mark.slow  # an inner pytest session (pytester)
def test_a_simulated_and_judged_conversation_records_replays_and_names_a_changed_rubric(
        project: pytest.Pytester) -> None:
    write(project, "scenarios/late.yaml", SIMULATED)
    write(project, "conftest.py", ROLES_CONFTEST)

    project.runpytest("scenarios/late.yaml", "--record-mode=once").assert_outcomes(passed=1)
    write(project, "conftest.py", "")  # offline from here: no live model
    project.runpytest("scenarios/late.yaml").assert_outcomes(passed=1)
    write(project, "scenarios/late.yaml", SIMULATED.replace("confirms the refund",
                                                            "confirms the refund amount"))
    result = project.runpytest("scenarios/late.yaml")

    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines([
        "*no recorded verdict of the judge for expect.answer.judge (*late.yaml:8): the rubric "
        "changed*"])
    trace = (project.path / "scenarios/__snapshots__/late/react.json").read_text()
    assert '"user": "Order A-1."' in trace and '"reason": "It refunded."' in trace
