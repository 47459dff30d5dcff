"""What each framework's testers rely on besides tools (examples/frameworks/support_agents.py:
the agents as pydantic-ai's and the Agents SDK's documentation write them). pydantic-ai: the
run's ``deps`` are the scenario's world (or built around it by the agent type's ``deps=``), so
what a tool writes through ``ctx.deps`` is what the end-state checks read. The Agents SDK: each
guardrail's check is in the trace (name, input or output, agent, tripped, its output info), a
tripwire fails the turn naming the guardrail, and a hand-off to the wrong agent fails
``expect.handoffs`` naming both."""

import dataclasses
import importlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentkit.scenario import register_agent_type, run_scenario
from agentkit.scenario.agent_types import AGENT_TYPES

pytestmark = pytest.mark.frameworks

MODULE = "examples.frameworks.support_agents"


@pytest.fixture
def shop() -> Any:
    # imported here: the default run, without the frameworks, collects this module too
    return importlib.import_module(MODULE)


@pytest.fixture(autouse=True)
def _types(shop) -> Iterator[None]:
    with AGENT_TYPES.scoped():
        register_agent_type("support", shop.my_support)
        register_agent_type("triage", shop.my_triage)
        yield


ORDERS = f"""\
world:
  ref: {MODULE}:Orders
  data:
    orders:
      "7": {{item: a kettle, total: 40.0, status: delivered}}
"""

REFUND = """\
    script:
      - tool_calls: [{name: lookup_order, args: {order_id: "7"}}]
      - tool_calls: [{name: refund, args: {order_id: "7", amount: 40.0}}]
      - Order 7 is refunded.
"""

REFUNDED = """\
expect:
  state:
    paths:
      orders.7.status: {equals: refunded}
      refunds: {equals: [{order: "7", amount: 40.0, customer: ada}]}
"""


def _scenario(tmp_path: Path, text: str, name: str = "shop") -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(f"format: 1\nname: {name}\n{text}")
    return path


def _refund(tmp_path: Path, agent: str = "support", world: str = ORDERS,
            expect: str = REFUNDED) -> Path:
    return _scenario(tmp_path, f"""\
{world}turns:
  - user: Please refund order 7.
{expect}agents:
  {agent}:
{REFUND}""")


# ---------------------------------------------------------------- pydantic-ai deps
def test_a_tools_write_through_deps_is_the_worlds_end_state(tmp_path):
    result = run_scenario(_refund(tmp_path), "support")

    assert result.passed, result.problems
    lookup, refund = [c for step in result.trace.turns[0].steps for c in step.tool_calls]
    assert lookup.output == "order 7: a kettle, 40.00 EUR, delivered"
    assert refund.output == "refunded 40.00 EUR of order 7"
    assert result.world.orders["7"]["status"] == "refunded"
    assert result.trace.turns[0].world["changes"] == [
        'orders.7.status: "delivered" -> "refunded"',
        'refunds.0: added {"amount": 40.0, "customer": "ada", "order": "7"}']


def test_the_deps_are_the_same_object_every_turn(tmp_path, shop):
    path = _scenario(tmp_path, f"""\
{ORDERS}turns:
  - user: Please refund order 7.
  - user: And what is its status now?
agents:
  support:
    script:
      - tool_calls: [{{name: refund, args: {{order_id: "7", amount: 40.0}}}}]
      - Done.
      - tool_calls: [{{name: lookup_order, args: {{order_id: "7"}}}}]
      - It is refunded.
""")

    result = run_scenario(path, "support")

    assert result.passed, result.problems
    (second,) = [c for step in result.trace.turns[1].steps for c in step.tool_calls]
    assert second.output == "order 7: a kettle, 40.00 EUR, refunded"


@pytest.fixture
def plain(shop) -> str:
    """An agent type of a pydantic-ai agent whose deps_type is the world's type (no deps=)."""
    pai = importlib.import_module("pydantic_ai")
    integration = importlib.import_module("agentkit.integrations.pydantic_ai")
    agent = pai.Agent("openai:gpt-4o-mini", deps_type=shop.Orders, defer_model_check=True)

    # annotations evaluated here (this module has no `from __future__ import annotations`)
    @agent.tool
    def refund(ctx: pai.RunContext[shop.Orders], order_id: str, amount: float) -> str:
        ctx.deps.orders[order_id]["status"] = "refunded"
        return "refunded"

    @agent.tool
    def lookup_order(ctx: pai.RunContext[shop.Orders], order_id: str) -> str:
        return str(ctx.deps.orders[order_id]["status"])

    register_agent_type("plain", integration.pydantic_ai_agent(lambda context: agent))
    return "plain"


def test_an_agent_whose_deps_type_is_the_worlds_gets_the_world_as_its_deps(tmp_path, plain):
    path = _refund(tmp_path, plain, expect="expect:\n  state:\n    paths:\n      "
                                           "orders.7.status: {equals: refunded}\n")

    result = run_scenario(path, plain)

    assert result.passed, result.problems


def test_a_tool_writing_the_wrong_thing_into_deps_fails_the_state_check_naming_it(
        tmp_path, shop, monkeypatch):
    def wrong(ctx: Any, order_id: str, amount: float) -> str:
        ctx.deps.db.orders[order_id]["status"] = "cancelled"
        return "cancelled"

    tool = shop.support_agent._function_toolset.tools["refund"]
    monkeypatch.setattr(tool, "function", wrong)
    monkeypatch.setattr(tool.function_schema, "function", wrong)

    result = run_scenario(_refund(tmp_path), "support")

    assert not result.passed
    assert any('orders.7.status: expected equals "refunded", got "cancelled"' in problem
               for problem in result.problems), result.problems


def test_an_agent_taking_deps_in_a_scenario_without_a_world_fails_naming_its_deps_type(
        tmp_path, plain):
    integration = importlib.import_module("agentkit.integrations.pydantic_ai")

    with pytest.raises(integration.DepsError) as caught:
        run_scenario(_refund(tmp_path, plain, world="", expect=""), plain)

    message = str(caught.value)
    assert message.startswith(f"{tmp_path / 'shop.yaml'}:1: agent type `plain`: the "
                              "pydantic-ai agent takes deps "
                              "(deps_type=Orders) and the run has none: give the scenario a "
                              "`world:`"), message


def test_deps_of_another_type_than_the_agents_fail_naming_both(tmp_path, shop):
    integration = importlib.import_module("agentkit.integrations.pydantic_ai")
    register_agent_type("world_as_deps",
                        integration.pydantic_ai_agent(lambda context: shop.support_agent))

    with pytest.raises(integration.DepsError) as caught:
        run_scenario(_refund(tmp_path, "world_as_deps", expect=""), "world_as_deps")

    assert ("shop.yaml:4: agent type `world_as_deps`: the run's deps (the scenario's world: "
            "Orders) are not a SupportDeps, the pydantic-ai agent's deps_type"
            ) in str(caught.value)


def test_an_agent_without_a_deps_type_runs_without_deps_in_a_scenario_with_a_world(tmp_path):
    pai = importlib.import_module("pydantic_ai")
    integration = importlib.import_module("agentkit.integrations.pydantic_ai")
    agent = pai.Agent("openai:gpt-4o-mini", defer_model_check=True)
    seen: list[Any] = []

    @agent.tool_plain
    def lookup_order(order_id: str) -> str:
        return "delivered"

    @agent.tool
    def refund(ctx: pai.RunContext[None], order_id: str, amount: float) -> str:
        seen.append(ctx.deps)
        return "refunded"

    register_agent_type("no_deps", integration.pydantic_ai_agent(lambda context: agent))

    result = run_scenario(_refund(tmp_path, "no_deps", expect=""), "no_deps")

    assert result.passed, result.problems
    assert seen == [None]


RUN_CONTEXT_TOOLS = f"""\
tools:
  - ref: {MODULE}:lookup_order
  - ref: {MODULE}:refund
    latency: 2.0
"""


def test_a_tool_taking_a_run_context_is_a_scenario_tool_of_the_agents_own(tmp_path):
    # the scenario's tools are never described to pydantic-ai when the factory does not ask
    # for context.tools: its own tools, which take a RunContext, run
    result = run_scenario(_refund(tmp_path, world=RUN_CONTEXT_TOOLS + ORDERS), "support")

    assert result.passed, result.problems
    assert result.trace.turns[0].wall_time == 2.0
    assert result.world.orders["7"]["status"] == "refunded"


def test_a_scenario_tool_the_framework_cannot_make_fails_at_its_entry_not_the_factory(
        tmp_path, shop):
    integration = importlib.import_module("agentkit.integrations.pydantic_ai")
    framework = importlib.import_module("agentkit.integrations._framework")
    register_agent_type("rebuilt", integration.pydantic_ai_agent(
        lambda context: importlib.import_module("pydantic_ai").Agent(
            context.model, tools=context.tools, deps_type=shop.SupportDeps)))

    with pytest.raises(framework.FrameworkToolError) as caught:
        run_scenario(_refund(tmp_path, "rebuilt", world=RUN_CONTEXT_TOOLS + ORDERS,
                             expect=""), "rebuilt")

    message = str(caught.value)
    assert message.startswith(
        f"{tmp_path / 'shop.yaml'}:4: tools.0: agent type `rebuilt`: the scenario's tool "
        "`lookup_order` cannot be made a tool of the factory's framework (`context.tools`), which "
        "said PydanticUserError: "), message
    assert "factory" not in message.split("which said")[1], message


# ---------------------------------------------------------------- Agents SDK run context
def _sdk_support(shop, db: Any) -> Any:
    """An Agents SDK support agent whose tools reach the orders through the run's context
    (``db(ctx.context)``: the database in it)."""
    sdk = importlib.import_module("agents")

    # annotations evaluated here (this module has no `from __future__ import annotations`)
    @sdk.function_tool
    def lookup_order(ctx: sdk.RunContextWrapper[Any], order_id: str) -> str:
        """Look an order up by its id."""
        order = db(ctx.context).orders[order_id]
        return f"order {order_id}: {order['item']}, {order['total']:.2f} EUR, {order['status']}"

    @sdk.function_tool
    def refund(ctx: sdk.RunContextWrapper[Any], order_id: str, amount: float) -> str:
        """Refund an amount of an order."""
        db(ctx.context).orders[order_id]["status"] = "refunded"
        db(ctx.context).refunds.append({"order": order_id, "amount": amount,
                                        "customer": getattr(ctx.context, "customer", "ada")})
        return f"refunded {amount:.2f} EUR of order {order_id}"

    return sdk.Agent(name="Support", tools=[lookup_order, refund])


def test_an_agents_sdk_runs_context_is_the_scenarios_world(tmp_path, shop):
    integration = importlib.import_module("agentkit.integrations.openai_agents")
    agent = _sdk_support(shop, lambda context: context)
    register_agent_type("sdk_world", integration.openai_agents_agent(lambda context: agent))

    result = run_scenario(_refund(tmp_path, "sdk_world"), "sdk_world")

    assert result.passed, result.problems


def test_an_agents_sdk_agent_type_builds_the_run_context_around_the_world(tmp_path, shop):
    register_agent_type("sdk_support", shop.my_sdk_support)

    result = run_scenario(_refund(tmp_path, "sdk_support"), "sdk_support")

    assert result.passed, result.problems
    assert result.trace.turns[0].world["changes"] == [
        'orders.7.status: "delivered" -> "refunded"',
        'refunds.0: added {"amount": 40.0, "customer": "ada", "order": "7"}']


def test_an_agents_sdk_runs_context_is_built_once_for_every_turn(tmp_path, shop):
    integration = importlib.import_module("agentkit.integrations.openai_agents")
    made: list[Any] = []

    def context_of(context: Any) -> Any:
        made.append(shop.SupportDeps(db=context.world, customer="ada"))
        return made[-1]

    register_agent_type("sdk_counted", integration.openai_agents_agent(
        lambda context: shop.sdk_support_agent, context=context_of))
    path = _scenario(tmp_path, f"""\
{ORDERS}turns:
  - user: Please refund order 7.
  - user: And what is its status now?
agents:
  sdk_counted:
    script:
      - tool_calls: [{{name: refund, args: {{order_id: "7", amount: 40.0}}}}]
      - Done.
      - tool_calls: [{{name: lookup_order, args: {{order_id: "7"}}}}]
      - It is refunded.
""")

    result = run_scenario(path, "sdk_counted")

    assert result.passed, result.problems
    assert len(made) == 1
    (second,) = [c for step in result.trace.turns[1].steps for c in step.tool_calls]
    assert second.output == "order 7: a kettle, 40.00 EUR, refunded"


# ---------------------------------------------------------------- Agents SDK guardrails
GUARDED = """\
turns:
  - user: I want my money back for order 7.
expect:
  answer: {contains: "on its way"}
  handoffs:
    calls: [{from: Triage, to: Refunds}]
agents:
  triage:
    script:
      - tool_calls: [{name: transfer_to_refunds, args: {}}]
      - '{"off_topic": false, "reasoning": "a refund of an order"}'
      - The refund of order 7 is on its way.
"""


def _guarded(tmp_path: Path, text: str = GUARDED) -> Path:
    return _scenario(tmp_path, text, "guarded")


def test_each_guardrails_check_and_the_hand_off_are_in_the_trace(tmp_path):
    result = run_scenario(_guarded(tmp_path), "triage")

    assert result.passed, result.problems
    turn = result.trace.to_dict()["turns"][0]
    assert turn["guardrails"] == [
        {"guardrail": "on_topic", "kind": "input", "agent": "Triage", "tripped": False,
         "info": {"off_topic": False, "reasoning": "a refund of an order"}},
        {"guardrail": "no_promises", "kind": "output", "agent": "Refunds", "tripped": False,
         "info": {"promised": False}}]
    assert turn["handoffs"] == [{"from": "Triage", "to": "Refunds", "reason": ""}]
    assert turn["agents"] == ["Triage", "Refunds"]


def test_a_guardrails_own_agent_asks_agentkits_model_and_the_default_client_is_restored(
        tmp_path):
    shared = importlib.import_module("agents.models._openai_shared")
    before = shared.get_default_openai_client()

    result = run_scenario(_guarded(tmp_path), "triage")

    asked = [step.llm_calls[0] for step in result.trace.turns[0].steps]
    assert len(asked) == 3
    assert asked[1].messages[0]["content"].startswith("Say whether the user asks about")
    assert shared.get_default_openai_client() is before


def test_an_input_guardrail_that_trips_fails_the_turn_naming_it(tmp_path):
    text = GUARDED.replace('"off_topic": false', '"off_topic": true')

    result = run_scenario(_guarded(tmp_path, text), "triage")

    assert not result.passed
    turn = result.trace.turns[0]
    assert turn.error == (
        "GuardrailTrippedError: input guardrail `on_topic` of agent `Triage` tripped (it "
        'found: {"off_topic": true, "reasoning": "a refund of an order"}): the Agents SDK '
        "stopped the run before the agent answered")
    assert turn.raised is None  # an outcome of the run, not a traceback of agentkit's
    assert turn.details["guardrails"][0]["tripped"] is True


def test_an_output_guardrail_that_trips_fails_the_turn_naming_it(tmp_path):
    text = GUARDED.replace("is on its way", "is guaranteed by tomorrow")

    result = run_scenario(_guarded(tmp_path, text), "triage")

    assert not result.passed
    assert result.trace.turns[0].error == (
        "GuardrailTrippedError: output guardrail `no_promises` of agent `Refunds` tripped (it "
        'found: {"promised": true}): the Agents SDK stopped the run and the agent\'s answer '
        "is not given")


def test_a_trip_the_scenario_expects_passes(tmp_path):
    text = GUARDED.replace('"off_topic": false', '"off_topic": true').replace(
        """  answer: {contains: "on its way"}
  handoffs:
    calls: [{from: Triage, to: Refunds}]
""", "  error: {contains: 'input guardrail `on_topic` of agent `Triage` tripped'}\n")

    result = run_scenario(_guarded(tmp_path, text), "triage")

    assert result.passed, result.problems


def test_a_large_output_info_is_left_out_of_the_trace(tmp_path, shop, monkeypatch):
    sdk = importlib.import_module("agents")

    async def verbose(ctx: Any, agent: Any, output: Any) -> Any:
        return sdk.GuardrailFunctionOutput(output_info={"text": "x" * 400},
                                           tripwire_triggered=False)

    for member in (shop.refunds_agent, shop.billing_agent):
        monkeypatch.setattr(member, "output_guardrails", [dataclasses.replace(
            member.output_guardrails[0], guardrail_function=verbose)])

    result = run_scenario(_guarded(tmp_path), "triage")

    output = result.trace.to_dict()["turns"][0]["guardrails"][1]
    assert output == {"guardrail": "no_promises", "kind": "output", "agent": "Refunds",
                      "tripped": False}


def test_a_hand_off_to_the_wrong_agent_fails_naming_both(tmp_path):
    text = GUARDED.replace("transfer_to_refunds", "transfer_to_billing")

    result = run_scenario(_guarded(tmp_path, text), "triage")

    assert not result.passed
    problems = "\n".join(result.problems)
    assert "Triage -> Refunds" in problems and "Triage -> Billing" in problems, problems
    assert json.dumps(result.trace.to_dict()["turns"][0]["handoffs"]) == \
        '[{"from": "Triage", "to": "Billing", "reason": ""}]'

