"""Which is best, and how sure are we: the head-to-head table of a report, every pair of
agent types on what both ran, and the records the verdict sentence is made of.

**The overall table** is over the scenarios every compared agent type (× model) ran
(:meth:`Comparison.compared`), so each column is measured on the same tasks. A line per
scenario gives each one's result; then the pass rate pooled over those scenarios and the mean
cost per run (tokens, LLM calls, simulated latency, critical path).

A run without samples (scripted, replayed once) is a **fact**: it passed or it failed, with no
interval, and a pass is better than a failure, never tied with it. A sampled case is an
estimate: a value is tied with the best when Fisher's exact test (one-sided) does not call it
lower at the scenario's confidence level (95 % by default); a fact is tied with an estimate
when it lies in the estimate's interval.

**Costs are compared over runs that passed only** (a run cheap because it broke is not
cheap): in the overall table an agent type that did not pass every one of its scenarios has
no cost; a mean cost is tied with the lowest when it is within the margin of the two means'
standard errors (from each case's spread over its samples; a single run has none, so only
equal values tie).

**Pair by pair**, every two agent types are compared on the scenarios both ran (however many
the others ran): which is better on each (or too close to call, with the samples per side that
would decide it), and their costs over the scenarios both passed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Any, Literal

from agentkit.eval._cases import percent
from agentkit.eval._stats import DEFAULT_CONFIDENCE, fisher_lower, wilson_interval
from agentkit.report._model import SECONDS_METRICS, Comparison, Contender, Row, contender_label
from agentkit.verdict import samples_to_separate

__all__ = ["Value", "Line", "HeadToHead", "head_to_head", "SCENARIO_LINES", "COST_LINES", "Decision",
           "CostComparison", "Pair", "Record", "pairs", "records", "mean_cost"]

#: The cost lines: (label, the cost key of a sampled row's spread, how a row gives it).
COST_LINES: tuple[tuple[str, str], ...] = (
    ("Tokens per run", "tokens"),
    ("LLM calls per run", "llm_calls"),
    ("Simulated latency per run", "wall_time"),
    ("Critical path per run", "critical_path"),
)


@dataclass(frozen=True)
class Value:
    """One contender's value in a line: a pass rate (``passes`` of ``judged``, with its
    interval; ``exact`` for runs without samples, which are facts: no interval) or a mean cost
    (with its standard error); None when it has none (``note`` says why: the run could not
    run, or it failed and so has no cost to compare)."""

    value: float | None
    passes: int = 0
    judged: int = 0
    interval: tuple[float, float] | None = None
    se: float = 0.0
    exact: bool = False
    note: str = "error"

    def text(self, kind: str) -> str:
        if self.value is None:
            return self.note
        if kind == "pass_rate":
            if self.exact:
                if self.judged == 1:
                    return "pass" if self.passes else "FAIL"
                return f"{self.passes}/{self.judged} passed"
            assert self.interval is not None
            low, high = self.interval
            return (f"{percent(self.value)} ({self.passes}/{self.judged}; "
                    f"{low * 100:.0f}-{high * 100:.0f}%)")
        if kind == "seconds":
            return f"{self.value:,.2f}s"
        return f"{self.value:,.0f}" if float(self.value).is_integer() else f"{self.value:,.1f}"


@dataclass(frozen=True)
class Line:
    """A row of the head-to-head table: a scenario's results, the pooled pass rate, or a
    mean cost; ``best`` holds every contender tied for the best value."""

    label: str
    kind: Literal["pass_rate", "count", "seconds"]
    values: dict[Contender, Value]
    best: list[Contender]

    @property
    def tie(self) -> bool:
        return len(self.best) > 1

    def to_dict(self) -> dict[str, Any]:
        return {"label": self.label, "kind": self.kind,
                "values": {contender_label(c): _value_dict(v) for c, v in self.values.items()},
                "best": [contender_label(c) for c in self.best], "tie": self.tie}


def _value_dict(value: Value) -> dict[str, Any]:
    if value.value is None:
        return {"value": None, "why": value.note}
    data: dict[str, Any] = {"value": round(value.value, 6)}
    if value.exact:
        data.update(passes=value.passes, judged=value.judged, exact=True)
    elif value.interval is not None:
        data.update(passes=value.passes, judged=value.judged,
                    interval=[round(value.interval[0], 6), round(value.interval[1], 6)])
    elif value.se:
        data["se"] = round(value.se, 6)
    return data


@dataclass(frozen=True)
class Decision:
    """One scenario of a pair: the better one (None: the same, or too close to call);
    ``thin`` when the two differ within noise, ``decide_at`` the samples per side that would
    decide it if the rates held (None: more than the limit)."""

    scenario: str
    values: tuple[Value, Value]
    better: Contender | None
    thin: bool = False
    decide_at: int | None = None


@dataclass(frozen=True)
class CostComparison:
    """One cost of a pair over the scenarios both passed: each one's mean and the cheaper one
    (None: a tie)."""

    label: str
    key: str
    means: tuple[float, float]
    cheaper: Contender | None

    def ratio(self) -> float | None:
        """How many times the dearer one costs the cheaper (None: a tie or a zero)."""
        low, high = sorted(self.means)
        return high / low if self.cheaper is not None and low > 0 else None


@dataclass(frozen=True)
class Pair:
    """Two contenders on the scenarios both ran: how many each passed, the decisions of the
    scenarios one did better on or too close to call (a tie is none: all a pair says is its
    wins and its close calls, and a large report holds no decision per scenario), and the
    costs over the scenarios both passed."""

    first: Contender
    second: Contender
    scenarios: list[str]
    passes: tuple[int, int]
    decisions: list[Decision]
    both_passed: list[str]
    costs: list[CostComparison]

    @property
    def contenders(self) -> tuple[Contender, Contender]:
        return self.first, self.second

    def wins(self, contender: Contender) -> list[Decision]:
        return [d for d in self.decisions if d.better == contender]

    @property
    def thin(self) -> list[Decision]:
        return [d for d in self.decisions if d.thin]

    def to_dict(self) -> dict[str, Any]:
        names = [contender_label(c) for c in self.contenders]
        return {"pair": names, "scenarios": list(self.scenarios),
                "passes": dict(zip(names, self.passes, strict=True)),
                "better": {name: [d.scenario for d in self.wins(c)]
                           for name, c in zip(names, self.contenders, strict=True)},
                "too_close": [{"scenario": d.scenario, "samples_to_decide": d.decide_at}
                              for d in self.thin],
                "both_passed": list(self.both_passed),
                "costs": [{"label": c.label,
                           "means": dict(zip(names, (round(m, 6) for m in c.means),
                                             strict=True)),
                           "cheaper": contender_label(c.cheaper) if c.cheaper else None}
                          for c in self.costs]}


@dataclass(frozen=True)
class Record:
    """What one contender did over every scenario it ran: the ones it passed, failed (failed,
    could not run, ``stable_fail``), left undecided, and passed only some samples of."""

    contender: Contender
    ran: list[str]
    passed: list[str]
    failed: list[Row] = field(default_factory=list)
    undecided: list[Row] = field(default_factory=list)
    flaky: list[Row] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        """Passed every scenario it ran (a flaky case that met its gate included)."""
        return not self.failed and not self.undecided


@dataclass(frozen=True)
class HeadToHead:
    """The head-to-head table, the pairs and the records (module docstring).

    ``summarized``: over :data:`SCENARIO_LINES` compared scenarios, the table has a line per
    tag instead of one per scenario, then the scenarios where the contenders' results
    differ (``differ``: all of them; the first :data:`SCENARIO_LINES` have a line)."""

    contenders: list[Contender]
    scenarios: list[str]
    left_out: list[tuple[Contender, str]]
    lines: list[Line]
    confidence: float
    pairs: list[Pair] = field(default_factory=list)
    records: list[Record] = field(default_factory=list)
    summarized: bool = False
    differ: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"contenders": [contender_label(c) for c in self.contenders],
                "scenarios": list(self.scenarios), "confidence": self.confidence,
                **({"summarized": True, "differ": list(self.differ)}
                   if self.summarized else {}),
                "lines": [line.to_dict() for line in self.lines],
                "pairs": [pair.to_dict() for pair in self.pairs]}


SCENARIO_LINES = 25
"""The most scenario lines the head-to-head table has: over this many compared scenarios it
is summarized per tag, with a line for each scenario where the contenders differ (up to this
many)."""


def _row_rate(row: Row, confidence: float) -> Value:
    """A row's result: a fact for a run without samples, an estimate for a sampled case."""
    if not row.judged_runs:
        return Value(None)
    if not row.sampled:
        return Value(float(row.passed_runs), row.passed_runs, 1, exact=True)
    return _rate(row.passed_runs, row.judged_runs, confidence)


def _rate(passes: int, judged: int, confidence: float, exact: bool = False) -> Value:
    if not judged:
        return Value(None)
    if exact:
        return Value(passes / judged, passes, judged, exact=True)
    return Value(passes / judged, passes, judged, wilson_interval(passes, judged, confidence))


def _tied(top: Value, other: Value, confidence: float) -> bool:
    """``other`` is not lower than ``top`` beyond noise (module docstring)."""
    assert top.value is not None and other.value is not None
    if top.exact and other.exact:
        return other.value == top.value
    if top.exact or other.exact:
        estimate, fact = (other, top) if top.exact else (top, other)
        assert estimate.interval is not None and fact.value is not None
        return estimate.interval[0] - 1e-9 <= fact.value <= estimate.interval[1] + 1e-9
    return fisher_lower(top.passes, top.judged, other.passes, other.judged) >= 1 - confidence


def _best_rate(values: dict[Contender, Value], confidence: float) -> list[Contender]:
    rated = {c: v for c, v in values.items() if v.value is not None}
    if not rated:
        return []
    top = max(rated.values(), key=lambda v: (v.value or 0.0, v.exact, v.judged))
    return [c for c, v in rated.items() if v is top or _tied(top, v, confidence)]


def _best_cost(values: dict[Contender, Value], confidence: float) -> list[Contender]:
    costed = {c: v for c, v in values.items() if v.value is not None}
    if not costed:
        return []
    low = min(costed.values(), key=lambda v: v.value or 0.0)
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    assert low.value is not None
    return [c for c, v in costed.items()
            if (v.value or 0.0) - low.value <= z * math.hypot(v.se, low.se) + 1e-9]


def _row_cost(row: Row, key: str) -> tuple[float, float]:
    """A row's mean cost and the standard error of that mean (0 for one recorded run)."""
    spread = (row.cost or {}).get(key)
    if spread is not None:
        return spread.mean, spread.sd / math.sqrt(max(row.judged_runs, 1))
    if key == "tokens":
        return float((row.prompt_tokens or 0) + (row.completion_tokens or 0)), 0.0
    return float(row.metric(key) or 0), 0.0


def mean_cost(rows: list[Row], key: str) -> Value:
    """The mean cost per run over ``rows``, with its standard error."""
    costs = [_row_cost(row, key) for row in rows]
    mean = math.fsum(c for c, _ in costs) / len(costs)
    return Value(mean, se=math.sqrt(math.fsum(e * e for _, e in costs)) / len(costs))


def _confidence(rows: list[Row]) -> float:
    return next((r.confidence for r in rows if r.confidence is not None), DEFAULT_CONFIDENCE)


def _by_key(comparison: Comparison) -> dict[tuple[str, Contender], Row]:
    return {(r.scenario, r.contender): r for r in comparison.rows if r.agent_type is not None}


def _cost_value(rows: list[Row], key: str) -> Value:
    """The mean cost over ``rows`` if every one of them passed; else none, and why."""
    if all(row.succeeded for row in rows):
        return mean_cost(rows, key)
    return Value(None, note="failed" if all(row.has_metrics for row in rows) else "error")


def head_to_head(comparison: Comparison) -> HeadToHead:
    """The head-to-head table of ``comparison``, its pairs and records (module docstring)."""
    compared = comparison.compared()
    contenders, scenarios = compared.contenders, compared.scenarios
    rows = _by_key(comparison)
    confidences = {r.confidence for r in comparison.rows if r.confidence is not None}
    pooled_confidence = min(confidences) if confidences else DEFAULT_CONFIDENCE
    scenario_lines: list[Line] = []
    for scenario in scenarios:
        here = [rows[(scenario, c)] for c in contenders]
        confidence = _confidence(here)
        values = {c: _row_rate(row, confidence)
                  for c, row in zip(contenders, here, strict=True)}
        scenario_lines.append(Line(scenario, "pass_rate", values,
                                   _best_rate(values, confidence)))
    pooled = [rows[(s, c)] for s in scenarios for c in contenders]
    exact = not any(row.sampled for row in pooled)

    def pooled_line(label: str, over: list[str]) -> Line:
        values = {c: _rate(sum(rows[(s, c)].passed_runs for s in over),
                           sum(rows[(s, c)].judged_runs for s in over), pooled_confidence,
                           exact)
                  for c in contenders}
        return Line(label, "pass_rate", values, _best_rate(values, pooled_confidence))

    summarized = len(scenarios) > SCENARIO_LINES
    differ = [line.label for line in scenario_lines if _differ(line)] if summarized else []
    lines: list[Line] = scenario_lines
    if summarized:
        lines = [pooled_line(f"tag {tag} ({len(over)} scenarios)", over)
                 for tag, over in _by_tag(comparison, scenarios, rows, contenders)]
        listed = set(differ[:SCENARIO_LINES])
        lines += [line for line in scenario_lines if line.label in listed]
    if len(scenarios) > 1 or any(row.sampled for row in pooled):
        lines.append(pooled_line(f"All {len(scenarios)} compared scenarios", scenarios))
    for label, key in COST_LINES if scenarios else ():
        values = {c: _cost_value([rows[(s, c)] for s in scenarios], key) for c in contenders}
        kind: Literal["count", "seconds"] = "seconds" if key in SECONDS_METRICS else "count"
        lines.append(Line(label, kind, values, _best_cost(values, pooled_confidence)))
    return HeadToHead(contenders, scenarios, compared.left_out, lines, pooled_confidence,
                      pairs(comparison), records(comparison), summarized, differ)


def _differ(line: Line) -> bool:
    """The contenders' results on a scenario are not all the same."""
    return len({(v.value, v.passes, v.judged) for v in line.values.values()}) > 1


def _by_tag(comparison: Comparison, scenarios: list[str],
            rows: dict[tuple[str, Contender], Row],
            contenders: list[Contender]) -> list[tuple[str, list[str]]]:
    """The compared scenarios by tag (``untagged``: those without one), the tags with runs
    that did not pass first (most of them first), then by name."""
    tags: dict[str, list[str]] = {}
    for scenario in scenarios:
        for tag in rows[(scenario, contenders[0])].tags or ["untagged"]:
            tags.setdefault(tag, []).append(scenario)

    def order(tag: str) -> tuple[int, str]:
        return (-sum(not rows[(s, c)].succeeded for s in tags[tag] for c in contenders), tag)

    return [(tag, tags[tag]) for tag in sorted(tags, key=order)]


def _decide(scenario: str, pair: tuple[Contender, Contender], rows: tuple[Row, Row]) -> Decision:
    confidence = _confidence(list(rows))
    values = (_row_rate(rows[0], confidence), _row_rate(rows[1], confidence))
    best = _best_rate(dict(zip(pair, values, strict=True)), confidence)
    if len(best) == 1:
        return Decision(scenario, values, best[0])
    first, second = values
    if not best or first.value == second.value:
        return Decision(scenario, values, None)
    high, low = sorted(values, key=lambda v: v.value or 0.0, reverse=True)
    return Decision(scenario, values, None, thin=True, decide_at=samples_to_separate(
        (high.passes, high.judged), (low.passes, low.judged), confidence))


def _cost_comparison(label: str, key: str, pair: tuple[Contender, Contender],
                     rows: tuple[list[Row], list[Row]], confidence: float) -> CostComparison:
    values = dict(zip(pair, (mean_cost(each, key) for each in rows), strict=True))
    best = _best_cost(values, confidence)
    means = (values[pair[0]].value or 0.0, values[pair[1]].value or 0.0)
    return CostComparison(label, key, means, best[0] if len(best) == 1 else None)


def pairs(comparison: Comparison) -> list[Pair]:
    """Every two contenders that ran a scenario in common, compared on the scenarios both
    ran (module docstring), in contender order."""
    rows = _by_key(comparison)
    contenders = comparison.contenders
    found = []
    for index, first in enumerate(contenders):
        for second in contenders[index + 1:]:
            shared = [s for s in comparison.scenarios
                      if (s, first) in rows and (s, second) in rows]
            if not shared:
                continue
            pair = (first, second)
            decisions = [d for d in (_decide(s, pair, (rows[(s, first)], rows[(s, second)]))
                                     for s in shared) if d.better is not None or d.thin]
            both = [s for s in shared if rows[(s, first)].succeeded
                    and rows[(s, second)].succeeded]
            confidence = min((r.confidence for s in shared for r in (rows[(s, first)],
                              rows[(s, second)]) if r.confidence is not None),
                             default=DEFAULT_CONFIDENCE)
            costs = [_cost_comparison(label, key, pair,
                                      ([rows[(s, first)] for s in both],
                                       [rows[(s, second)] for s in both]), confidence)
                     for label, key in COST_LINES] if both else []
            found.append(Pair(first, second, shared,
                              (sum(rows[(s, first)].succeeded for s in shared),
                               sum(rows[(s, second)].succeeded for s in shared)),
                              decisions, both, costs))
    return found


def records(comparison: Comparison) -> list[Record]:
    """Each contender's record over every scenario it ran, in contender order."""
    found = []
    for contender in comparison.contenders:
        mine = [r for r in comparison.rows if r.agent_type is not None
                and r.contender == contender]
        found.append(Record(
            contender, [r.scenario for r in mine], [r.scenario for r in mine if r.succeeded],
            failed=[r for r in mine if not r.succeeded and r.result != "undecided"],
            undecided=[r for r in mine if r.result == "undecided"],
            flaky=[r for r in mine if r.succeeded and r.class_ == "flaky"]))
    return found
