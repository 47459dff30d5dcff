"""Simulated users: turns written by a persona toward a goal, until the goal check holds or
max_turns runs out; traces show each simulated turn."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from agentkit.harness._roles import RoleModels
from agentkit.harness._simulated_user import FIRST_MESSAGE, USER_PROMPT, SimulatedUserContext
from agentkit.llms.mock import FunctionLLM
from agentkit.llms.types import MessageRole
from agentkit.scenario import run_scenario
from agentkit.scenario._loader import ScenarioError, load_scenario

Write = Callable[[str, str], Path]

AGENT = """\
agents:
  function_calling:
    script:
      - Sorry to hear that. What is your order number?
      - Thanks. I have issued a refund for order A-1.
      - Anything else?
"""


@pytest.fixture
def write(write_file: Write) -> Write:
    return write_file


def _scenario(write: Write, user: str, rest: str = AGENT, name: str = "late") -> Path:
    return write(f"{name}.yaml", f"format: 1\nname: {name}\nuser:\n{user}{rest}")


SCRIPTED = """\
  simulate: a customer whose parcel is late
  goal: get a refund
  max_turns: 3
  script: [My parcel is late., It is order A-1.]
  stop_when: {contains: refund}
"""


def _turns(result) -> list[dict]:
    return result.trace.to_dict()["turns"]


def test_a_scripted_user_talks_until_stop_when_holds(write):
    result = run_scenario(_scenario(write, SCRIPTED, AGENT.replace("      - Anything else?\n",
                                                                    "")))

    assert result.passed, result.verdict.lines()
    turns = _turns(result)
    assert [turn["user"] for turn in turns] == ["My parcel is late.", "It is order A-1."]
    assert [turn["simulated_user"] for turn in turns] == [{"by": "script"}, {"by": "script"}]
    assert "goal" not in turns[0]
    assert turns[1]["goal"] == {"reached": True, "check": "stop_when contains 'refund'",
                                "turns": 2}


@pytest.mark.agentkit_allow_unused_script
def test_a_conversation_that_hits_max_turns_without_the_goal_fails_naming_max_turns(write):
    user = SCRIPTED.replace("max_turns: 3", "max_turns: 1")
    path = _scenario(write, user)

    result = run_scenario(path)

    assert result.problems[0] == (
        f"{path}:6: user.max_turns: the simulated conversation reached max_turns 1 without the "
        "goal ('get a refund'; stop_when contains 'refund', never held)")
    assert _turns(result)[-1]["goal"] == {"reached": False,
                                          "check": "stop_when contains 'refund'", "turns": 1}


def test_an_opening_message_is_the_first_turn_as_written(write):
    user = SCRIPTED.replace("script: [My parcel is late., It is order A-1.]",
                            "opening: Hello there.\n  script: [It is order A-1.]")
    result = run_scenario(_scenario(write, user, AGENT.replace("      - Anything else?\n", "")))

    assert [(t["user"], t["simulated_user"]["by"]) for t in _turns(result)] == [
        ("Hello there.", "opening"), ("It is order A-1.", "script")]


def test_the_goal_is_judged_after_every_turn_by_default(write):
    verdicts = ['{"verdict": "fail", "reason": "No refund yet."}',
                '{"verdict": "pass", "reason": "A refund was issued."}']
    user = SCRIPTED.replace("  stop_when: {contains: refund}\n", "")
    rest = f"judge:\n  script: {json.dumps(verdicts)}\n" + AGENT.replace(
        "      - Anything else?\n", "")

    result = run_scenario(_scenario(write, user, rest))

    assert result.passed, result.verdict.lines()
    turns = _turns(result)
    assert [[e["verdict"] for e in t["judged"]] for t in turns] == [["fail"], ["pass"]]
    assert turns[0]["judged"][0]["at"] == "user.goal"
    assert turns[1]["goal"]["check"] == "goal judged"
    assert [j.at for j in result.judgements] == ["user.goal", "user.goal"]


def test_a_model_plays_the_user_from_the_prompt_and_the_conversation_turned_round(write):
    seen = []

    def user(messages, tools):
        seen.append(messages)
        return ["  My parcel is late.  ", "It is order A-1."][len(seen) - 1]

    spec = SCRIPTED.replace("  script: [My parcel is late., It is order A-1.]\n", "")
    result = run_scenario(_scenario(write, spec, AGENT.replace("      - Anything else?\n", "")),
                          roles=RoleModels(user=FunctionLLM(user)))

    assert _turns(result)[0]["user"] == "My parcel is late."
    assert _turns(result)[0]["simulated_user"] == {"by": "function"}
    first, second = seen
    assert first[0].content == USER_PROMPT.format(persona="a customer whose parcel is late",
                                                  goal="get a refund")
    assert [(m.role, m.content) for m in first[1:]] == [(MessageRole.USER, FIRST_MESSAGE)]
    assert [(m.role, m.content) for m in second[1:]] == [
        (MessageRole.USER, FIRST_MESSAGE), (MessageRole.ASSISTANT, "My parcel is late."),
        (MessageRole.USER, "Sorry to hear that. What is your order number?")]
    assert result.trace.to_dict()["totals"]["roles"]["user"]["llm_calls"] == 2


def test_a_ref_function_writes_each_message_from_its_context(write, tmp_path):
    (tmp_path / "late_user.py").write_text(
        "def reply(context):\n"
        "    return f'turn {context.turn}: {len(context.messages)} messages so far'\n")
    spec = SCRIPTED.replace("  script: [My parcel is late., It is order A-1.]\n",
                            "  ref: late_user:reply\n")

    result = run_scenario(_scenario(write, spec, AGENT.replace("      - Anything else?\n", "")))

    assert [t["user"] for t in _turns(result)] == ["turn 1: 0 messages so far",
                                                   "turn 2: 2 messages so far"]
    assert _turns(result)[0]["simulated_user"] == {"by": "ref late_user:reply"}


@pytest.mark.parametrize(("body", "says"), [
    ("    raise ValueError('no idea what to say')\n", "raised ValueError: no idea what to say"),
    ("    return None\n", "returned NoneType, not the message (a str)"),
], ids=["raises", "returns-no-text"])
def test_a_ref_function_that_misbehaves_stops_the_run_naming_user_ref(write, tmp_path, body,
                                                                       says):
    module = f"late_user_{len(body)}"
    (tmp_path / f"{module}.py").write_text(f"def reply(context):\n{body}")
    spec = SCRIPTED.replace("  script: [My parcel is late., It is order A-1.]\n",
                            f"  ref: {module}:reply\n")
    path = _scenario(write, spec)

    result = run_scenario(path)

    assert (result.verdict.outcome, result.verdict.stopped_in) == ("fail", 1)
    assert result.verdict.stopped_by == (
        f"AgentFailedError: {path.name}:7: user.ref: {module}:reply {says}")


def test_the_simulated_users_context_is_typed_and_frozen():
    context = SimulatedUserContext("p", "g", 1)

    with pytest.raises(AttributeError):
        context.turn = 2  # type: ignore[misc]


def test_max_turns_limits_the_turns_the_agent_gets(write):
    user = SCRIPTED.replace("max_turns: 3", "max_turns: 2").replace(
        "stop_when: {contains: refund}", "stop_when: {contains: never said}")
    path = _scenario(write, user, AGENT.replace("      - Anything else?\n", ""))

    result = run_scenario(path)

    assert len(result.trace.turns) == 2
    assert result.problems[0].startswith(f"{path}:6: user.max_turns: the simulated "
                                         "conversation reached max_turns 2 without the goal")


# ---------------------------------------------------------------- bad input
def test_a_persona_with_no_goal_is_a_load_error_at_the_user(write):
    path = _scenario(write, "  simulate: a customer whose parcel is late\n  script: [hi]\n")

    with pytest.raises(ScenarioError) as raised:
        load_scenario(path)

    assert str(raised.value) == (
        f"{path}:4: user: a simulated user needs a `goal`: what the persona wants from the "
        "agent (its messages work toward it, and by default the conversation ends when a judge "
        "finds it reached)")


def test_an_empty_persona_is_a_load_error(write):
    path = _scenario(write, '  simulate: " "\n  goal: refund\n  script: [hi]\n')

    with pytest.raises(ScenarioError, match=r"late.yaml:4: user.simulate: the persona is "
                                            r"empty"):
        load_scenario(path)


def test_turns_and_a_simulated_user_together_are_a_load_error(write):
    path = _scenario(write, SCRIPTED, "turns:\n  - user: hi\n" + AGENT)

    with pytest.raises(ScenarioError) as raised:
        load_scenario(path)

    assert str(raised.value) == (f"{path}:10: turns: a simulated `user:` writes the turns: "
                                 "give `turns` or `user`, not both")


@pytest.mark.agentkit_allow_unused_script
def test_an_empty_message_of_the_simulated_user_stops_the_run_as_an_infrastructure_error(
        write):
    spec = SCRIPTED.replace("  script: [My parcel is late., It is order A-1.]\n", "")
    path = _scenario(write, spec)

    result = run_scenario(path, roles=RoleModels(user=FunctionLLM(lambda m, t: "   ")))

    assert result.verdict.kind == "infrastructure"
    assert result.verdict.stopped_by == (f"EmptyMessageError: {path.name}:4: user: the simulated user "
                                         "(function) wrote an empty message for turn 1")


def test_a_simulated_user_whose_model_fails_stops_the_run_naming_the_simulated_user(write):
    spec = SCRIPTED.replace("[My parcel is late., It is order A-1.]",
                            "[{error: {type: timeout, message: no answer}}]")
    path = _scenario(write, spec)

    result = run_scenario(path)

    assert result.verdict.kind == "infrastructure"
    assert result.verdict.stopped_by == (
        f"the simulated user ({path.name}:4) failed: APITimeoutError: no answer")


@pytest.mark.agentkit_allow_unused_script
def test_a_simulated_user_nobody_can_play_says_how_to_give_one(write):
    spec = SCRIPTED.replace("  script: [My parcel is late., It is order A-1.]\n", "")
    path = _scenario(write, spec)

    with pytest.raises(ScenarioError, match=r"late.yaml:4: user: an LLM plays the simulated "
                                            r"user, and none can answer here"):
        run_scenario(path)


def test_a_trajectory_cannot_be_driven_by_a_simulated_user(write):
    path = _scenario(write, SCRIPTED, "tools:\n  - ref: mocks.tools:add\ntrajectory:\n"
                                      "  - answer: done\nagents: [react]\n")

    with pytest.raises(ScenarioError, match=r"late.yaml:12: trajectory: a trajectory describes "
                                            r"one turn of fixed input"):
        load_scenario(path)
