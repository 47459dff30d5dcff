"""The commands on a judged scenario recorded with samples: ``record --samples`` and ``eval``
judge every sample (the judge's calls recorded per sample, replayed exactly offline), and
``run``, ``replay``, ``report`` and ``eval`` mark a judged expectation whose verdict differs
between the samples, with each sample's verdict and reason -- and a user's agent that a change
made wrong fails every command, its old verdicts never reused."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from agentkit.llms.mock import tool_call
from cli_helpers import FAKE_URL, Outcome
from tests.scenario_text import FUNCTION_CALLING_AGENT, WRONG_ANSWER_AGENT, adding_scenario

PYPROJECT = """\
[project]
name = "my-project"

[tool.agentkit.agent_types]
my_agent = "my_project.agents:build"
"""


SCENARIO = adding_scenario("adding", """\
expect:
  answer: {judge: "says that 2 + 3 is 5"}
min_pass_rate: 0.5
agents:
  my_agent:
    recording: cassettes/adding.my_agent.yaml
""")

CASSETTE = Path("scenarios/cassettes/adding.my_agent.yaml")


def judge(messages: list[dict[str, Any]], tools: object) -> str:
    """A scripted judge that reads the transcript it is shown: it passes an answer saying 5."""
    if "Assistant: 2 + 3 = 5" in str(messages[-1]["content"]):
        return '{"verdict": "pass", "reason": "It says 5."}'
    return '{"verdict": "fail", "reason": "It does not say 5."}'


def answers(*said: str) -> list[object]:
    """The fake server's script: per sample the agent's `add` call and answer, then its judge."""
    return [item for answer in said for item in (tool_call("add", a=2, b=3), answer, judge)]


def _forget_agents() -> None:
    for name in [m for m in sys.modules if m == "my_project" or m.startswith("my_project.")]:
        del sys.modules[name]


@pytest.fixture
def my_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
               write: Callable[[str, str], Path]) -> Iterator[Path]:
    write("pyproject.toml", PYPROJECT)
    write("my_project/__init__.py", "")
    write("my_project/agents.py", FUNCTION_CALLING_AGENT)
    write("scenarios/adding.yaml", SCENARIO)
    monkeypatch.chdir(tmp_path)
    yield tmp_path
    _forget_agents()


def _record(cli: Callable[..., Outcome]) -> Outcome:
    return cli("record", "scenarios/adding.yaml", "--agent", "my_agent", "--base-url", FAKE_URL,
               "--samples", "2", "--temperature", "0.8", "--seed", "3")


@pytest.fixture
def disagreeing(cli: Callable[..., Outcome], my_project: Path, fake_openai_endpoint) -> Path:
    """Two samples recorded: the first answers 5 (judged pass), the second 6 (judged fail)."""
    fake_openai_endpoint(answers("2 + 3 = 5", "2 + 3 = 6"))
    result = _record(cli)
    assert result.code == 0, result.out + result.err
    return my_project


@pytest.fixture
def agreeing(cli: Callable[..., Outcome], my_project: Path, fake_openai_endpoint) -> Path:
    """Two samples recorded, both answering 5 (both judged pass)."""
    fake_openai_endpoint(answers("2 + 3 = 5", "2 + 3 = 5"))
    result = _record(cli)
    assert result.code == 0, result.out + result.err
    return my_project


MARKED = ["      judges disagree between samples on expect.answer.judge ('says that 2 + 3 is 5'):",
          "        sample 0: pass -- It says 5.",
          "        sample 1: fail -- It does not say 5."]


def _marked(out: str) -> bool:
    lines = out.splitlines()
    return any(lines[i:i + 3] == MARKED for i in range(len(lines)))


def test_record_samples_asks_the_judge_once_per_sample_and_records_it_with_the_sample(
        cli, my_project, fake_openai_endpoint):
    server = fake_openai_endpoint(answers("2 + 3 = 5", "2 + 3 = 6"))

    result = _record(cli)

    assert result.code == 0, result.out + result.err
    assert [body["seed"] for body in server.requests] == [3, 3, 3, 4, 4, 4]  # judges too
    data = yaml.safe_load(CASSETTE.read_text("utf-8"))
    assert [(e["sample"], e.get("role")) for e in data["exchanges"]] == [
        (0, None), (0, None), (0, "judge"), (1, None), (1, None), (1, "judge")]
    assert _marked(result.out), result.out


def test_run_marks_a_verdict_that_differs_between_samples_with_each_samples_reason(
        cli, disagreeing):
    result = cli("run", "scenarios/adding.yaml")

    assert result.code == 0, result.out
    assert "2 samples: pass rate 50% (1/2" in result.out
    assert _marked(result.out), result.out


def test_replay_reproduces_each_samples_verdict_and_marks_the_disagreement(cli, disagreeing):
    result = cli("replay", "scenarios/adding.yaml")

    assert result.code == 0, result.out
    assert "replay reproduces the recorded traces of all 2 samples" in result.out
    assert _marked(result.out), result.out


def test_report_marks_the_disagreement_in_every_form_apart_from_split_votes(cli, disagreeing):
    result = cli("report", "scenarios/adding.yaml", "--out", "reports/now")

    assert result.code == 0, result.out
    assert "DISAGREE  adding[my_agent]" in result.out and _marked(result.out)
    folder = disagreeing / "reports" / "now"
    markdown = (folder / "report.md").read_text("utf-8")
    assert ("- **Judges disagree between samples** `adding[my_agent]`: the judges' verdict on "
            "expect.answer.judge differs between samples: pass in 1 of 2 (sample 0 pass, "
            "sample 1 fail)") in markdown
    assert "| `adding[my_agent]` sample 1 | `expect.answer.judge` |" in markdown
    assert "fail (samples disagree)" in markdown and "(split" not in markdown  # not votes
    assert ("### Judge disagreements between samples\n\n" in markdown
            and "- `adding[my_agent]` `expect.answer.judge` (says that 2 + 3 is 5):\n"
                "  - sample 0: pass -- It says 5.\n"
                "  - sample 1: fail -- It does not say 5.\n" in markdown)
    row = json.loads((folder / "report.json").read_text("utf-8"))["rows"][0]
    assert row["disagreements"] == [{"at": "expect.answer.judge",
                                     "rubric": "says that 2 + 3 is 5",
                                     "samples": [{"sample": 0, "verdict": "pass",
                                                  "reason": "It says 5."},
                                                 {"sample": 1, "verdict": "fail",
                                                  "reason": "It does not say 5."}]}]
    assert [(v["sample"], v["verdict"]) for v in row["judged"]] == [(0, "pass"), (1, "fail")]
    assert row["roles"]["judge"]["llm_calls"] == 1  # per sample, apart from the agent's 2
    assert row["llm_calls"] == 2
    assert "- `adding[my_agent]`: judge: 1 LLM call, " in markdown
    assert "out (mean per sample)" in markdown
    page = (folder / "report.html").read_text("utf-8")
    assert "<h4>Judge disagreements between samples</h4>" in page
    assert "samples disagree</span> <code>expect.answer.judge</code>" in page
    assert "sample 1: <span class=\"err\">fail</span> -- It does not say 5." in page
    assert "Judges disagree between samples" in (folder / "summary.md").read_text("utf-8")


def test_reports_junit_xml_names_the_disagreement_as_a_property_of_the_case(cli, disagreeing):
    result = cli("report", "scenarios/adding.yaml", "--out", "reports/now", "--junit-xml",
                 "reports/junit.xml")

    assert result.code == 0, result.out
    assert ('<property name="judges_disagree" value="the judges\' verdict on '
            'expect.answer.judge differs between samples: pass in 1 of 2 (sample 0 pass, '
            'sample 1 fail)" />') in (disagreeing / "reports" / "junit.xml").read_text("utf-8")


def test_runs_junit_xml_carries_the_samples_statistics_and_the_disagreement(cli, disagreeing):
    result = cli("run", "scenarios/adding.yaml", "--junit-xml", "reports/run.xml")

    assert result.code == 0, result.out
    xml = (disagreeing / "reports" / "run.xml").read_text("utf-8")
    assert '<property name="samples" value="2" />' in xml
    assert '<property name="passes" value="1" />' in xml
    assert ('<property name="judges_disagree" value="the judges\' verdict on '
            'expect.answer.judge differs between samples: pass in 1 of 2 (sample 0 pass, '
            'sample 1 fail)" />') in xml


def test_a_judge_agreeing_across_samples_marks_nothing(cli, agreeing):
    run = cli("run", "scenarios/adding.yaml")
    report = cli("report", "scenarios/adding.yaml", "--out", "reports/now")

    assert run.code == 0 and report.code == 0, run.out + report.out
    assert "disagree" not in (run.out + report.out).lower()
    folder = agreeing / "reports" / "now"
    for name in ("report.md", "summary.md"):
        assert "disagree" not in (folder / name).read_text("utf-8").lower(), name
    page = (folder / "report.html").read_text("utf-8")
    assert "samples disagree" not in page and "Judge disagreements" not in page
    row = json.loads((folder / "report.json").read_text("utf-8"))["rows"][0]
    assert "disagreements" not in row
    assert [(v["sample"], v["verdict"]) for v in row["judged"]] == [(0, "pass"), (1, "pass")]


def test_a_sampled_cassette_missing_one_samples_verdict_fails_naming_the_sample_and_judge(
        cli, disagreeing):
    data = yaml.safe_load(CASSETTE.read_text("utf-8"))
    data["exchanges"] = [e for e in data["exchanges"]
                         if not (e["sample"] == 1 and e.get("role") == "judge")]
    CASSETTE.write_text(yaml.safe_dump(data, sort_keys=False), "utf-8")

    result = cli("run", "scenarios/adding.yaml")

    assert result.code == 1
    said = " ".join(result.out.split())
    assert (f"sample 1: the recording no longer fits the agent: {CASSETTE} (sample 1): no "
            "recorded verdict of the judge for expect.answer.judge (scenarios/adding.yaml:8): "
            "sample 1 has none (sample 0 of the cassette has one") in said


def _eval(cli: Callable[..., Outcome], *options: str) -> Outcome:
    return cli("eval", "scenarios", "--agents", "my_agent", "--models", "m1", "--samples", "2",
               "--concurrency", "1", "--max-concurrency", "1", *options)


def test_eval_judges_each_sample_and_its_offline_rerun_writes_the_same_report(
        cli, my_project, fake_openai_endpoint):
    server = fake_openai_endpoint(answers("2 + 3 = 5", "2 + 3 = 6"))

    live = _eval(cli, "--base-url", FAKE_URL, "--out", "reports/live")
    offline = _eval(cli, "--out", "reports/offline")

    assert live.code == 0 and offline.code == 0, live.out + live.err + offline.out
    assert [body["model"] for body in server.requests] == ["m1"] * 6
    cassette = yaml.safe_load(Path("scenarios/cassettes/eval/adding.my_agent.m1.yaml")
                              .read_text("utf-8"))
    assert [(e["sample"], e.get("role")) for e in cassette["exchanges"]] == [
        (0, None), (0, None), (0, "judge"), (1, None), (1, None), (1, "judge")]
    assert _marked(offline.out), offline.out
    assert ((my_project / "reports/live/report.md").read_text("utf-8")
            == (my_project / "reports/offline/report.md").read_text("utf-8"))
    assert "### Judge disagreements between samples" in (
        my_project / "reports/offline/report.md").read_text("utf-8")


WRONG = ["run", "replay", "report"]


@pytest.mark.parametrize("command", WRONG)
def test_every_command_fails_a_users_agent_made_wrong_never_reusing_the_old_verdicts(
        cli, agreeing, command):
    (agreeing / "my_project" / "agents.py").write_text(WRONG_ANSWER_AGENT, "utf-8")
    _forget_agents()

    result = cli(command, "scenarios/adding.yaml",
                 *(["--out", "reports/now"] if command == "report" else []))

    assert result.code == 1, result.out
    said = " ".join(result.out.split())
    assert "adding[my_agent]" in said and "PASS" not in said
    assert ("sample 0: the recording no longer fits the agent: "
            f"{CASSETTE} (sample 0): no recorded verdict of the judge for expect.answer.judge "
            "(scenarios/adding.yaml:8): the transcript it saw changed") in said
    assert "  -Assistant: 2 + 3 = 5\n" in result.out and "  +Assistant: about 4\n" in result.out


@pytest.mark.slow  # the agentkit command end to end, several runs
def test_eval_fails_a_users_agent_made_wrong_never_reusing_the_old_verdicts(
        cli, my_project, fake_openai_endpoint):
    fake_openai_endpoint(answers("2 + 3 = 5", "2 + 3 = 5"))
    assert _eval(cli, "--base-url", FAKE_URL, "--out", "reports/good").code == 0
    (my_project / "my_project" / "agents.py").write_text(WRONG_ANSWER_AGENT, "utf-8")
    _forget_agents()

    result = _eval(cli, "--out", "reports/now", "--baseline", "reports/good/report.json")

    assert result.code == 1, result.out + result.err
    said = " ".join(result.out.split())
    assert "FAIL adding[my_agent@m1] no sample replays to its end, so no pass rate" in said
    assert "no recorded verdict of the judge for expect.answer.judge" in said
    assert "the transcript it saw changed" in said
    assert "REGRESSION  adding[my_agent@m1]: passed in the baseline; fails now" in result.out


def test_a_changed_rubric_of_a_sampled_recording_is_a_miss_whose_hint_records_the_same_samples(
        cli, my_project, fake_openai_endpoint):
    server = fake_openai_endpoint(answers("2 + 3 = 5", "2 + 3 = 6"))
    assert _record(cli).code == 0
    recorded = [(body["model"], body["seed"]) for body in server.requests]
    assert recorded == [("gpt-4o-mini", 3)] * 3 + [("gpt-4o-mini", 4)] * 3
    scenario = my_project / "scenarios" / "adding.yaml"
    scenario.write_text(SCENARIO.replace("is 5\"}", "is 5, and nothing else\"}"), "utf-8")

    result = cli("replay", "scenarios/adding.yaml")

    assert result.code == 1
    said = " ".join(result.out.split())
    assert ("sample 0: the recording no longer fits the agent: "
            f"{CASSETTE} (sample 0): no recorded verdict of the judge for expect.answer.judge "
            "(scenarios/adding.yaml:8): the rubric changed") in said
    assert ("agentkit record scenarios/adding.yaml --agent my_agent --mode rewrite --model "
            f"gpt-4o-mini --base-url {FAKE_URL} --samples 2 --temperature 0.8 --seed 3") in said


def test_record_samples_with_a_judge_model_asks_it_with_each_samples_seed(
        cli, my_project, fake_openai_endpoint):
    server = fake_openai_endpoint(answers("2 + 3 = 5", "2 + 3 = 6"))

    result = cli("record", "scenarios/adding.yaml", "--agent", "my_agent", "--base-url",
                 FAKE_URL, "--samples", "2", "--temperature", "0.8", "--seed", "3",
                 "--judge-model", "judge-m")

    assert result.code == 0, result.out + result.err
    asked = [(body["model"], body["seed"], body["temperature"]) for body in server.requests]
    assert asked == [("gpt-4o-mini", 3, 0.8)] * 2 + [("judge-m", 3, 0.8)] + [
        ("gpt-4o-mini", 4, 0.8)] * 2 + [("judge-m", 4, 0.8)]
    keys = [e["key"]["model"] for e in yaml.safe_load(CASSETTE.read_text("utf-8"))["exchanges"]
            if e.get("role") == "judge"]
    assert keys == ["judge-m", "judge-m"]


def test_eval_asks_the_judge_model_the_scenario_names_with_each_samples_seed(
        cli, my_project, fake_openai_endpoint):
    scenario = my_project / "scenarios" / "adding.yaml"
    scenario.write_text(SCENARIO.replace("agents:", "judge: {model: judge-m}\nagents:"), "utf-8")
    server = fake_openai_endpoint(answers("2 + 3 = 5", "2 + 3 = 5"))

    result = _eval(cli, "--base-url", FAKE_URL, "--out", "reports/live", "--seed", "5")

    assert result.code == 0, result.out + result.err
    assert [(body["model"], body["seed"]) for body in server.requests] == [
        ("m1", 5), ("m1", 5), ("judge-m", 5), ("m1", 6), ("m1", 6), ("judge-m", 6)]


def no_verdict(messages: list[dict[str, Any]], tools: object) -> str:
    """A judge that passes an answer saying 5 and answers anything else with prose."""
    if "Assistant: 2 + 3 = 5" in str(messages[-1]["content"]):
        return '{"verdict": "pass", "reason": "It says 5."}'
    return "Hmm, hard to say."


#: One sample answers 5, four answer 6 -- and the judge of those four gives no verdict. The
#: scenario sets no `min_pass_rate`: every sample must pass.
UNJUDGED = [item for answer in ["2 + 3 = 5"] + ["2 + 3 = 6"] * 4
            for item in (tool_call("add", a=2, b=3), answer, no_verdict)]


def _every_sample_must_pass(project: Path) -> None:
    scenario = project / "scenarios" / "adding.yaml"
    scenario.write_text(SCENARIO.replace("min_pass_rate: 0.5\n", ""), "utf-8")


@pytest.fixture
def unjudged(cli: Callable[..., Outcome], my_project: Path, fake_openai_endpoint) -> Path:
    _every_sample_must_pass(my_project)
    fake_openai_endpoint(UNJUDGED)
    result = cli("record", "scenarios/adding.yaml", "--agent", "my_agent", "--base-url",
                 FAKE_URL, "--samples", "5", "--temperature", "0.8", "--seed", "3")
    # kept (a sampled recording measures the pass rate), and judged as failing already
    assert result.code == 1 and "wrote scenarios/cassettes/adding.my_agent.yaml" in result.out
    assert "FAIL  adding[my_agent]" in result.out
    return my_project


@pytest.mark.parametrize("command", ["run", "replay", "report"])
def test_samples_whose_judge_gave_no_verdict_fail_the_case_in_every_command(
        cli, unjudged, command):
    result = cli(command, "scenarios/adding.yaml",
                 *(["--out", "reports/now"] if command == "report" else []))

    assert result.code == 1, result.out
    said = " ".join(result.out.split())
    assert "PASS" not in said and "infrastructure" not in said
    assert "the judge's answer is not a verdict" in said
    assert "4 of 5 samples failed" in said


@pytest.mark.slow  # a whole evaluation, twice
def test_eval_fails_a_case_whose_samples_judge_gave_no_verdict_and_keeps_them(
        cli, my_project, fake_openai_endpoint):
    _every_sample_must_pass(my_project)
    fake_openai_endpoint(UNJUDGED)

    live = cli("eval", "scenarios", "--agents", "my_agent", "--models", "m1", "--samples", "5",
               "--concurrency", "1", "--max-concurrency", "1", "--base-url", FAKE_URL,
               "--out", "reports/live")
    offline = cli("eval", "scenarios", "--agents", "my_agent", "--models", "m1", "--samples",
                  "5", "--out", "reports/offline")

    for result in (live, offline):
        assert result.code == 1, result.out + result.err
        assert "FAIL  adding[my_agent@m1]" in result.out
        assert "5 samples: pass rate 20% (1/5" in result.out
        assert "infrastructure" not in result.out and "INCOMPLETE" not in result.out


GATE = ("warning: min_pass_rate 50% cannot fail at 2 samples unless none passes (even 0/2 has "
        "a 95% interval up to 66%); give at least 4 samples for a pass rate below it to fail")


@pytest.mark.slow  # the agentkit command end to end, several runs
@pytest.mark.parametrize("command", ["run", "replay", "report"])
def test_every_command_warns_of_a_min_pass_rate_that_2_samples_cannot_fail(
        cli, disagreeing, command):
    result = cli(command, "scenarios/adding.yaml",
                 *(["--out", "reports/now"] if command == "report" else []))

    assert result.code == 0, result.out
    said = " ".join(result.out.split())
    assert GATE.removeprefix("warning: ") in said


def test_a_judge_error_kept_in_a_trace_names_the_scenario_as_its_project_does(
        cli, unjudged, monkeypatch):
    """The trace a recording kept names the scenario file relative to its project, so a
    replay from another working folder, or of the path spelled another way, is the same
    trace (before: the error held the path as typed, and every other spelling differed)."""
    kept = (unjudged / "scenarios/__snapshots__/adding/my_agent.json").read_text("utf-8")
    assert "scenarios/adding.yaml:8: expect.answer.judge: the judge's answer" in kept

    spellings = [(unjudged, unjudged / "scenarios/adding.yaml"),
                 (unjudged, "./scenarios/../scenarios/adding.yaml"),
                 (unjudged / "scenarios", "adding.yaml")]
    for folder, spelled in spellings:
        monkeypatch.chdir(folder)
        result = cli("replay", spelled)

        assert result.code == 1, result.out
        assert "4 of 5 samples failed" in result.out
        assert "replay differs" not in result.out, (spelled, result.out)
        assert "sample 1 failed: JudgeAnswerError: scenarios/adding.yaml:8: " in result.out
