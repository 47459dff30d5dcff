"""A user's support agent, written four times as each framework's documentation writes it --
its own tools (``lookup_order``, ``refund``), its own descriptions, its own production model --
and declared as agentkit agent types the documented way: the factory returns the user's agent,
only its model routed to agentkit. ``*_without_refund``: the same agent after someone removed
its ``refund`` tool; ``*_with_escalate``: with a third tool the scenarios do not list."""

from __future__ import annotations

from agents import Agent, function_tool
from langchain.agents import create_agent
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.tools import FunctionTool
from llama_index.llms.openai import OpenAI
from pydantic_ai import Agent as PydanticAgent
from pydantic_ai.models.test import TestModel

from agentkit.integrations.langgraph import langgraph_agent
from agentkit.integrations.llama_index import llama_index_agent
from agentkit.integrations.openai_agents import openai_agents_agent
from agentkit.integrations.pydantic_ai import pydantic_ai_agent

PROMPT = "You are a support agent. Look orders up before refunding them."


def lookup_order(order_id: str) -> str:
    """Look an order up by its id."""
    return f"order {order_id}: a kettle, 40.00 EUR, delivered"


def refund(order_id: str, amount: float) -> str:
    """Refund an amount of an order."""
    if amount <= 0:
        raise ValueError(f"cannot refund {amount}: a refund is positive")
    return f"refunded {amount:.2f} EUR of order {order_id}"


def escalate(reason: str) -> str:
    """Hand the conversation to a human."""
    return "a human will answer"


# ---- LlamaIndex: a FunctionAgent over LlamaIndex's OpenAI
def _llama_index(*functions):
    return FunctionAgent(llm=OpenAI(model="gpt-4o-mini", api_key="sk-production"),
                         tools=[FunctionTool.from_defaults(f) for f in functions],
                         system_prompt=PROMPT)


li_support = _llama_index(lookup_order, refund)
li_support_without_refund = _llama_index(lookup_order)
li_support_with_escalate = _llama_index(lookup_order, refund, escalate)


# ---- pydantic-ai: an Agent with tool_plain tools (its production model is never asked:
# the run's model is agentkit's)
def _pydantic_ai(*functions):
    agent = PydanticAgent(TestModel(), instructions=PROMPT)
    for function in functions:
        agent.tool_plain(function)
    return agent


pai_support = _pydantic_ai(lookup_order, refund)
pai_support_without_refund = _pydantic_ai(lookup_order)
pai_support_with_escalate = _pydantic_ai(lookup_order, refund, escalate)


# ---- the OpenAI Agents SDK: an Agent with @function_tool tools
sdk_support = Agent(name="Support", instructions=PROMPT,
                    tools=[function_tool(lookup_order), function_tool(refund)])
sdk_support_without_refund = sdk_support.clone(tools=[function_tool(lookup_order)])
sdk_support_with_escalate = sdk_support.clone(
    tools=[*sdk_support.tools, function_tool(escalate)])


# ---- LangGraph: a graph builder taking the model (LangChain's create_agent), over LangChain
# @tool tools
TOOLS = [tool(lookup_order), tool(refund)]


def build_graph(model, tools=TOOLS):
    return create_agent(model, tools, system_prompt=PROMPT, name="support")


graph = build_graph(ChatOpenAI(model="gpt-4o-mini", api_key="sk-production"))


# ---- the agent types, as docs/integrations.md declares them
@llama_index_agent
def li_agent(context):
    return li_support


@llama_index_agent
def li_agent_without_refund(context):
    return li_support_without_refund


@llama_index_agent
def li_agent_with_escalate(context):
    return li_support_with_escalate


@pydantic_ai_agent
def pai_agent(context):
    return pai_support


@pydantic_ai_agent
def pai_agent_without_refund(context):
    return pai_support_without_refund


@pydantic_ai_agent
def pai_agent_with_escalate(context):
    return pai_support_with_escalate


@openai_agents_agent
def sdk_agent(context):
    return sdk_support


@openai_agents_agent
def sdk_agent_without_refund(context):
    return sdk_support_without_refund


@openai_agents_agent
def sdk_agent_with_escalate(context):
    return sdk_support_with_escalate


@langgraph_agent
def lg_agent(context):
    return build_graph(context.model)


@langgraph_agent
def lg_agent_without_refund(context):
    return build_graph(context.model, [tool(lookup_order)])


@langgraph_agent
def lg_agent_with_escalate(context):
    return build_graph(context.model, [tool(lookup_order), tool(refund), tool(escalate)])
