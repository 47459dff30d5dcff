"""Judges and simulated users recorded with the run: their calls go into the agent type's
cassette (role exchanges, format 3), replay exactly offline, and a changed rubric, persona,
goal or judge model is a cassette miss naming what changed -- never a silent re-judgement."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from agentkit.harness._record import record_scenario, rerecord_command
from agentkit.harness._roles import RoleModels
from agentkit.llms.cassette import Cassette, CassetteError, Exchange
from agentkit.llms.mock import FunctionLLM
from agentkit.llms.types import ChatMessage
from agentkit.scenario import run_scenario

Write = Callable[[str, str], Path]

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

SIMULATED = """\
format: 1
name: late
user:
  simulate: a customer whose parcel is late
  goal: get a refund
  max_turns: 3
  stop_when: {contains: refund}
agents:
  react:
    recording: cassettes/late.react.yaml
"""


class Live:
    """A fake live model playing agent, judge and user (by the system prompt it gets)."""

    def __init__(self, *, verdict: str = VERDICT, answers: list[str] | None = None,
                 name: str = "live-model") -> None:
        self.verdict = verdict
        self.answers = answers or [ANSWER]
        self.asked: list[str] = []
        self.llm = FunctionLLM(self, name=name)

    def __call__(self, messages: list[ChatMessage], tools: object) -> str:
        system = messages[0].content or ""
        if system.startswith("You are a strict, fair judge"):
            self.asked.append("judge")
            return self.verdict
        if system.startswith("You are playing a user"):
            self.asked.append("user")
            return ["My parcel is late.", "Order A-1, please refund it."][
                sum(m.role.value == "assistant" for m in messages)]
        self.asked.append("agent")
        turns = sum(m.role.value == "user" for m in messages[1:])
        return self.answers[min(turns, len(self.answers)) - 1]


@pytest.fixture
def judged(write_file: Write) -> Path:
    return write_file("scenarios/refund.yaml", JUDGED)


@pytest.fixture
def simulated(write_file: Write) -> Path:
    return write_file("scenarios/late.yaml", SIMULATED)


def _cassette(scenario: Path) -> dict:
    name = scenario.stem
    return yaml.safe_load((scenario.parent / "cassettes" / f"{name}.react.yaml").read_text())


def _edit(path: Path, old: str, new: str) -> None:
    path.write_text(path.read_text().replace(old, new))


def test_a_judges_call_is_recorded_beside_the_agents_keyed_by_field_model_rubric_transcript(
        judged):
    live = Live()

    recording = record_scenario(judged, "react", live.llm, "rewrite")

    assert recording.ok, recording.problems
    cassette = _cassette(judged)
    assert cassette["format"] == 3
    agent, judge = cassette["exchanges"]
    assert "role" not in agent
    assert judge["role"] == "judge"
    assert list(judge["key"]) == ["at", "model", "rubric", "transcript"]
    assert (judge["key"]["at"], judge["key"]["model"]) == ("expect.answer.judge", "live-model")


def test_a_recorded_verdict_replays_offline_to_the_recorded_trace_byte_for_byte(judged):
    record_scenario(judged, "react", Live().llm, "rewrite")
    snapshot = judged.parent / "__snapshots__" / "refund" / "react.json"

    replay = run_scenario(judged, "react")

    assert replay.passed, replay.verdict.lines()
    assert replay.trace.to_json() == snapshot.read_text()
    assert json.loads(snapshot.read_text())["turns"][0]["judged"][0]["judge"] == "live-model"


def test_a_changed_rubric_is_a_cassette_miss_naming_the_rubric_and_how_to_re_record(judged):
    record_scenario(judged, "react", Live().llm, "rewrite")
    _edit(judged, "42.50 EUR\"}", "42.50 EUR and promises no date\"}")

    result = run_scenario(judged, "react")

    assert (result.verdict.outcome, result.verdict.kind) == ("fail", "recording")
    miss = result.verdict.stopped_by or ""
    assert miss.startswith(f"CassetteMissError: {judged.parent}/cassettes/refund.react.yaml: no "
                           f"recorded verdict of the judge for expect.answer.judge "
                           f"({judged.name}:6): the rubric changed (recorded ")
    assert "~Rubric: states the refund amount, 42.50 EUR{+ and promises no date+}" in miss
    assert miss.endswith("re-record with record mode `new_episodes` (asks the role again, "
                         "replays the agent's recorded answers) or `rewrite`.")


def test_a_changed_transcript_is_a_miss_naming_the_transcript(judged):
    record_scenario(judged, "react", Live().llm, "rewrite")
    cassette = judged.parent / "cassettes" / "refund.react.yaml"
    _edit(cassette, "Your refund is 42.50 EUR.", "Your refund is 40 EUR.")

    miss = run_scenario(judged, "react").verdict.stopped_by or ""

    assert "for expect.answer.judge" in miss
    assert ": the transcript it saw changed (recorded " in miss
    assert "A changed rubric, persona, goal, judge model or conversation is never answered " \
           "again silently" in miss


def test_a_judge_model_the_scenario_names_is_part_of_the_key(judged):
    record_scenario(judged, "react", Live().llm, "rewrite")
    _edit(judged, "agents:", "judge: {model: gpt-4o}\nagents:")

    miss = run_scenario(judged, "react").verdict.stopped_by or ""

    assert ("the judge's model changed (recorded with `live-model`, the scenario now names "
            "`gpt-4o`)") in miss


def test_recording_a_judge_that_names_another_model_than_the_live_one_is_refused(judged):
    _edit(judged, "agents:", "judge: {model: gpt-4o}\nagents:")

    recording = record_scenario(judged, "react", Live().llm, "rewrite")

    assert not recording.written
    assert ("names model `gpt-4o`, but the live judge model recording it is `live-model`"
            in recording.problems[0])


def test_the_judge_records_through_its_own_live_model(judged):
    agent, judge = Live(), Live(name="judge-model")

    record_scenario(judged, "react", agent.llm, "rewrite",
                    roles=RoleModels(judge=judge.llm))

    assert (agent.asked, judge.asked) == (["agent"], ["judge"])
    assert _cassette(judged)["exchanges"][1]["key"]["model"] == "judge-model"
    assert "--judge-model judge-model" in rerecord_command(
        run_scenario(judged, "react").scenario, "react")


def test_new_episodes_after_a_rubric_change_asks_only_the_judge_again(judged):
    record_scenario(judged, "react", Live().llm, "rewrite")
    _edit(judged, "42.50 EUR\"}", "42.50 EUR, no date\"}")
    again = Live()

    recording = record_scenario(judged, "react", again.llm, "new_episodes")

    assert recording.ok, recording.problems
    assert again.asked == ["judge"]
    assert [e.get("role") for e in _cassette(judged)["exchanges"]] == [None, "judge"]
    assert run_scenario(judged, "react").passed


def test_a_judge_that_fails_the_answer_while_recording_writes_nothing(judged):
    live = Live(verdict='{"verdict": "fail", "reason": "No amount."}')

    recording = record_scenario(judged, "react", live.llm, "rewrite")

    assert not recording.written
    assert recording.problems == [
        "the recorded run failed: final answer 'Your refund is 42.50 EUR.' judged fail against "
        "the rubric 'states the refund amount, 42.50 EUR': No amount."]


def test_a_simulated_users_messages_are_recorded_and_replayed(simulated):
    live = Live(answers=["What is your order number?", "I have refunded order A-1."])

    recording = record_scenario(simulated, "react", live.llm, "rewrite")

    assert recording.ok, recording.problems
    assert live.asked == ["user", "agent", "user", "agent"]
    roles = [(e.get("role"), list(e.get("key", {}))) for e in _cassette(simulated)["exchanges"]]
    assert roles == [("user", ["at", "model", "persona", "goal", "transcript"]), (None, []),
                     ("user", ["at", "model", "persona", "goal", "transcript"]), (None, [])]
    replay = run_scenario(simulated, "react")
    assert replay.passed, replay.verdict.lines()
    assert [t.user for t in replay.trace.turns] == ["My parcel is late.",
                                                    "Order A-1, please refund it."]


@pytest.mark.parametrize("field, old, new", [
    ("persona", "a customer whose parcel is late", "an angry customer"),
    ("goal", "goal: get a refund", "goal: get a new parcel"),
])
def test_a_changed_persona_or_goal_is_a_miss_naming_it(simulated, field, old, new):
    record_scenario(simulated, "react", Live(answers=["Order number?", "I refunded it."]).llm,
                    "rewrite")
    _edit(simulated, old, new)

    miss = run_scenario(simulated, "react").verdict.stopped_by or ""

    assert f"no recorded message of the simulated user for user ({simulated.name}:4): the {field} " \
           "changed" in miss


def test_an_unused_recorded_verdict_fails_the_replay_naming_the_judge(judged):
    record_scenario(judged, "react", Live().llm, "rewrite")
    _edit(judged, "expect:\n  answer: {judge: \"states the refund amount, 42.50 EUR\"}\n", "")

    result = run_scenario(judged, "react")

    assert result.problems == ["the recording has 1 exchange(s) that were not replayed (1 of "
                               "the judge's)"]


def test_a_format_1_cassette_with_a_role_exchange_is_refused_at_its_line(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("format: 1\nexchanges:\n  - role: judge\n    key: {at: x, transcript: t}\n"
                    "    request: {}\n    response: {message: {content: hi}}\n")

    with pytest.raises(CassetteError, match=r"exchanges\.0: a role exchange"):
        Cassette.load(path)


def test_a_cassette_with_role_and_mcp_exchanges_is_format_3_and_reads_back_both(tmp_path):
    cassette = Cassette(path=tmp_path / "c.yaml")
    cassette.exchanges.append(Exchange(request={"messages": []}, request_hash="j1",
                                       response={"message": {"content": "{}"}}, role="judge",
                                       key={"at": "expect.answer.judge", "transcript": "t"}))
    cassette.mcp_exchanges.append(Exchange(request={"server": "toy", "method": "tools/list"},
                                           request_hash="m1", response={"tools": []}))
    cassette.save()

    loaded = Cassette.load(cassette.path)

    assert yaml.safe_load(cassette.path.read_text())["format"] == 3
    assert [(e.role, e.key) for e in loaded.exchanges] == [
        ("judge", {"at": "expect.answer.judge", "transcript": "t"})]
    assert [(e.request_hash, e.role) for e in loaded.mcp_exchanges] == [("m1", None)]


def test_a_format_2_cassette_with_a_role_exchange_is_refused_at_its_line(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("format: 2\nexchanges:\n  - role: judge\n    key: {at: x, transcript: t}\n"
                    "    request: {}\n    response: {message: {content: hi}}\n")

    with pytest.raises(CassetteError, match=r"exchanges\.0: a role exchange .* `format: 3`"):
        Cassette.load(path)


def test_a_role_exchange_needs_its_key(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("format: 3\nexchanges:\n  - role: judge\n    request: {}\n"
                    "    response: {message: {content: hi}}\n")

    with pytest.raises(CassetteError, match="a role exchange gives both `role` and `key`"):
        Cassette.load(path)


def test_a_cassette_without_roles_is_still_written_as_format_1(write_file):
    path = write_file("plain/refund.yaml", JUDGED.replace(
        'expect:\n  answer: {judge: "states the refund amount, 42.50 EUR"}\n', ""))

    record_scenario(path, "react", Live().llm, "rewrite")

    assert _cassette(path)["format"] == 1


TEAM = """\
format: 1
name: team
turns:
  - user: How much is my refund for order A-1?
expect:
  answer: {judge: "states the refund amount, 42.50 EUR"}
agents:
  agent_workflow:
    root: support
    team:
      - name: support
        description: Answers customers.
        recording: cassettes/team.support.yaml
"""


def test_a_teams_judge_is_recorded_into_its_first_recorded_agents_cassette(write_file):
    path = write_file("scenarios/team.yaml", TEAM)
    live = FunctionLLM(lambda messages, tools: VERDICT
                       if (messages[0].content or "").startswith("You are a strict, fair judge")
                       else "Your refund is 42.50 EUR.", name="live-model")

    recording = record_scenario(path, "agent_workflow", live, "rewrite")

    assert recording.ok, recording.problems
    cassette = yaml.safe_load((path.parent / "cassettes" / "team.support.yaml").read_text())
    assert [e.get("role") for e in cassette["exchanges"]] == [None, "judge"]
    assert run_scenario(path, "agent_workflow").passed


def test_a_panel_of_recorded_judges_records_each_through_the_model_it_names(judged):
    _edit(judged, "agents:", "judge:\n  - {model: judge-a}\n  - {model: judge-b}\n"
                             "  - {model: judge-c}\nagents:")
    asked: list[str | None] = []

    def judge(named: str | None) -> FunctionLLM:
        asked.append(named)
        return Live(name=str(named)).llm

    recording = record_scenario(judged, "react", Live().llm, "rewrite",
                                roles=RoleModels(judge=judge))

    assert recording.ok, recording.problems
    assert asked == ["judge-a", "judge-b", "judge-c"]
    models = [e["key"]["model"] for e in _cassette(judged)["exchanges"] if e.get("role")]
    assert models == ["judge-a", "judge-b", "judge-c"]
    replay = run_scenario(judged, "react")
    assert replay.passed, replay.verdict.lines()
    assert [v.judge for v in replay.judgements[0].votes] == ["judge-a", "judge-b", "judge-c"]


JUDGED_CONVERSATION = """\
format: 1
name: judged_late
user:
  simulate: a customer whose parcel is late
  goal: the assistant refunds the order
  max_turns: 3
expect:
  answer: {judge: "confirms the refund"}
  conversation: {judge: "asks for the order number once"}
agents:
  react:
    recording: cassettes/judged_late.react.yaml
"""


class Refunds(Live):
    """The fake live model, as a judge passing only a transcript where the agent refunded."""

    def __call__(self, messages: list[ChatMessage], tools: object) -> str:
        if (messages[0].content or "").startswith("You are a strict, fair judge"):
            self.asked.append("judge")
            reached = "Assistant: I have refunded order A-1." in (messages[1].content or "")
            return json.dumps({"verdict": "pass" if reached else "fail",
                               "reason": "refunded" if reached else "not yet"})
        return super().__call__(messages, tools)


def test_a_judged_simulated_conversation_is_recorded_and_replays_byte_for_byte(write_file):
    scenario = write_file("scenarios/judged_late.yaml", JUDGED_CONVERSATION)
    live = Refunds(answers=["What is your order number?", "I have refunded order A-1."])

    recording = record_scenario(scenario, "react", live.llm, "rewrite")
    replay = run_scenario(scenario, "react")

    assert recording.ok, recording.problems
    # the goal judged after each turn, then the final answer and the whole conversation
    assert live.asked == ["user", "agent", "judge", "user", "agent", "judge", "judge", "judge"]
    assert replay.passed, replay.verdict.lines()
    snapshot = scenario.parent / "__snapshots__" / "judged_late" / "react.json"
    assert replay.trace.to_json() == snapshot.read_text()
    last = json.loads(snapshot.read_text())["turns"][-1]
    assert [(j["at"], j["verdict"]) for j in last["judged"]] == [
        ("user.goal", "pass"), ("expect.answer.judge", "pass"),
        ("expect.conversation.judge", "pass")]
    assert last["goal"] == {"reached": True, "check": "goal judged", "turns": 2}


def test_a_changed_conversation_rubric_of_a_simulated_conversation_is_a_miss_naming_it(
        write_file):
    scenario = write_file("scenarios/judged_late.yaml", JUDGED_CONVERSATION)
    record_scenario(scenario, "react",
                    Refunds(answers=["Order number?", "I have refunded order A-1."]).llm,
                    "rewrite")
    _edit(scenario, "asks for the order number once", "never asks twice")

    miss = run_scenario(scenario, "react").verdict.stopped_by or ""

    assert ("no recorded verdict of the judge for expect.conversation.judge "
            f"({scenario.name}:9): the rubric changed") in miss
