"""Simulated customers written as functions (a scenario's `user: {ref: ...}`): each reads the
conversation so far and writes the customer's next message."""

from __future__ import annotations

from agentkit.harness import SimulatedUserContext


def says_yes_when_asked(context: SimulatedUserContext) -> str:
    """A customer who agrees to what the desk proposes, and asks what it can do otherwise."""
    last = context.messages[-1].content if context.messages else ""
    if last and last.rstrip().endswith("?"):
        return "Yes, please do that."
    return "What can you do for me?"
