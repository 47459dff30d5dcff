"""Agents of other frameworks under the harness: LlamaIndex, pydantic-ai, the OpenAI Agents SDK
and LangGraph, each an optional extra and a plugin of the one agent-type registry.

Each module declares a framework's agent type the way a user declares one: a factory returns
the user's own agent, and the integration runs it with only its model routed through the bridge
(:mod:`agentkit.bridge`) -- the run's model for pydantic-ai and the Agents SDK, a copy with
agentkit's ``llm`` for LlamaIndex, ``context.model`` given to a LangGraph graph builder::

    from agentkit.integrations.llama_index import llama_index_agent
    from my_app.support import support_agent    # a FunctionAgent with its own tools

    @llama_index_agent
    def my_agent(context):
        return support_agent

The scenario's tools apply to the agent's own tools by name (latency, ``failures:``, call
accounting, errors), wrapped for the run through the framework's tool mechanism; a scenario
tool the agent does not have is a :class:`~agentkit.integrations._framework.MissingToolError`.
A factory may instead build the framework's agent over the scenario's tools
(``context.tools``): what the built-in agent types below do, to run a trajectory scenario
under each framework side by side.

* :mod:`agentkit.integrations.llama_index` (``agentkit[llama-index]``): ``FunctionAgent``,
  ``ReActAgent``, ``AgentWorkflow``; agent types ``li_function``, ``li_react``;
* :mod:`agentkit.integrations.pydantic_ai` (``agentkit[pydantic-ai]``): ``Agent``; agent type
  ``pydantic_ai``;
* :mod:`agentkit.integrations.openai_agents` (``agentkit[openai-agents]``): ``Agent`` and
  ``Runner``, hand-offs; agent type ``openai_agents``;
* :mod:`agentkit.integrations.langgraph` (``agentkit[langgraph]``): LangChain's ``create_agent``
  graph (or any compiled graph) over ``ChatOpenAI``; agent type ``langgraph``.

Deeper than the wire (:mod:`agentkit.integrations._framework`): tool calls run inside the step
that asked for them (simulated latency, ``failures:``, errors in
the trace), each model call's step names the framework's agent that made it, hand-offs are the
trace's ``handoffs``, a streamed turn streams from the framework, ``history:`` goes to the
framework's memory, and the run is on agentkit's virtual clock. Importing these modules
imports no framework: each is imported when its agent type first builds an agent.
"""
