"""Sampled runs of a judged scenario (or one with a simulated user): every sample is judged by
its own calls, recorded with that sample's exchanges in the sampled cassette and replayed for
that sample only, offline."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import yaml

from agentkit.eval._samples import record_samples, run_samples
from agentkit.harness._roles import RoleModels
from agentkit.llms.cassette import Cassette
from agentkit.llms.mock import FunctionLLM, tool_call
from agentkit.llms.types import ChatMessage
from tests.scenario_text import adding_scenario

JUDGED = adding_scenario("sam", """\
expect:
  answer: {judge: "says that 2 + 3 is 5"}
agents:
  function_calling:
    recording: cassettes/sam.yaml
""")

SIMULATED = """\
format: 1
name: chat
tools:
  - ref: mocks.tools:add
user:
  simulate: a pupil checking sums
  goal: learn what 2 + 3 is
  max_turns: 2
  stop_when: {contains: "5"}
agents:
  function_calling:
    recording: cassettes/chat.yaml
"""


def _judging(verdict: Callable[[str], str]) -> Callable[[list[ChatMessage], object], object]:
    """A scripted judge: its verdict is ``verdict(transcript)`` (it reads the answer)."""
    def answer(messages: list[ChatMessage], tools: object) -> object:
        return verdict(messages[-1].content or "")
    return answer


def judge_saying_5(transcript: str) -> str:
    """Passes an answer that says 5, fails any other: honest about what it judges."""
    if "Assistant: 2 + 3 = 5" in transcript:
        return '{"verdict": "pass", "reason": "It says 5."}'
    return '{"verdict": "fail", "reason": "It does not say 5."}'


def live(*answers: str, judge: Callable[[str], str] = judge_saying_5,
         asked: list[str] | None = None) -> Callable[[int], FunctionLLM]:
    """Sample i's live model: it calls add(2, 3), then answers ``answers[i]``; asked as a judge
    (by the judge's prompt) it judges with ``judge``; as the simulated user it asks the sum."""
    def model(index: int) -> FunctionLLM:
        def answer(messages: list[ChatMessage], tools: object) -> object:
            system = messages[0].content or ""
            if system.startswith("You are a strict, fair judge"):
                if asked is not None:
                    asked.append(f"judge of sample {index}")
                return _judging(judge)(messages, tools)
            if system.startswith("You are playing a user"):
                return f"Sample {index} here: what is 2 + 3?"
            if not any(m.role.value == "tool" for m in messages):
                return tool_call("add", a=2, b=3)
            return answers[index]
        return FunctionLLM(answer, name="live-model")
    return model


def _record(path: Path, *answers: str, **options: object):
    return record_samples(path, "function_calling", live(*answers, **options),  # type: ignore[arg-type]
                          len(answers), "rewrite", sampling={"temperature": 0.8, "seed": 0})


def _cassette(path: Path) -> dict:
    return yaml.safe_load((path.parent / "cassettes" / f"{path.stem}.yaml").read_text("utf-8"))


def test_each_sample_of_a_judged_scenario_is_judged_by_its_own_recorded_call(tmp_path):
    path = tmp_path / "sam.yaml"
    path.write_text(JUDGED)
    asked: list[str] = []

    recording = _record(path, "2 + 3 = 5", "2 + 3 = 6", asked=asked)

    assert recording.ok and recording.written, recording.problems
    assert asked == ["judge of sample 0", "judge of sample 1"]
    exchanges = _cassette(path)["exchanges"]
    assert [(e["sample"], e.get("role")) for e in exchanges] == [
        (0, None), (0, None), (0, "judge"), (1, None), (1, None), (1, "judge")]
    assert exchanges[2]["key"]["at"] == "expect.answer.judge"


def test_a_sampled_replay_gives_each_sample_its_own_recorded_verdict_offline(tmp_path):
    path = tmp_path / "sam.yaml"
    path.write_text(JUDGED)
    _record(path, "2 + 3 = 5", "2 + 3 = 6")

    replay = run_samples(path, "function_calling")

    verdicts = [(run.result.judgements[0].verdict, run.result.judgements[0].reason)
                for run in replay.runs if run.result is not None]
    assert verdicts == [("pass", "It says 5."), ("fail", "It does not say 5.")]
    assert [run.outcome for run in replay.runs] == ["pass", "fail"]


def test_a_sampled_judged_recording_replays_byte_for_byte(tmp_path):
    path = tmp_path / "sam.yaml"
    path.write_text(JUDGED)
    _record(path, "2 + 3 = 5", "2 + 3 = 6")
    file = path.parent / "cassettes" / "sam.yaml"
    snapshot = path.parent / "__snapshots__" / "sam" / "function_calling.json"

    replay = run_samples(path, "function_calling")

    assert replay.trace is not None and replay.trace.to_json() == snapshot.read_text("utf-8")
    assert Cassette.load(file).dumps() == file.read_text("utf-8")  # read and written the same
    assert _cassette(path)["format"] == 3  # samples (2) and role exchanges (3)


def test_a_sampled_judged_cassette_without_one_samples_verdict_is_a_miss_naming_sample_and_judge(
        tmp_path):
    path = tmp_path / "sam.yaml"
    path.write_text(JUDGED)
    _record(path, "2 + 3 = 5", "2 + 3 = 5")
    file = path.parent / "cassettes" / "sam.yaml"
    data = _cassette(path)
    data["exchanges"] = [e for e in data["exchanges"]
                         if not (e["sample"] == 1 and e.get("role") == "judge")]
    file.write_text(yaml.safe_dump(data, sort_keys=False))

    verdict = run_samples(path, "function_calling").verdict

    assert verdict.outcome == "fail"
    said = "\n".join(verdict.problems)
    assert (f"sample 1: the recording no longer fits the agent: {file} "
            "(sample 1): no recorded verdict of the judge for expect.answer.judge "
            f"({path.name}:8): sample 1 has none (sample 0 of the cassette has one") in said
    assert "re-record with record mode `new_episodes`" in said


def test_the_judges_of_samples_may_be_given_apart_from_the_agents_model(tmp_path):
    path = tmp_path / "sam.yaml"
    path.write_text(JUDGED)
    judges = [FunctionLLM(_judging(judge_saying_5), name=f"judge-{i}") for i in range(2)]

    recording = record_samples(path, "function_calling", live("2 + 3 = 5", "2 + 3 = 5"), 2,
                               "rewrite", roles=lambda i: RoleModels(judge=judges[i]))

    assert recording.ok, recording.problems
    keys = [e["key"]["model"] for e in _cassette(path)["exchanges"] if e.get("role")]
    assert keys == ["judge-0", "judge-1"]
    assert [len(judge.requests) for judge in judges] == [1, 1]


def test_each_sample_of_a_simulated_conversation_records_and_replays_its_own_user(tmp_path):
    path = tmp_path / "chat.yaml"
    path.write_text(SIMULATED)

    recording = _record(path, "2 + 3 = 5", "2 + 3 = 5")

    assert recording.ok and recording.written, recording.problems
    users = [(e["sample"], e["response"]["message"]["content"])
             for e in _cassette(path)["exchanges"] if e.get("role") == "user"]
    assert users == [(0, "Sample 0 here: what is 2 + 3?"), (1, "Sample 1 here: what is 2 + 3?")]
    replay = run_samples(path, "function_calling")
    assert [run.result.trace.turns[0].user for run in replay.runs if run.result] == [
        "Sample 0 here: what is 2 + 3?", "Sample 1 here: what is 2 + 3?"]
    assert replay.passed
