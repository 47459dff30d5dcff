"""Agent workflows (``llama_index.core.agent.workflow`` shape): agents as event-driven
workflows, alone or as a team that hands the conversation around.

::

    agent = FunctionAgent(tools=[add], llm=llm, system_prompt="You add numbers.")
    response = await agent.run(user_msg="What is 2 + 3?")        # an AgentOutput
    str(response)                                                 # its text

    team = AgentWorkflow(agents=[researcher, writer], root_agent="researcher",
                         initial_state={"notes": []})
    handler = team.run(user_msg="Write a report on cheetahs")
    async for event in handler.stream_events():                  # AgentInput, AgentStream,
        ...                                                       # AgentOutput, ToolCall, ...
    response = await handler
    state = await handler.ctx.store.get("state")

* ``FunctionAgent`` (tool-calling API; ``allow_parallel_tool_calls``, ``initial_tool_choice``)
  and ``ReActAgent`` (Thought/Action/Answer text; ``formatter``, ``output_parser``), both
  ``BaseWorkflowAgent(name, description, system_prompt, tools, tool_retriever,
  can_handoff_to, llm, initial_state, state_prompt, streaming=True, timeout, verbose)`` with
  the hooks ``take_step``, ``handle_tool_call_results``, ``finalize`` (``base_agent``).
* ``AgentWorkflow(agents, initial_state, root_agent, handoff_prompt, handoff_output_prompt,
  state_prompt, timeout)`` and ``AgentWorkflow.from_tools_or_functions(...)``
  (``multi_agent``): hand-offs, the shared state and its prompt.
* ``run(user_msg=, chat_history=, memory=, ctx=, max_iterations=20)`` on either; the steps
  and what the context store holds are in ``loop``. Tools with a ``ctx: Context`` parameter
  get the run's context (not part of their schema): they can read and change
  ``await ctx.store.get("state")``, or wait for a human with ``ctx.wait_for_event(
  HumanResponseEvent, waiter_event=InputRequiredEvent(...))`` (save the paused run with
  ``ctx.to_dict()``, resume it with ``run(ctx=Context.from_dict(workflow, data))``).
* Failures a model can fix are tool results it reads (``is_error``): an unknown tool ("Tool
  x not found. Please select a tool that is available."), a tool that raised (its message),
  missing arguments (Python's message), a refused hand-off. A run that fails (too many
  steps: "Max iterations of N reached! ...", an LLM error, the timeout) raises from the
  handler and leaves the memory as it was before the run.
* Bus events (``bus``): ``WorkflowAgentInputEvent``, ``WorkflowAgentOutputEvent``,
  ``AgentHandoffEvent``; tool-call events carry the agent's name.
"""

from agentkit.agent.workflow.base_agent import (
    DEFAULT_AGENT_DESCRIPTION,
    DEFAULT_AGENT_NAME,
    BaseWorkflowAgent,
)
from agentkit.agent.workflow.bus import (
    AgentHandoffEvent,
    WorkflowAgentInputEvent,
    WorkflowAgentOutputEvent,
)
from agentkit.agent.workflow.events import (
    AgentInput,
    AgentOutput,
    AgentSetup,
    AgentStream,
    AgentWorkflowStartEvent,
    StreamText,
    ToolCall,
    ToolCallResult,
)
from agentkit.agent.workflow.function_agent import FunctionAgent
from agentkit.agent.workflow.loop import AGENT_STEP, DEFAULT_MAX_ITERATIONS, AgentLoop
from agentkit.agent.workflow.multi_agent import AgentWorkflow
from agentkit.agent.workflow.prompts import (
    DEFAULT_HANDOFF_OUTPUT_PROMPT,
    DEFAULT_HANDOFF_PROMPT,
    DEFAULT_STATE_PROMPT,
)
from agentkit.agent.workflow.react_agent import ReActAgent

__all__ = [
    "AGENT_STEP",
    "DEFAULT_AGENT_DESCRIPTION",
    "DEFAULT_AGENT_NAME",
    "DEFAULT_HANDOFF_OUTPUT_PROMPT",
    "DEFAULT_HANDOFF_PROMPT",
    "DEFAULT_MAX_ITERATIONS",
    "DEFAULT_STATE_PROMPT",
    "AgentHandoffEvent",
    "AgentInput",
    "AgentLoop",
    "AgentOutput",
    "AgentSetup",
    "AgentStream",
    "StreamText",
    "AgentWorkflow",
    "AgentWorkflowStartEvent",
    "BaseWorkflowAgent",
    "FunctionAgent",
    "ReActAgent",
    "ToolCall",
    "ToolCallResult",
    "WorkflowAgentInputEvent",
    "WorkflowAgentOutputEvent",
]
