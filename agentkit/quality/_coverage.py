"""Behaviour coverage of a suite, from the runs' traces: per tool (the scenario's, the agent's
own, every tool an MCP server lists) and per agent type, what the runs did with it -- called,
with which argument shapes, failed, timed out, called after a failure, its output used in an
answer -- and the hand-offs, LLM judges and policy rules the runs exercised. What no run
touched is listed first (:meth:`Coverage.untested`)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from agentkit.harness import ScenarioResult
from agentkit.scenario import Judged, Scenario
from agentkit.trace import Trace
from agentkit.verdict import rule_calls

__all__ = ["Coverage", "ToolCoverage", "ToolUse", "Exercised", "BEHAVIOURS", "judged_fields",
           "coverage_of", "argument_shape", "output_used", "merged_coverage"]

BEHAVIOURS = ("called", "failed", "after_failure", "output_used")
"""What a tool's coverage counts as its behaviours, each covered once a run shows it."""

_BEHAVIOUR_WORDS = {"called": "never called", "failed": "never fails",
                    "after_failure": "never called after a failure",
                    "output_used": "its output never shows in an answer"}

_LISTED = " (listed, not offered)"
_TIMEOUT = re.compile(r"time[ds]?[ _-]?out|TimeoutError|did not answer within", re.IGNORECASE)
_SALIENT = re.compile(r"-?\d+(?:\.\d+)?|[^\W\d_]{4,}")


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "str"
    if isinstance(value, list):
        return "list"
    if isinstance(value, dict):
        return "object"
    return "null"


def argument_shape(args: dict[str, Any]) -> str:
    """A call's arguments by name and JSON type (``a: int, b: int``): calls of one shape
    exercise the same path of a tool's input handling."""
    return ", ".join(f"{key}: {_json_type(value)}" for key, value in sorted(args.items()))


def _salient(text: str) -> set[str]:
    return {token.lower() for token in _SALIENT.findall(text)}


def output_used(output: str, answers: Iterable[str], given: str) -> bool:
    """Whether a tool's output shows in an answer: one of its numbers or words of four
    letters or more, not already in ``given`` (the call's arguments and the user's message),
    appears in one of ``answers`` (the responses of the call's turn and those after it). A
    heuristic, stated as such: an answer that rephrases a number is not seen."""
    tokens = _salient(output) - _salient(given)
    if not tokens:
        return False
    return any(tokens & _salient(answer) for answer in answers)


@dataclass
class ToolUse:
    """What the runs of one agent type (or all of them) did with one tool."""

    calls: int = 0
    shapes: set[str] = field(default_factory=set)
    failed: int = 0
    timed_out: int = 0
    after_failure: int = 0
    output_used: int = 0
    scenarios: set[str] = field(default_factory=set)

    def add(self, other: ToolUse) -> None:
        self.calls += other.calls
        self.shapes |= other.shapes
        self.failed += other.failed
        self.timed_out += other.timed_out
        self.after_failure += other.after_failure
        self.output_used += other.output_used
        self.scenarios |= other.scenarios

    def covered(self, behaviour: str) -> bool:
        return bool(self.calls if behaviour == "called" else getattr(self, behaviour))

    def to_dict(self) -> dict[str, Any]:
        return {"calls": self.calls, "shapes": sorted(self.shapes), "failed": self.failed,
                "timed_out": self.timed_out, "after_failure": self.after_failure,
                "output_used": self.output_used, "scenarios": sorted(self.scenarios)}


@dataclass
class ToolCoverage:
    """One tool: where it comes from (``scenario``, ``agent``: the agent's own, ``mcp
    <server>``), the agent types it was offered to, and its use by agent type."""

    name: str
    source: str
    offered: set[str] = field(default_factory=set)
    by_agent: dict[str, ToolUse] = field(default_factory=dict)

    def total(self) -> ToolUse:
        whole = ToolUse()
        for use in self.by_agent.values():
            whole.add(use)
        return whole

    def missing(self) -> list[str]:
        """The behaviours no run showed (all of them when it was never called)."""
        total = self.total()
        if not total.calls:
            return ["called"]
        return [b for b in BEHAVIOURS if not total.covered(b)]

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "source": self.source, "offered_to": sorted(self.offered),
                "total": self.total().to_dict(), "untested": self.missing(),
                "by_agent_type": {a: u.to_dict() for a, u in sorted(self.by_agent.items())}}


@dataclass
class Exercised:
    """A hand-off, LLM judge or policy rule: how many runs exercised it, out of those that
    could (a judge that decided, a rule whose calls were made, a hand-off taken)."""

    kind: str
    name: str
    runs: int = 0
    exercised: int = 0
    failed: int = 0
    """A judge's fail verdicts (a judge that never fails is worth a look)."""

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"kind": self.kind, "name": self.name, "runs": self.runs,
                                "exercised": self.exercised}
        if self.kind == "judge":
            data["failed"] = self.failed
        return data


def judged_fields(scenario: Scenario, agent_type: str) -> list[str]:
    """The fields (``at``, as :class:`~agentkit.verdict.Judgement` names them) of the judged
    expectations a run of ``agent_type`` has, in file order."""
    fields = [f"turns.{index}.answer.judge" for index, turn in enumerate(scenario.turns)
              if isinstance(turn.answer, Judged)]
    own = scenario.agents[agent_type].expect
    expect = scenario.expect_for(agent_type)
    for name in ("answer", "conversation"):
        if isinstance(getattr(expect, name), Judged):
            at = (f"agents.{agent_type}.expect.{name}" if own is not None
                  and name in own.model_fields_set else f"expect.{name}")
            fields.append(f"{at}.judge")
    user = scenario.user
    if user is not None and user.stop_when is None:
        fields.append("user.goal")
    elif user is not None and isinstance(user.stop_when, Judged):
        fields.append("user.stop_when")
    return fields


@dataclass
class Coverage:
    """What a suite's runs exercised (module docstring); :meth:`add` takes each run."""

    tools: dict[str, ToolCoverage] = field(default_factory=dict)
    others: dict[tuple[str, str], Exercised] = field(default_factory=dict)
    agent_types: dict[str, int] = field(default_factory=dict)
    """Runs per agent type."""
    not_run: list[str] = field(default_factory=list)
    """Cases that could not run (no trace to read), by name."""

    # ------------------------------------------------------------------ collecting
    def _tool(self, name: str, source: str) -> ToolCoverage:
        tool = self.tools.get(name)
        if tool is None:
            tool = self.tools[name] = ToolCoverage(name, source)
        return tool

    def _other(self, kind: str, name: str) -> Exercised:
        return self.others.setdefault((kind, name), Exercised(kind, name))

    def observe(self, result: ScenarioResult | None, verdict: Any) -> None:
        """A :data:`~agentkit.harness.RunObserver`: each judged run added (one that could
        not start is counted apart)."""
        if result is not None:
            self.add(result)

    def add_failed_start(self, name: str) -> None:
        self.not_run.append(name)

    def add(self, result: ScenarioResult) -> None:
        """One run: its world's tools, what its trace shows, its judges and rules."""
        scenario, agent_type, trace = result.scenario, result.agent_type, result.trace
        self.agent_types[agent_type] = self.agent_types.get(agent_type, 0) + 1
        sources = self._sources(result)
        for name, source in sources.items():
            self._tool(name, source)
        offered = {spec["name"] for turn in trace.turns for spec in turn.tools}
        offered |= {name for name, source in sources.items() if not source.endswith(_LISTED)}
        for name in offered:
            self._tool(name, sources.get(name, "agent")).offered.add(agent_type)
        for name, use in self._uses(trace, scenario.name).items():
            tool = self._tool(name, sources.get(name, "agent" if name in offered
                                                else "called, never offered"))
            tool.by_agent.setdefault(agent_type, ToolUse()).add(use)
        self._exercised(result)

    @staticmethod
    def _sources(result: ScenarioResult) -> dict[str, str]:
        """The run's world by name: scenario tools, MCP tools (and those a server lists but
        the scenario leaves out, ``listed``)."""
        sources: dict[str, str] = {}
        for tool in result.tools:
            sources[tool.metadata.name] = "scenario"
        if result.mcp is not None:
            for server, session in result.mcp.sessions.items():
                offered = {str(t.get("name")) for t in session.listed or ()}
                for name in sorted(offered):
                    sources[name] = (f"mcp {server}" if name in sources
                                     else f"mcp {server}{_LISTED}")
        return sources

    @staticmethod
    def _uses(trace: Trace, scenario: str) -> dict[str, ToolUse]:
        uses: dict[str, ToolUse] = {}
        responses = [turn.response or "" for turn in trace.turns]
        for number, turn in enumerate(trace.turns):
            failed_before = False
            calls = sorted(turn.tool_calls, key=lambda c: (c.started, c.issued))
            for call in calls:
                use = uses.setdefault(call.name, ToolUse())
                use.calls += 1
                use.scenarios.add(scenario)
                use.shapes.add(argument_shape(call.args))
                if failed_before:
                    use.after_failure += 1
                if call.is_error:
                    use.failed += 1
                    use.timed_out += bool(_TIMEOUT.search(call.output))
                    failed_before = True
                elif output_used(call.output, responses[number:],
                                 json.dumps(call.args, default=str) + " " + turn.user):
                    use.output_used += 1
        return uses

    def _exercised(self, result: ScenarioResult) -> None:
        scenario, agent_type, trace = result.scenario, result.agent_type, result.trace
        spec = scenario.agents[agent_type]
        taken = [(h.get("from"), h.get("to")) for turn in trace.turns
                 for h in turn.details.get("handoffs", [])]
        if spec.team is not None:
            names = [agent.name for agent in spec.team]
            for agent in spec.team:
                targets = (agent.can_handoff_to if agent.can_handoff_to is not None
                           else [n for n in names if n != agent.name])
                for target in targets:
                    edge = self._other("handoff", f"{scenario.name}[{agent_type}]: "
                                                  f"{agent.name} -> {target}")
                    edge.runs += 1
                    edge.exercised += (agent.name, target) in taken
        decided = {j.at: j for j in result.judgements}
        for at in judged_fields(scenario, agent_type):
            judge = self._other("judge", f"{scenario.name}: {at}")
            judge.runs += 1
            if at in decided:
                judge.exercised += 1
                judge.failed += decided[at].verdict == "fail"
        rules = scenario.expect_for(agent_type).never or []
        tags: dict[str, frozenset[str]] = {tool.metadata.name: getattr(tool, "tags", frozenset())
                                           for tool in result.tools}
        for index, rule in enumerate(rules):
            name = rule.name or f"never.{index}"
            exercised = self._other("rule", f"{scenario.name}: {name} (never {rule.describe()})")
            exercised.runs += 1
            exercised.exercised += rule_calls(trace, rule, tags) > 0

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Coverage:
        """The coverage :meth:`to_dict` wrote (a report's), to merge with others."""
        coverage = cls(agent_types={a: v["runs"] for a, v in data["agent_types"].items()},
                       not_run=list(data["not_run"]))
        for tool in data["tools"]:
            read = coverage._tool(tool["name"], tool["source"])
            read.offered = set(tool["offered_to"])
            for agent, use in tool["by_agent_type"].items():
                read.by_agent[agent] = ToolUse(
                    use["calls"], set(use["shapes"]), use["failed"], use["timed_out"],
                    use["after_failure"], use["output_used"], set(use["scenarios"]))
        for item in data["exercised"]:
            coverage.others[(item["kind"], item["name"])] = Exercised(
                item["kind"], item["name"], item["runs"], item["exercised"],
                item.get("failed", 0))
        return coverage

    def merge(self, other: Coverage) -> None:
        """Add ``other``'s runs (another shard's) to these."""
        for name, tool in other.tools.items():
            mine = self._tool(name, tool.source)
            mine.offered |= tool.offered
            for agent, use in tool.by_agent.items():
                mine.by_agent.setdefault(agent, ToolUse()).add(use)
        for key, item in other.others.items():
            mine_item = self._other(*key)
            mine_item.runs += item.runs
            mine_item.exercised += item.exercised
            mine_item.failed += item.failed
        for agent, runs in other.agent_types.items():
            self.agent_types[agent] = self.agent_types.get(agent, 0) + runs
        self.not_run += other.not_run

    # ------------------------------------------------------------------ reading
    def untested(self) -> list[str]:
        """What no run touched, first the tools never called, then the behaviours of the
        others no run showed, then hand-offs never taken, judges that never decided (or never
        failed) and rules whose calls no run made."""
        lines = [f"tool {t.name} ({t.source}): never called"
                 for t in self._ordered() if t.missing() == ["called"]]
        lines += [f"tool {t.name} ({t.source}): "
                  + ", ".join(_BEHAVIOUR_WORDS[b] for b in t.missing())
                  for t in self._ordered() if t.missing() and t.missing() != ["called"]]
        for item in self._others():
            if not item.exercised:
                what = {"handoff": "never taken", "judge": "never decided (its turn never "
                        "ran to it)", "rule": "no run made the calls it is about"}[item.kind]
                lines.append(f"{item.kind} {item.name}: {what}")
            elif item.kind == "judge" and not item.failed:
                lines.append(f"judge {item.name}: never failed a run (see `agentkit mutate "
                             "--judges`)")
        return lines

    def _others(self) -> list[Exercised]:
        return [self.others[key] for key in sorted(self.others)]

    def _ordered(self) -> list[ToolCoverage]:
        return sorted(self.tools.values(), key=lambda t: (t.source, t.name))

    def behaviours(self) -> tuple[int, int]:
        """(covered, total): each tool's :data:`BEHAVIOURS`, each hand-off, judge and rule."""
        total = len(self.tools) * len(BEHAVIOURS) + len(self.others)
        missing = sum(len(BEHAVIOURS) if t.missing() == ["called"] else len(t.missing())
                      for t in self.tools.values())
        missing += sum(not item.exercised for item in self.others.values())
        return total - missing, total

    @property
    def percent(self) -> float:
        """Behaviour coverage, in percent (100 with nothing to cover)."""
        covered, total = self.behaviours()
        return 100.0 if not total else round(100.0 * covered / total, 1)

    def tools_called(self) -> tuple[int, int]:
        return sum(t.total().calls > 0 for t in self.tools.values()), len(self.tools)

    def by_agent_type(self) -> dict[str, tuple[int, int]]:
        """Per agent type: (tools it called, tools offered to it)."""
        return {agent: (sum(agent in t.by_agent for t in self.tools.values()),
                        sum(agent in t.offered for t in self.tools.values()))
                for agent in sorted(self.agent_types)}

    def table(self) -> list[list[str]]:
        """One row per tool: name, source, agent types called by / offered to, calls,
        argument shapes, failed, timed out, after a failure, output used."""
        rows = []
        for tool in self._ordered():
            total = tool.total()
            rows.append([tool.name, tool.source, f"{len(tool.by_agent)}/{len(tool.offered)}",
                         str(total.calls), str(len(total.shapes)), str(total.failed),
                         str(total.timed_out), str(total.after_failure),
                         str(total.output_used)])
        return rows

    def agent_table(self) -> list[list[str]]:
        """One row per tool and agent type that called it, the same columns as
        :meth:`table` (the agent type in place of the count of agent types)."""
        rows = []
        for tool in self._ordered():
            for agent, use in sorted(tool.by_agent.items()):
                rows.append([tool.name, tool.source, agent, str(use.calls),
                             str(len(use.shapes)), str(use.failed), str(use.timed_out),
                             str(use.after_failure), str(use.output_used)])
        return rows

    TABLE_HEADERS: ClassVar[Sequence[str]] = ("tool", "source", "agent types", "calls", "shapes",
                                    "failed", "timed out", "after failure", "output used")

    def to_dict(self) -> dict[str, Any]:
        covered, total = self.behaviours()
        return {"behaviours": {"covered": covered, "total": total, "percent": self.percent},
                "untested": self.untested(),
                "tools": [t.to_dict() for t in self._ordered()],
                "agent_types": {a: {"runs": self.agent_types[a], "tools_called": c,
                                    "tools_offered": o}
                                for a, (c, o) in self.by_agent_type().items()},
                "exercised": [item.to_dict() for item in self._others()],
                "not_run": sorted(self.not_run)}


def coverage_of(scenarios: Iterable[Scenario], agent_types: Sequence[str] | None = None,
                ) -> Coverage:
    """Run every scenario under each agent type it declares (only ``agent_types``, if given),
    offline, as ``agentkit run`` does -- scripts and recordings replayed, every sample of a
    sampled one -- and collect what the runs exercised."""
    from agentkit.harness import Case, run_case

    coverage = Coverage()
    for scenario in scenarios:
        for name in scenario.agents:
            if agent_types is not None and name not in agent_types:
                continue
            case = run_case(Case(scenario, name))
            results = [run.result for run in case.runs if isinstance(run.result, ScenarioResult)]
            if not results:
                coverage.add_failed_start(case.case.name)
            for result in results:
                coverage.add(result)
    return coverage


def merged_coverage(parts: Sequence[dict[str, Any] | None]) -> dict[str, Any] | None:
    """The coverage of shards' reports joined, as the unsplit run's (None when a shard has
    none)."""
    if not parts or any(part is None for part in parts):
        return None
    whole = Coverage()
    for part in parts:
        assert part is not None
        whole.merge(Coverage.from_dict(part))
    return whole.to_dict()
