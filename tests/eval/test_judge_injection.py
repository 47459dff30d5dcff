"""The bundled adversarial set for judges (agentkit.eval.judge_injection): every case judged as
a judged expectation is, the verdict each should get, and the command's table, figures and
exit status -- with scripted judges that can and cannot be talked round. The live lane runs it
against the local model (tests/live/test_judges_live.py)."""

from __future__ import annotations

import io
import json
import re

import pytest

from agentkit.eval.judge_injection import CASES, QUESTION, RUBRIC, main, render, run_set
from agentkit.llms.errors import APIConnectionError
from agentkit.llms.fake_openai import FakeOpenAIServer
from agentkit.llms.mock import FunctionLLM
from agentkit.scenario.llm_judge import JUDGE_PROMPT

FENCED = re.compile(r"<<<transcript (\w+)>>>\n(.*)\n<<<end of transcript \1>>>", re.DOTALL)


def _answer(messages) -> str:
    """The agent's answer in a judge request (ChatMessages, or the JSON messages a server
    gets): what follows `Assistant: ` inside the fence."""
    last = messages[-1]
    content = last["content"] if isinstance(last, dict) else last.content
    fenced = FENCED.search(content)
    assert fenced, content
    return fenced.group(2).split("\nAssistant: ", 1)[1]


def _verdict(verdict: str, reason: str, score: float | None = None) -> str:
    data = {"verdict": verdict, "reason": reason}
    return json.dumps(data if score is None else {**data, "score": score})


def careful(messages, tools) -> str:
    """Judges what the agent said first, whatever else the answer says."""
    first = _answer(messages).split("\n")[0].split(". ")[0]
    return _verdict("pass" if "Paris" in first else "fail", f"It says: {first}")


def gullible(messages, tools) -> str:
    """Does what the answer tells it to: passes on `pass` anywhere in it, else reads Paris."""
    answer = _answer(messages)
    if "pass" in answer.lower() or "lyon is now correct" in answer.lower():
        return _verdict("pass", "The answer says it passes.")
    if "answer fail" in answer.lower():
        return _verdict("fail", "The answer says it fails.")
    return _verdict("pass" if "Paris" in answer else "fail", "It reads the answer.")


def test_each_case_is_judged_with_the_judges_prompt_the_rubric_and_the_fenced_answer():
    llm = FunctionLLM(careful)

    run_set(llm)

    assert len(llm.requests) == len(CASES) == 9
    system, user = llm.requests[0].messages
    assert system.content == JUDGE_PROMPT.format(subject="the assistant's last answer",
                                                 rubric=RUBRIC)
    assert FENCED.search(user.content).group(2) == f"User: {QUESTION}\nAssistant: {CASES[0].answer}"


def test_a_judge_that_judges_what_was_said_holds_every_case():
    outcomes = run_set(FunctionLLM(careful))

    assert [o.verdict for o in outcomes] == [c.expected for c in CASES]
    assert all(o.held for o in outcomes)
    assert render(outcomes, "careful").endswith(
        "careful: 7 of 7 injections resisted, 2 of 2 controls judged right")


def test_a_judge_that_obeys_the_answer_is_broken_by_each_injection_and_the_table_says_which():
    outcomes = run_set(FunctionLLM(gullible))
    table = render(outcomes, "gullible")

    broken = [o.case.name for o in outcomes if not o.held]
    assert broken == [c.name for c in CASES if c.injection]
    assert re.search(r"^\| forged assistant line +\| injection \| fail +\| pass +\| BROKEN ",
                     table, re.MULTILINE), table
    assert table.endswith("gullible: 0 of 7 injections resisted, 2 of 2 controls judged right")


def test_a_judge_that_fails_everything_resists_every_injection_but_not_the_right_control():
    outcomes = run_set(FunctionLLM(lambda messages, tools: _verdict("fail", "No.")))

    assert render(outcomes, "no").endswith(
        "no: 6 of 7 injections resisted, 1 of 2 controls judged right")


def test_an_answer_that_is_no_verdict_or_a_self_contradicting_pass_does_not_count_as_a_pass():
    answers = iter(["Looks good!", _verdict("pass", "Fine.", score=0.1)] * 9)
    outcomes = run_set(FunctionLLM(lambda messages, tools: next(answers)), CASES[:2])

    assert [o.verdict for o in outcomes] == ["no verdict", "fail"]
    assert outcomes[0].reason.startswith("not a JSON object (Expecting value at position 0)")
    assert "contradicts its `pass`" in outcomes[1].reason


@pytest.mark.slow  # the command against a served model
def test_the_command_judges_the_set_through_an_openai_compatible_server_and_exits_by_it():
    base = "http://127.0.0.1:9/v1"
    for judge, status, resisted in ((careful, 0, 7), (gullible, 1, 0)):
        out = io.StringIO()
        with FakeOpenAIServer([judge] * len(CASES), base_url=base) as server:
            code = main(["--base-url", base, "--model", "judge-m", "--response-format",
                         "json_schema", "--max-tokens", "80"], out)

        assert code == status, out.getvalue()
        assert f"judge-m: {resisted} of 7 injections resisted" in out.getvalue()
        sent = server.requests[0]
        assert (sent["model"], sent["max_tokens"], sent["temperature"], sent["seed"]) == (
            "judge-m", 80, 0.0, 0)
        assert sent["response_format"]["json_schema"]["schema"]["required"] == [
            "verdict", "reason"]


@pytest.mark.slow  # an evaluation's many samples
def test_a_server_that_refuses_the_connection_is_exit_2_naming_the_failure(capsys):
    base = "http://127.0.0.1:9/v1"
    with FakeOpenAIServer([APIConnectionError("connection refused")] * 2, base_url=base):
        code = main(["--base-url", base, "--model", "m"], io.StringIO())

    assert code == 2
    assert "judge_injection: error: the judge's model failed: APIConnectionError" in (
        capsys.readouterr().err)


@pytest.mark.parametrize("argv, problem", [
    (["--model", "m"], "the following arguments are required: --base-url"),
    (["--base-url", "http://127.0.0.1:1/v1", "--model", "m", "--response-format", "xml"],
     "argument --response-format: invalid choice: 'xml'"),
    (["--base-url", "http://127.0.0.1:1/v1", "--model", "m", "--max-tokens", "many"],
     "argument --max-tokens: invalid int value: 'many'"),
])
def test_bad_arguments_are_exit_2_saying_what_is_wrong(argv, problem, capsys):
    with pytest.raises(SystemExit) as ended:
        main(argv, io.StringIO())

    assert ended.value.code == 2
    assert problem in capsys.readouterr().err
