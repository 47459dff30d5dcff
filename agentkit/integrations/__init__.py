"""Agents of other frameworks under the harness: LlamaIndex, pydantic-ai, the OpenAI Agents SDK
and LangGraph, each an optional extra and a plugin of the one agent-type registry.

Each module declares a framework's agent type the way a user declares one: a factory gets the
framework's own model object (routed through the bridge, :mod:`agentkit.bridge`) and the
scenario's tools as the framework's own tool objects, and returns the framework's agent::

    from llama_index.core.agent.workflow import FunctionAgent
    from agentkit.integrations.llama_index import llama_index_agent

    @llama_index_agent
    def my_agent(context):
        return FunctionAgent(llm=context.llm, tools=context.tools, **context.params)

* :mod:`agentkit.integrations.llama_index` (``agentkit[llama-index]``): ``FunctionAgent``,
  ``ReActAgent``, ``AgentWorkflow``; agent types ``li_function``, ``li_react``;
* :mod:`agentkit.integrations.pydantic_ai` (``agentkit[pydantic-ai]``): ``Agent``; agent type
  ``pydantic_ai``;
* :mod:`agentkit.integrations.openai_agents` (``agentkit[openai-agents]``): ``Agent`` and
  ``Runner``, hand-offs; agent type ``openai_agents``;
* :mod:`agentkit.integrations.langgraph` (``agentkit[langgraph]``): a ``create_react_agent``
  graph over ``ChatOpenAI``; agent type ``langgraph``.

Deeper than the wire (:mod:`agentkit.integrations._framework`): tools run through agentkit's
tool runner inside the step that asked for them (simulated latency, ``failures:``, errors in
the trace), each model call's step names the framework's agent that made it, hand-offs are the
trace's ``handoffs``, a streamed turn streams from the framework, ``history:`` goes to the
framework's memory, and the run is on agentkit's virtual clock. Importing these modules
imports no framework: each is imported when its agent type first builds an agent.
"""
