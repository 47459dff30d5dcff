"""Run a scenario under one agent type and judge it: the harness's main entry point.

:func:`run_scenario` is a sequence of named stages, each with its own kind of failure:

1. **plan** -- the scenario planned (:func:`agentkit.harness.plan_scenario`: its agent types,
   the trajectory's tools, a resume's recorded run, MCP server names), the agent type
   resolved, the turns and team checked against what it can take, an interrupted recording
   settled (bad input: :class:`ScenarioError`);
2. **world** -- the tools built from their refs, the trajectory compiled and the agent type's
   script rendered from it (bad input);
3. **agent** -- each model (script, recording, or the one given), then the agent type's
   factory, and the scenario's ``history`` put into the agent's memory (a factory that raises
   is an :class:`~agentkit.core.errors.AgentFailedError` naming the factory; bad params or a
   ``history`` the agent cannot take are bad input); then the harness's own LLM roles, the
   judges and the simulated user (:mod:`agentkit.harness._roles`: a judged expectation or a
   simulated user nobody can play is bad input naming its field);
4. **turns** -- the user turns, fixed or written by the simulated user; an exception of the
   agent (or of a role) stops the run and is recorded in the trace (its kind kept for the
   judgement);
5. **judged expectations** -- decided by the LLM judges (their verdicts filed into the
   trace).

:func:`execute_scenario` stops there and returns the run (its trace, models, tools, what its
roles found) without judging it; :func:`run_scenario` judges it too, once
(:func:`agentkit.verdict.judge`: the checks, then the snapshot), as the case runner
(:func:`agentkit.harness.run_case`) does for every command.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from agentkit.core.errors import (
    AgentFailedError,
    ErrorKind,
    HarnessError,
    UserCode,
    kind_of,
)
from agentkit.core.events import Event
from agentkit.core.files import settle
from agentkit.core.protocols import conforms
from agentkit.core.sim import Stopwatch, simulation
from agentkit.harness._agent_types import (
    AGENT_TYPES,
    AgentContext,
    AgentType,
    AgentTypeError,
    resolve_agent_type,
    trajectory_renderer,
)
from agentkit.harness._families.workflow import WorkflowChatAgent
from agentkit.harness._faults import InjectedFault, faulted_model, with_model_faults
from agentkit.harness._llm_judge import Judge, Judgement, Subject
from agentkit.harness._mcp import MCPWorld, open_mcp
from agentkit.harness._plan import load
from agentkit.harness._resume import check_resume, resume_agent
from agentkit.harness._roles import Channel, RoleModels, RoleSource, role_events
from agentkit.harness._simulated_user import Conversation, FixedTurns, SimulatedConversation
from agentkit.harness._state import RunWorld, StateCheck, open_world, state_checks
from agentkit.harness._world import NO_WORLD, build_tools, resolve_ref
from agentkit.instrumentation import collect_events
from agentkit.llms.base import DEFAULT_MODEL, LLM
from agentkit.llms.doubles import ModelDouble, excuse_all
from agentkit.llms.mock import ScriptedLLM
from agentkit.llms.types import ChatMessage
from agentkit.recording import CassetteLLM, RoleChannel, replayed_cassette
from agentkit.scenario._images import turn_images
from agentkit.scenario._layout import (
    cassette_path,
    has_mcp,
    llm_source,
    recording_files,
    recording_paths,
    records,
    snapshot_path,
)
from agentkit.scenario._loader import ScenarioError, located_error
from agentkit.scenario._model import (
    AgentSpec,
    Expect,
    Judged,
    JudgeSpec,
    LLMSource,
    Scenario,
    ScriptItem,
    judge_panel,
    run_memo,
)
from agentkit.scenario._script import to_mock_items
from agentkit.scenario._trajectory import RenderContext, Trajectory, TrajectoryError
from agentkit.scenario._trajectory_run import TrajectoryOutputs, trajectory_outputs
from agentkit.tools import BaseTool
from agentkit.tools.mcp import MCPRecording
from agentkit.trace._trace import (
    TRACED,
    IdNormalizer,
    Trace,
    TurnTrace,
    build_turn,
    extend_turn,
)
from agentkit.verdict import Problem, SnapshotSession, Verdict, judge
from agentkit.workflow import draw_workflow

__all__ = ["ScenarioResult", "RunChange", "run_scenario", "execute_scenario", "run_all", "cassette_path",
           "recording_files", "load"]


@dataclass
class ScenarioResult:
    """A run of one scenario under one agent type: its trace and what the run left to judge
    (models, tools, its roles' findings); once judged (:func:`agentkit.verdict.judge`), what
    the checks found (``problems``) and the judgement of it (``verdict``)."""

    scenario: Scenario
    agent_type: str
    trace: Trace
    problems: list[Problem] = field(default_factory=list)
    llm: LLM | None = field(default=None, repr=False)
    diagram: str | None = field(default=None, repr=False)
    """For a workflow agent type: the Mermaid flowchart of its workflow (``draw_workflow``)."""
    verdict: Verdict = field(
        default_factory=lambda: Verdict("error", stopped_by="the run is not judged yet"),
        repr=False)
    judgements: list[Judgement] = field(default_factory=list, repr=False)
    """The LLM judges' verdicts on the run's judged expectations (and a simulated user's
    judged goal), in the order they were decided: what a report lists and samples compare."""
    models: dict[str | None, LLM] = field(default_factory=dict, repr=False)
    """The models the agent (a team's agents, by name) ran on."""
    doubles: list[ModelDouble] = field(default_factory=list, repr=False)
    """The test doubles behind those models (a script, a recording, a fake endpoint's script):
    what of them the run left unused is a leftover."""
    role_scripts: dict[str, ScriptedLLM] = field(default_factory=dict, repr=False)
    """The scripts the harness's roles (judges, a simulated user) answered from."""
    tools: list[BaseTool] = field(default_factory=list, repr=False)
    mcp: MCPWorld | None = field(default=None, repr=False)
    trajectory: Trajectory | None = field(default=None, repr=False)
    conversation_problems: list[str] = field(default_factory=list, repr=False)
    """What the simulated user's conversation found (its goal not reached)."""
    own_tools_allowed: bool = field(default=False, repr=False)
    """The agent may call tools of its own by a scenario tool's name (traced from the wire)."""
    sample: int | None = field(default=None, repr=False)
    """The sample of a sampled recording this run replayed."""
    world: Any = field(default=None, repr=False)
    """The scenario's world as the run left it (``world:``; None without one): the object
    its tools acted on, to assert on in a test."""
    state_checks: dict[str, StateCheck] = field(default_factory=dict, repr=False)
    """The user's check functions of ``expect.state`` (by ref), which judging calls."""
    model_faults: list[InjectedFault] = field(default_factory=list, repr=False)
    """The faults of the agent's models that happened (the tools' are on the tools)."""

    @property
    def passed(self) -> bool:
        return self.verdict.passed

    @property
    def name(self) -> str:
        return f"{self.scenario.name}[{self.agent_type}]"

    @property
    def stopped_by(self) -> str | None:
        """The error the run stopped on when the scenario did not expect one (a cassette
        miss, a script that ran out, an LLM error): the root cause to report first, since the
        unmet expectations and the changed trace that follow from it only repeat it."""
        if self.scenario.expect_for(self.agent_type).error is not None:
            return None
        return next((turn.error for turn in self.trace.turns if turn.error), None)


class RunChange(Protocol):
    """A deliberate change to a run (a mutant of :mod:`agentkit.quality`): to the world's tools
    before the agent gets them, and to the agent's answers before the judges read them."""

    def tools(self, tools: Sequence[BaseTool]) -> list[BaseTool]:
        """The tools the agent gets, given the world's."""
        ...

    def answers(self, trace: Trace) -> None:
        """Change the run's answers in ``trace`` (its turns ran) before they are judged."""
        ...


FAKE_OPENAI_URL = "https://fake-openai.agentkit.invalid/v1"

_NEVER_STARTED = "the run never started: nothing written for it could be used"


def _default_llm(scenario: Scenario, agent_type: str, spec: LLMSource,
                 member: str | None = None, *, rendered: list[Any] | None = None,
                 sample: int | None = None,
                 faults: list[InjectedFault] | None = None) -> tuple[LLM, ModelDouble]:
    """The agent type's (or team agent ``member``'s) LLM and the double behind it: its
    cassette (sample ``sample`` of a sampled one), its ScriptedLLM, or (``backend: openai``)
    the real OpenAI backend talking to a fake endpoint that serves the script (the double is
    the endpoint); ``rendered`` is the script rendered from the trajectory when it has none."""
    if spec.recording is not None:
        replay = CassetteLLM(replayed_cassette(cassette_path(scenario, agent_type, member)),
                             sample=sample)
        return replay, replay
    items = to_mock_items(spec.script) if spec.script is not None else rendered
    assert items is not None
    if spec.faults:  # the model's faults (`faults:`), each noted in `faults` when it happens
        items = with_model_faults(items, spec.faults,
                                  "model" if member is None else f"model of {member}",
                                  faults if faults is not None else [])
    if spec.backend == "openai":
        from agentkit.recording import FakeOpenAIServer

        # routed per client (not server.start(), which patches httpx process-wide): scenarios
        # in other threads have their own servers
        server = FakeOpenAIServer(items, base_url=FAKE_OPENAI_URL, latency=spec.latency,
                                  strict=False)
        return server.llm(DEFAULT_MODEL, max_retries=spec.max_retries), server
    name = f"{scenario.name}/{agent_type}" + (f"/{member}" if member is not None else "")
    script = ScriptedLLM(items, latency=spec.latency, name=name, max_retries=spec.max_retries)
    return script, script


@dataclass
class _Plan:
    """Stage 1: what runs -- the scenario, the agent type and its kind, whose models."""

    scenario: Scenario
    agent_type: str
    kind: AgentType
    spec: AgentSpec
    members: list[str | None]
    given: dict[str | None, LLM]
    fixed: _Fixed
    sample: int | None = None
    roles: RoleModels | None = None
    change: RunChange | None = None


@dataclass
class _World:
    """Stage 2: the tools and the trajectory (with the script rendered from it)."""

    tools: list[BaseTool]
    outputs: TrajectoryOutputs | None
    """The calls of the steps rendered scripts follow, as the agent makes them."""
    rendered: list[Any] | None
    trajectory: Trajectory | None = None
    """The scenario's trajectory, whose expectations the run is judged by."""
    mcp: MCPWorld | None = None
    state: RunWorld | None = None
    """The run's world (``world:``), the state its tools act on."""
    checks: dict[str, StateCheck] = field(default_factory=dict)


@dataclass
class _Agent:
    """Stage 3: the models, the doubles behind them, and the agent built on them."""

    models: dict[str | None, LLM]
    agent: Any
    doubles: list[ModelDouble]
    faults: list[InjectedFault] = field(default_factory=list)
    """The faults of the models that happened (``faults:`` of the agent type or team agent)."""


@dataclass
class _Cast:
    """Stage 3 too: the harness's roles of the run -- its judges and where its user messages
    come from -- and the scripts they answer from (checked for leftovers like the agent's)."""

    judge: Judge | None
    conversation: Conversation
    scripts: dict[str, ScriptedLLM]


def run_scenario(scenario: Scenario | str | Path, agent_type: str | None = None, *,
                 seed: int | str = 0, llm: LLM | None = None,
                 llms: Mapping[str, LLM] | None = None,
                 state: Mapping[str, Any] | None = None,
                 snapshots: SnapshotSession | None = None,
                 roles: RoleModels | None = None,
                 mcp: MCPRecording | None = None,
                 sample: int | None = None, world: Any = NO_WORLD) -> ScenarioResult:
    """Run ``scenario`` under ``agent_type`` (:func:`execute_scenario`) and judge it once
    (:func:`agentkit.verdict.judge`), its snapshot compared through ``snapshots`` when given.
    A run that cannot start raises a :class:`~agentkit.core.errors.HarnessError`
    (:func:`agentkit.harness.run_case` turns it into a verdict)."""
    result = execute_scenario(scenario, agent_type, seed=seed, llm=llm, llms=llms, state=state,
                              roles=roles, mcp=mcp, sample=sample, world=world)
    judge(result, snapshots, snapshot_path(result.scenario, result.agent_type))
    return result


def execute_scenario(scenario: Scenario | str | Path, agent_type: str | None = None, *,
                     seed: int | str = 0, llm: LLM | None = None,
                     llms: Mapping[str, LLM] | None = None,
                     state: Mapping[str, Any] | None = None,
                     roles: RoleModels | None = None,
                     mcp: MCPRecording | None = None,
                     sample: int | None = None, world: Any = NO_WORLD,
                     change: RunChange | None = None) -> ScenarioResult:
    """Run every turn of ``scenario`` under ``agent_type`` in a fresh simulation, and judge
    nothing (the stages are in the module docstring).

    The LLM is the agent type's script (a ScriptedLLM, or the OpenAI backend against a local
    fake endpoint) or its recording (a cassette), unless ``llm`` is given; a team's agents
    take theirs from ``llms`` (by agent name) where it names them. To record against a live
    model, use :func:`agentkit.harness._record.record_scenario`. ``state`` reaches the agent
    type's factory as ``context.state`` (:class:`AgentContext`). ``roles`` are the live models of
    the LLM judges and the simulated user (:class:`~agentkit.harness._roles.RoleModels`):
    recorded with the agent's when ``llm`` records, else asked directly. MCP tools replay the
    agent type's cassette unless ``mcp`` says where their exchanges come from (a recording:
    live servers, started for the run and stopped when it ends). ``sample`` replays that
    sample of a sampled recording (:func:`agentkit.harness.run_case` runs all of them and
    judges them together). ``world`` is the scenario world the run's tools act on instead of
    the one its ``world:`` builds (a test's own, to look at after the run; the result's
    ``world`` either way). ``change`` changes the world's tools before the agent gets them
    and its answers before the judges read them (a mutant of :mod:`agentkit.quality`). A run
    that cannot start raises a :class:`~agentkit.core.errors.HarnessError`.
    """
    plan = _plan(load(scenario), agent_type, llm, llms)
    plan.sample = sample
    plan.roles = roles
    plan.change = change
    with simulation(seed):
        if plan.fixed.mcp or world is not NO_WORLD or plan.scenario.world is not None:
            with (open_mcp(plan.scenario, plan.agent_type, mcp) as servers,
                  open_world(plan.scenario, world) as run_world):
                ran = _run(plan, servers, run_world, state)
        else:  # neither opens anything (each would yield None)
            ran = _run(plan, None, None, state)
    return _result(plan, *ran)


def _run(plan: _Plan, servers: MCPWorld | None, run_world: RunWorld | None,
         state: Mapping[str, Any] | None) -> tuple[_World, _Agent, _Cast, Trace]:
    """Stages 2 to 5 in the run's simulation, its MCP servers and world open."""
    built_world = _world(plan, servers, run_world)
    start = run_world.begin() if run_world is not None else None
    built = _agent(plan, built_world, state)
    try:
        cast = _cast(plan, built)
    except BaseException:
        excuse_all(built.doubles, _NEVER_STARTED)
        raise
    trace = _turns(plan, built_world, built.agent, cast)
    trace.world = start
    if plan.change is not None:
        plan.change.answers(trace)
    faulted = bool(built.faults) or bool([tool for tool in built_world.tools
                                          if getattr(tool, "injected", ())])
    _judge_answers(plan, cast, trace, faulted=faulted)
    return built_world, built, cast, trace


def _plan(scenario: Scenario, agent_type: str | None, llm: LLM | None,
          llms: Mapping[str, LLM] | None) -> _Plan:
    if agent_type is None:
        if len(scenario.agents) != 1:
            raise ScenarioError(f"{scenario.where()}: scenario `{scenario.name}` runs under "
                                f"{', '.join(scenario.agents)}; say which agent type")
        agent_type = next(iter(scenario.agents))
    if agent_type not in scenario.agents:
        raise ScenarioError(f"{scenario.where()}: scenario `{scenario.name}` has no agent type "
                            f"`{agent_type}` (it has {', '.join(scenario.agents)})")
    fixed = _fixed(scenario, agent_type)
    check_resume(scenario, agent_type)
    members = fixed.members
    strangers = sorted(set(llms or {}) - set(members))
    if strangers:
        raise ScenarioError(f"{scenario.where('agents', agent_type)}: llms= names "
                            f"{', '.join(strangers)}, not an agent of `{agent_type}`'s team "
                            f"({', '.join(m for m in members if m) or 'it has none'})")
    given: dict[str | None, LLM] = dict((llms or {}).items())
    if llm is not None:
        given[None] = llm
    if fixed.files:
        settle(fixed.files)  # a replacement of the recording a crash cut short
    return _Plan(scenario, agent_type, fixed.kind, scenario.agents[agent_type], members, given,
                 fixed)


@dataclass(frozen=True)
class _Fixed:
    """What planning a run of a scenario × agent type finds the same every time while the
    agent types stand (kept in its :func:`~agentkit.scenario._model.run_memo`)."""

    declared: Mapping[str, object]
    """The agent types it was worked out under (``AGENT_TYPES.declared()``)."""
    kind: AgentType
    members: list[str | None]
    files: list[Path]
    """The recording's files (:func:`recording_paths`), settled before each run; none when
    the agent type records nothing."""
    mcp: bool
    """Whether the scenario has MCP tools (:func:`has_mcp`)."""
    expect: Expect
    """The agent type's expectations (``scenario.expect_for``)."""
    judged: list[tuple[str | int, ...]]
    """The fields of the run's judged expectations (:func:`_judged_fields`)."""
    images: bool
    """Whether a turn gives images."""


def _fixed(scenario: Scenario, agent_type: str) -> _Fixed:
    """The agent type resolved, and the turns and team checked against what it can take
    (a :class:`ScenarioError` otherwise), once per scenario × agent type."""
    memo = run_memo(scenario, agent_type)
    fixed: _Fixed | None = memo.get("plan")
    if fixed is not None and fixed.declared == AGENT_TYPES.declared():
        return fixed
    try:
        kind = resolve_agent_type(agent_type)
    except AgentTypeError as exc:
        raise ScenarioError(f"{scenario.where('agents', agent_type)}: agents.{agent_type}: "
                            f"{exc}") from None
    _check_turns(scenario, agent_type, kind)
    spec = scenario.agents[agent_type]
    _check_team(scenario, agent_type, kind.team)
    members: list[str | None] = [m.name for m in spec.team] if spec.team else [None]
    files = recording_paths(scenario, agent_type) if records(scenario, agent_type) else []
    fixed = memo["plan"] = _Fixed(
        AGENT_TYPES.declared(), kind, members, files, has_mcp(scenario),
        scenario.expect_for(agent_type), _judged_fields(scenario, agent_type, spec),
        any(turn.images for turn in scenario.turns))
    return fixed


def _world(plan: _Plan, servers: MCPWorld | None, state: RunWorld | None) -> _World:
    tools: Sequence[BaseTool] = build_tools(plan.scenario, servers,
                                            NO_WORLD if state is None else state.value)
    if plan.change is not None:
        tools = plan.change.tools(tools)
    scenario = plan.scenario
    outputs = trajectory_outputs(scenario, tools, scenario.script_trajectory)
    judged = (outputs if scenario.script_trajectory is scenario.trajectory
              else trajectory_outputs(scenario, tools))
    rendered = (render_script(scenario, plan.agent_type, tools, outputs)
                if None not in plan.given and _renders(plan.spec) else None)
    expect = plan.fixed.expect
    checks = (state_checks(scenario, expect, _expect_field(plan.spec, plan.agent_type,
                                                           "state")[:-1])
              if expect.state is not None else {})
    return _World(list(tools), outputs, rendered,
                  judged.trajectory if judged is not None else None, servers, state, checks)


def render_script(scenario: Scenario, agent_type: str, tools: Sequence[Any],
                  outputs: TrajectoryOutputs | None) -> list[Any]:
    """The agent type's ScriptedLLM items, rendered from the scenario's trajectory by the
    type's renderer; what it cannot render is a :class:`ScenarioError` naming the place."""
    renderer = trajectory_renderer(agent_type)
    if outputs is None or renderer is None:
        raise ScenarioError(f"{scenario.where('agents', agent_type)}: agents.{agent_type}: no "
                            "`script` or `recording`, and " + (
                                "no trajectory to render one from" if outputs is None else
                                f"agent type `{agent_type}` has no trajectory renderer"))
    context = RenderContext(agent_type=agent_type, trajectory=outputs.trajectory,
                            tools=tuple(tools), outputs=outputs)
    try:
        return renderer(context)
    except TrajectoryError as exc:
        raise located_error(scenario, [(loc, f"{agent_type}: {message}")
                                       for loc, message in exc.problems]) from None


def _agent(plan: _Plan, world: _World, state: Mapping[str, Any] | None) -> _Agent:
    scenario, agent_type, spec = plan.scenario, plan.agent_type, plan.spec
    models: dict[str | None, LLM] = {}
    doubles: list[ModelDouble] = []
    faults: list[InjectedFault] = []
    for member in plan.members:
        double: ModelDouble | None
        source = llm_source(spec, member)
        if member in plan.given:
            model = plan.given[member]
            double = model if conforms(model, ModelDouble) else None
        else:
            model, double = _default_llm(scenario, agent_type, source, member,
                                         rendered=world.rendered, sample=plan.sample,
                                         faults=faults)
        if source.faults and (member in plan.given or source.recording is not None):
            # a script has its faults among its items; any other model meets them before it
            # under the retry policy of the model the test gave, else of the agent type's
            retries = getattr(model, "max_retries", source.max_retries)
            model = faulted_model(model, source.faults,
                                  "model" if member is None else f"model of {member}", faults,
                                  retries if isinstance(retries, int) else source.max_retries)
        models[member] = model
        if double is not None:
            doubles.append(double)
    team = {name: model for name, model in models.items() if name is not None}
    context = AgentContext(agent_type=agent_type,
                           llm=models[spec.root if spec.root else plan.members[0]],
                           llms=team, tools=tuple(world.tools), params=spec.params,
                           images=tuple(image for turn in scenario.turns
                                        for image in turn_images(scenario, turn))
                           if plan.fixed.images else (),
                           scenario=scenario, state=state or {},
                           world=world.state.value if world.state is not None else None)
    try:
        try:
            agent = plan.kind.factory(context)  # build_agent's, resolved when planned
        except HarnessError:
            raise
        except Exception as exc:  # noqa: BLE001 (a user's factory may raise anything)
            raise _factory_error(plan, exc) from None
        _check_chat_agent(plan, agent)
        if scenario.history:
            _set_history(scenario, agent_type, agent)
        if spec.resume_from is not None:  # the recorded run, on its cassette, goes first
            recorded = _agent(_plan(scenario, spec.resume_from.recording, None, None), world,
                              state)
            resume_agent(agent, recorded.agent, spec.resume_from)
    except BaseException:
        excuse_all(doubles, _NEVER_STARTED)
        raise
    return _Agent(models, agent, doubles, faults)


def _factory_error(plan: _Plan, exc: Exception) -> HarnessError:
    """A factory that raised: the scenario's ``params`` when they are what it rejected (a
    TypeError or ValueError naming one of them: an unknown keyword, a value it refused), else
    the factory. The builtin families hand ``params`` to LlamaIndex-shaped constructors that
    take ``**kwargs``, so no signature says beforehand which names they accept."""
    scenario, agent_type, params = plan.scenario, plan.agent_type, plan.spec.params
    text = f"{type(exc).__name__}: {exc}"
    if isinstance(exc, (TypeError, ValueError)) and any(name in str(exc) for name in params):
        return ScenarioError(f"{scenario.where('agents', agent_type, 'params')}: "
                             f"agents.{agent_type}.params: {exc}")
    given = f" (params given: {', '.join(params)})" if params else ""
    raised = UserCode.of(exc)
    at = f" at {raised.at}" if raised is not None else ""
    error = AgentFailedError(f"{scenario.where('agents', agent_type)}: agents.{agent_type}: "
                             f"the agent type's factory {_factory_name(plan)} raised "
                             f"{text}{at}{given}")
    error.user_code = raised
    return error


def _factory_name(plan: _Plan) -> str:
    factory = plan.kind.factory
    return (f"{getattr(factory, '__module__', '?')}:"
            f"{getattr(factory, '__qualname__', type(factory).__name__)}")


def _check_chat_agent(plan: _Plan, agent: Any) -> None:
    """A factory's agent must have what every run uses, ``chat`` and ``chat_history`` (of a
    :class:`ChatAgent`; ``stream_chat`` only ``stream: true`` turns use): anything else -- a
    framework's agent returned by an undecorated factory -- is an :class:`AgentTypeError`
    naming the factory and what it returned, before any turn runs. A class's own members are
    looked up without calling them."""
    missing = [name for name in ("chat", "chat_history")
               if not hasattr(type(agent), name) and not hasattr(agent, name)]
    if not missing:
        return
    scenario, agent_type = plan.scenario, plan.agent_type
    lacks = " or ".join(f"`{name}`" for name in missing)
    raise AgentTypeError(
        f"{scenario.where('agents', agent_type)}: agents.{agent_type}: the agent type's factory "
        f"{_factory_name(plan)} returned {type(agent).__name__}, which has no {lacks}; a "
        "factory returns an agent with `chat`, `stream_chat` and `chat_history` "
        "(docs/your-agent.md) -- an agent of LlamaIndex, pydantic-ai, the OpenAI Agents SDK "
        "or LangGraph from a factory decorated with its framework's decorator "
        "(docs/integrations.md)")


def _set_history(scenario: Scenario, agent_type: str, agent: Any) -> None:
    """Put ``history:`` into the agent's memory (``agent.memory.set(messages)``)."""
    setter = getattr(getattr(agent, "memory", None), "set", None)
    if not callable(setter):
        raise ScenarioError(
            f"{scenario.where('history')}: history: agent type `{agent_type}` builds "
            f"{type(agent).__name__}, which has no `memory.set(messages)`; a scenario with "
            "`history:` needs an agent whose `memory` has `set(list[ChatMessage])` (see "
            "docs/your-agent.md), or drop `history:`")
    setter([ChatMessage(role=m.role, content=m.content) for m in scenario.history])


# ---------------------------------------------------------------- the roles (stage 3)
def _channel(plan: _Plan, models: Mapping[str | None, LLM]) -> Channel | None:
    """The model whose recording the roles' calls go into: the agent type's (a team's: its
    first agent with a recording), when it replays or records one."""
    for member in plan.members:
        model = models.get(member)
        if conforms(model, RoleChannel):
            return model
    return None


def _role_script(plan: _Plan, role: str, items: list[ScriptItem], latency: float) -> ScriptedLLM:
    name = f"{plan.scenario.name}/{plan.agent_type}/{role}"
    return ScriptedLLM(to_mock_items(items), latency=latency, name=name)


def _judged_fields(scenario: Scenario, agent_type: str,
                   spec: AgentSpec) -> list[tuple[str | int, ...]]:
    """The fields of the run's judged expectations (and a judged goal), in file order."""
    fields: list[tuple[str | int, ...]] = [
        ("turns", index, "answer") for index, turn in enumerate(scenario.turns)
        if isinstance(turn.answer, Judged)]
    for name in ("answer", "conversation"):
        at = _expect_field(spec, agent_type, name)
        if isinstance(getattr(scenario.expect_for(agent_type), name), Judged):
            fields.append((*at, "judge"))
    user = scenario.user
    if user is not None and user.stop_when is None:
        fields.append(("user", "goal"))  # the goal itself, judged
    elif user is not None and isinstance(user.stop_when, Judged):
        fields.append(("user", "stop_when"))
    judges = scenario.faults.judge if scenario.faults is not None else None
    fields += [("faults", "judge", name) for name in ("failed_safely", "fabricated")
               if judges is not None and getattr(judges, name) is not None]
    return fields


def _expect_field(spec: AgentSpec, agent_type: str, name: str) -> tuple[str, ...]:
    """Where expectation ``name`` of the run is written: the agent type's ``expect`` when it
    sets it, else the scenario's."""
    own = spec.expect
    if own is not None and name in own.model_fields_set:
        return ("agents", agent_type, "expect", name)
    return ("expect", name)


def _cast(plan: _Plan, built: _Agent) -> _Cast:
    """The run's judges and user (see :mod:`agentkit.harness._roles`): a judged expectation
    or a simulated user that nobody can play is a :class:`ScenarioError` at its field."""
    scenario = plan.scenario
    channel = _channel(plan, built.models)
    roles = plan.roles or RoleModels()
    scripts: dict[str, ScriptedLLM] = {}
    judged = plan.fixed.judged
    judge = None
    if judged:
        own = plan.spec.judge is not None
        specs = judge_panel(plan.spec.judge if own else scenario.judge)
        panel: list[tuple[JudgeSpec, RoleSource]] = []
        for index, spec in enumerate(specs):
            name = "judge" if len(specs) == 1 else f"judge {index + 1}"
            script = (_role_script(plan, name, spec.script, spec.latency)
                      if spec.script is not None else None)
            if script is not None:
                scripts[name] = script
            member = RoleSource("judge", script=script, channel=channel,
                                live=roles.live("judge", spec.model), model=spec.model)
            if not member.available:
                _nobody(plan, judged[0], "judge", ("agents", plan.agent_type, "judge") if own
                        else ("judge",))
            panel.append((spec, member))
        judge = Judge(panel)
    conversation: Conversation = FixedTurns(scenario.turns)
    user = scenario.user
    if user is not None:
        write = resolve_ref(user.ref, Path(scenario.path).parent if scenario.path else None) \
            if user.ref is not None else None
        source: RoleSource | None = None
        if write is None:
            script = (_role_script(plan, "user", user.script, user.latency)
                      if user.script is not None else None)
            if script is not None:
                scripts["user"] = script
            source = RoleSource("user", script=script, channel=channel,
                                live=roles.live("user", user.model), model=user.model)
            if not source.available:
                _nobody(plan, ("user",), "user", ("user",))
        conversation = SimulatedConversation(scenario, user, source=source, write=write,
                                             judge=judge)
    return _Cast(judge, conversation, scripts)


def _nobody(plan: _Plan, at: tuple[str | int, ...], role: str,
            spec_at: tuple[str | int, ...]) -> None:
    scenario, agent_type = plan.scenario, plan.agent_type
    dotted = ".".join(map(str, at))
    who = ("an LLM judge decides it" if role == "judge"
           else "an LLM plays the simulated user")
    give = (f"`{'.'.join(map(str, spec_at))}: {{script: [...]}}` (its answers, offline)"
            if role == "judge" else "`user.script` (its messages) or `user.ref` (a function)")
    raise ScenarioError(
        f"{scenario.where(*at)}: {dotted}: {who}, and none can answer here: agent type "
        f"`{agent_type}` has no recording to replay it from (or record it into); give {give}, "
        f"or give `agents.{agent_type}` a `recording:` (the {role}'s calls are recorded with "
        "the agent's)")


# ---------------------------------------------------------------- turns and judgements
def _turns(plan: _Plan, world: _World, agent: Any, cast: _Cast) -> Trace:
    if world.outputs is None:
        return _run_turns(plan.scenario, plan.agent_type, agent, plan.kind.images,
                          cast.conversation, world.state)
    # rendered scripts read the outputs of the calls the agent makes as it makes them
    with world.outputs.observing():
        return _run_turns(plan.scenario, plan.agent_type, agent, plan.kind.images,
                          cast.conversation, world.state)


def _stop_turn(turn: TurnTrace, exc: Exception, scenario: Scenario, role: str,
               where: str) -> None:
    """A role failed on ``turn`` (a judge's answer that is not a verdict, a cassette miss, a
    model error): the run stops there, with the role's error as the turn's. An error that
    does not point into the scenario file (a model's: a server error, a timeout) is prefixed
    with the role and its field, so it is never taken for the agent's model failing. The
    trace keeps the scenario file as its project names it (``where`` is given so), whatever
    the working folder and however the path was spelled."""
    spelled, kept = scenario.where(), scenario.where(kept=True)
    text = re.sub(rf"(?<![\w./\\-]){re.escape(spelled)}(?=:\d)", lambda _: kept,
                  f"{type(exc).__name__}: {exc}")
    if kept not in text:
        text = f"{role} ({where}) failed: {text}"
    turn.error, turn.error_kind = text, kind_of(exc)


def _judge_answers(plan: _Plan, cast: _Cast, trace: Trace, *, faulted: bool = False) -> None:
    """Decide the run's judged expectations (each turn's answer, the final answer, the whole
    conversation; a run that met a fault: ``faults.judge``'s rubrics) and file each verdict
    into the turn it judges; a judge that fails stops the run at that turn."""
    judge = cast.judge
    if judge is None or not trace.turns or any(t.error for t in trace.turns):
        return
    scenario = plan.scenario
    expect = plan.fixed.expect
    # (the expectation, where its rubric is, what it judges, up to which turn)
    asked: list[tuple[Judged, tuple[str | int, ...], Subject, int]] = [
        (turn.answer, ("turns", index, "answer", "judge"), "answer", index + 1)
        for index, turn in enumerate(scenario.turns)
        if isinstance(turn.answer, Judged) and index < len(trace.turns)]
    whole: tuple[tuple[str, Subject], ...] = (("answer", "answer"),
                                              ("conversation", "conversation"))
    for name, subject in whole:
        wanted = getattr(expect, name)
        if isinstance(wanted, Judged):
            asked.append((wanted, (*_expect_field(plan.spec, plan.agent_type, name), "judge"),
                          subject,
                          len(trace.turns)))
    judges = scenario.faults.judge if scenario.faults is not None else None
    if faulted and judges is not None:
        asked += [(rubric, ("faults", "judge", name), "answer", len(trace.turns))
                  for name in ("failed_safely", "fabricated")
                  if (rubric := getattr(judges, name)) is not None]
    ids = IdNormalizer()
    for judged, place, subject, upto in asked:
        turn = trace.turns[upto - 1]
        with collect_events(TRACED) as events:
            try:
                decided = judge.decide(judged, at=".".join(map(str, place)),
                                       where=scenario.where(*place, kept=True),
                                       subject=subject, turns=trace.turns, upto=upto)
            except Exception as exc:  # noqa: BLE001 (a judge's model may fail any way)
                decided = None
                _stop_turn(turn, exc, scenario, f"the judge of {'.'.join(map(str, place))}",
                           scenario.where(*place, kept=True))
        extend_turn(turn, role_events(events), ids)
        if decided is None:
            return


def _result(plan: _Plan, world: _World, built: _Agent, cast: _Cast,
            trace: Trace) -> ScenarioResult:
    """The run as it ended, to be judged: a run that stopped excuses its scripts (replies
    after the failure could not be used)."""
    stopped = next((t.error for t in trace.turns if t.error), None)
    if stopped is not None:
        excuse_all([*built.doubles, *cast.scripts.values()],
                   f"the run stopped ({stopped}): replies after it could not be used")
    diagram = (draw_workflow(built.agent.workflow) if isinstance(built.agent, WorkflowChatAgent)
               else None)
    return ScenarioResult(
        plan.scenario, plan.agent_type, trace, llm=next(iter(built.models.values())),
        diagram=diagram, judgements=cast.judge.decided if cast.judge is not None else [],
        models=dict(built.models), doubles=list(built.doubles), role_scripts=dict(cast.scripts),
        tools=list(world.tools),
        mcp=world.mcp, trajectory=world.trajectory,
        conversation_problems=list(cast.conversation.problems),
        own_tools_allowed=getattr(built.agent, "traced_from_wire", False), sample=plan.sample,
        world=world.state.value if world.state is not None else None,
        state_checks=dict(world.checks), model_faults=list(built.faults))


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


def _run_turns(scenario: Scenario, agent_type: str, agent: Any, takes_images: bool,
               conversation: Conversation, world: RunWorld | None = None) -> Trace:
    ids = IdNormalizer()
    trace = Trace(scenario=scenario.name, agent=agent_type, turns=[])
    speaks = conversation.speaks  # fixed turns emit nothing to collect before or after a turn
    while True:
        before: list[Event] = []
        try:
            if speaks:
                with collect_events(TRACED) as before:
                    turn = conversation.next_turn(trace)
            else:
                turn = conversation.next_turn(trace)
        except Exception as exc:  # noqa: BLE001 (the simulated user's model or function)
            failed = build_turn("", role_events(before), ids, response=None, error=None,
                                memory=agent.chat_history, wall_time=0.0, serial_time=0.0)
            _stop_turn(failed, exc, scenario, "the simulated user",
                       scenario.where("user", kept=True))
            failed.world = world.after_turn() if world is not None else None
            trace.turns.append(failed)
            break
        if turn is None:
            break
        options: dict[str, Any] = ({"image_docs": turn_images(scenario, turn)}
                                   if takes_images else {})
        if turn.human:
            options["human"] = turn.human
        watch = Stopwatch.start()
        response: str | None = None
        error: str | None = None
        kind: ErrorKind | None = None
        raised: UserCode | None = None
        with collect_events(TRACED) as events:
            try:
                if turn.stream:
                    stream = agent.stream_chat(turn.user, **options)
                    for _ in stream.response_gen:
                        pass
                    response = stream.response
                else:
                    response = str(agent.chat(turn.user, **options))
            except Exception as exc:  # noqa: BLE001 (the trace records it; expectations judge it)
                error, kind = f"{type(exc).__name__}: {exc}", kind_of(exc)
                raised = UserCode.of(exc)
        trace.turns.append(build_turn(turn.user, [*role_events(before), *events] if before
                                      else events, ids,
                                      response=response, error=error,
                                      memory=agent.chat_history, wall_time=watch.wall,
                                      serial_time=watch.serial, warnings=watch.warnings,
                                      error_kind=kind, started=watch.started_at,
                                      raised=raised))
        trace.turns[-1].world = world.after_turn() if world is not None else None
        if error is not None:
            break
        if not speaks:
            continue
        after: list[Event] = []
        try:
            with collect_events(TRACED) as after:
                conversation.after_turn(trace)
        except Exception as exc:  # noqa: BLE001 (a judge of the simulated user's goal)
            _stop_turn(trace.turns[-1], exc, scenario, "the simulated user's goal check",
                       scenario.where("user", kept=True))
        extend_turn(trace.turns[-1], role_events(after), ids)
        if trace.turns[-1].error is not None:
            break
    return trace


def run_all(scenario: Scenario | str | Path, agent_types: list[str] | None = None,
            **kwargs: Any) -> list[ScenarioResult]:
    """Run ``scenario`` under each of its agent types (or the given ones)."""
    scenario = load(scenario)
    return [run_scenario(scenario, name, **kwargs)
            for name in (agent_types or list(scenario.agents)) if name in scenario.agents]
