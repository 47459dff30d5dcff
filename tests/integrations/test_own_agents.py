"""The user's own framework agent is what runs (tests/integrations/support.py: one support
agent written as each framework's documentation writes it, the factory returning it with only
its model routed to agentkit). The scenario's tool world applies to the agent's own tools by
name: a scenario tool the agent lost fails the run naming it; a failure schedule reaches the
agent, which handles it as it handles its tools' exceptions; latency adds virtual time; the
model is offered the agent's tools, not agentkit's rendering of the scenario's."""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentkit.integrations._framework import MissingToolError
from agentkit.scenario import register_agent_type, run_scenario
from agentkit.scenario.agent_types import AGENT_TYPES

pytestmark = pytest.mark.frameworks

FRAMEWORKS = ["li", "pai", "sdk", "lg"]

STOPS_ON_A_TOOLS_EXCEPTION = {"li": False, "pai": True, "sdk": False, "lg": True}
"""Whether the framework's agent stops its run when a tool raises (pydantic-ai, LangGraph's
ToolNode by default) or tells the model (LlamaIndex's workflow agents, the Agents SDK's
default failure handling)."""


@pytest.fixture(autouse=True)
def _support_types() -> Iterator[None]:
    # imported here: the default run, without the frameworks, collects this module too
    support = importlib.import_module("tests.integrations.support")
    with AGENT_TYPES.scoped():
        for framework in FRAMEWORKS:
            for variant in ("", "_without_refund", "_with_escalate"):
                register_agent_type(f"{framework}{variant}",
                                    getattr(support, f"{framework}_agent{variant}"))
        yield


def _scenario(tmp_path: Path, agent: str, script: str, *, refund: str = "") -> Path:
    path = tmp_path / "refunds.yaml"
    path.write_text(f"""\
format: 1
name: refunds
tools:
  - ref: tests.integrations.support:lookup_order
  - ref: tests.integrations.support:refund{refund}
turns:
  - user: Please refund order 7.
agents:
  {agent}:
    script:
{script}""")
    return path


REFUNDS = """\
      - tool_calls: [{name: lookup_order, args: {order_id: "7"}}]
      - tool_calls: [{name: refund, args: {order_id: "7", amount: 40.0}}]
      - Order 7 is refunded.
"""


def _calls(result: Any) -> list[Any]:
    return [call for turn in result.trace.turns for step in turn.steps
            for call in step.tool_calls]


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_the_agents_own_tools_run_and_the_model_is_offered_them(tmp_path, framework):
    agent = f"{framework}_with_escalate"
    result = run_scenario(_scenario(tmp_path, agent, REFUNDS), agent)

    assert result.passed, result.problems
    assert [(c.name, c.output, c.is_error) for c in _calls(result)] == [
        ("lookup_order", "order 7: a kettle, 40.00 EUR, delivered", False),
        ("refund", "refunded 40.00 EUR of order 7", False)]
    first = result.trace.to_dict()["turns"][0]["steps"][0]["llm_calls"][0]
    # the framework's rendering of the agent's three tools, not the scenario's two
    assert sorted(first["tools"]) == ["escalate", "lookup_order", "refund"]


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_a_scenario_tool_removed_from_the_agent_fails_the_run_naming_it(tmp_path, framework):
    agent = f"{framework}_without_refund"

    with pytest.raises(MissingToolError) as caught:
        run_scenario(_scenario(tmp_path, agent, REFUNDS), agent)

    message = str(caught.value)
    assert "refunds.yaml" in message and f"agent type `{agent}`" in message
    assert "has no tool `refund`" in message and "(the agent's tools: `lookup_order`)" in message


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_a_scenario_tool_removed_from_the_agent_is_an_error_at_its_own_entry(tmp_path,
                                                                              framework):
    agent = f"{framework}_without_refund"
    path = _scenario(tmp_path, agent, REFUNDS)

    with pytest.raises(MissingToolError) as caught:
        run_scenario(path, agent)

    assert str(caught.value).startswith(f"{path}:5: agent type `{agent}`: "), caught.value


def test_the_entry_of_a_removed_tool_after_an_mcp_servers_is_its_own(tmp_path):
    toy = importlib.import_module("tests.mcp_tools.toy")
    pai = importlib.import_module("pydantic_ai")
    integration = importlib.import_module("agentkit.integrations.pydantic_ai")
    support = importlib.import_module("tests.integrations.support")

    def echo(text: str) -> str:
        return text

    def add(a: float, b: float) -> float:
        return a + b

    agent = pai.Agent(tools=[echo, add, support.lookup_order])
    register_agent_type("pai_toy", integration.pydantic_ai_agent(lambda context: agent))
    path = tmp_path / "refunds.yaml"
    path.write_text(f"""\
format: 1
name: refunds
tools:
  - mcp: {{name: toy, command: no-such-mcp-server-anywhere}}
  - ref: tests.integrations.support:lookup_order
  - ref: tests.integrations.support:refund
turns:
  - user: Please refund order 7.
agents:
  pai_toy:
    script:
{REFUNDS}""")
    toy.write_cassette(tmp_path / "cassettes" / "refunds.pai_toy.yaml", [toy.listing()])

    with pytest.raises(MissingToolError) as caught:
        run_scenario(path, "pai_toy")

    assert str(caught.value).startswith(f"{path}:6: agent type `pai_toy`: "), caught.value
    assert "has no tool `refund`" in str(caught.value)


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_a_failure_schedule_on_the_agents_own_tool_reaches_the_agent(tmp_path, framework):
    path = _scenario(tmp_path, framework, REFUNDS, refund="\n    failures: [1]")

    result = run_scenario(path, framework)

    lookup, refund = _calls(result)[:2]
    assert not lookup.is_error
    assert refund.is_error and refund.scheduled
    assert "simulated tool failure (call 1 of `refund`)" in refund.output
    turn = result.trace.turns[0]
    if STOPS_ON_A_TOOLS_EXCEPTION[framework]:  # the agent did not handle it: the run stops
        assert not result.passed
        assert "simulated tool failure (call 1 of `refund`)" in (turn.error or "")
    else:  # the model is told, and the scripted answer follows
        assert turn.error is None, turn.error
        told = turn.steps[2].llm_calls[0].messages[-1]
        assert "simulated tool failure" in (told["content"] or ""), told


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_latency_on_the_agents_own_tool_adds_virtual_time(tmp_path, framework):
    quick = run_scenario(_scenario(tmp_path, framework, REFUNDS), framework)
    slow = run_scenario(_scenario(tmp_path, framework, REFUNDS, refund="\n    latency: 2.5"),
                        framework)

    assert quick.passed and slow.passed, (quick.problems, slow.problems)
    assert [c.latency for c in _calls(slow)] == [0.0, 2.5]
    assert slow.trace.totals().wall_time == pytest.approx(quick.trace.totals().wall_time + 2.5)


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_a_raising_tool_of_the_agents_is_an_error_in_the_trace(tmp_path, framework):
    path = _scenario(tmp_path, framework, """\
      - tool_calls: [{name: refund, args: {order_id: "7", amount: -1}}]
      - I could not refund it.
""")

    result = run_scenario(path, framework)

    (call,) = _calls(result)
    assert call.is_error and not call.scheduled
    assert "cannot refund -1" in call.output
    assert not result.passed  # a tool failing unexpectedly fails the run


RAISING_REFUND = """\
      - tool_calls: [{name: refund, args: {order_id: "7", amount: -1}}]
      - I could not refund it.
"""


def _sdk_raising_call(result: Any) -> None:
    """The Agents SDK's call of `refund` that raised: the exception is the call's error in the
    trace; the model was told the SDK's default failure message."""
    (call,) = _calls(result)
    assert (call.name, call.is_error, call.output) == (
        "refund", True, "Error: cannot refund -1.0: a refund is positive")
    assert call.raised is not None and "support.py" in call.raised.at, call.raised
    assert "ValueError: cannot refund -1.0: a refund is positive" in call.raised.traceback
    told = result.trace.turns[0].steps[1].llm_calls[0].messages[-1]
    assert told["content"].startswith(
        "An error occurred while running the tool. Please try again."), told


def test_an_agents_sdk_tools_exception_is_the_calls_error_not_the_sdks_message(tmp_path):
    result = run_scenario(_scenario(tmp_path, "sdk", RAISING_REFUND), "sdk")

    _sdk_raising_call(result)


def _lookups(tmp_path: Path, agent: str) -> Path:
    """A scenario naming only `lookup_order`, whose model calls the agent's `refund` so that
    it raises."""
    path = tmp_path / "lookups.yaml"
    path.write_text(f"""\
format: 1
name: lookups
tools:
  - ref: tests.integrations.support:lookup_order
turns:
  - user: Please refund order 7.
agents:
  {agent}:
    script:
{RAISING_REFUND}""")
    return path


def test_an_agents_sdk_tool_the_scenario_does_not_name_that_raised_is_an_error(tmp_path):
    result = run_scenario(_lookups(tmp_path, "sdk"), "sdk")

    _sdk_raising_call(result)
    assert not result.passed  # a tool failing unexpectedly fails the run


def test_a_llama_index_tool_the_scenario_does_not_name_that_raised_is_an_error(tmp_path):
    result = run_scenario(_lookups(tmp_path, "li"), "li")

    (call,) = _calls(result)
    assert (call.name, call.is_error, call.output) == (
        "refund", True, "Error: cannot refund -1: a refund is positive")
    assert call.raised is not None and "support.py" in call.raised.at, call.raised
    told = result.trace.turns[0].steps[1].llm_calls[0].messages[-1]
    assert told["content"] == "cannot refund -1: a refund is positive"  # LlamaIndex's words
    assert not result.passed


def test_a_graph_left_on_its_production_model_fails_saying_no_model_call_reached_agentkit(
        tmp_path):
    support = importlib.import_module("tests.integrations.support")
    langgraph = importlib.import_module("agentkit.integrations.langgraph")
    register_agent_type("lg_unrouted", langgraph.langgraph_agent(lambda context: support.graph))

    result = run_scenario(_scenario(tmp_path, "lg_unrouted", REFUNDS), "lg_unrouted")

    assert not result.passed
    assert any('no model call reached agentkit in turn 1 ("Please refund order 7."): the '
               "agent called a model of its own" in problem for problem in result.problems), \
        result.problems
