"""A user's agents of four frameworks, written as each framework's documentation writes them --
their own tools, descriptions and production models -- and each declared as an agentkit agent
type by a factory that returns the user's agent with only its model routed to agentkit
(docs/integrations.md). The tools are the project's functions (``city_tools``, which the
scenarios' ``tools:`` name: the scenario's latency and failure schedules apply to the agent's
own tools of those names)."""

from agents import Agent, function_tool
from city_tools import add, divide, population
from langchain.agents import create_agent
from langchain_core.tools import tool
from llama_index.core.agent.workflow import AgentWorkflow, FunctionAgent
from llama_index.llms.openai import OpenAI
from pydantic_ai import Agent as PydanticAgent

from agentkit.integrations.langgraph import langgraph_agent
from agentkit.integrations.llama_index import llama_index_agent
from agentkit.integrations.openai_agents import openai_agents_agent
from agentkit.integrations.pydantic_ai import pydantic_ai_agent

city_agent = FunctionAgent(llm=OpenAI(model="gpt-4o-mini"), tools=[population, add],
                           system_prompt="Use the tools.")


@llama_index_agent
def my_llama_index(context):
    return city_agent


city_pydantic = PydanticAgent("openai:gpt-4o-mini", instructions="Use the tools.",
                              tools=[population, add], defer_model_check=True)


@pydantic_ai_agent
def my_pydantic_ai(context):
    return city_pydantic


city_sdk = Agent(name="Assistant", tools=[function_tool(population), function_tool(add)])


@openai_agents_agent
def my_openai_agents(context):
    return city_sdk


def build_city_graph(model):
    return create_agent(model, [tool(population), tool(add)], name="assistant")


@langgraph_agent
def my_langgraph(context):
    return build_city_graph(context.model)


researcher = FunctionAgent(name="researcher", description="Looks up facts about cities.",
                           llm=OpenAI(model="gpt-4o-mini"), tools=[population],
                           can_handoff_to=["calculator"])
calculator = FunctionAgent(name="calculator", description="Does arithmetic.",
                           llm=OpenAI(model="gpt-4o-mini"), tools=[divide])
city_team = AgentWorkflow(agents=[researcher, calculator], root_agent="researcher")


@llama_index_agent
def li_team(context):
    return city_team


sdk_calculator = Agent(name="calculator", instructions="You do arithmetic.",
                       tools=[function_tool(divide)])
sdk_researcher = Agent(name="researcher", instructions="You look facts up; hand arithmetic over.",
                       tools=[function_tool(population)], handoffs=[sdk_calculator])


@openai_agents_agent
def sdk_team(context):
    return sdk_researcher
