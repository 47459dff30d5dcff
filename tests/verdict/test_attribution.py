"""A failed run is attributed to the component the trace shows at fault -- the agent, the
simulated user, a judge or the infrastructure -- each shown with a component made wrong on
purpose."""

from __future__ import annotations

import io
import json
from pathlib import Path

from agentkit.cli import main
from agentkit.scenario import run_scenario

PASS = '{"verdict": "pass", "reason": "It names Paris."}'


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "case.yaml"
    path.write_text("format: 1\nname: case\n" + text, "utf-8")
    return path


def _cause(tmp_path: Path, text: str) -> tuple[str, str]:
    verdict = run_scenario(_write(tmp_path, text)).verdict
    assert verdict.outcome == "fail"
    assert verdict.cause is not None
    return verdict.cause.cause, verdict.cause.why


def test_a_wrong_answer_with_nothing_else_at_fault_is_the_agents(tmp_path):
    cause, why = _cause(tmp_path, """\
turns:
  - user: What is the capital of France?
expect: {answer: {contains: Paris}}
agents: {function_calling: {script: ["It is Rome."]}}
""")
    assert (cause, why) == ("agent", "no other component is shown at fault")


def test_a_judge_that_passes_what_an_objective_check_fails_is_the_judges(tmp_path):
    cause, why = _cause(tmp_path, f"""\
turns:
  - user: What is the capital of France?
    answer: {{contains: Paris}}
expect: {{answer: {{judge: "names Paris as the capital of France"}}}}
judge: {{script: ['{PASS}']}}
agents: {{function_calling: {{script: ["It is Rome."]}}}}
""")
    assert cause == "judge"
    assert why == ("it passed expect.answer.judge, but an objective check of the answer "
                   "fails: turn 1: answer 'It is Rome.' does not match contains 'Paris'")


def test_a_judge_that_answers_no_verdict_is_the_judges(tmp_path):
    cause, why = _cause(tmp_path, """\
turns:
  - user: What is the capital of France?
expect: {answer: {judge: "names Paris as the capital of France"}}
judge: {script: ["Looks good!"]}
agents: {function_calling: {script: ["Paris."]}}
""")
    assert cause == "judge"
    assert why.startswith("the judge of expect.answer.judge gave no verdict: ")


def test_a_simulated_user_that_talks_as_the_assistant_broke_its_persona(tmp_path):
    cause, why = _cause(tmp_path, """\
user:
  simulate: a customer whose parcel is late
  goal: get a refund
  max_turns: 2
  script: [My parcel is late., "Hello! How can I help you today?"]
  stop_when: {contains: refund}
agents: {function_calling: {script: ["What is your order number?", "Sorry?"]}}
""")
    assert cause == "simulated_user"
    assert why == ("it broke its persona, writing as the assistant in turn 2: 'Hello! How can "
                   "I help you today?'")


def test_a_simulated_user_that_says_its_goal_gave_its_instructions_away(tmp_path):
    cause, why = _cause(tmp_path, """\
user:
  simulate: a customer whose parcel is late
  goal: get a refund for order A-1
  max_turns: 2
  script: [My parcel is late., My goal is to get a refund for order A-1.]
  stop_when: {contains: refunded}
agents: {function_calling: {script: ["What is your order number?", "Noted."]}}
""")
    assert (cause, why.split(" in ")[0]) == ("simulated_user", "it gave its instructions away")


def test_a_simulated_user_that_keeps_to_its_persona_leaves_the_failure_to_the_agent(tmp_path):
    cause, _ = _cause(tmp_path, """\
user:
  simulate: a customer whose parcel is late
  goal: get a refund
  max_turns: 2
  script: [My parcel is late., It is order A-1.]
  stop_when: {contains: refund}
agents: {function_calling: {script: ["What is your order number?", "Noted."]}}
""")
    assert cause == "agent"


def test_a_model_server_error_is_the_infrastructures(tmp_path):
    cause, why = _cause(tmp_path, """\
turns:
  - user: What is the capital of France?
expect: {answer: {contains: Paris}}
agents:
  function_calling:
    max_retries: 0
    script: [{error: {type: server, message: overloaded}}]
""")
    assert cause == "infrastructure"
    assert "ServerError" in why and "overloaded" in why


def test_a_passing_run_has_no_cause(tmp_path):
    verdict = run_scenario(_write(tmp_path, """\
turns:
  - user: What is the capital of France?
expect: {answer: {contains: Paris}}
agents: {function_calling: {script: ["Paris."]}}
""")).verdict
    assert verdict.passed and verdict.cause is None


def test_the_cause_is_in_the_console_the_report_and_junit(tmp_path):
    path = _write(tmp_path, f"""\
turns:
  - user: What is the capital of France?
    answer: {{contains: Paris}}
expect: {{answer: {{judge: "names Paris as the capital of France"}}}}
judge: {{script: ['{PASS}']}}
agents: {{function_calling: {{script: ["It is Rome."]}}}}
""")
    out = io.StringIO()
    assert main(["run", str(path), "--snapshots", "off", "--junit-xml",
                 str(tmp_path / "run.xml")], out=out) == 1
    report = tmp_path / "report"
    assert main(["report", str(path), "--out", str(report), "--snapshots", "off",
                 "--junit-xml", str(tmp_path / "report.xml")], out=io.StringIO()) == 1

    line = "failure attributed to the judge: it passed expect.answer.judge"
    assert line in out.getvalue()
    markdown = (report / "report.md").read_text("utf-8")
    assert "**Failed** `case[function_calling]`: " in markdown and line in markdown
    row = json.loads((report / "report.json").read_text("utf-8"))["rows"][0]
    assert row["cause"]["cause"] == "judge"
    assert line in (report / "report.html").read_text("utf-8")
    for junit in ("run.xml", "report.xml"):
        assert '<property name="failure_cause" value="judge"' in (
            tmp_path / junit).read_text("utf-8")


def test_a_run_failing_only_for_want_of_a_snapshot_is_attributed_to_no_component(tmp_path):
    path = _write(tmp_path, """\
turns:
  - user: What is the capital of France?
expect: {answer: {contains: Paris}}
agents: {function_calling: {script: ["Paris."]}}
""")
    out = io.StringIO()

    assert main(["run", str(path)], out=out) == 1

    assert "no snapshot of this trace yet" in out.getvalue()
    assert "failure attributed" not in out.getvalue()
    (tmp_path / "case.yaml").write_text(path.read_text("utf-8").replace("Paris.", "Rome."),
                                        "utf-8")
    out = io.StringIO()
    assert main(["run", str(path)], out=out) == 1  # a real failure still is the agent's
    assert "failure attributed to the agent: no other component is shown at fault" in (
        out.getvalue())
