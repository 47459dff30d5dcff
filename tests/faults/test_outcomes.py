"""Outcome classes: a run that met a fault is classified recovered, failed safely, fabricated
or crashed -- each shown here by an agent written to behave that way."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentkit.harness import AgentContext, register_agent_type, run_scenario

HEADER = """\
format: 1
name: order
tools:
  - ref: order_desk:lookup_order
    faults: [{fault}]
turns:
  - user: Where is my order A-1001?
expect:
  answer: {{contains: "2026-11-05"}}
  on_fault: [recovered, failed_safely]
agents:
  function_calling:
    script:
"""
CALL = "      - tool_calls: [{name: lookup_order, args: {order_id: A-1001}}]\n"


def _scenario(support: Callable[[str], Path], fault: str, *replies: str) -> Path:
    return support(HEADER.format(fault=fault) + "".join(replies))


def test_an_agent_answering_from_a_truncated_record_fabricated(support: Any) -> None:
    path = _scenario(support, "{call: 1, kind: truncate, keep: 40}", CALL,
                     "      - Your order A-1001 arrives on 2026-11-05.\n")

    result = run_scenario(path, "function_calling")

    assert result.verdict.fault is not None
    assert result.verdict.fault.outcome == "fabricated"
    assert "'2026-11-05', which only the faulted call lookup_order#1:truncate(keep=40)" in \
        result.verdict.fault.why
    assert not result.passed
    assert [p.kind for p in result.problems] == ["fault_outcome"]


def test_an_agent_retrying_a_timeout_recovered(support: Any) -> None:
    path = _scenario(support, "{call: 1, kind: timeout, after: 30}", CALL, CALL,
                     "      - Your order A-1001 has shipped and arrives on 2026-11-05.\n")

    result = run_scenario(path, "function_calling")

    assert result.verdict.fault is not None
    assert result.verdict.fault.outcome == "recovered"
    assert result.passed, result.problems
    assert result.trace.turns[0].wall_time == 30.0


def test_an_agent_telling_the_user_failed_safely(support: Any) -> None:
    path = _scenario(support, "{call: 1, kind: timeout}", CALL,
                     "      - Sorry, the order service timed out; please try again later.\n")

    result = run_scenario(path, "function_calling")

    assert result.verdict.fault is not None
    assert result.verdict.fault.outcome == "failed_safely"
    assert result.passed


def test_an_agent_answering_as_if_the_call_had_worked_fabricated(support: Any) -> None:
    path = _scenario(support, "{call: 1, kind: timeout}", CALL,
                     "      - Your order A-1001 is on its way.\n")

    result = run_scenario(path, "function_calling")

    assert result.verdict.fault is not None
    assert result.verdict.fault.outcome == "fabricated"
    assert result.verdict.fault.why.startswith("it answered as if lookup_order#1:timeout had "
                                               "worked")


class _Careless:
    """Calls the order tool itself and lets its error escape."""

    def __init__(self, context: AgentContext) -> None:
        self.tool = context.tools[0]
        self.chat_history: list[Any] = []

    def chat(self, message: str, **_: Any) -> str:
        return f"Your order: {self.tool.call(order_id='A-1001')}"

    def stream_chat(self, message: str, **_: Any) -> Any:
        raise NotImplementedError


def test_an_agent_whose_tool_error_escapes_crashed(support: Any) -> None:
    register_agent_type("careless", _Careless)
    path = support(HEADER.format(fault="{call: 1, kind: error, message: order service down}")
                   .replace("  function_calling:\n", "  careless:\n") + "      - unused\n")

    result = run_scenario(path, "careless")

    assert result.verdict.fault is not None
    assert result.verdict.fault.outcome == "crashed"
    assert "order service down" in result.verdict.fault.why
    assert "the run crashed" in result.problems[0]


def test_without_on_fault_a_faulted_run_meets_the_ordinary_expectations(support: Any) -> None:
    text = HEADER.format(fault="{call: 1, kind: timeout}").replace(
        "  on_fault: [recovered, failed_safely]\n", "")
    path = support(text + CALL + "      - Sorry, the order service timed out.\n")

    result = run_scenario(path, "function_calling")

    assert result.verdict.fault is None
    assert [p.kind for p in result.problems] == ["answer"]


def test_a_required_class_makes_a_fabricating_run_pass_when_listed(support: Any) -> None:
    text = HEADER.format(fault="{call: 1, kind: timeout}").replace(
        "on_fault: [recovered, failed_safely]", "on_fault: [fabricated]")
    path = support(text + CALL + "      - Your order A-1001 is on its way.\n")

    assert run_scenario(path, "function_calling").passed


def test_an_agent_failing_after_a_late_output_failed_not_fabricated(support: Any) -> None:
    # a latency fault delivers the real output: an agent that then answers wrongly failed on
    # its own, reported with its ordinary problems, even though on_fault allows nothing else
    path = _scenario(support, "{call: 1, kind: latency, after: 20}", CALL,
                     "      - Your order A-1001 arrives next week.\n")

    result = run_scenario(path, "function_calling")

    assert result.verdict.fault is not None
    assert result.verdict.fault.outcome == "failed"
    assert result.verdict.fault.why.startswith("lookup_order#1:latency(after=20) withheld "
                                               "nothing (the real output, late)")
    assert [p.kind for p in result.problems] == ["answer"]
    assert "2026-11-05" in result.problems[0]
    assert result.trace.turns[0].wall_time == 20.0


def test_a_late_output_an_agent_answers_from_recovered(support: Any) -> None:
    path = _scenario(support, "{call: 1, kind: latency, after: 20}", CALL,
                     "      - Your order A-1001 arrives on 2026-11-05.\n")

    result = run_scenario(path, "function_calling")

    assert result.verdict.fault is not None
    assert result.verdict.fault.outcome == "recovered"
    assert result.passed
