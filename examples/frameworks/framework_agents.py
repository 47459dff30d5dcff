"""A user's agents of four frameworks, each declared as an agentkit agent type by a factory that
gets the framework's model (routed through agentkit's bridge) and the scenario's tools as the
framework's own tool objects, and returns the framework's agent (docs/integrations.md)."""

from agents import Agent
from langgraph.prebuilt import create_react_agent
from llama_index.core.agent.workflow import AgentWorkflow, FunctionAgent
from pydantic_ai import Agent as PydanticAgent

from agentkit.integrations.langgraph import langgraph_agent
from agentkit.integrations.llama_index import llama_index_agent
from agentkit.integrations.openai_agents import openai_agents_agent
from agentkit.integrations.pydantic_ai import pydantic_ai_agent


@llama_index_agent
def my_llama_index(context):
    return FunctionAgent(llm=context.llm, tools=context.tools, system_prompt="Use the tools.")


@pydantic_ai_agent
def my_pydantic_ai(context):
    return PydanticAgent(context.model, tools=context.tools, instructions="Use the tools.")


@openai_agents_agent
def my_openai_agents(context):
    return Agent(name="Assistant", model=context.model, tools=context.tools)


@langgraph_agent
def my_langgraph(context):
    return create_react_agent(context.model, context.tools, name="assistant")


@llama_index_agent
def li_team(context):
    tools = context.tools_by_name
    researcher = FunctionAgent(name="researcher", description="Looks up facts about cities.",
                               llm=context.llm, tools=[tools["population"]],
                               can_handoff_to=["calculator"])
    calculator = FunctionAgent(name="calculator", description="Does arithmetic.",
                               llm=context.llm, tools=[tools["divide"]])
    return AgentWorkflow(agents=[researcher, calculator], root_agent="researcher")


@openai_agents_agent
def sdk_team(context):
    tools = context.tools_by_name
    calculator = Agent(name="calculator", instructions="You do arithmetic.",
                       tools=[tools["divide"]])
    return Agent(name="researcher", instructions="You look facts up; hand arithmetic over.",
                 tools=[tools["population"]], handoffs=[calculator])
