"""Run a scenario under one agent type and check it: the harness's main entry point."""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentkit.core.files import settle
from agentkit.core.sim import Stopwatch, simulation
from agentkit.instrumentation import collect_events
from agentkit.llms.base import LLM
from agentkit.llms.cassette import CassetteLLM
from agentkit.llms.mock import ScriptedLLM
from agentkit.llms.types import ChatMessage
from agentkit.scenario.agent_types import (
    AGENT_TYPES,
    AgentContext,
    AgentType,
    AgentTypeError,
    build_agent,
    resolve_agent_type,
)
from agentkit.scenario.check import check_expectations
from agentkit.scenario.families.workflow import WorkflowChatAgent
from agentkit.scenario.images import turn_images
from agentkit.scenario.loader import ScenarioError, build_tools, load_scenario
from agentkit.scenario.model import AgentSpec, LLMSource, Scenario
from agentkit.scenario.script import to_mock_items
from agentkit.scenario.trace import IdNormalizer, Trace, build_turn
from agentkit.scenario.trajectory_run import check_trajectory, render_script, trajectory_outputs
from agentkit.workflow import draw_workflow

__all__ = ["ScenarioResult", "run_scenario", "run_all", "cassette_path", "recorded_trace_path",
           "recording_files", "load"]


@dataclass
class ScenarioResult:
    """A run of one scenario under one agent type: its trace and what failed."""

    scenario: Scenario
    agent_type: str
    trace: Trace
    problems: list[str] = field(default_factory=list)
    llm: LLM | None = field(default=None, repr=False)
    diagram: str | None = field(default=None, repr=False)
    """For a workflow agent type: the Mermaid flowchart of its workflow (``draw_workflow``)."""

    @property
    def passed(self) -> bool:
        return not self.problems

    @property
    def name(self) -> str:
        return f"{self.scenario.name}[{self.agent_type}]"

    @property
    def stopped_by(self) -> str | None:
        """The error the run stopped on when the scenario did not expect one (a cassette
        miss, a script that ran out, an LLM error): the root cause to report first, since the
        unmet expectations and the changed trace that follow from it only repeat it."""
        if self.passed or self.scenario.expect_for(self.agent_type).error is not None:
            return None
        return next((turn.error for turn in self.trace.turns if turn.error), None)


def load(scenario: Scenario | str | Path) -> Scenario:
    """``scenario`` itself, or the scenario file at that path (its agent types checked)."""
    if isinstance(scenario, Scenario):
        return scenario
    return load_scenario(scenario, check_agent_types=True)


def cassette_path(scenario: Scenario, agent_type: str, member: str | None = None) -> Path:
    """Where the agent type's recording (or its team agent ``member``'s) lives: its
    ``recording:`` path (relative to the scenario file), or
    ``cassettes/<scenario>.<agent type>[.<member>].yaml`` beside the file."""
    base = Path(scenario.path).parent if scenario.path else Path.cwd()
    source = _llm_source(scenario.agents[agent_type], member)
    if source.recording:
        return base / source.recording
    suffix = f".{member}" if member is not None else ""
    return base / "cassettes" / f"{scenario.name}.{agent_type}{suffix}.yaml"


def _llm_source(spec: AgentSpec, member: str | None) -> LLMSource:
    if member is None:
        return spec
    return next(agent for agent in spec.team or () if agent.name == member)


def recorded_trace_path(cassette: Path) -> Path:
    """Where a recording keeps the trace it recorded: ``<cassette>.trace.json`` beside it."""
    return cassette.with_name(cassette.name.removesuffix(".yaml") + ".trace.json")


def recording_files(scenario: Scenario, agent_type: str) -> list[Path]:
    """The files a recording of the agent type replaces together: its trace, then its cassette
    -- a team's, one cassette per agent with a ``recording`` (team order) and the trace
    ``<scenario>.<agent type>.trace.json`` beside the first -- after finishing or undoing a
    replacement a crash interrupted (:func:`agentkit.core.files.settle`)."""
    members = scenario.agents[agent_type].recorded()
    cassettes = [cassette_path(scenario, agent_type, member) for member in members or [None]]
    trace = (recorded_trace_path(cassettes[0]) if members in ([], [None])
             else cassettes[0].with_name(f"{scenario.name}.{agent_type}.trace.json"))
    files = [trace, *cassettes]
    settle(files)
    return files


FAKE_OPENAI_URL = "https://fake-openai.agentkit.invalid/v1"


def _default_llm(scenario: Scenario, agent_type: str, spec: LLMSource,
                 member: str | None = None, *, rendered: list[Any] | None = None) -> LLM:
    """The agent type's (or team agent ``member``'s) LLM: its cassette, its ScriptedLLM, or
    (``backend: openai``) the real OpenAI backend talking to a fake endpoint that serves the
    script; ``rendered`` is the script rendered from the trajectory when it has none."""
    if spec.recording is not None:
        return CassetteLLM(cassette_path(scenario, agent_type, member))
    items = to_mock_items(spec.script) if spec.script is not None else rendered
    assert items is not None
    if spec.backend == "openai":
        from agentkit.llms.fake_openai import FakeOpenAIServer

        # routed per client (not server.start(), which patches httpx process-wide): scenarios
        # in other threads have their own servers
        server = FakeOpenAIServer(items, base_url=FAKE_OPENAI_URL, latency=spec.latency,
                                  strict=False)
        llm = server.llm("gpt-4o-mini")
        llm.script_server = server  # type: ignore[attr-defined]  # for the leftover check
        return llm
    name = f"{scenario.name}/{agent_type}" + (f"/{member}" if member is not None else "")
    return ScriptedLLM(items, latency=spec.latency, name=name)


def run_scenario(scenario: Scenario | str | Path, agent_type: str | None = None, *,
                 seed: int | str = 0, llm: LLM | None = None,
                 llms: Mapping[str, LLM] | None = None,
                 state: Mapping[str, Any] | None = None) -> ScenarioResult:
    """Run every turn of ``scenario`` under ``agent_type`` in a fresh simulation and check it.

    The LLM is the agent type's script (a ScriptedLLM, or the OpenAI backend against a local
    fake endpoint) or its recording (a cassette), unless ``llm`` is given; a team's agents
    take theirs from ``llms`` (by agent name) where it names them. To record against a live
    model, use :func:`agentkit.scenario.record.record_scenario`. ``state`` reaches the agent
    type's factory as ``context.state`` (:class:`AgentContext`).
    """
    scenario = load(scenario)
    if agent_type is None:
        if len(scenario.agents) != 1:
            raise ScenarioError(f"{scenario.where()}: scenario `{scenario.name}` runs under "
                                f"{', '.join(scenario.agents)}; say which agent type")
        agent_type = next(iter(scenario.agents))
    if agent_type not in scenario.agents:
        raise ScenarioError(f"{scenario.where()}: scenario `{scenario.name}` has no agent type "
                            f"`{agent_type}` (it has {', '.join(scenario.agents)})")
    try:
        kind = resolve_agent_type(agent_type)
    except AgentTypeError as exc:
        raise ScenarioError(f"{scenario.where('agents', agent_type)}: agents.{agent_type}: "
                            f"{exc}") from None
    _check_turns(scenario, agent_type, kind)
    spec = scenario.agents[agent_type]
    _check_team(scenario, agent_type, kind.team)
    members: list[str | None] = [m.name for m in spec.team] if spec.team else [None]
    strangers = sorted(set(llms or {}) - set(members))
    if strangers:
        raise ScenarioError(f"{scenario.where('agents', agent_type)}: llms= names "
                            f"{', '.join(strangers)}, not an agent of `{agent_type}`'s team "
                            f"({', '.join(m for m in members if m) or 'it has none'})")
    given: dict[str | None, LLM] = dict((llms or {}).items())
    if llm is not None:
        given[None] = llm
    if spec.recorded():
        recording_files(scenario, agent_type)  # a replacement a crash cut short: settled
    with simulation(seed):
        tools = build_tools(scenario)
        outputs = trajectory_outputs(scenario, tools)
        rendered = (render_script(scenario, agent_type, tools, outputs)
                    if llm is None and _renders(spec) else None)
        models: dict[str | None, LLM] = {
            member: given[member] if member in given
            else _default_llm(scenario, agent_type, _llm_source(spec, member), member,
                              rendered=rendered)
            for member in members}
        scripted = [m for m in models.values() if isinstance(m, ScriptedLLM)]
        team = {name: model for name, model in models.items() if name is not None}
        context = AgentContext(agent_type=agent_type,
                               llm=models[spec.root if spec.root else members[0]],
                               llms=team, tools=tuple(tools), params=spec.params,
                               images=tuple(image for turn in scenario.turns
                                            for image in turn_images(scenario, turn)),
                               scenario=scenario, state=state or {})
        try:
            agent = build_agent(context)
            if scenario.history:
                # not part of ChatAgent: only scenarios with history need a memory
                agent.memory.set([ChatMessage(role=m.role, content=m.content)  # type: ignore[attr-defined]
                                  for m in scenario.history])
        except (TypeError, ValueError) as exc:
            for unused in scripted:
                unused.strict = False  # the run never started: its script is not at fault
            if isinstance(exc, ScenarioError):
                raise
            raise ScenarioError(f"{scenario.where('agents', agent_type, 'params')}: "
                                f"agents.{agent_type}.params: {exc}") from None
        with outputs.observing() if outputs is not None else nullcontext():
            trace = _run_turns(scenario, agent_type, agent, kind.images)
    if any(t.error for t in trace.turns):
        for unused in scripted:
            unused.strict = False  # replies after the failure could not be used (see _leftovers)
    expect = scenario.expect_for(agent_type)
    problems = check_expectations(trace, scenario.turns, expect)
    if outputs is not None:
        problems += check_trajectory(trace, outputs.trajectory, expect)
    for used in models.values():
        problems += _leftovers(used, trace)
    diagram = draw_workflow(agent.workflow) if isinstance(agent, WorkflowChatAgent) else None
    return ScenarioResult(scenario, agent_type, trace, problems, next(iter(models.values())),
                          diagram)


def _renders(spec: AgentSpec) -> bool:
    """Whether the agent type's script comes from the trajectory (it has none of its own)."""
    return spec.team is None and spec.script is None and spec.recording is None


_TURN_CAPABILITIES = {"images": "take images", "human": "take human answers"}
"""What a turn may give only to an agent type with that capability (:class:`AgentType`)."""


def _check_turns(scenario: Scenario, agent_type: str, kind: AgentType) -> None:
    """A turn giving what the agent type cannot take (images, human answers) is an error at
    that turn's field, before anything runs (the chat would fail with a bare TypeError)."""
    for capability, does in _TURN_CAPABILITIES.items():
        if getattr(kind, capability):
            continue
        for index, turn in enumerate(scenario.turns):
            if getattr(turn, capability):
                takers = ", ".join(_takers(capability)) or "none registered"
                raise ScenarioError(f"{scenario.where('turns', index, capability)}: turns."
                                    f"{index}.{capability}: agent type `{agent_type}` does not "
                                    f"{does} (agent types that do: {takers}); run this scenario "
                                    "under one of those")


def _check_team(scenario: Scenario, agent_type: str, runs_teams: bool) -> None:
    if scenario.agents[agent_type].team and not runs_teams:
        teams = ", ".join(n for n, e in AGENT_TYPES.loaded().items() if e.team)
        raise ScenarioError(f"{scenario.where('agents', agent_type, 'team')}: agents."
                            f"{agent_type}.team: agent type `{agent_type}` runs one agent, not "
                            f"a team; run the team under {teams or 'a type that takes one'}")
    if runs_teams and not scenario.agents[agent_type].team:
        raise ScenarioError(f"{scenario.where('agents', agent_type)}: agents.{agent_type}: "
                            f"agent type `{agent_type}` runs a team: declare `team:` (its "
                            "agents, each with a script or recording) and `root:` instead of "
                            "`script:`")


def _takers(capability: str) -> list[str]:
    """The agent types with ``capability`` (those declared by an import ref are left out:
    only importing them would tell)."""
    return [name for name, entry in AGENT_TYPES.loaded().items() if getattr(entry, capability)]


def _run_turns(scenario: Scenario, agent_type: str, agent: Any, takes_images: bool) -> Trace:
    ids = IdNormalizer()
    trace = Trace(scenario=scenario.name, agent=agent_type, turns=[])
    for turn in scenario.turns:
        options: dict[str, Any] = ({"image_docs": turn_images(scenario, turn)}
                                   if takes_images else {})
        if turn.human:
            options["human"] = turn.human
        watch = Stopwatch.start()
        response: str | None = None
        error: str | None = None
        with collect_events() as events:
            try:
                if turn.stream:
                    stream = agent.stream_chat(turn.user, **options)
                    for _ in stream.response_gen:
                        pass
                    response = stream.response
                else:
                    response = str(agent.chat(turn.user, **options))
            except Exception as exc:  # noqa: BLE001 (the trace records it; expectations judge it)
                error = f"{type(exc).__name__}: {exc}"
        trace.turns.append(build_turn(turn.user, events, ids, response=response, error=error,
                                      memory=agent.chat_history, wall_time=watch.wall,
                                      serial_time=watch.serial, warnings=watch.warnings))
        if error is not None:
            break
    return trace


def _leftovers(llm: LLM, trace: Trace) -> list[str]:
    if any(t.error for t in trace.turns):
        return []
    if isinstance(llm, ScriptedLLM) and llm.remaining:
        return [f"the script has {llm.remaining} unused repl{'y' if llm.remaining == 1 else 'ies'}"
                f" (the agent made {llm.calls} LLM calls)"]
    if isinstance(llm, CassetteLLM) and llm.unused:
        return [f"the recording has {llm.unused} exchange(s) that were not replayed"]
    server = getattr(llm, "script_server", None)
    if server is not None and server.remaining:
        return [f"the script has {server.remaining} unused repl"
                f"{'y' if server.remaining == 1 else 'ies'} (the endpoint got {server.calls} "
                "requests)"]
    return []


def run_all(scenario: Scenario | str | Path, agent_types: list[str] | None = None,
            **kwargs: Any) -> list[ScenarioResult]:
    """Run ``scenario`` under each of its agent types (or the given ones)."""
    scenario = load(scenario)
    return [run_scenario(scenario, name, **kwargs)
            for name in (agent_types or list(scenario.agents)) if name in scenario.agents]
