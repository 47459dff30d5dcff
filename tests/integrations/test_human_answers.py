"""A turn's scripted ``human:`` answers reach the user's own framework agent when it asks a
human mid-run (tests/integrations/human_agents.py, written as each framework's docs write
human-in-the-loop): LangGraph's ``interrupt()`` is resumed with ``Command(resume=<answer>)`` on
the scenario's thread, LlamaIndex's ``InputRequiredEvent`` answered with a
``HumanResponseEvent``; each request and its answer is in the turn's ``human``. An agent that
ignores the answer, asks twice or never asks fails naming the cause. LlamaIndex's streamed
workflow events and its Context state's changed keys are in the turn's ``events``."""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentkit.scenario import register_agent_type, run_scenario
from agentkit.scenario.agent_types import AGENT_TYPES

pytestmark = pytest.mark.frameworks

FRAMEWORKS = ["lg", "li"]
VARIANTS = ["", "_ignores", "_asks_twice", "_never_asks"]

ASKED = {"lg": '{"amount": 40.0, "order_id": "7", "question": "Approve this refund?"}',
         "li": "Approve a refund of 40.00 EUR of order 7?"}
"""What each framework's agent asks the human (LangGraph: its interrupt's payload as JSON)."""


@pytest.fixture(autouse=True)
def _human_types() -> Iterator[None]:
    # imported here: the default run, without the frameworks, collects this module too
    agents = importlib.import_module("tests.integrations.human_agents")
    with AGENT_TYPES.scoped():
        for framework in FRAMEWORKS:
            for variant in VARIANTS:
                register_agent_type(f"{framework}_hitl{variant}",
                                    getattr(agents, f"{framework}_hitl{variant}"))
        register_agent_type("li_hitl_team", agents.li_hitl_team)
        yield


REFUND = """\
      - tool_calls: [{name: refund, args: {order_id: "7", amount: 40.0}}]
      - I asked; the refund of order 7 was declined.
"""


def approval(tmp_path: Path, agent: str, *, human: str = "[decline]", script: str = REFUND,
             tools: str = "") -> Path:
    """The scenario: the user asks for a refund, the human declines it."""
    path = tmp_path / "approval.yaml"
    path.write_text(f"""\
format: 1
name: approval
{tools}turns:
  - user: Please refund 40 EUR of order 7.
    human: {human}
expect:
  tool_calls:
    calls: [{{name: refund, args: {{order_id: "7", amount: 40.0}},
              output: {{contains: declined by a human}}}}]
agents:
  {agent}:
    script:
{script}""")
    return path


def _calls(result: Any) -> list[Any]:
    return [call for turn in result.trace.turns for step in turn.steps
            for call in step.tool_calls]


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_the_humans_answer_reaches_the_agent_and_both_are_in_the_turn(tmp_path, framework):
    agent = f"{framework}_hitl"

    result = run_scenario(approval(tmp_path, agent), agent)

    assert result.passed, result.problems
    (turn,) = result.trace.to_dict()["turns"]
    assert turn["human"] == [{"request": ASKED[framework], "response": "decline"}]
    # the call that asked ran again with the answer: one call in the trace, as the model saw
    assert [(c.name, c.output, c.is_error) for c in _calls(result)] == [
        ("refund", "the refund of order 7 was declined by a human", False)]


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_an_agent_that_ignores_the_answer_fails_the_expectation_on_its_output(tmp_path,
                                                                              framework):
    agent = f"{framework}_hitl_ignores"

    result = run_scenario(approval(tmp_path, agent), agent)

    assert not result.passed
    problem = result.problems[0]
    assert "output contains 'declined by a human'" in problem, result.problems
    assert "refunded 40.00 EUR of order 7" in problem, result.problems


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_an_agent_that_asks_twice_fails_naming_the_request_left_unanswered(tmp_path, framework):
    agent = f"{framework}_hitl_asks_twice"

    result = run_scenario(approval(tmp_path, agent), agent)

    assert not result.passed
    (turn,) = result.trace.turns
    assert turn.error is not None
    assert turn.error.startswith("HumanAnswerError: the agent asked a human for input"), turn.error
    assert "Are you sure?" in turn.error and "no scripted `human:` answer left" in turn.error
    assert turn.details["human"] == [{"request": ASKED[framework], "response": "decline"}]


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_an_agent_that_never_asks_fails_naming_the_answer_never_asked_for(tmp_path, framework):
    agent = f"{framework}_hitl_never_asks"

    result = run_scenario(approval(tmp_path, agent), agent)

    assert not result.passed
    (turn,) = result.trace.turns
    assert turn.error == (
        "HumanAnswerError: 1 scripted `human:` answer(s) of the turn were never asked for "
        "('decline'): the agent did not ask a human for input as often as the turn expects")


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_a_scenario_tool_that_asks_is_one_call_with_its_latency(tmp_path, framework):
    agent = f"{framework}_hitl"
    tools = ("tools:\n  - ref: tests.integrations.human_agents:"
             f"{'refund' if framework == 'lg' else 'li_refund'}\n    name: refund\n"
             "    latency: 1.5\n")

    result = run_scenario(approval(tmp_path, agent, tools=tools), agent)

    assert result.passed, result.problems
    # the paused run of the call is neither a call nor an error: one call, one latency
    assert [(c.name, c.is_error, c.latency) for c in _calls(result)] == [
        ("refund", False, 1.5)]


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_a_run_that_asks_is_the_same_trace_each_time(tmp_path, framework):
    agent = f"{framework}_hitl"
    path = approval(tmp_path, agent)

    first, second = run_scenario(path, agent), run_scenario(path, agent)

    assert first.passed, first.problems
    assert first.trace.to_json() == second.trace.to_json()


# ---- LangGraph: the interrupt in the graph's nodes, the thread across turns
def test_the_interrupted_node_goes_to_the_interrupt_and_runs_again_on_resuming(tmp_path):
    result = run_scenario(approval(tmp_path, "lg_hitl"), "lg_hitl")

    assert result.passed, result.problems
    (turn,) = result.trace.to_dict()["turns"]
    assert turn["nodes"] == [
        {"node": "model", "changed": ["messages"], "to": ["tools"]},
        {"node": "tools", "changed": [], "to": ["__interrupt__"]},
        {"node": "tools", "changed": ["messages"], "to": ["model"]},
        {"node": "model", "changed": ["messages"], "to": ["__end__"]}]


TWO_REFUNDS = """\
format: 1
name: two-refunds
turns:
  - user: Please refund 40 EUR of order 7.
    human: [decline]
  - user: Then refund 10 EUR of order 8.
    human: [approve]
agents:
  {agent}:
    script:
      - tool_calls: [{{name: refund, args: {{order_id: "7", amount: 40.0}}}}]
      - Declined.
      - tool_calls: [{{name: refund, args: {{order_id: "8", amount: 10.0}}}}]
      - Refunded.
"""


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_each_turn_answers_its_own_requests(tmp_path, framework):
    agent = f"{framework}_hitl"
    path = tmp_path / "two.yaml"
    path.write_text(TWO_REFUNDS.format(agent=agent))

    result = run_scenario(path, agent)

    assert result.passed, result.problems
    assert [[h["response"] for h in turn.details["human"]] for turn in result.trace.turns] == [
        ["decline"], ["approve"]]
    assert [c.output for c in _calls(result)] == [
        "the refund of order 7 was declined by a human", "refunded 10.00 EUR of order 8"]


def test_the_graph_resumes_on_the_scenarios_one_thread(tmp_path):
    from langgraph.checkpoint.memory import InMemorySaver

    from agentkit.integrations.langgraph import langgraph_agent
    from tests.integrations.human_agents import build_graph

    saver = InMemorySaver()
    register_agent_type("lg_saved", langgraph_agent(
        lambda context: build_graph(context.model).copy(update={"checkpointer": saver})))
    path = tmp_path / "two.yaml"
    path.write_text(TWO_REFUNDS.format(agent="lg_saved"))

    result = run_scenario(path, "lg_saved")

    assert result.passed, result.problems
    (thread,) = {saved.config["configurable"]["thread_id"] for saved in saver.list(None)}
    said = saver.get_tuple({"configurable": {"thread_id": thread}}).checkpoint[
        "channel_values"]["messages"]
    assert [m.content for m in said if m.type == "tool"] == [
        "the refund of order 7 was declined by a human", "refunded 10.00 EUR of order 8"]


# ---- LlamaIndex: the workflow's events and its Context state in the trace
def test_the_workflows_events_and_changed_state_keys_are_in_the_turn(tmp_path):
    result = run_scenario(approval(tmp_path, "li_hitl"), "li_hitl")

    assert result.passed, result.problems
    (turn,) = result.trace.to_dict()["turns"]
    asked = "Approve a refund of 40.00 EUR of order 7?"
    assert turn["events"] == [
        {"event": "AgentInput", "agent": "Agent"},
        # the state is read at each event telling of work done: here the initial state
        {"event": "AgentOutput", "agent": "Agent", "response": "", "tool_calls": ["refund"],
         "state_changed": ["verdicts"]},
        {"event": "ToolCall", "tool": "refund", "args": {"order_id": "7", "amount": 40.0}},
        {"event": "RefundRequested", "amount": 40.0, "order_id": "7"},
        {"event": "InputRequiredEvent", "prefix": asked, "user_name": "support"},
        # the tool's call runs again with the answer (its own event streamed again); the
        # verdict it kept is seen at the first event read after it (the stream lags the run)
        {"event": "ToolCall", "tool": "refund", "args": {"order_id": "7", "amount": 40.0}},
        {"event": "RefundRequested", "amount": 40.0, "order_id": "7",
         "state_changed": ["verdicts"]},
        {"event": "ToolCallResult", "tool": "refund",
         "output": "the refund of order 7 was declined by a human", "is_error": False},
        {"event": "AgentInput", "agent": "Agent"},
        {"event": "AgentOutput", "agent": "Agent",
         "response": "I asked; the refund of order 7 was declined.", "tool_calls": []}]


def test_an_agent_workflows_hand_off_and_its_members_request_are_in_the_turn(tmp_path):
    script = """\
      - tool_calls: [{name: handoff, args: {to_agent: refunds, reason: a refund}}]
      - tool_calls: [{name: refund, args: {order_id: "7", amount: 40.0}}]
      - I asked; the refund of order 7 was declined.
"""
    path = approval(tmp_path, "li_hitl_team", script=script)
    path.write_text(path.read_text().replace("  tool_calls:\n", "  tool_calls:\n    match: subset\n"))

    result = run_scenario(path, "li_hitl_team")

    assert result.passed, result.problems
    (turn,) = result.trace.to_dict()["turns"]
    assert turn["handoffs"] == [{"from": "triage", "to": "refunds", "reason": "a refund"}]
    assert turn["human"] == [{"request": ASKED["li"], "response": "decline"}]
    outputs = [(e["agent"], e["tool_calls"]) for e in turn["events"]
               if e["event"] == "AgentOutput"]
    assert outputs == [("triage", ["handoff"]), ("refunds", ["refund"]), ("refunds", [])]
