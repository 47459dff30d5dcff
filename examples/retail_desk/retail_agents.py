"""The desk's agent types: four of agentkit's bundled agent types, each given the shop's
written policy (policy.md) as its system prompt. Declared in pyproject.toml; a scenario names
them under `agents:`, and their scripts are written (or rendered from a `trajectory:`) in the
wire format of the bundled type they build on."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from agentkit.harness import AGENT_TYPES, AgentContext, AgentType, ChatAgent

POLICY = (Path(__file__).parent / "policy.md").read_text(encoding="utf-8")


def with_policy(bundled: str, parameter: str) -> AgentType:
    """The bundled agent type `bundled`, its agent built with the policy given as the keyword
    argument `parameter` (unless a scenario's `params:` gives its own)."""
    base = AGENT_TYPES[bundled]

    def build(context: AgentContext) -> ChatAgent:
        return base.factory(replace(context, params={parameter: POLICY, **context.params}))

    return replace(base, factory=build)


DESK_REACT = with_policy("react", "context")  # ReAct: the policy goes into its system header
DESK_FUNCTION_CALLING = with_policy("function_calling", "system_prompt")
DESK_FUNCTION_AGENT = with_policy("function_agent", "system_prompt")
DESK_REACT_AGENT = with_policy("react_agent", "system_prompt")
