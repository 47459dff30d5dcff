"""``expect.never``: policy rules over what happened in a run, in the order it happened.

The events are the trace's: each turn's user message (before anything of its turn), each
tool call's start, and each call's successful result (its end, without an error). Calls of
one turn are ordered on the simulated clock, as ``after:`` orders them: a call is *before*
an event when the event had not happened when the call started (``ended_before``: a result
at the same simulated time counts by the order of the events). So the rules read the same
for every agent type, and for agents traced from the wire, whose calls are in the trace too.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from agentkit.core.fmt import seconds
from agentkit.scenario._model import CallPattern, Rule, RuleEvent, TextMatch
from agentkit.trace import ToolCallTrace, Trace

__all__ = ["rule_problems", "rule_calls"]

_SAME_TIME = 1e-9


@dataclass(frozen=True)
class _Call:
    turn: int
    call: ToolCallTrace

    def started_before(self, other: _Call) -> bool:
        """Whether this call started before ``other`` did (the same time: by event order)."""
        if self.turn != other.turn:
            return self.turn < other.turn
        if abs(self.call.started - other.call.started) > _SAME_TIME:
            return self.call.started < other.call.started
        return self.call.issued < other.call.issued

    def ended_before(self, other: _Call) -> bool:
        if self.turn != other.turn:
            return self.turn < other.turn
        return self.call.ended_before(other.call)

    def shown(self) -> str:
        args = json.dumps(self.call.args, sort_keys=True, ensure_ascii=False, default=str)
        who = f"{self.call.agent}: " if self.call.agent else ""
        return (f"{who}{self.call.name}({args}) (turn {self.turn + 1}, started at "
                f"{seconds(self.call.started)})")


def _arg_matches(wanted: Any, actual: Any) -> bool:
    if isinstance(wanted, dict) and len(wanted) == 1 and next(iter(wanted)) in (
            "equals", "contains", "regex"):
        text = actual if isinstance(actual, str) else json.dumps(actual, sort_keys=True)
        return TextMatch.model_validate(wanted).matches(text)
    return bool(actual == wanted)


def _is(pattern: CallPattern, call: ToolCallTrace, tags: Mapping[str, Collection[str]]) -> bool:
    if pattern.name is not None and call.name != pattern.name:
        return False
    if pattern.tag is not None and pattern.tag not in tags.get(call.name, ()):
        return False
    return all(name in call.args and _arg_matches(value, call.args[name])
               for name, value in (pattern.args or {}).items())


class _Run:
    """The events of a run, as the rules read them."""

    def __init__(self, trace: Trace, tags: Mapping[str, Collection[str]]) -> None:
        self.tags = tags
        self.users = [turn.user for turn in trace.turns]
        self.calls = [_Call(index, call) for index, turn in enumerate(trace.turns)
                      for call in sorted(turn.tool_calls, key=lambda c: (c.started, c.issued))]

    def matching(self, pattern: CallPattern) -> list[_Call]:
        return [c for c in self.calls if _is(pattern, c.call, self.tags)]

    def first_before(self, event: RuleEvent, call: _Call) -> str | None:
        """The first occurrence of ``event`` before ``call`` started, described (None: none)."""
        if event.user is not None:
            turn = next((index for index, text in enumerate(self.users[:call.turn + 1])
                         if event.user.matches(text)), None)
            return None if turn is None else f"turn {turn + 1}'s user message"
        if event.call is not None:
            earlier = next((c for c in self.matching(event.call)
                            if c is not call and c.started_before(call)), None)
        else:
            assert event.result is not None
            earlier = next((c for c in self.matching(event.result)
                            if not c.call.is_error and c.ended_before(call)), None)
        return None if earlier is None else earlier.shown()


def _broken(rule: Rule, run: _Run) -> list[str]:
    """Each call breaking ``rule``, with why."""
    calls = run.matching(rule.call)
    if rule.more_than is not None:
        return [f"{c.shown()} is call {number} of {rule.call.describe()}, more than "
                f"{rule.more_than}" for number, c in enumerate(calls, start=1)
                if number > rule.more_than]
    if rule.before is not None:
        event = rule.before
        return [f"{c.shown()} came before {event.describe()}" for c in calls
                if run.first_before(event, c) is None]
    if rule.after is not None:
        found = [(c, run.first_before(rule.after, c)) for c in calls]
        return [f"{c.shown()} came after {rule.after.describe()}: {earlier}"
                for c, earlier in found if earlier is not None]
    return [f"{c.shown()} was made" for c in calls]


def rule_problems(trace: Trace, rules: list[Rule],
                  tags: Mapping[str, Collection[str]]) -> list[str]:
    """One problem per rule the run broke, naming the rule and the (first) call that broke
    it; ``tags`` are the tags of each tool of the run, by name."""
    run = _Run(trace, tags)
    problems = []
    for index, rule in enumerate(rules):
        broken = _broken(rule, run)
        if not broken:
            continue
        name = f"rule {rule.name!r} (never {rule.describe()})" if rule.name else \
            f"rule never.{index} (never {rule.describe()})"
        more = f" (and {len(broken) - 1} more call{'s' if len(broken) > 2 else ''})" \
            if len(broken) > 1 else ""
        problems.append(f"{name} broken: {broken[0]}{more}")
    return problems


def rule_calls(trace: Trace, rule: Rule, tags: Mapping[str, Collection[str]]) -> int:
    """How many calls of ``trace`` the rule is about (its ``call`` pattern): a rule no run
    gives a call to judge is never exercised, whatever it forbids."""
    return len(_Run(trace, tags).matching(rule.call))
