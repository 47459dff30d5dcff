"""The built-in agent families: plugins of the one agent-type registry, each declared the way
a user's agent type is.

A family is one module of this package holding everything the harness knows about one kind
of agent, declared as :class:`~agentkit.harness._agent_types.AgentType` objects:

* the *factory* that builds the agent from an ``AgentContext``;
* the *trajectory renderer*: a scenario's ``trajectory:`` as the LLM script of the family's
  wire format (``AgentType(..., trajectory=render)``);
* the *trace handlers*: how the bus events only this family emits (a plan, a chain, a
  hand-off) go into traces (``AgentType(..., trace_handlers={PlanEvent: ...})``);
* whatever the agent needs besides (the workflow family's chat adapter).

:data:`BUILT_IN` names them by import ref, as a project's ``[tool.agentkit.agent_types]``
table names its own; the registry imports every one the first time it is used, so their
capabilities are listed and their trace handlers file events from the start. Adding a family
is a module here and its agent types' lines in :data:`BUILT_IN`. The order of the table is
the order agent types are listed in (a trajectory scenario without ``agents:`` runs under
the types that render it in this order). The families (module: agent types; wire format;
what their trace handlers add):

* ``react``: ``react``; ReAct text.
* ``function_calling``: ``function_calling``; tool calls.
* ``llm_compiler``: ``llm_compiler``; a plan and the joiner's decision; traces get each step's
  plan and decision.
* ``coa``: ``coa``; a ``[FUNC ...]`` chain; traces get each chain and its levels.
* ``react_multimodal``: ``react_multimodal`` (takes images); ReAct text.
* ``workflow``: ``function_agent`` (tool calls), ``react_agent`` (ReAct text) and
  ``agent_workflow`` (a team); traces get agent steps, hand-offs and human answers.

A wire format is named after the built-in agent type whose renderer writes it; ``tool_calls``
also names ``function_calling``'s (:data:`WIRE_FORMATS`). A user's type that speaks one gives
that name as its ``trajectory``.
"""

from __future__ import annotations

__all__ = ["BUILT_IN", "WIRE_FORMATS"]

BUILT_IN: dict[str, str] = {
    "react": "agentkit.harness._families.react:REACT",
    "function_calling": "agentkit.harness._families.function_calling:FUNCTION_CALLING",
    "llm_compiler": "agentkit.harness._families.llm_compiler:LLM_COMPILER",
    "coa": "agentkit.harness._families.coa:COA",
    "react_multimodal": "agentkit.harness._families.react_multimodal:REACT_MULTIMODAL",
    "function_agent": "agentkit.harness._families.workflow:FUNCTION_AGENT",
    "react_agent": "agentkit.harness._families.workflow:REACT_AGENT",
    "agent_workflow": "agentkit.harness._families.workflow:AGENT_WORKFLOW",
}
"""The built-in agent types: name -> import ref of its :class:`AgentType` declaration."""

WIRE_FORMATS: dict[str, str] = {
    "react": "react",
    "tool_calls": "function_calling",
    "llm_compiler": "llm_compiler",
    "coa": "coa",
}
"""The bundled wire formats by name, each the renderer of the built-in agent type it names."""
