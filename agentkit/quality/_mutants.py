"""Mutants of the system under test, run against the suite: each is one deliberate change to
the world an agent works in -- a tool dropped, two outputs swapped, one output corrupted, a
description changed, a tool that fails, the parallel calls of a reply reordered -- and the
suite should notice it. A mutant no case notices *survives*: a change of that kind would go
unnoticed by the suite.

Mutants run offline and deterministically, on the cases that run on scripts; a case that
replays a recording is left out (a mutant changes what the model is sent, so a recording no
longer fits: judging it needs a live re-recording). Mutants of the prompt need one too and
are not made."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentkit.harness import Case, SimulatedTool, run_case
from agentkit.scenario import Scenario, ScriptReply, records
from agentkit.tools import BaseTool, ToolOutput
from agentkit.trace import Trace

__all__ = ["Mutant", "MutantResult", "Mutation", "Baseline", "Kill", "OPERATORS", "baseline",
           "corrupted", "mutants_of", "mutate"]

OPERATORS = ("drop", "swap", "corrupt", "describe", "error", "reorder")
"""The kinds of mutant, in the order they are listed."""


@dataclass(frozen=True, order=True)
class Mutant:
    """One change to the system under test: ``operator`` applied to ``tools`` (for
    ``reorder``, to the scripts of ``agent_type``)."""

    operator: str
    tools: tuple[str, ...] = ()
    agent_type: str | None = None
    last: bool = False
    """``corrupt``: the last output of the tool in a case instead of its first."""

    @property
    def id(self) -> str:
        if self.operator == "reorder":
            return f"reorder:{self.agent_type}"
        return f"{self.operator}:{','.join(self.tools)}" + ("#last" if self.last else "")

    def describe(self) -> str:
        name = f"`{self.tools[0]}`" if self.tools else ""
        if self.operator == "drop":
            return f"the agent is not given {name}"
        if self.operator == "swap":
            first, second = self.tools
            if first == second:
                return f"the first two outputs of {name} are swapped"
            return f"`{first}` and `{second}` return each other's first output"
        if self.operator == "corrupt":
            which = "last" if self.last else "first"
            return f"the {which} output of {name} is corrupted (its numbers changed, or its text)"
        if self.operator == "describe":
            return f"the description of {name} says something else"
        if self.operator == "error":
            return f"every call of {name} fails"
        return f"the parallel tool calls of each `{self.agent_type}` reply come in reverse order"


def corrupted(text: str) -> str:
    """``text`` with each digit moved by five (``21`` -> ``76``), or, without digits, replaced
    by a marker: an output that is wrong but looks like one."""
    changed = re.sub(r"\d", lambda m: str((int(m.group()) + 5) % 10), text)
    return changed if changed != text else "(corrupted output)"


_DESCRIPTION = "Returns a value unrelated to what its name suggests."


class _Calls:
    """What a run's mutated tools answer: each tool's successful outputs counted by name,
    in the order they come."""

    def __init__(self, mutant: Mutant, outputs: dict[str, list[str]]) -> None:
        self.mutant = mutant
        self.outputs = outputs
        self.seen: dict[str, int] = {}

    def answer(self, name: str, output: ToolOutput) -> ToolOutput:
        number = self.seen[name] = self.seen.get(name, 0) + 1
        mutant, text = self.mutant, None
        target = len(self.outputs.get(name, ())) if mutant.last else 1
        if mutant.operator == "corrupt" and number == target:
            text = corrupted(output.content)
        elif mutant.operator == "swap":
            first, second = mutant.tools
            if first == second and number <= 2:
                text = self.outputs[first][2 - number]
            elif first != second and number == 1:
                text = self.outputs[second if name == first else first][0]
        if text is None:
            return output
        return output.model_copy(update={"content": text, "raw_output": text})


class _MutatedTool(SimulatedTool):
    """A scenario tool whose answers a mutant changes (``calls``), or that always fails."""

    def __init__(self, tool: SimulatedTool, calls: _Calls, *, fails: bool = False,
                 description: str | None = None) -> None:
        metadata = tool.metadata
        if description is not None:
            metadata = dataclasses.replace(metadata, description=description)
        super().__init__(tool, metadata=metadata, tags=tool.tags)
        self._calls = calls
        self._fails = fails

    async def _run(self, tool: Any, number: int, *args: Any, **kwargs: Any) -> ToolOutput:
        if self._fails:
            raise RuntimeError(f"`{self.metadata.name}` failed (a mutant makes every call fail)")
        output = await super()._run(tool, number, *args, **kwargs)
        if output.is_error:
            return output
        return self._calls.answer(self.metadata.name, output)


@dataclass(frozen=True)
class _ToolChange:
    """A tool mutant as a change of a run (:class:`~agentkit.harness.RunChange`)."""

    mutant: Mutant
    outputs: dict[str, list[str]]

    def tools(self, tools: Sequence[BaseTool]) -> list[BaseTool]:
        mutant, calls = self.mutant, _Calls(self.mutant, self.outputs)
        changed: list[BaseTool] = []
        for tool in tools:
            name = tool.metadata.name
            if name not in mutant.tools or not isinstance(tool, SimulatedTool):
                changed.append(tool)
            elif mutant.operator != "drop":
                changed.append(_MutatedTool(
                    tool, calls, fails=mutant.operator == "error",
                    description=_DESCRIPTION if mutant.operator == "describe" else None))
        return changed

    def answers(self, trace: Trace) -> None:
        return None


def _reordered(scenario: Scenario, agent_type: str) -> Scenario | None:
    """``scenario`` with the tool calls of each of ``agent_type``'s script replies that has
    several in reverse order (None: it has no such reply)."""
    spec = scenario.agents[agent_type]
    if spec.script is None or not any(_parallel(item) for item in spec.script):
        return None
    script = [item.model_copy(update={"tool_calls": item.tool_calls[::-1]})
              if isinstance(item, ScriptReply) and _parallel(item) else item
              for item in spec.script]
    agents = {**scenario.agents, agent_type: spec.model_copy(update={"script": script})}
    return scenario.model_copy(update={"agents": agents})


def _parallel(item: Any) -> bool:
    return isinstance(item, ScriptReply) and len(item.tool_calls) > 1


@dataclass
class Baseline:
    """A case as it runs unmutated: its scenario, agent type, the tools of its world and
    the successful outputs of each tool, in call order (None: it is left out, ``why``)."""

    scenario: Scenario
    agent_type: str
    tools: tuple[str, ...] = ()
    outputs: dict[str, list[str]] = field(default_factory=dict)
    why: str | None = None

    @property
    def name(self) -> str:
        return f"{self.scenario.name}[{self.agent_type}]"

    def applies(self, mutant: Mutant) -> bool:
        """Whether ``mutant`` changes anything in this case."""
        if mutant.operator == "reorder":
            return (mutant.agent_type == self.agent_type
                    and _reordered(self.scenario, self.agent_type) is not None)
        if not all(tool in self.tools for tool in mutant.tools):
            return False
        if mutant.operator == "swap":
            first, second = mutant.tools
            if first == second:
                seen = self.outputs.get(first, [])
                return len(seen) >= 2 and seen[0] != seen[1]
            return (bool(self.outputs.get(first)) and bool(self.outputs.get(second))
                    and self.outputs[first][0] != self.outputs[second][0])
        if mutant.operator == "corrupt":
            return len(self.outputs.get(mutant.tools[0], ())) >= (2 if mutant.last else 1)
        return True

    def case(self, mutant: Mutant) -> Case:
        if mutant.operator == "reorder":
            scenario = _reordered(self.scenario, self.agent_type)
            assert scenario is not None
            return Case(scenario, self.agent_type, samples=False)
        return Case(self.scenario, self.agent_type, samples=False,
                    change=_ToolChange(mutant, self.outputs))


def baseline(scenario: Scenario, agent_type: str) -> Baseline:
    """The case run unmutated; left out when it replays a recording or does not pass."""
    base = Baseline(scenario, agent_type)
    if records(scenario, agent_type) or scenario.agents[agent_type].resume_from is not None:
        base.why = ("replays a recording: a mutant changes what its model is sent, so judging "
                    "it needs a live re-recording")
        return base
    case = run_case(Case(scenario, agent_type, samples=False))
    result = case.result
    if result is None or not case.passed:
        base.why = "does not pass unmutated"
        return base
    base.tools = tuple(tool.metadata.name for tool in result.tools
                       if isinstance(tool, SimulatedTool))
    for turn in result.trace.turns:
        for call in sorted(turn.tool_calls, key=lambda c: (c.started, c.issued)):
            if not call.is_error:
                base.outputs.setdefault(call.name, []).append(call.output)
    return base


def mutants_of(baselines: Iterable[Baseline]) -> list[Mutant]:
    """Every mutant of the system under test that changes at least one of the cases, in
    operator order: per scenario tool drop, corrupt (its first output, and its last),
    describe, error; each pair of tools
    that answer one case differently swapped (and a tool's first two outputs); each agent
    type's parallel calls reordered."""
    found: set[Mutant] = set()
    for base in baselines:
        if base.why is not None:
            continue
        for tool in base.tools:
            found.update(Mutant(op, (tool,)) for op in ("drop", "corrupt", "describe", "error"))
            found.add(Mutant("corrupt", (tool,), last=True))
            found.add(Mutant("swap", (tool, tool)))
        called = sorted(base.outputs)
        found.update(Mutant("swap", (a, b)) for i, a in enumerate(called) for b in called[i + 1:])
        found.add(Mutant("reorder", (), base.agent_type))
    ready = [base for base in baselines if base.why is None]
    return sorted((m for m in found if any(base.applies(m) for base in ready)),
                  key=lambda m: (OPERATORS.index(m.operator), m.tools, m.last,
                                 m.agent_type or ""))


@dataclass
class Kill:
    """A case that noticed a mutant, and how: the first problem its verdict names."""

    case: str
    by: str


@dataclass
class MutantResult:
    """One mutant run against every case it changes: the cases that killed it (empty: it
    survived) and those it ran on."""

    mutant: Mutant
    cases: list[str] = field(default_factory=list)
    kills: list[Kill] = field(default_factory=list)

    @property
    def killed(self) -> bool:
        return bool(self.kills)

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.mutant.id, "mutant": self.mutant.describe(),
                "status": "killed" if self.killed else "survived", "cases": list(self.cases),
                "killed_by": [{"case": k.case, "by": k.by} for k in self.kills]}


_KILLER_LENGTH = 160


def _killer(case: Any) -> str | None:
    """What in a mutated case's verdict fails it, shortened (None: it passes): the first
    problem, with its kind (the expectation), or the error the run stopped on."""
    verdict = case.verdict
    if verdict.passed:
        return None
    if verdict.problems:
        problem = verdict.problems[0]
        text = f"{problem.kind}: {str(problem).splitlines()[0]}"
    else:
        text = f"the run stopped: {str(verdict.stopped_by).splitlines()[0]}"
    return text if len(text) <= _KILLER_LENGTH else text[:_KILLER_LENGTH - 3] + "..."


@dataclass
class Mutation:
    """The mutants of a suite and how each fared; the cases left out and why."""

    results: list[MutantResult]
    baselines: list[Baseline]

    @property
    def left_out(self) -> list[Baseline]:
        return [base for base in self.baselines if base.why is not None]

    @staticmethod
    def _score(results: Iterable[MutantResult]) -> tuple[int, int]:
        counted = list(results)
        return sum(r.killed for r in counted), len(counted)

    def score(self) -> tuple[int, int]:
        """(mutants killed, mutants run) over the whole suite."""
        return self._score(self.results)

    @property
    def percent(self) -> float:
        killed, total = self.score()
        return 100.0 if not total else round(100.0 * killed / total, 1)

    def survivors(self) -> list[MutantResult]:
        return [r for r in self.results if not r.killed]

    def by(self, part: Callable[[Baseline], str]) -> dict[str, tuple[int, int]]:
        """Per scenario (``part`` its name) or agent type: (mutants it killed, mutants
        that changed it)."""
        names = {base.name: part(base) for base in self.baselines if base.why is None}
        found: dict[str, tuple[int, int]] = {}
        for group in dict.fromkeys(names.values()):
            killed = total = 0
            for result in self.results:
                mine = [c for c in result.cases if names.get(c) == group]
                if mine:
                    total += 1
                    killed += any(k.case in mine for k in result.kills)
            found[group] = (killed, total)
        return found

    def by_scenario(self) -> dict[str, tuple[int, int]]:
        return self.by(lambda base: base.scenario.name)

    def by_agent_type(self) -> dict[str, tuple[int, int]]:
        return self.by(lambda base: base.agent_type)

    def to_dict(self) -> dict[str, Any]:
        killed, total = self.score()
        return {"score": {"killed": killed, "mutants": total, "percent": self.percent},
                "survivors": [r.mutant.id for r in self.survivors()],
                "mutants": [r.to_dict() for r in self.results],
                "by_scenario": {k: {"killed": a, "mutants": b}
                                for k, (a, b) in self.by_scenario().items()},
                "by_agent_type": {k: {"killed": a, "mutants": b}
                                  for k, (a, b) in self.by_agent_type().items()},
                "left_out": [{"case": b.name, "why": b.why} for b in self.left_out]}


def mutate(scenarios: Iterable[Scenario], agent_types: Sequence[str] | None = None,
           operators: Sequence[str] = OPERATORS) -> Mutation:
    """Run every scenario under each of its agent types (only ``agent_types``, if given)
    unmutated, make the mutants of its world (only ``operators``), and run each against every
    case it changes, judging each run as ``agentkit run`` does (snapshots aside: every
    mutant changes a trace, so a snapshot would kill them all and say nothing)."""
    baselines = [baseline(scenario, name) for scenario in scenarios for name in scenario.agents
                 if agent_types is None or name in agent_types]
    results = []
    for mutant in mutants_of(baselines):
        if mutant.operator not in operators:
            continue
        result = MutantResult(mutant)
        for base in baselines:
            if base.why is not None or not base.applies(mutant):
                continue
            result.cases.append(base.name)
            killer = _killer(run_case(base.case(mutant)))
            if killer is not None:
                result.kills.append(Kill(base.name, killer))
        results.append(result)
    return Mutation(results, baselines)
