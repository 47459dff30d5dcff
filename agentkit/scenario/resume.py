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

The loader checks what the file alone tells (:func:`agentkit.scenario.loader.load_scenario`);
this module checks at run time what needs the recorded run: its recorded trace (the snapshot of
the recorded agent type) must be there, and the replayed steps must be the recorded ones -- a
recording that changed since its trace was recorded would make the "same prefix" a different
one, and says so.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

from agentkit.core.textfiles import TextFileError, read_text
from agentkit.scenario.agent_types import resolve_agent_type
from agentkit.scenario.diff import diff_traces
from agentkit.scenario.families.workflow import WorkflowChatAgent
from agentkit.scenario.layout import snapshot_file
from agentkit.scenario.loader import ScenarioError, not_a_workflow, recorded_steps
from agentkit.scenario.model import ResumeFrom, Scenario
from agentkit.scenario.trace import Trace
from agentkit.scenario.trace_read import TraceError, expand_trace

__all__ = ["check_resume", "resume_agent", "prefix_problems"]


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


def _first_steps(trace: dict[str, Any], count: int) -> dict[str, Any]:
    """The first ``count`` steps of ``trace`` (over its turns), with each turn's user message,
    as a trace to diff."""
    turns = []
    for turn in trace.get("turns", []):
        if count <= 0:
            break
        steps = turn.get("steps", [])[:count]
        count -= len(steps)
        turns.append({"user": turn.get("user"), "steps": steps})
    # no format: a recorded trace of an older format holding the same steps is the same run
    return {"turns": turns}


def prefix_problems(trace: Trace, scenario: Scenario, agent_type: str) -> list[str]:
    """For a resumed run: how its replayed steps differ from the recorded trace's first steps
    (the recording changed since its trace was recorded), as one problem; else none."""
    resume = scenario.agents[agent_type].resume_from
    if resume is None or not scenario.path:
        return []
    path = snapshot_file(Path(scenario.path), resume.recording)
    try:
        recorded = json.loads(read_text(path))
    except (OSError, TextFileError, ValueError):
        return [f"the recorded trace {path} of `{resume.recording}` cannot be read any more"]
    if not isinstance(recorded, dict):
        return [f"the recorded trace {path} of `{resume.recording}` is not a trace"]
    try:  # messages expanded before the steps are cut: a step may refer to an earlier turn's
        recorded = expand_trace(recorded, str(path))
    except TraceError as exc:
        return [f"the recorded trace of `{resume.recording}` cannot be read any more: {exc}"]
    lines = diff_traces(_first_steps(recorded, resume.step),
                        _first_steps(expand_trace(trace.to_dict()), resume.step))
    if not lines:
        resumed = any("resumed" in turn.details for turn in trace.turns)
        if resumed or any(turn.error for turn in trace.turns):
            return []
        return [f"the run ended before the resume point: the replay of `{resume.recording}`'s "
                f"recording took {len(trace.steps)} step{'s' if len(trace.steps) != 1 else ''}, "
                f"and its recorded trace ({path}) has more; nothing was resumed after step "
                f"{resume.step}"]
    return [f"the recording of `{resume.recording}` changed: replaying its first {resume.step} "
            f"step{'s' if resume.step != 1 else ''} no longer gives its recorded trace ({path}), "
            "so this run does not go on from the recorded run; record "
            f"`{resume.recording}` again (with its trace) before resuming from it "
            "(recorded -> replayed):\n" + "\n".join(f"  {line}" for line in lines)]
