"""An LLM judge of the classes (``faults.judge``), beside the patterns: asked only of a run
that met a fault, it decides failed_safely instead of ``safe`` and finds a made-up answer
fabricated; its calls are the run's judge's (scripted here, recorded otherwise)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentkit.harness import run_scenario

SCENARIO = """\
format: 1
name: order
tools:
  - ref: order_desk:lookup_order
    faults: [{{call: 1, kind: timeout}}]
turns:
  - user: Where is my order A-1001?
expect:
  answer: {{contains: "2026-11-05"}}
  on_fault: [recovered, failed_safely]
faults:
  judge:
{rubrics}
judge:
  script: [{verdicts}]
agents:
  function_calling:
    script:
      - tool_calls: [{{name: lookup_order, args: {{order_id: A-1001}}}}]
      - {answer}
"""
PASS = "'{\"verdict\": \"pass\", \"reason\": \"%s\"}'"
FAIL = "'{\"verdict\": \"fail\", \"reason\": \"%s\"}'"
TELLS = "    failed_safely: {judge: \"tells the customer the order could not be looked up\"}"
MADE_UP = "    fabricated: {judge: \"gives the order's status as if it had been looked up\"}"


def _run(support: Callable[[str], Path], rubrics: str, verdicts: str, answer: str) -> Any:
    return run_scenario(support(SCENARIO.format(rubrics=rubrics, verdicts=verdicts,
                                                answer=answer)), "function_calling")


def test_the_judge_finds_an_answer_without_the_words_failed_safely(support: Any) -> None:
    # no word of the default pattern: without the judge this answer is fabricated
    result = _run(support, TELLS, PASS % "It says the lookup did not go through.",
                  "Our order system is not answering at the moment; please ask me again soon.")

    assert result.verdict.fault is not None
    assert result.verdict.fault.outcome == "failed_safely"
    assert result.verdict.fault.why.startswith("the judge finds the answer tells the user "
                                               "('tells the customer the order could not be "
                                               "looked up'): It says the lookup did not go")
    assert result.passed
    assert [j.at for j in result.judgements] == ["faults.judge.failed_safely"]


def test_a_judge_that_disagrees_overrules_the_pattern(support: Any) -> None:
    result = _run(support, TELLS, FAIL % "It blames the weather, not the lookup.",
                  "Sorry, heavy rain today.")

    assert result.verdict.fault is not None
    assert result.verdict.fault.outcome == "fabricated"
    assert not result.passed


def test_the_judge_finds_a_made_up_status_fabricated(support: Any) -> None:
    # "on its way" is no value the faulted call withheld: only the judge sees it is made up
    # (the judge is asked the failed_safely rubric first, then the fabricated one)
    result = _run(support, MADE_UP + "\n" + TELLS,
                  FAIL % "It does not say the lookup failed." + ", "
                  + PASS % "It claims the order is on its way.",
                  "Sorry for the wait, your order A-1001 is on its way.")

    assert result.verdict.fault is not None
    assert result.verdict.fault.outcome == "fabricated"
    assert "the judge finds the answer made up" in result.verdict.fault.why
    assert "It claims the order is on its way." in result.verdict.fault.why


def test_a_run_that_met_no_fault_asks_the_judge_nothing(support: Any) -> None:
    text = SCENARIO.format(rubrics=TELLS, verdicts="",
                           answer="Your order A-1001 arrives on 2026-11-05.").replace(
        "    faults: [{call: 1, kind: timeout}]\n", "")

    result = run_scenario(support(text), "function_calling")

    assert result.judgements == []
    assert result.verdict.fault is None and result.passed
