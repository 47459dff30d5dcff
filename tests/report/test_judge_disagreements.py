"""A sampled case's judged expectations in the report: every sample's verdicts, and a verdict
that differs between samples marked apart from the split votes of one sample's judges; the
marks survive report.json's round trip (baselines, merged shards)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentkit.eval._samples import record_samples
from agentkit.harness import Case, run_case
from agentkit.llms.mock import FunctionLLM, tool_call
from agentkit.llms.types import ChatMessage
from agentkit.report import render_json, run_comparison
from agentkit.report._compare import disagreement_lines
from agentkit.report._model import Comparison
from agentkit.report._render import render_markdown
from agentkit.scenario.runner import load
from tests.scenario_text import adding_scenario

SCENARIO = adding_scenario("sam", """\
expect:
  answer: {judge: "says that 2 + 3 is 5", samples: 3}
min_pass_rate: 0.5
agents:
  function_calling:
    recording: cassettes/sam.yaml
""")

PASS = '{"verdict": "pass", "reason": "It says 5."}'
FAIL = '{"verdict": "fail", "reason": "It shows no working."}'


@pytest.fixture
def recorded(tmp_path: Path) -> Path:
    """Two samples, each judged 3 times: sample 0's votes split (2 of 3 pass), sample 1's
    all fail."""
    path = tmp_path / "sam.yaml"
    path.write_text(SCENARIO, "utf-8")
    votes = {0: [PASS, FAIL, PASS], 1: [FAIL, FAIL, FAIL]}

    def live(index: int) -> FunctionLLM:
        def answer(messages: list[ChatMessage], tools: object) -> object:
            if (messages[0].content or "").startswith("You are a strict, fair judge"):
                return votes[index].pop(0)
            if not any(m.role.value == "tool" for m in messages):
                return tool_call("add", a=2, b=3)
            return "2 + 3 = 5"
        return FunctionLLM(answer, name="m")

    recording = record_samples(path, "function_calling", live, 2, "rewrite")
    assert recording.ok, recording.problems
    return path


@pytest.fixture
def comparison(recorded: Path) -> Comparison:
    return run_comparison(recorded, ["function_calling"])


def test_the_commands_and_the_plugin_print_a_disagreement_in_the_same_lines(recorded):
    case = run_case(Case(load(recorded), "function_calling"))

    assert disagreement_lines(case) == [
        "judges disagree between samples on expect.answer.judge ('says that 2 + 3 is 5'):",
        "  sample 0: pass -- It says 5.",
        "  sample 1: fail -- It shows no working."]


def test_a_split_sample_and_a_disagreement_between_samples_are_marked_apart(comparison):
    markdown = render_markdown(comparison)

    assert "pass (split, 3 votes) (samples disagree)" in markdown  # sample 0
    assert "| fail (samples disagree) " in markdown  # sample 1: its votes agree
    assert ("- `sam[function_calling]` `expect.answer.judge` (says that 2 + 3 is 5):\n"
            "  - sample 0: pass -- It says 5.\n"
            "  - sample 1: fail -- It shows no working.\n") in markdown


def test_the_disagreement_survives_report_jsons_round_trip(comparison):
    data = json.loads(render_json(comparison))

    again = Comparison.from_dict(data)

    assert again.rows[0].disagreements == comparison.rows[0].disagreements
    assert [(v.sample, v.verdict, v.split) for v in again.rows[0].judged] == [
        (0, "pass", True), (1, "fail", False)]
    assert render_markdown(again) == render_markdown(comparison)


def test_a_report_json_written_before_disagreements_still_reads(comparison):
    data = json.loads(render_json(comparison))
    row = data["rows"][0]
    del row["disagreements"]
    for verdict in row["judged"]:
        del verdict["sample"]

    again = Comparison.from_dict(data)

    assert again.rows[0].disagreements == [] and again.rows[0].judged[0].sample is None
