"""Resuming a recorded run: an agent type that goes on from a checkpoint of another's.

``agents.<type>.resume_from: {recording: <agent type>, step: N}`` runs a scenario in two
parts: the recorded run of ``<agent type>`` (its cassette, replayed) takes the turns through its
first ``N`` agent steps, counted over the turns; there the workflow's checkpoint is taken,
saved (``Checkpoint.to_dict``) and restored into this agent type's workflow, which goes on with
its own script or model. Both agent types are workflow agent types (``AgentType(...,
workflow=True)``): their runs are checkpointed by :mod:`agentkit.workflow`. The trace of the
resumed run holds the replayed steps and then its own, and the turn in which it took over says
so (``resumed: {from, after_step}``), so it compares step for step with the recorded trace and
a report shows the two continuations side by side.

The loader checks what the file alone tells (:func:`agentkit.scenario._loader.load_scenario`);
planning (:func:`agentkit.harness.plan_scenario`) and this module check before a run what needs
the recorded run: its recorded trace (the snapshot of the recorded agent type) must be there;
the verdict checks after it that the replayed steps were the recorded ones
(:class:`agentkit.verdict.RecordingPrefix`) -- a recording that changed since its trace was
recorded would make the "same prefix" a different one, and says so.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from agentkit.harness._agent_types import resolve_agent_type
from agentkit.harness._families.workflow import WorkflowChatAgent
from agentkit.harness._plan import not_a_workflow, recorded_steps
from agentkit.scenario._loader import ScenarioError
from agentkit.scenario._model import ResumeFrom, Scenario

__all__ = ["check_resume", "resume_agent"]


def _where(scenario: Scenario, agent_type: str, *field: str) -> str:
    loc = ("agents", agent_type, "resume_from", *field)
    return f"{scenario.where(*loc)}: {'.'.join(loc)}"


def check_resume(scenario: Scenario, agent_type: str) -> None:
    """Before a resumed agent type runs: both agent types are workflow agent types, and the
    recorded run has a recorded trace with a step after the resume point (a
    :class:`ScenarioError` at the ``resume_from`` field otherwise)."""
    resume = scenario.agents[agent_type].resume_from
    if resume is None:
        return
    source = resume.recording
    recorded = scenario.agents.get(source)
    if recorded is None or not recorded.recorded():
        raise ScenarioError(f"{_where(scenario, agent_type, 'recording')}: unknown recording "
                            f"`{source}`: no agent type of this scenario with a `recording:` "
                            "is called that")
    resolve_agent_type(source)  # a recorded type that cannot be imported says so here
    for who, field in ((agent_type, ()), (source, ("recording",))):
        problem = not_a_workflow(who)
        if problem is not None:
            raise ScenarioError(f"{_where(scenario, agent_type, *field)}: {problem}")
    steps = recorded_steps(Path(scenario.path), source) if scenario.path else None
    if steps is None:
        command = shlex.join(["agentkit", "record", scenario.path or scenario.name, "--agent",
                              source])
        raise ScenarioError(f"{_where(scenario, agent_type, 'recording')}: the recorded run of "
                            f"`{source}` has no recorded trace yet (its snapshot); record it "
                            f"first: {command}")
    if resume.step >= steps:
        raise ScenarioError(f"{_where(scenario, agent_type, 'step')}: step {resume.step} is out "
                            f"of range: the recorded run of `{source}` has {steps} step"
                            f"{'s' if steps != 1 else ''}")


def resume_agent(agent: Any, recorded: Any, resume: ResumeFrom) -> None:
    """Have ``agent`` (the resumed agent type's) go on from ``recorded``'s run (the recorded
    agent type's, on its cassette) after ``resume.step`` agent steps."""
    assert isinstance(agent, WorkflowChatAgent) and isinstance(recorded, WorkflowChatAgent), \
        "check_resume lets only workflow agent types take part"
    agent.resume_after(recorded, resume.step, resume.recording)
