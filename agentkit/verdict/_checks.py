"""The checks of a run, each a value (in the spirit of pydantic-evals' ``Evaluator``): it
looks at what the run left -- its trace, models, tools -- and returns its problems, each with
a kind. :data:`CHECKS` are a run's, in the order their problems are reported: a changed
recording first (what else the run got wrong follows from it)."""

from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from agentkit.core.bounded import BoundedStore
from agentkit.core.protocols import conforms
from agentkit.core.textfiles import TextFileError, read_text
from agentkit.scenario._layout import snapshot_file
from agentkit.scenario._model import Scenario
from agentkit.scenario._trajectory_run import check_trajectory
from agentkit.trace import Trace, TraceError, diff_traces, expand_trace
from agentkit.verdict._expectations import check_expectations
from agentkit.verdict._problems import Problem, ProblemKind

if TYPE_CHECKING:
    from agentkit.tools import ToolMetadata
    from agentkit.verdict._run import Run

__all__ = ["Check", "CHECKS", "RecordingPrefix", "Expectations", "Conversation", "Trajectory",
           "Leftovers", "ToolAccounting", "run_checks"]


class Check(Protocol):
    """One kind of expectation of a run."""

    def evaluate(self, run: Run) -> list[Problem]:
        """What the run got wrong by this check (empty: it holds)."""
        ...


def _problems(texts: list[str], kind: ProblemKind) -> list[Problem]:
    return [Problem(text, kind) for text in texts] if texts else []


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
        text = read_text(path)
    except (OSError, TextFileError):
        return [f"the recorded trace {path} of `{resume.recording}` cannot be read any more"]
    key = (text, str(path), resume.step)
    recorded = _PREFIXES.get(key)
    if recorded is None:
        recorded = _recorded_prefix(text, str(path), resume.step)
        _PREFIXES.put(key, recorded, len(text))
    if isinstance(recorded, str):  # "unreadable" or "no trace"
        return [f"the recorded trace {path} of `{resume.recording}` "
                + ("cannot be read any more" if recorded == "unreadable" else "is not a trace")]
    if isinstance(recorded, TraceError):
        return [f"the recorded trace of `{resume.recording}` cannot be read any more: "
                f"{recorded}"]
    lines = diff_traces(recorded, _first_steps(expand_trace(trace.to_dict()), resume.step))
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


def _recorded_prefix(text: str, where: str, step: int) -> dict[str, Any] | str | TraceError:
    """The first ``step`` steps of the recorded trace ``text`` (the file ``where``), its
    messages expanded; ``"unreadable"`` (not JSON), ``"no trace"`` (not an object), or the
    error of a reference that leads nowhere."""
    try:
        recorded = json.loads(text)
    except ValueError:
        return "unreadable"
    if not isinstance(recorded, dict):
        return "no trace"
    try:  # messages expanded before the steps are cut: a step may refer to an earlier turn's
        return _first_steps(expand_trace(recorded, where), step)
    except TraceError as exc:
        return exc


_PREFIXES: BoundedStore[tuple[str, str, int], dict[str, Any] | str | TraceError] = \
    BoundedStore(64, 1 << 24)
""":func:`_recorded_prefix` by the recorded trace's text, file and step: a resumed scenario
replayed again reads its recorded trace's file again, and parses it only when it changed
(read-only: the diff only reads it)."""


def _stopped(trace: Trace) -> bool:
    return any(turn.error for turn in trace.turns)


@dataclass(frozen=True)
class RecordingPrefix:
    """A resumed run's replayed steps against the recorded trace's first steps."""

    def evaluate(self, run: Run) -> list[Problem]:
        return _problems(prefix_problems(run.trace, run.scenario, run.agent_type),
                         "recording_mismatch")


@dataclass(frozen=True)
class Expectations:
    """The scenario's ``expect`` (answers, tool calls and their order, tool errors, hand-offs,
    budgets, memory, the world's end state, policy rules) and its judged expectations, by the
    judges' verdicts."""

    def evaluate(self, run: Run) -> list[Problem]:
        scenario = run.scenario
        expect = scenario.expect_for(run.agent_type)
        # the tools' tags: only the policy rules (``never``) select by them
        tags: dict[str, frozenset[str]] | None = {
            tool.metadata.name: getattr(tool, "tags", frozenset())
            for tool in run.tools} if expect.never is not None else None
        return check_expectations(run.trace, scenario.turns, expect,
                                  run.judgements, tags=tags, state_checks=run.state_checks)


@dataclass(frozen=True)
class Conversation:
    """A simulated user's goal, as its conversation decided it."""

    def evaluate(self, run: Run) -> list[Problem]:
        return _problems(list(run.conversation_problems), "conversation") \
            if run.conversation_problems else []


@dataclass(frozen=True)
class Trajectory:
    """The expectations the scenario's trajectory implies."""

    def evaluate(self, run: Run) -> list[Problem]:
        if run.trajectory is None:
            return []
        return _problems(check_trajectory(run.trace, run.trajectory,
                                          run.scenario.expect_for(run.agent_type)), "trajectory")


@dataclass(frozen=True)
class Leftovers:
    """Script replies, recorded exchanges and MCP exchanges the run did not use (the agent
    now asks less than its script or recording has); not looked at when the run stopped,
    since replies after the failure could not be used."""

    def evaluate(self, run: Run) -> list[Problem]:
        if _stopped(run.trace):
            return []
        found = [text for double in run.doubles if double.excused is None
                 for text in double.leftovers()]
        for role, script in run.role_scripts.items():
            if script.remaining:
                found.append(f"the {role}'s script has {script.remaining} unused repl"
                             f"{'y' if script.remaining == 1 else 'ies'} (it was asked "
                             f"{script.calls} time{'' if script.calls == 1 else 's'})")
        if run.mcp is not None:
            found += run.mcp.leftovers()
        return _problems(found, "leftover")


@runtime_checkable
class CountedTool(Protocol):
    """A tool of the scenario's world that counts its runs (the harness's simulated tools):
    its calls started and finished, and the latency and faults (by call) the scenario gave."""

    @property
    def metadata(self) -> ToolMetadata: ...

    calls: int
    finished: int
    latency: float
    faults: Collection[int]


@dataclass(frozen=True)
class ToolAccounting:
    """Each scenario tool's runs against the trace's calls of it. A tool that ran more often
    than the trace shows was called around the agent's steps (code calling it directly):
    a side effect no trace, expectation or snapshot sees. A tool the scenario gives a latency
    or a failure schedule that never ran while the trace shows calls of its name was either
    missing from the agent (the tools it offered its model lack it) or shadowed by the
    agent's own tool of that name -- unless the agent is traced from the wire, whose tools
    may be its own by design."""

    def evaluate(self, run: Run) -> list[Problem]:
        if not run.tools:
            return []
        traced: dict[str, int] = {}  # calls by tool name (a dict: a Counter costs five layers)
        for turn in run.trace.turns:
            for call in turn.tool_calls:
                traced[call.name] = traced.get(call.name, 0) + 1
        found = []
        for tool in run.tools:
            if not conforms(tool, CountedTool):
                continue
            name, ran = tool.metadata.name, tool.finished
            calls_of = traced.get(name, 0)
            if ran > calls_of:
                extra = ran - calls_of
                found.append(
                    f"`{name}` ran {ran} time{'' if ran == 1 else 's'}, but the agent's steps "
                    f"show {calls_of} call{'' if calls_of == 1 else 's'} of it: {extra} "
                    f"call{' was' if extra == 1 else 's were'} made outside the tool calls the "
                    "model asked for (code calling the tool directly), so no trace, expectation "
                    "or snapshot sees them; call scenario tools only through the agent's tool "
                    "calls")
            declared = [what for what, given in (("latency", tool.latency),
                                                 ("failure schedule", tool.faults)) if given]
            if not (declared and tool.calls == 0 and calls_of
                    and not run.own_tools_allowed):
                continue
            # the tools the agent offered its model (empty: its steps do not tell)
            offered = list(dict.fromkeys(spec["name"] for turn in run.trace.turns
                                         for spec in turn.tools))
            calls = f"{calls_of} call{'' if calls_of == 1 else 's'}"
            if offered and name not in offered:
                found.append(
                    f"the agent has no tool `{name}` (it was offered {', '.join(offered)}): "
                    f"its {calls} of `{name}` found no tool, so the scenario's `{name}` never "
                    "ran; give the agent every tool of the factory's context.tools")
            else:
                found.append(
                    f"the trace shows {calls} of `{name}`, but the scenario's `{name}` never "
                    "ran: the agent called a tool of its own by that name, so the scenario's "
                    f"{' and '.join(declared)} never applied; build the agent's tools from the "
                    "factory's context.tools")
        return _problems(found, "tool_accounting")


CHECKS: tuple[Check, ...] = (RecordingPrefix(), Expectations(), Conversation(), Trajectory(),
                             Leftovers(), ToolAccounting())


def run_checks(run: Run, checks: tuple[Check, ...] = CHECKS) -> list[Problem]:
    """Every problem the checks find in ``run``, in the checks' order, each once (a problem
    found N times is told once, with its count); when there are any and the agent stopped at
    one of its limits (its model still asking for tool calls), that comes first: the rest
    may follow from it."""
    found: dict[Problem, int] = {}  # a dict, not a Counter: no layers for a run without any
    for check in checks:
        for problem in check.evaluate(run):
            found[problem] = found.get(problem, 0) + 1
    problems = [problem if count == 1 else Problem(f"{problem} ({count} times)", problem.kind)
                for problem, count in found.items()] if found else []
    limited = [(number, turn.limit) for number, turn in enumerate(run.trace.turns, start=1)
               if turn.limit is not None]
    if problems and limited:
        number, limit = limited[0]
        problems.insert(0, Problem(f"turn {number}: the agent stopped at its limit {limit} while "
                                   "its model still asked for tool calls", "limit"))
    return problems
