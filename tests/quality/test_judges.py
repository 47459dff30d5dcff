"""Judges that can fail: every judged expectation is given known-bad transcripts made offline
from its good run, which its judge must fail; a judge that passes one is reported."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

from agentkit.cli import main
from agentkit.harness import RoleModels, load
from agentkit.llms.mock import FunctionLLM
from agentkit.quality import judge_trials, known_bad
from tests.quality.scenarios import write

JUDGED = """\
format: 1
name: capital
tools:
  - ref: mocks.tools:capital
turns:
  - user: What is the capital of France?
expect:
  answer: {judge: "names Paris as the capital of France"}
agents:
  function_calling:
    script:
      - tool_calls: [{name: capital, args: {country: France}}]
      - "The capital of France is Paris."
"""

BUNDLED = Path("scenarios/live_roles/live_judged_answer.yaml")


def _verdict(passed: bool, reason: str) -> str:
    return json.dumps({"verdict": "pass" if passed else "fail", "reason": reason})


def _careful_judge(messages, tools):
    """Passes an answer that names Paris and claims nothing else: reads the transcript."""
    answer = re.search(r"^Assistant: (.*)$", messages[-1].content, flags=re.M)
    text = answer.group(1) if answer else ""
    return _verdict("Paris" in text and "refund" not in text, "read the answer")


def test_known_bad_answers_are_made_from_the_good_one():
    assert [label for label, _ in known_bad("Rome has 2748109 people.")] == [
        "wrong numbers", "a refusal", "no answer", "an invented promise", "off the subject"]
    assert known_bad("It is 21°C.")[0] == ("wrong numbers", "It is 76°C.")
    assert known_bad("Paris.")[0][0] == "a refusal"


def test_a_judge_that_reads_the_answer_fails_every_known_bad_transcript(tmp_path: Path):
    scenario = load(write(tmp_path, JUDGED) / "capital.yaml")

    [trial] = judge_trials([scenario], roles=RoleModels(judge=FunctionLLM(_careful_judge)))

    assert (trial.case, trial.at) == ("capital[function_calling]", "expect.answer.judge")
    assert trial.score() == (4, 4)
    assert trial.passed() == []


def test_a_scripted_judge_passes_known_bad_transcripts_and_is_reported():
    trials = judge_trials([load(BUNDLED)], ["react"])

    assert [(t.case, t.score()) for t in trials] == [("live_judged_answer[react]", (0, 4))]
    assert [bad.label for bad in trials[0].passed()] == [
        "a refusal", "no answer", "an invented promise", "off the subject"]


def test_a_judge_that_fails_the_good_run_is_not_tried(tmp_path: Path):
    scenario = load(write(tmp_path, JUDGED) / "capital.yaml")
    strict = FunctionLLM(lambda messages, tools: _verdict(False, "never"))

    [trial] = judge_trials([scenario], roles=RoleModels(judge=strict))

    assert trial.bad == []
    assert trial.why == "its judge does not pass the good run (fail: never)"


def test_mutate_with_judges_names_the_judge_that_passes_a_known_bad_transcript():
    out = io.StringIO()

    code = main(["mutate", str(BUNDLED), "--agents", "react", "--judges"], out=out)

    assert code == 0
    judges = out.getvalue().split("\njudges: ", 1)[1]
    assert judges.startswith("1 judged expectation given known-bad transcripts\n"
                             "  PASSES KNOWN-BAD  live_judged_answer[react]: expect.answer.judge "
                             "('names Paris as the capital of France'): failed 0 of 4")
    assert "      passed a refusal (\"I'm sorry, I can't help with that.\"): " in judges
    assert judges.rstrip().endswith("judge score: 0 of 4 known-bad transcripts failed (0%)")
