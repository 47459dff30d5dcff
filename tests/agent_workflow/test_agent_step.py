"""The agent step of the agent workflow has one name, ``AGENT_STEP``, read off the loop's step
itself: the harness (which counts agent steps for checkpoints and files later workflow steps
under them) uses that reference, not a copy of the method's name."""

from __future__ import annotations

import inspect

from agentkit.agent.workflow import AGENT_STEP, AgentLoop, AgentWorkflow, FunctionAgent
from agentkit.harness._families import workflow as workflow_family
from agentkit.instrumentation import LLMCallStartEvent, collect_events
from agentkit.llms.mock import ScriptedLLM
from agentkit.workflow import WorkflowStepStartEvent
from agentkit.workflow.graph import step_functions


def test_agent_step_names_a_step_of_the_agent_loop() -> None:
    assert AGENT_STEP in step_functions(AgentLoop)


def test_the_llm_is_called_in_the_agent_step() -> None:
    workflow = AgentWorkflow(agents=[FunctionAgent(tools=[], llm=ScriptedLLM(["hello"]))])

    with collect_events() as events:
        workflow.run_sync(user_msg="hi")

    started = [e.step for e in events if isinstance(e, WorkflowStepStartEvent)]
    calls = [i for i, e in enumerate(events) if isinstance(e, LLMCallStartEvent)]
    steps = [e for e in events[:calls[0]] if isinstance(e, WorkflowStepStartEvent)]
    assert AGENT_STEP in started and steps[-1].step == AGENT_STEP


def test_the_harness_names_the_agent_step_by_reference() -> None:
    assert f'"{AGENT_STEP}"' not in inspect.getsource(workflow_family)
    assert "AGENT_STEP" in inspect.getsource(workflow_family)
