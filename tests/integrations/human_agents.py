"""A user's support agent that asks a human before it refunds, written as each framework's
documentation writes human-in-the-loop -- LangGraph: a tool calling ``interrupt()`` in a graph
compiled with a checkpointer; LlamaIndex: a tool waiting for a ``HumanResponseEvent`` after
an ``InputRequiredEvent`` (``ctx.wait_for_event``), its approvals kept in the workflow's
state -- and declared as agentkit agent types the documented way. Each comes right and wrong
on purpose: ``*_ignores`` refunds whatever the human said, ``*_asks_twice`` asks again before
refunding, ``*_never_asks`` refunds without asking. (No ``from __future__ import
annotations``: LlamaIndex reads a tool's ``Context`` parameter from its annotation.)"""

from langchain.agents import create_agent
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import interrupt
from llama_index.core.agent.workflow import AgentWorkflow, FunctionAgent
from llama_index.core.tools import FunctionTool
from llama_index.core.workflow import Context, Event, HumanResponseEvent, InputRequiredEvent
from llama_index.llms.openai import OpenAI

from agentkit.integrations.langgraph import langgraph_agent
from agentkit.integrations.llama_index import llama_index_agent

PROMPT = "You are a support agent. Refunds need a human's approval."


def _refunded(order_id: str, amount: float) -> str:
    return f"refunded {amount:.2f} EUR of order {order_id}"


def _declined(order_id: str) -> str:
    return f"the refund of order {order_id} was declined by a human"


# ---- LangGraph: interrupt() in a tool of create_agent's graph, with a checkpointer
@tool
def refund(order_id: str, amount: float) -> str:
    """Refund an amount of an order, once a human approved it."""
    answer = interrupt({"question": "Approve this refund?", "order_id": order_id,
                        "amount": amount})
    if answer != "approve":
        return _declined(order_id)
    return _refunded(order_id, amount)


@tool("refund")
def refund_ignoring(order_id: str, amount: float) -> str:
    """Refund an amount of an order, once a human approved it."""
    interrupt({"question": "Approve this refund?", "order_id": order_id, "amount": amount})
    return _refunded(order_id, amount)


@tool("refund")
def refund_asking_twice(order_id: str, amount: float) -> str:
    """Refund an amount of an order, once a human approved it."""
    first = interrupt({"question": "Approve this refund?", "order_id": order_id,
                       "amount": amount})
    second = interrupt({"question": "Are you sure?", "order_id": order_id})
    if first != "approve" or second != "approve":
        return _declined(order_id)
    return _refunded(order_id, amount)


@tool("refund")
def refund_without_asking(order_id: str, amount: float) -> str:
    """Refund an amount of an order, once a human approved it."""
    return _refunded(order_id, amount)


def build_graph(model, refund_tool=refund):
    return create_agent(model, [refund_tool], system_prompt=PROMPT, name="support",
                        checkpointer=InMemorySaver())


@langgraph_agent
def lg_hitl(context):
    return build_graph(context.model)


@langgraph_agent
def lg_hitl_ignores(context):
    return build_graph(context.model, refund_ignoring)


@langgraph_agent
def lg_hitl_asks_twice(context):
    return build_graph(context.model, refund_asking_twice)


@langgraph_agent
def lg_hitl_never_asks(context):
    return build_graph(context.model, refund_without_asking)


# ---- LlamaIndex: a tool waiting for the human's HumanResponseEvent, state in the Context
class RefundRequested(Event):
    """A custom event the refund tool streams before it asks."""

    order_id: str
    amount: float


async def _ask(ctx: Context, question: str) -> str:
    response = await ctx.wait_for_event(
        HumanResponseEvent, waiter_id=question,
        waiter_event=InputRequiredEvent(prefix=question, user_name="support"),
        requirements={"user_name": "support"})
    return str(response.response).strip().lower()


async def _keep(ctx: Context, order_id: str, verdict: str) -> None:
    async with ctx.store.edit_state() as state:
        state["state"]["verdicts"] = {**state["state"].get("verdicts", {}), order_id: verdict}


async def li_refund(ctx: Context, order_id: str, amount: float) -> str:
    """Refund an amount of an order, once a human approved it."""
    ctx.write_event_to_stream(RefundRequested(order_id=order_id, amount=amount))
    answer = await _ask(ctx, f"Approve a refund of {amount:.2f} EUR of order {order_id}?")
    await _keep(ctx, order_id, answer)
    if answer != "approve":
        return _declined(order_id)
    return _refunded(order_id, amount)


async def li_refund_ignoring(ctx: Context, order_id: str, amount: float) -> str:
    """Refund an amount of an order, once a human approved it."""
    await _ask(ctx, f"Approve a refund of {amount:.2f} EUR of order {order_id}?")
    return _refunded(order_id, amount)


async def li_refund_asking_twice(ctx: Context, order_id: str, amount: float) -> str:
    """Refund an amount of an order, once a human approved it."""
    first = await _ask(ctx, f"Approve a refund of {amount:.2f} EUR of order {order_id}?")
    second = await _ask(ctx, "Are you sure?")
    if first != "approve" or second != "approve":
        return _declined(order_id)
    return _refunded(order_id, amount)


async def li_refund_without_asking(ctx: Context, order_id: str, amount: float) -> str:
    """Refund an amount of an order, once a human approved it."""
    return _refunded(order_id, amount)


def _li_tool(refund_function) -> FunctionTool:
    return FunctionTool.from_defaults(refund_function, name="refund")


def _li_agent(refund_function) -> FunctionAgent:
    return FunctionAgent(llm=OpenAI(model="gpt-4o-mini", api_key="sk-production"),
                         tools=[_li_tool(refund_function)], system_prompt=PROMPT,
                         initial_state={"verdicts": {}})


li_support = _li_agent(li_refund)


@llama_index_agent
def li_hitl(context):
    return li_support


@llama_index_agent
def li_hitl_ignores(context):
    return _li_agent(li_refund_ignoring)


@llama_index_agent
def li_hitl_asks_twice(context):
    return _li_agent(li_refund_asking_twice)


@llama_index_agent
def li_hitl_never_asks(context):
    return _li_agent(li_refund_without_asking)


# ---- LlamaIndex: an AgentWorkflow whose triage agent hands refunds to the refunds agent
triage = FunctionAgent(name="triage", description="Answers first; hands refunds on.",
                       llm=OpenAI(model="gpt-4o-mini", api_key="sk-production"),
                       system_prompt=PROMPT, can_handoff_to=["refunds"])
refunds = FunctionAgent(name="refunds", description="Refunds orders a human approved.",
                        llm=OpenAI(model="gpt-4o-mini", api_key="sk-production"),
                        tools=[_li_tool(li_refund)], system_prompt=PROMPT)
li_team = AgentWorkflow(agents=[triage, refunds], root_agent="triage",
                        initial_state={"verdicts": {}})


@llama_index_agent
def li_hitl_team(context):
    return li_team
