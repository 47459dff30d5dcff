"""The fault matrix: a scenario expanded into one variant per tool, call and fault kind, each
run under the scenario's agent types and classified (:mod:`agentkit.verdict._outcomes`).

The calls to fault are those a run of the scenario makes (its first agent type that runs
offline, without faults); a kind that cannot apply to a call's output (``drop_fields`` on a
text) makes no variant. Variants are named stably -- ``order_support[react]~lookup_order#1:
timeout`` -- and, beyond ``max_variants``, sampled deterministically (seeded by the
scenario's name).

An agent type whose script is rendered from the trajectory gets a script rendered from the
variant's trajectory: the steps up to the faulted call, then what a correct agent does
(``faults.on_fault``: ``retry`` -- the call again, after it, then the rest with its ``$N``
renumbered -- or the steps given, usually an answer telling the user). An agent type with a
script of its own runs it as written.

An agent type with a recording replays it: its requests up to the fault (a faulted tool
output, or the model's faulted call) are the unfaulted run's, and after it each variant's
own, recorded live once by :func:`record_fault_continuations` into the same cassette -- one
shared prefix, one continuation per variant, each exchange of it tagged with the variant
(:class:`~agentkit.recording.RecordingLLM`'s ``continues`` and ``variant``). A variant whose
continuation is not recorded yet is a cassette miss saying how to record it.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from agentkit.core.errors import BadInputError
from agentkit.harness._case import Case, CaseResult, run_case
from agentkit.harness._faults import applicable_kinds, faults_struck
from agentkit.harness._plan import load
from agentkit.harness._roles import RoleModels
from agentkit.harness._runner import execute_scenario, run_scenario
from agentkit.harness._world import NO_WORLD, built_tools
from agentkit.llms.base import LLM
from agentkit.scenario import (
    FAULT_KINDS,
    MODEL_FAULT_KINDS,
    Fault,
    FaultPlan,
    ModelFault,
    Scenario,
    TrajectoryStep,
)
from agentkit.verdict import Verdict, cassette_miss

__all__ = ["FaultMatrix", "FaultRecording", "FaultVariant", "NoFaultsError", "fault_variants",
           "offline_agent_types", "record_fault_continuations", "run_fault_matrix",
           "variant_scenario"]

_DEFAULT_ON_FAULT = ["recovered", "failed_safely"]
MODEL = "model"
"""The name the model's variants go by in place of a tool's (``model#2:rate_limit``)."""
_KINDS = list(dict.fromkeys([*FAULT_KINDS, *MODEL_FAULT_KINDS]))
_REF = re.compile(r"^\$([0-9]+)$")
_ANSWER_REF = re.compile(r"\{\$([0-9]+)\}")


class NoFaultsError(BadInputError):
    """A scenario that gives the fault matrix nothing to fault: its run makes no call of the
    tools asked for, or no kind asked for applies to their outputs."""


@dataclass(frozen=True)
class FaultVariant:
    """One fault on call ``call`` of ``tool`` -- or, ``tool`` being ``model``, of the agent's
    model: ``label`` is ``tool#call:kind``."""

    tool: str
    call: int
    fault: Fault | ModelFault

    @property
    def of_model(self) -> bool:
        return isinstance(self.fault, ModelFault)

    @property
    def label(self) -> str:
        return f"{self.tool}#{self.call}:{self.fault.kind}"

    def name(self, scenario: str, agent_type: str) -> str:
        """``scenario[agent_type]~tool#call:kind``: the variant's row and pytest item."""
        return f"{scenario}[{agent_type}]~{self.label}"


def _plan(scenario: Scenario) -> FaultPlan:
    return scenario.faults or FaultPlan()


def offline_agent_types(scenario: Scenario) -> list[str]:
    """The scenario's agent types that run a variant offline (a script of their own, or one
    rendered from the trajectory); those with a recording need a live continuation."""
    return [name for name, spec in scenario.agents.items()
            if spec.recording is None and not any(m.recording for m in spec.team or ())]


def fault_variants(scenario: Scenario | str | Path, *, kinds: Sequence[str] | None = None,
                   tools: Sequence[str] | None = None,
                   max_variants: int | None = None) -> list[FaultVariant]:
    """The scenario's variants (module docstring): ``kinds`` (of the tools and the model),
    ``tools`` and ``max_variants`` override its ``faults:`` plan's."""
    scenario = load(scenario)
    plan = _plan(scenario)
    kinds = list(kinds or plan.kinds)
    model_kinds = [kind for kind in plan.model_kinds or MODEL_FAULT_KINDS if kind in kinds]
    unknown = [kind for kind in kinds if kind not in _KINDS]
    if unknown:
        raise NoFaultsError(f"{scenario.where()}: `{unknown[0]}` is not a fault kind (kinds: "
                            f"{', '.join(FAULT_KINDS)}; of the model: "
                            f"{', '.join(MODEL_FAULT_KINDS)})")
    wanted = list(tools or plan.tools or [])
    # the calls to fault: a run offline (a script, or a recording replayed: the prefix the
    # variants of a recorded agent type continue from)
    runners = offline_agent_types(scenario) or list(scenario.agents)
    unfaulted = execute_scenario(scenario, runners[0])
    miss = cassette_miss(unfaulted)
    if miss is not None:
        raise NoFaultsError(f"{scenario.where('agents', runners[0])}: agents.{runners[0]}: "
                            f"the recorded prefix no "
                            f"longer matches: the run of `{scenario.name}` under {runners[0]} "
                            f"does not replay its recording, which the fault variants continue "
                            f"from; re-record it (agentkit record {scenario.path or scenario.name}"
                            f" --agent {runners[0]} --mode rewrite): {miss}")
    calls = unfaulted.trace.tool_calls
    names = list(dict.fromkeys(c.name for c in calls))
    missing = [name for name in wanted if name not in names and name != MODEL]
    if missing:
        raise NoFaultsError(f"{scenario.where()}: the run of `{scenario.name}` under "
                            f"{runners[0]} makes no call of `{missing[0]}` (it calls "
                            f"{', '.join(names) or 'no tool'})")
    variants: list[FaultVariant] = []
    numbers: Counter[str] = Counter()
    for call in calls:
        numbers[call.name] += 1
        if wanted and call.name not in wanted:
            continue
        for kind in applicable_kinds([k for k in FAULT_KINDS if k in kinds], call.output):
            variants.append(FaultVariant(call.name, numbers[call.name],
                                         Fault(call=numbers[call.name], kind=kind)))
    variants.sort(key=lambda v: (names.index(v.tool), v.call, FAULT_KINDS.index(v.fault.kind)))
    if (not wanted or MODEL in wanted) and any(spec.team is None
                                               for spec in scenario.agents.values()):
        # the model's calls, after the tools' (a fault of the model goes before the reply of
        # its call: a script's, or a recording's)
        model_calls = sum(len(turn.llm_calls) for turn in unfaulted.trace.turns)
        variants += [FaultVariant(MODEL, number, ModelFault(call=number, kind=kind))
                     for number in range(1, model_calls + 1)
                     for kind in MODEL_FAULT_KINDS if kind in model_kinds]
    if not variants:
        raise NoFaultsError(f"{scenario.where()}: none of the kinds {', '.join(kinds)} applies "
                            f"to the calls of `{scenario.name}`")
    limit = max_variants or plan.max_variants
    if limit is not None and len(variants) > limit:
        kept = set(random.Random(scenario.name).sample(range(len(variants)), limit))
        variants = [v for index, v in enumerate(variants) if index in kept]
    return variants


def variant_scenario(scenario: Scenario, variant: FaultVariant) -> Scenario:
    """``scenario`` with the variant's fault on its tool, ``expect.on_fault`` (by default
    recovered or failed safely), and the steps rendered scripts follow."""
    copy = scenario.model_copy(deep=True)
    if copy.expect.on_fault is None:
        copy.expect = copy.expect.model_copy(update={"on_fault": list(_DEFAULT_ON_FAULT)})
    if isinstance(variant.fault, ModelFault):  # on every agent type's model (not a team's)
        for agent in copy.agents.values():
            if agent.team is None:
                agent.faults = [f for f in agent.faults if f.call != variant.call] + [variant.fault]
        return copy
    index = _entry_of(scenario, variant.tool)
    if index is None:
        raise NoFaultsError(f"{scenario.where('tools')}: no entry of `tools` gives the tool "
                            f"`{variant.tool}` (an MCP server's tools are known by `only:`)")
    spec = copy.tools[index]
    assert isinstance(variant.fault, Fault)
    spec.faults = [f for f in spec.faults if f.call != variant.call] + [variant.fault]
    spec.failures = [n for n in spec.failures if n != variant.call]
    if copy.trajectory is not None:
        copy.set_script_trajectory(_continued(copy, variant))
    return copy


def _entry_of(scenario: Scenario, tool: str) -> int | None:
    """The index of the ``tools`` entry giving the tool named ``tool``: a ref's built tool of
    that name, or an MCP entry naming it in ``only`` (or the only MCP entry)."""
    refs = [(index, spec) for index, spec in enumerate(scenario.tools) if spec.ref is not None]
    built, problems = built_tools(refs, scenario.path,
                                  None if scenario.world is not None else NO_WORLD)
    for (index, _spec), made in zip(refs, built if not problems else [], strict=False):
        if made.metadata.name == tool:
            return index
    servers = [index for index, spec in enumerate(scenario.tools) if spec.mcp is not None]
    named = [index for index in servers if tool in (scenario.tools[index].only or [])]
    return named[0] if named else servers[0] if len(servers) == 1 else None


def _continued(scenario: Scenario, variant: FaultVariant) -> list[TrajectoryStep]:
    """The trajectory a correct agent follows under the variant's fault."""
    steps = list(scenario.trajectory or [])
    located = _faulted_step(steps, variant)
    if located is None or variant.fault.kind == "latency":
        return steps  # not a call of the trajectory, or nothing to recover from
    index, number, made = located
    then = _plan(scenario).continuation(variant.fault.kind)
    if then != "retry":
        return [*steps[:index + 1], *then]
    faulted = _call_of(steps[index], number, made)
    retry = TrajectoryStep.model_validate({
        "call": faulted["call"], "args": faulted.get("args") or {}, "after": [number],
        "thought": "That did not work; try the same call again."})
    retried = made + 1

    def renumber(n: int) -> int:
        return retried if n == number else n + 1 if n > made else n

    return [*steps[:index + 1], retry, *(_renumbered(step, renumber) for step in steps[index + 1:])]


def _calls_of(step: TrajectoryStep) -> list[dict[str, Any]]:
    if step.parallel is not None:
        return [call.model_dump(exclude_none=True) for call in step.parallel]
    if step.call is not None:
        return [step.model_dump(exclude_none=True)]
    return []


def _faulted_step(steps: Sequence[TrajectoryStep],
                  variant: FaultVariant) -> tuple[int, int, int] | None:
    """The index of the step holding the variant's call, its trajectory number, and how many
    calls the steps up to that one make; None when the trajectory does not make it."""
    number = seen = 0
    for index, step in enumerate(steps):
        calls = _calls_of(step)
        for call in calls:
            number += 1
            if call["call"] == variant.tool:
                seen += 1
                if seen == variant.call:
                    return index, number, number + len(calls) - 1 - calls.index(call)
    return None


def _call_of(step: TrajectoryStep, number: int, made: int) -> dict[str, Any]:
    calls = _calls_of(step)
    return calls[len(calls) - 1 - (made - number)]


def _renumbered(step: TrajectoryStep, renumber: Callable[[int], int]) -> TrajectoryStep:
    def value(item: Any) -> Any:
        if isinstance(item, str):
            whole = _REF.match(item)
            return f"${renumber(int(whole.group(1)))}" if whole else item
        if isinstance(item, list):
            return [value(inner) for inner in item]
        if isinstance(item, dict):
            return {key: value(inner) for key, inner in item.items()}
        return item

    data = step.model_dump(exclude_none=True)
    for call in [data, *data.get("parallel", [])]:
        if "args" in call:
            call["args"] = value(call["args"])
        if call.get("after"):
            call["after"] = [renumber(n) for n in call["after"]]
    if "answer" in data:
        data["answer"] = _ANSWER_REF.sub(lambda m: f"{{${renumber(int(m.group(1)))}}}",
                                         data["answer"])
    return TrajectoryStep.model_validate(data)


@dataclass
class FaultMatrix:
    """A scenario's variants under its agent types: each cell's case result (its verdict's
    ``fault`` is the class), and the agent types left out, with why."""

    scenario: Scenario
    variants: list[FaultVariant]
    agent_types: list[str]
    cells: dict[tuple[str, str], CaseResult] = field(default_factory=dict)
    """By (variant label, agent type)."""
    left_out: dict[str, str] = field(default_factory=dict)

    def cell(self, variant: FaultVariant, agent_type: str) -> CaseResult:
        return self.cells[(variant.label, agent_type)]

    def outcome(self, variant: FaultVariant, agent_type: str) -> str:
        """The cell's class; ``error`` when the variant could not run, ``not_reached`` when
        the agent never made the faulted call (an agent using tools of its own)."""
        verdict = self.cell(variant, agent_type).verdict
        if verdict.fault is not None:
            return verdict.fault.outcome
        return "error" if verdict.outcome == "error" else "not_reached"

    @property
    def passed(self) -> bool:
        return all(result.verdict.passed for result in self.cells.values())


def run_fault_matrix(scenario: Scenario | str | Path, *, kinds: Sequence[str] | None = None,
                     tools: Sequence[str] | None = None, max_variants: int | None = None,
                     agent_types: Iterable[str] | None = None,
                     seed: int | str = 0) -> FaultMatrix:
    """Expand ``scenario`` (:func:`fault_variants`) and run every variant under each agent
    type (the scenario's that run offline, or ``agent_types``), each judged by its class."""
    scenario = load(scenario)
    variants = fault_variants(scenario, kinds=kinds, tools=tools, max_variants=max_variants)
    offline = offline_agent_types(scenario)
    chosen = list(agent_types) if agent_types is not None else list(scenario.agents)
    matrix = FaultMatrix(scenario, variants, [name for name in chosen if name in offline])
    for name in chosen:
        if name not in scenario.agents:
            raise NoFaultsError(f"{scenario.where()}: scenario `{scenario.name}` has no agent "
                                f"type `{name}` (it has {', '.join(scenario.agents)})")
        if name not in offline and not _continuable(scenario, name):
            matrix.left_out[name] = ("a team replaying recordings: the fault matrix continues "
                                     "one agent's recording only")
        elif name not in offline:
            matrix.agent_types.append(name)  # its recording holds each variant's continuation
    for variant in variants:
        faulted = variant_scenario(scenario, variant)
        for name in matrix.agent_types:
            cell = run_case(Case(faulted, name, seed=seed,
                                 llm=None if name in offline
                                 else _matrix_replay(scenario, name, variant)))
            miss = cassette_miss(cell.result) if cell.result is not None else None
            if miss is not None and name not in offline:
                # not a class of the agent's: the variant's continuation was never recorded
                cell.verdict = Verdict("error", stopped_by=(
                    f"the continuation of {variant.label} is not recorded (agentkit faults "
                    f"{scenario.path or scenario.name} --agents {name} --base-url URL records "
                    f"it): {miss}"))
            matrix.cells[(variant.label, name)] = cell
    return matrix


def _matrix_replay(scenario: Scenario, agent_type: str, variant: FaultVariant) -> LLM | None:
    """``agent_type``'s recording as ``variant`` replays it: the unfaulted run (the prefix)
    and the variant's own continuation, the exchanges tagged with its label (what is left
    over is of its own). None when there is no recording (the run says so)."""
    from agentkit.recording import CassetteLLM
    from agentkit.scenario._layout import cassette_path

    path = cassette_path(scenario, agent_type)
    return CassetteLLM(path, variant=variant.label) if path.is_file() else None


def _struck(struck: list[Any], label: str) -> str | None:
    return label if struck else None


def _continuable(scenario: Scenario, agent_type: str) -> bool:
    """Whether ``agent_type`` replays one recording of its own (not a team's)."""
    spec = scenario.agents[agent_type]
    return spec.team is None and spec.recording is not None


@dataclass
class FaultRecording:
    """What :func:`record_fault_continuations` did: per variant label, the exchanges it
    recorded (0: its continuation was there), and the problems that stopped it."""

    cassette: Path
    prefix: int
    """The exchanges of the unfaulted run, which every variant replays."""
    recorded: dict[str, int] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def record_fault_continuations(scenario: Scenario | str | Path, agent_type: str, live: LLM, *,
                               kinds: Sequence[str] | None = None,
                               tools: Sequence[str] | None = None,
                               max_variants: int | None = None,
                               on_variant: Callable[[FaultVariant, int], None] | None = None,
                               roles: RoleModels | None = None) -> FaultRecording:
    """Record, through ``live``, the continuation of every fault variant of ``scenario``
    (:func:`fault_variants`) under ``agent_type``'s recording: each variant replays the
    recorded run up to its faulted tool output and records only what follows, into the same
    cassette (saved after each exchange). The cassette must hold the unfaulted run (the
    prefix); a variant whose requests before the fault are not in it stops the recording
    with the cassette miss (the recorded prefix no longer matches). ``on_variant(variant,
    recorded)`` follows each variant. The judge's calls a variant makes (``faults.judge``: its
    class) are recorded with its continuation, through ``roles`` (by default ``live``)."""
    from agentkit.core.sim import real_time
    from agentkit.harness._record import with_limits
    from agentkit.recording import Cassette, RecordingLLM
    from agentkit.scenario._layout import cassette_path
    from agentkit.verdict import cassette_miss

    scenario = load(scenario)
    if agent_type not in scenario.agents or not _continuable(scenario, agent_type):
        raise NoFaultsError(f"{scenario.where('agents')}: agents.{agent_type}: the fault "
                            "matrix records continuations of one agent type's `recording:`")
    path = cassette_path(scenario, agent_type)
    if not path.is_file():
        raise NoFaultsError(f"{path}: no recording of the unfaulted run to continue from; "
                            f"record it first (agentkit record {scenario.path or scenario.name} "
                            f"--agent {agent_type})")
    variants = fault_variants(scenario, kinds=kinds, tools=tools, max_variants=max_variants)
    cassette = Cassette.load(path)
    outcome = FaultRecording(path, prefix=len(cassette.exchanges))
    limited = with_limits(scenario, agent_type, live)
    roles = roles if roles is not None else RoleModels(judge=live, user=live)
    for variant in variants:
        with faults_struck() as struck:
            recorder = RecordingLLM(limited, cassette, "new_episodes", agent_type=agent_type,
                                    scenario=scenario.name,
                                    continues=partial(_struck, struck, variant.label),
                                    variant=variant.label)
            with real_time():
                result = run_scenario(variant_scenario(scenario, variant), agent_type,
                                      llm=recorder, roles=roles)
        outcome.recorded[variant.label] = recorder.recorded
        if on_variant is not None:
            on_variant(variant, recorder.recorded)
        problem: object = cassette_miss(result)
        if problem is None and recorder.unrecorded:  # the model could not be asked
            problem = f"{type(recorder.unrecorded[0]).__name__}: {recorder.unrecorded[0]}"
        if problem is not None:
            outcome.problems.append(f"{variant.name(scenario.name, agent_type)}: {problem}")
            break
    return outcome
