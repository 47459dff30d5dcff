"""Planning a scenario: the checks of a loaded file that need more than the file.

Loading (:func:`agentkit.scenario.load_scenario`) reads and validates the file alone.
:func:`plan_scenario` then asks what only the running side knows, before anything runs:

* the agent-type registry -- every agent type named exists; one without a script or a
  recording can render the scenario's trajectory; a scenario with a trajectory and no
  ``agents`` gets every agent type that can render it; both sides of a ``resume_from`` are
  workflow agent types;
* the tools' code -- a trajectory's calls name the tools (imported from their refs) and their
  parameters; the calls ``expect.tool_calls`` lists name the tools;
* recorded runs -- a resume's step is one after which the recorded run went on (its recorded
  trace: the snapshot of the recorded agent type);
* MCP servers -- two servers are not given one name.

Every problem is reported at once, one ``file:line: field: message`` line each, in file
order (:class:`~agentkit.scenario.ScenarioError`), as loading reports the file's. Every run
plans its scenario first (:func:`load`, which the scenario runner and so every face uses).
"""

from __future__ import annotations

import difflib
import json
import weakref
from collections.abc import Mapping
from pathlib import Path

from agentkit.agent.workflow.events import HANDOFF_TOOL_NAME
from agentkit.core.bounded import BoundedStore
from agentkit.core.errors import one_line
from agentkit.core.textfiles import TextFileError, read_text
from agentkit.harness._agent_types import (
    AGENT_TYPES,
    AgentTypeError,
    UnknownAgentTypeError,
    check_agent_type,
    renderable_agent_types,
    trajectory_renderer,
)
from agentkit.harness._mcp import mcp_problems
from agentkit.harness._world import NO_WORLD, SimulatedTool, built_tools
from agentkit.scenario._layout import snapshot_file
from agentkit.scenario._loader import ScenarioError, load_scenario
from agentkit.scenario._model import AgentSpec, Expect, Scenario, ScriptReply
from agentkit.scenario._trajectory import TrajectoryError, compile_trajectory

__all__ = ["plan_scenario", "load", "recorded_steps", "not_a_workflow"]

Loc = tuple[str | int, ...]


class _Problems:
    """What planning found: each ``(field path, message)``, the agent-type names' at their
    key (``key``)."""

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        self.found: list[tuple[Loc, str, bool]] = []

    def add(self, loc: Loc, message: str, *, key: bool = False) -> None:
        self.found.append((loc, message, key))

    def error(self) -> ScenarioError | None:
        """All problems, one line each, in file order (each once), or None."""
        scenario = self.scenario
        lines = [(scenario.line(*loc, key=key),
                  one_line(f"{scenario.where(*loc, key=key)}: {'.'.join(map(str, loc))}: "
                           f"{message}"))
                 for loc, message, key in self.found]
        text = dict.fromkeys(line for _, line in sorted(lines, key=lambda p: p[0]))
        return ScenarioError("\n".join(text)) if text else None


def plan_scenario(scenario: Scenario) -> Scenario:
    """Check what ``scenario`` needs beyond its file (module docstring) and return it, a
    trajectory scenario without agent types given those that can render it; a
    :class:`~agentkit.scenario.ScenarioError` lists every problem."""
    if not scenario.agents and scenario.trajectory is not None:
        scenario.agents = {name: AgentSpec.model_validate({}) for name in renderable_agent_types()}
    problems = _Problems(scenario)
    unknown = _check_agent_names(scenario, problems)
    ruled = scenario.expect.never or any(spec.expect is not None and spec.expect.never
                                         for spec in scenario.agents.values())
    tools = _scenario_tools(scenario, problems, ruled=bool(ruled))
    _check_trajectory(scenario, unknown, tools, problems)
    _check_rules(scenario, tools, problems)
    _check_expected_calls(scenario, tools, problems)
    _check_resume(scenario, unknown, problems)
    for loc, message in mcp_problems(scenario):
        problems.add(loc, message)
    error = problems.error()
    if error is not None:
        raise error
    return scenario


def load(scenario: Scenario | str | Path) -> Scenario:
    """The scenario file at that path (or ``scenario`` itself), planned. A loaded scenario
    replayed again is not planned again while what its checks read stands: the same object
    (not a copy: a variant, a mutant), the same agent types, and for a ``resume_from`` the
    same step count of the recorded trace (which may have been recorded since). Its tools'
    refs are imported once a process either way."""
    if not isinstance(scenario, Scenario):
        return plan_scenario(load_scenario(scenario))
    stands = (AGENT_TYPES.declared(), _resumed_steps(scenario))
    if _planned.get(id(scenario)) == stands:
        return scenario
    plan_scenario(scenario)
    if id(scenario) not in _planned:  # forgotten with the object (an id is then reused)
        weakref.finalize(scenario, _planned.pop, id(scenario), None)
    _planned[id(scenario)] = stands
    return scenario


_planned: dict[int, tuple[Mapping[str, object], tuple[int | None, ...]]] = {}
"""The scenario objects whose planning passed (by id, while they live), each with the agent
types it passed under and its resumes' recorded step counts (:func:`load`)."""


def _resumed_steps(scenario: Scenario) -> tuple[int | None, ...]:
    """The step count of the recorded trace of each ``resume_from`` (what planning reads of
    the files besides the scenario's); none for a scenario without one."""
    resumes = [spec.resume_from.recording for spec in scenario.agents.values()
               if spec.resume_from is not None]
    if not resumes:
        return ()
    return tuple(recorded_steps(Path(scenario.path), source) if scenario.path else None
                 for source in resumes)


def _check_agent_names(scenario: Scenario, problems: _Problems) -> set[str]:
    """Agent types that do not exist, reported; their names returned."""
    unknown = set()
    for name in scenario.agents:
        try:
            check_agent_type(name)
        except UnknownAgentTypeError as exc:
            problems.add(("agents", name), str(exc), key=True)
            unknown.add(name)
    return unknown


def _check_trajectory(scenario: Scenario, unknown: set[str], tools: list[SimulatedTool] | None,
                      problems: _Problems) -> None:
    """Every agent type without a script or recording can render the trajectory, and the
    trajectory's calls name the scenario's tools and their parameters (the tools of an MCP
    server are known only in a run, where the world stage checks them)."""
    if scenario.trajectory is None:
        return
    for name, spec in scenario.agents.items():
        if (name in unknown or spec.team is not None or spec.script is not None
                or spec.recording is not None):
            continue
        if trajectory_renderer(name) is None:
            problems.add(("agents", name), f"agent type `{name}` cannot render a trajectory "
                                           "(it has no renderer): give it a `script`, or "
                                           "register one with register_agent_type(..., "
                                           "trajectory=renderer)")
    if tools is None:
        return
    try:
        compile_trajectory(scenario.trajectory, tools)
    except TrajectoryError as exc:
        for loc, message in exc.problems:
            problems.add(loc, message)


def _check_rules(scenario: Scenario, tools: list[SimulatedTool] | None,
                 problems: _Problems) -> None:
    """The calls a policy rule (``expect.never``) names are the scenario's tools: a rule about
    a misspelt name would never be broken."""
    if tools is None:
        return
    names = sorted(tool.metadata.name for tool in tools)
    places: list[tuple[Loc, Expect | None]] = [(("expect",), scenario.expect)] + [
        (("agents", name, "expect"), spec.expect) for name, spec in scenario.agents.items()]
    for place, expect in places:
        for index, rule in enumerate(expect.never or () if expect is not None else ()):
            patterns = [(("call",), rule.call)] + [
                ((when, kind), getattr(event, kind)) for when in ("before", "after")
                if (event := getattr(rule, when)) is not None for kind in ("call", "result")]
            for loc, pattern in patterns:
                if pattern is None or pattern.name is None or pattern.name in names:
                    continue
                close = difflib.get_close_matches(pattern.name, names, n=1)
                hint = f"did you mean `{close[0]}`?" if close else \
                    f"its tools: {', '.join(names) or 'none'}"
                problems.add((*place, "never", index, *loc, "name"),
                             f"`{pattern.name}` is not a tool of the scenario; {hint}")


def _scenario_tools(scenario: Scenario, problems: _Problems, *,
                    ruled: bool) -> list[SimulatedTool] | None:
    """The scenario's tools, to check the trajectory's calls, the expected calls and the rules'
    names against (built only for a scenario that has one of them); None when one cannot be
    told (a ref that cannot be used, reported for a trajectory or a rule, else when the run
    builds its world; an MCP server's), so calls to it are not called unknown."""
    expected = [scenario.expect, *(spec.expect for spec in scenario.agents.values())]
    if scenario.trajectory is None and not ruled and not any(
            expect is not None and expect.tool_calls is not None for expect in expected):
        return None
    refs = [(index, spec) for index, spec in enumerate(scenario.tools) if spec.ref is not None]
    # a world's place is held by None: these tools are only looked at, never called
    tools, found = built_tools(refs, scenario.path,
                               None if scenario.world is not None else NO_WORLD)
    if scenario.trajectory is not None or ruled:  # else a ref that cannot be used fails its run
        for loc, message in found:
            problems.add(loc, message)
    return None if found or len(refs) < len(scenario.tools) else tools


def _check_expected_calls(scenario: Scenario, tools: list[SimulatedTool] | None,
                          problems: _Problems) -> None:
    """Every ``expect.tool_calls`` entry (the scenario's and each agent type's) names one of
    the scenario's tools, as a trajectory's calls must. A scenario without tools is left
    alone: its agents bring their own (an agent traced from the wire); an entry that expects
    the call to fail may name a tool that does not exist (the agent asking for one), and a
    team's calls may be its hand-offs."""
    if not tools:
        return
    names = [tool.metadata.name for tool in tools]
    if any(spec.team is not None for spec in scenario.agents.values()):
        names.append(HANDOFF_TOOL_NAME)
    places: list[tuple[Loc, Expect | None, list[str]]] = [(("expect",), scenario.expect, names)]
    for name, spec in scenario.agents.items():
        # an agent type's own entries may also name what its script has the model call (a
        # framework team's hand-offs: `transfer_to_calculator`); a registered team without a
        # script brings hand-off tools no file names, so its entries are left alone
        scripted = [call.name for item in spec.script or () if isinstance(item, ScriptReply)
                    for call in item.tool_calls]
        if spec.script is None and _registered_team(name):
            continue
        places.append((("agents", name, "expect"), spec.expect, names + scripted))
    for loc, expect, known in places:
        if expect is None or expect.tool_calls is None:
            continue
        for index, call in enumerate(expect.tool_calls.calls):
            if call.name in known or call.error not in (None, False):
                continue
            close = difflib.get_close_matches(call.name, known, n=1)
            hint = f"did you mean `{close[0]}`? " if close else ""
            problems.add((*loc, "tool_calls", "calls", index, "name"),
                         f"unknown tool `{call.name}`; {hint}(the scenario's tools: "
                         f"{', '.join(names)})")


def _registered_team(name: str) -> bool:
    """Whether agent type ``name`` is registered as running a team of agents."""
    try:
        return AGENT_TYPES[name].team
    except (AgentTypeError, KeyError):
        return False


def recorded_steps(scenario_file: Path, agent_type: str) -> int | None:
    """How many agent steps the recorded run of ``agent_type`` took: the steps of its recorded
    trace (its snapshot), over all turns; None when there is no readable recorded trace. The
    file is read on every call; a text read before is not parsed again."""
    try:
        text = read_text(snapshot_file(scenario_file, agent_type))
    except (OSError, TextFileError):
        return None
    counted = _STEPS.get(text)
    if counted is None:
        try:
            trace = json.loads(text)
            steps: int | None = sum(len(turn["steps"]) for turn in trace["turns"])
        except (ValueError, TypeError, KeyError):
            steps = None
        counted = (steps,)
        _STEPS.put(text, counted, len(text))
    return counted[0]


_STEPS: BoundedStore[str, tuple[int | None]] = BoundedStore(64, 1 << 24)
""":func:`recorded_steps` of a recorded trace's text."""


def not_a_workflow(agent_type: str) -> str | None:
    """Why ``agent_type`` cannot take part in a resume, as it is not a workflow agent type
    (None: it is one, or cannot be imported, which is reported where it is used)."""
    try:
        kind = AGENT_TYPES[agent_type]
    except (AgentTypeError, KeyError):
        return None  # reported where its name is, or when it runs
    if kind.workflow:
        return None
    workflows = ", ".join(n for n, k in AGENT_TYPES.loaded().items() if k.workflow)
    return (f"agent type `{agent_type}` is not a workflow agent: checkpoints are taken and "
            f"resumed by workflow agent types only ({workflows})")


def _check_resume(scenario: Scenario, unknown: set[str], problems: _Problems) -> None:
    """Both sides of a ``resume_from:`` are workflow agent types, and its step is one after
    which the recorded run went on (when its recorded trace is there: recording it comes
    first; a run checks that it is, :func:`agentkit.harness._resume.check_resume`)."""
    for name, spec in scenario.agents.items():
        resume = spec.resume_from
        if resume is None:
            continue
        place: Loc = ("agents", name, "resume_from")
        source = resume.recording
        for who, loc in ((name, place), (source, (*place, "recording"))):
            problem = None if who in unknown else not_a_workflow(who)
            if problem is not None:
                problems.add(loc, problem)
        steps = recorded_steps(Path(scenario.path), source) if scenario.path else None
        if steps is not None and resume.step >= steps:
            recorded_trace = snapshot_file(Path(scenario.path or ""), source)
            problems.add((*place, "step"), (
                f"step {resume.step} is out of range: the recorded run of `{source}` has "
                f"{steps} step{'s' if steps != 1 else ''} ({recorded_trace}), and a resume "
                + (f"follows one of steps 1 to {steps - 1}" if steps > 1
                   else "needs a step after the one it follows")))
