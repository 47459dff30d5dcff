"""A shop's support agents as each framework's documentation writes them, with what their
testers rely on besides tools: a pydantic-ai agent whose tools act on a database through its
``deps`` (the scenario's world is that database), an Agents SDK agent whose tools act on it
through the run's context, and an Agents SDK triage agent with an input
guardrail, an output guardrail and hand-offs to a billing and a refunds agent
(docs/integrations.md)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from agents import (
    Agent,
    GuardrailFunctionOutput,
    RunContextWrapper,
    Runner,
    TResponseInputItem,
    function_tool,
    input_guardrail,
    output_guardrail,
)
from pydantic import BaseModel
from pydantic_ai import Agent as PydanticAgent
from pydantic_ai import RunContext

from agentkit.integrations.openai_agents import openai_agents_agent
from agentkit.integrations.pydantic_ai import pydantic_ai_agent


# ---- pydantic-ai: the tools reach the shop's database through the run's deps
@dataclass
class Orders:
    """The shop's order database (in production a connection; in a scenario its world)."""

    orders: dict[str, dict[str, Any]]
    refunds: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class SupportDeps:
    db: Orders
    customer: str


support_agent = PydanticAgent("openai:gpt-4o-mini", deps_type=SupportDeps,
                              instructions="Look orders up before refunding them.",
                              defer_model_check=True)


@support_agent.tool
def lookup_order(ctx: RunContext[SupportDeps], order_id: str) -> str:
    """Look an order up by its id."""
    order = ctx.deps.db.orders[order_id]
    return f"order {order_id}: {order['item']}, {order['total']:.2f} EUR, {order['status']}"


@support_agent.tool
def refund(ctx: RunContext[SupportDeps], order_id: str, amount: float) -> str:
    """Refund an amount of an order."""
    ctx.deps.db.orders[order_id]["status"] = "refunded"
    ctx.deps.db.refunds.append({"order": order_id, "amount": amount,
                                "customer": ctx.deps.customer})
    return f"refunded {amount:.2f} EUR of order {order_id}"


@pydantic_ai_agent(deps=lambda context: SupportDeps(db=context.world, customer="ada"))
def my_support(context):
    return support_agent


# ---- the OpenAI Agents SDK: the same tools through the run's context
@function_tool(name_override="lookup_order")
def lookup_order_in_context(ctx: RunContextWrapper[SupportDeps], order_id: str) -> str:
    """Look an order up by its id."""
    order = ctx.context.db.orders[order_id]
    return f"order {order_id}: {order['item']}, {order['total']:.2f} EUR, {order['status']}"


@function_tool(name_override="refund")
def refund_in_context(ctx: RunContextWrapper[SupportDeps], order_id: str, amount: float) -> str:
    """Refund an amount of an order."""
    order = ctx.context.db.orders[order_id]
    order["status"] = "refunded"
    ctx.context.db.refunds.append({"order": order_id, "amount": amount,
                                   "customer": ctx.context.customer})
    return f"refunded {amount:.2f} EUR of order {order_id}"


sdk_support_agent = Agent(name="Support", instructions="Look orders up before refunding them.",
                          tools=[lookup_order_in_context, refund_in_context])


@openai_agents_agent(context=lambda context: SupportDeps(db=context.world, customer="ada"))
def my_sdk_support(context):
    return sdk_support_agent


# ---- the OpenAI Agents SDK: a triage agent guarded on the way in and out, handing off
class OffTopic(BaseModel):
    off_topic: bool
    reasoning: str


topic_check = Agent(name="Topic check", output_type=OffTopic,
                    instructions="Say whether the user asks about something other than "
                                 "their orders.")


@input_guardrail
async def on_topic(ctx: RunContextWrapper[None], agent: Agent,
                   input: str | list[TResponseInputItem]) -> GuardrailFunctionOutput:
    result = await Runner.run(topic_check, input, context=ctx.context)
    return GuardrailFunctionOutput(output_info=result.final_output,
                                   tripwire_triggered=result.final_output.off_topic)


@output_guardrail
async def no_promises(ctx: RunContextWrapper[None], agent: Agent,
                      output: str) -> GuardrailFunctionOutput:
    promised = "guarantee" in output.lower()
    return GuardrailFunctionOutput(output_info={"promised": promised},
                                   tripwire_triggered=promised)


billing_agent = Agent(name="Billing", handoff_description="Questions about invoices.",
                      instructions="You answer questions about invoices.",
                      output_guardrails=[no_promises])
refunds_agent = Agent(name="Refunds", handoff_description="Refund requests.",
                      instructions="You handle refund requests.",
                      output_guardrails=[no_promises])
triage_agent = Agent(name="Triage", instructions="Hand the customer to the right agent.",
                     handoffs=[billing_agent, refunds_agent], input_guardrails=[on_topic])


@openai_agents_agent
def my_triage(context):
    return triage_agent
