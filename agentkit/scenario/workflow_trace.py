"""How agent-workflow runs go into traces (registered with :func:`trace_handler`).

A trace step of a workflow run is one *agent step*: the agent's turn at the LLM (its input,
its LLM call, its output) plus the tool calls that output asked for. It opens at the agent's
input event (in the ``run_agent_step`` workflow step, so the LLM call nests under it), and
the later workflow steps of the run (``parse_agent_output``, ``call_tool``,
``aggregate_tool_results``) belong to it until the next agent step opens. Each step says
``agent`` (who took it) and ``retry`` when its output was sent back to the agent; its
``input`` is the user message for the first step of a run, its ``output`` the agent's text
(a ``return_direct`` tool's output for the step that ended the run with one), and
``is_last`` marks the step the run stopped after.

Per turn: ``agents`` (the agents in the order they took over) and ``handoffs`` (``from``,
``to``, ``reason``); the final output and the memory are the turn's core fields. A run that
fails puts its error on the step it failed in. Runner agents emit none of these events, so
their traces do not change.
"""

from __future__ import annotations

from typing import Any

from agentkit.agent.workflow import (
    AgentHandoffEvent,
    AgentOutput,
    WorkflowAgentInputEvent,
    WorkflowAgentOutputEvent,
)
from agentkit.llms.types import MessageRole
from agentkit.scenario.trace import StepTrace, TurnBuilder, trace_handler
from agentkit.workflow import WorkflowRunEndEvent, WorkflowRunStartEvent, WorkflowStepStartEvent

__all__: list[str] = []

_CURRENT = "agent_step"
_NEW_RUN = "agent_new_run"


def _current(turn: TurnBuilder) -> StepTrace | None:
    step: StepTrace | None = turn.state.get(_CURRENT)
    return step


@trace_handler(WorkflowRunStartEvent)
def _run_start(turn: TurnBuilder, event: WorkflowRunStartEvent) -> None:
    if not event.resumed:
        turn.state[_NEW_RUN] = True


@trace_handler(WorkflowAgentInputEvent)
def _agent_input(turn: TurnBuilder, event: WorkflowAgentInputEvent) -> None:
    if event.span_id is None:
        return
    query = None
    if turn.state.pop(_NEW_RUN, False):
        users = [m for m in event.messages if m.role == MessageRole.USER]
        query = users[-1].content if users else None
    step = turn.new_step(event.span_id, query)
    step.details["agent"] = event.agent
    turn.state[_CURRENT] = step
    agents: list[str] = turn.details.setdefault("agents", [])
    if not agents or agents[-1] != event.agent:
        agents.append(event.agent)


@trace_handler(WorkflowStepStartEvent)
def _workflow_step(turn: TurnBuilder, event: WorkflowStepStartEvent) -> None:
    """Later workflow steps (tool calls...) belong to the agent step that asked for them."""
    step = _current(turn)
    if step is not None and event.span_id is not None and event.step != "run_agent_step":
        turn.steps[event.span_id] = step


@trace_handler(WorkflowAgentOutputEvent)
def _agent_output(turn: TurnBuilder, event: WorkflowAgentOutputEvent) -> None:
    step = _current(turn)
    if step is None:
        return
    step.output = event.response.content if event.response is not None else None
    if event.retry:
        step.details["retry"] = True


@trace_handler(AgentHandoffEvent)
def _handoff(turn: TurnBuilder, event: AgentHandoffEvent) -> None:
    turn.details.setdefault("handoffs", []).append(
        {"from": event.from_agent, "to": event.to_agent, "reason": event.reason})


@trace_handler(WorkflowRunEndEvent)
def _run_end(turn: TurnBuilder, event: WorkflowRunEndEvent) -> None:
    step = _current(turn)
    if step is None:
        return
    if event.outcome == "stopped":
        step.is_last = True
        result: Any = event.result
        if isinstance(result, AgentOutput):
            step.output = result.response.content
    elif event.outcome in ("failed", "timed_out"):
        step.error = event.error
