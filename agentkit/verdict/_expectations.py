"""The expectations of a scenario checked on a trace; every failure says what differed, with
its kind."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agentkit.core.fmt import seconds
from agentkit.core.textdiff import short
from agentkit.scenario._arg_match import args_match, differing, shown
from agentkit.scenario._model import (
    Expect,
    HandoffsExpect,
    Judged,
    MessageExpect,
    SlowRegexError,
    TextMatch,
    ToolCallsExpect,
    ToolCallSpec,
    Turn,
)
from agentkit.trace._trace import ToolCallTrace, Trace
from agentkit.verdict._problems import Problem, ProblemKind
from agentkit.verdict._rules import rule_problems
from agentkit.verdict._state import state_problems

if TYPE_CHECKING:
    from agentkit.verdict._judgements import Judgement

__all__ = ["check_expectations", "expectation_results", "ExpectationResult"]



@dataclass(frozen=True)
class _Call:
    """What expectations compare: a tool call (or a hand-off, named ``a -> b``)."""

    name: str
    args: dict[str, Any]
    agent: str | None = None
    output: str = ""
    is_error: bool = False
    start: float = 0.0
    end: float = 0.0
    turn: int = 0
    source: ToolCallTrace | None = None

    @classmethod
    def of(cls, call: ToolCallTrace, turn: int) -> _Call:
        return cls(call.name, call.args, call.agent, call.output, call.is_error, call.started,
                   call.ended, turn, call)

    def ended_before(self, other: _Call) -> bool:
        """Whether this call had finished when ``other`` started (an earlier turn's had)."""
        if self.turn != other.turn:
            return self.turn < other.turn
        assert self.source is not None and other.source is not None
        return self.source.ended_before(other.source)


def _call(name: str, args: dict[str, Any], agent: str | None = None) -> str:
    text = f"{name}({shown(args)})"
    return f"{agent}: {text}" if agent else text


def _spec(spec: ToolCallSpec) -> str:
    return _call(spec.name, spec.args, spec.agent) + spec.describe_outcome()


def _made(call: _Call, output: bool = False) -> str:
    """A call as made: its error, or -- when an ``output:`` expectation asks about it -- its
    output."""
    if call.is_error:
        outcome = f" -> error {short(call.output, 80)!r}"
    else:
        outcome = f" -> output {short(call.output, 80)}" if output else ""
    return _call(call.name, call.args, call.agent) + outcome


def _outcome_matches(spec: ToolCallSpec, call: _Call) -> bool:
    if spec.error is True:
        return call.is_error
    if isinstance(spec.error, TextMatch):
        return call.is_error and spec.error.matches(call.output)
    if spec.error is False and call.is_error:
        return False
    return spec.output is None or (not call.is_error and spec.output.matches(call.output))


def _args_difference(mode: str, expected: dict[str, Any], actual: dict[str, Any]) -> str:
    """How ``actual`` arguments differ from ``expected`` under ``args: mode``."""
    if mode == "subset":
        parts = [f"`{key}` missing" if key not in actual
                 else f"`{key}` {json.dumps(actual[key], default=str)} "
                      f"(expected {shown(expected[key])})"
                 for key in differing(mode, expected, actual)]
        return f"the args differ (args: subset): {', '.join(parts)}"
    if not expected:
        return (f"the args differ (args: exact, and the entry gives none, so the call must "
                f"have none; it has {', '.join(f'`{key}`' for key in actual)}): give its args, "
                "or `args: subset` to check only those given")
    differ = [f"`{key}`" for key in differing(mode, expected, actual)]
    return f"the args differ (args: exact): {', '.join(differ)}"


def _outcome_difference(spec: ToolCallSpec, call: _Call) -> str:
    """How the call's outcome differs from the one ``spec`` expects."""
    if spec.error not in (None, False) and not call.is_error:
        return f"it did not fail (it returned {short(call.output, 80)})"
    if isinstance(spec.error, TextMatch):
        return f"its error {short(call.output, 80)} does not match {spec.error.describe()}"
    if call.is_error:
        return f"it failed ({short(call.output, 80)}), and no error is expected"
    assert spec.output is not None
    return f"its output {short(call.output, 80)} does not match {spec.output.describe()}"


def _difference(spec: ToolCallSpec, call: _Call, args_mode: str) -> str:
    """The parts of ``call`` that differ from ``spec``: name, agent, args (with the ``args``
    mode), outcome (error or output)."""
    if spec.name != call.name:
        return f"the name differs ({call.name}, expected {spec.name})"
    parts = []
    if spec.agent is not None and spec.agent != call.agent:
        parts.append(f"the agent differs ({call.agent}, expected {spec.agent})")
    if not args_match(args_mode, spec.args, call.args):
        parts.append(_args_difference(args_mode, spec.args, call.args))
    if not _outcome_matches(spec, call):
        parts.append(_outcome_difference(spec, call))
    return "; ".join(parts)


def _closest(spec: ToolCallSpec, actual: Sequence[_Call], args_mode: str) -> str:
    """Why no call matched ``spec``, told of the first made call of its name (and agent) that
    differs: what differs in it (empty: no such call was made; one that matches went to
    another entry)."""
    for call in actual:
        if call.name == spec.name and (spec.agent is None or spec.agent == call.agent):
            why = _difference(spec, call, args_mode)
            if why:
                return f"; the call of {spec.name} made differs: {why}"
    return ""


def _matches(spec: ToolCallSpec, call: _Call, args_mode: str) -> bool:
    return (spec.name == call.name and args_match(args_mode, spec.args, call.args)
            and (spec.agent is None or spec.agent == call.agent)
            and _outcome_matches(spec, call))


def _assign(expected: Sequence[ToolCallSpec], actual: Sequence[_Call],
            args_mode: str) -> dict[int, int]:
    """A maximum one-to-one matching of expected specs to actual calls (augmenting paths, so
    a loose spec never takes the only call a stricter one could match): expected index ->
    actual index, for the specs matched."""
    fits = [[j for j, call in enumerate(actual) if _matches(spec, call, args_mode)]
            for spec in expected]
    owner: dict[int, int] = {}  # actual idx -> expected idx

    def place(index: int, tried: set[int]) -> bool:
        for j in fits[index]:
            if j not in tried:
                tried.add(j)
                if j not in owner or place(owner[j], tried):
                    owner[j] = index
                    return True
        return False

    for index in range(len(expected)):
        place(index, set())
    return {index: j for j, index in owner.items()}


def _check_tool_calls(expect: ToolCallsExpect, actual: list[_Call], label: str | None = None,
                      explain: bool = True) -> tuple[list[str], dict[int, int]]:
    """The problems, and which actual call each matched spec is (expected idx -> actual idx);
    ``explain``: each says which part of the call differs (a hand-off is all name)."""
    label = label or f"tool calls ({expect.match}, args {expect.args})"
    outputs = any(spec.output is not None for spec in expect.calls)
    if expect.match == "strict":
        problems = []
        matched: dict[int, int] = {}
        for index in range(max(len(expect.calls), len(actual))):
            want = expect.calls[index] if index < len(expect.calls) else None
            got = actual[index] if index < len(actual) else None
            if want is not None and got is not None and _matches(want, got, expect.args):
                matched[index] = index
                continue
            wanted = _spec(want) if want else "no call"
            why = _strict_difference(want, got, actual, index, expect.args) if explain else ""
            # the output is shown where the difference does not already quote it
            gotten = _made(got, outputs and "its output" not in why) if got else "no call"
            problems.append(f"{label}: call {index + 1}: expected {wanted}, got {gotten}"
                            + (f": {why}" if why else ""))
            break
        return problems, matched
    matched = _assign(expect.calls, actual, expect.args)
    missing = [i for i in range(len(expect.calls)) if i not in matched]
    extra = [j for j in range(len(actual)) if j not in matched.values()]
    problems = []
    if expect.match in ("unordered", "subset") and missing:
        wanted = ", ".join(_spec(expect.calls[i]) for i in missing)
        why = "".join(_closest(expect.calls[i], actual, expect.args)
                      for i in missing) if explain else ""
        made = ", ".join(_made(c, outputs) for c in actual) or "none"  # only for a problem
        problems.append(f"{label}: expected {wanted} but it was not made (made: {made}){why}")
    if expect.match in ("unordered", "superset") and extra:
        unexpected = ", ".join(_made(actual[i], outputs) for i in extra)
        problems.append(f"{label}: unexpected {unexpected}")
    return problems, matched


def _strict_difference(want: ToolCallSpec | None, got: _Call | None, actual: Sequence[_Call],
                       index: int, args_mode: str) -> str:
    """What differs between the expected and the made call at ``index`` of a strict match:
    the order when the expected call was made elsewhere, else its parts."""
    if want is None or got is None:
        return ""
    elsewhere = next((j for j, call in enumerate(actual)
                      if j != index and _matches(want, call, args_mode)), None)
    if elsewhere is not None:
        return f"the order differs (it was made as call {elsewhere + 1})"
    return _difference(want, got, args_mode)


def _check_order(expect: ToolCallsExpect, actual: list[_Call],
                 matched: dict[int, int]) -> list[str]:
    """``after:``: each matched call started once the calls it must follow had finished."""
    problems = []
    for index, spec in enumerate(expect.calls):
        if index not in matched:
            continue
        call = actual[matched[index]]
        for earlier in spec.after:
            if earlier - 1 not in matched:
                continue  # that expected call was not made: reported as missing
            before = actual[matched[earlier - 1]]
            if not before.ended_before(call):
                problems.append(
                    f"tool call {_call(call.name, call.args, call.agent)} (expected call "
                    f"{index + 1}) started at {seconds(call.start)}, before expected call "
                    f"{earlier} {_call(before.name, before.args, before.agent)} finished at "
                    f"{seconds(before.end)} (after: {spec.after})")
                break
    return problems


def _check_tool_errors(trace: Trace, expect: Expect, expected: set[int]) -> list[str]:
    """Failed tool calls the scenario does not expect: not scheduled by the tool world
    (``failures:``), not matched by a ``tool_calls`` entry with ``error``, and more than
    ``tool_errors`` allows."""
    if expect.tool_errors == "allow":
        return []
    calls = trace.tool_calls
    unexpected = [(number, call) for number, call in enumerate(calls, start=1)
                  if call.is_error and not call.scheduled and number - 1 not in expected]
    allowed = expect.tool_errors or 0
    if len(unexpected) <= allowed:
        return []
    fix = ("expect it with `error: true` (or `error: {contains: ...}`) on its `expect."
           "tool_calls` entry, or allow failures with `expect.tool_errors: allow` (or a maximum)")
    limit = f" (tool_errors allows {allowed})" if allowed else ""
    problems = [f"tool call {number} {_call(call.name, call.args, call.agent)} failed "
                f"unexpectedly{limit}: {short(call.output, 200)}"
                + (f" (raised at {call.raised.at})" if call.raised is not None else "")
                for number, call in unexpected]
    problems[-1] += f"\n  fix: {fix}"
    return problems


def _check_handoffs(expect: HandoffsExpect, trace: Trace) -> list[str]:
    """Hand-offs are matched like tool calls named ``from -> to`` (their reasons ignored)."""
    actual = [_Call(f"{h['from']} -> {h['to']}", {}) for turn in trace.turns
              for h in turn.details.get("handoffs", [])]
    specs = [ToolCallSpec(name=f"{h.from_} -> {h.to}") for h in expect.calls]
    problems, _ = _check_tool_calls(ToolCallsExpect(match=expect.match, args="ignore",
                                                    calls=specs),
                                    actual, label=f"handoffs ({expect.match})", explain=False)
    return [p.replace("({})", "") for p in problems]


def _check_memory(expected: list[MessageExpect], memory: Sequence[dict[str, Any]]) -> list[str]:
    if len(expected) != len(memory):
        roles = " > ".join(m.get("role", "?") for m in memory)
        return [f"memory: expected {len(expected)} messages, got {len(memory)} ({roles})"]
    for index, (want, got) in enumerate(zip(expected, memory, strict=True)):
        content = got.get("content") or ""
        if got.get("role") != want.role:
            return [f"memory[{index}]: expected role {want.role}, got {got.get('role')}"]
        if want.content is not None and content != want.content:
            return [f"memory[{index}]: expected content {want.content!r}, got {content!r}"]
        if want.contains is not None and want.contains not in content:
            return [f"memory[{index}]: expected content containing {want.contains!r}, "
                    f"got {content!r}"]
    return []


@dataclass(frozen=True)
class ExpectationResult:
    """One expectation of a scenario, checked: its name (``answer``, ``tool_calls``,
    ``turn 2 answer``...) and what fell short (empty: it holds), each with its kind."""

    name: str
    problems: tuple[Problem, ...] = ()

    @property
    def passed(self) -> bool:
        return not self.problems


def check_expectations(trace: Trace, turns: Sequence[Turn], expect: Expect,
                       judgements: Sequence[Judgement] = (), *,
                       tags: Mapping[str, Collection[str]] | None = None,
                       state_checks: Mapping[str, Callable[[Any], Any]] | None = None,
                       ) -> list[Problem]:
    """All ways ``trace`` falls short of the expectations (empty: it passes), each with its
    kind; a regex that takes too long is one problem naming it (the expectations cannot all be
    checked). ``judgements`` are the LLM judges' verdicts of the run
    (``ScenarioResult.judgements``); ``tags`` the tags of the run's tools by name (policy
    rules select by them), ``state_checks`` the user's functions of ``expect.state``."""
    problems: list[Problem] = []

    def add(name: str, found: Sequence[str], kind: ProblemKind) -> None:
        if found:  # most expectations hold: no result object for them
            problems.extend([p if isinstance(p, Problem) else Problem(p, kind) for p in found])

    try:
        _check_each(trace, turns, expect, judgements, tags, state_checks, add)
    except SlowRegexError as exc:
        return [Problem(f"an expectation could not be checked: {exc}", "unchecked")]
    return problems


_EXPECTATION = re.compile(r"(?:agents\.[^.]+\.)?expect\.(answer|conversation)\.judge")


def _by_expectation(judgements: Sequence[Judgement]) -> dict[str, Judgement]:
    """The judgements of judged expectations by the expectation's name (``turns.N.answer``,
    ``answer``, ``conversation``), from the field of each rubric."""
    found: dict[str, Judgement] = {}
    for judgement in judgements:
        whole = _EXPECTATION.fullmatch(judgement.at)
        if whole is not None:
            found[whole.group(1)] = judgement
        elif judgement.at.startswith("turns.") and judgement.at.endswith(".answer.judge"):
            found[judgement.at.removesuffix(".judge")] = judgement
    return found


def _judged(what: str, judgement: Judgement | None) -> list[str]:
    """``what`` judged fail, with the judge's reason (and the votes when there are several);
    nothing when it was not judged (its turn did not run: reported as such) or passed."""
    if judgement is None or judgement.passed or judgement.error is not None:
        return []
    tally = f" ({judgement.tally()})" if judgement.tally() else ""
    return [f"{what} judged fail against the rubric {judgement.rubric!r}{tally}: "
            f"{judgement.reason}"]


def _check_budgets(expect: Expect, trace: Trace,
                   add: Callable[[str, Sequence[str], ProblemKind], None]) -> None:
    """``expect``'s budgets (steps, LLM calls, simulated wall time) against the trace's
    totals: those counted here, as :meth:`Trace.totals` counts them, without the rest (its
    critical path, tokens and roles)."""
    steps = llm_calls = 0
    wall_time = serial_time = 0.0
    for turn in trace.turns:
        steps += len(turn.steps)
        for step in turn.steps:
            llm_calls += len(step.llm_calls)
        wall_time += turn.wall_time
        serial_time += turn.serial_time
    wall_time, serial_time = round(wall_time, 6), round(serial_time, 6)
    if expect.max_steps is not None:
        add("max_steps", [f"{steps} steps, more than max_steps {expect.max_steps}"]
            if steps > expect.max_steps else [], "budget")
    if expect.max_llm_calls is not None:
        add("max_llm_calls", [f"{llm_calls} LLM calls, more than max_llm_calls "
                              f"{expect.max_llm_calls}"]
            if llm_calls > expect.max_llm_calls else [], "budget")
    if expect.max_wall_time is not None:
        add("max_wall_time", [
            f"simulated wall time {seconds(wall_time)} is over max_wall_time "
            f"{seconds(expect.max_wall_time)} (serial time {seconds(serial_time)})"]
            if wall_time > expect.max_wall_time + 1e-9 else [], "budget")


def expectation_results(trace: Trace, turns: Sequence[Turn], expect: Expect,
                        judgements: Sequence[Judgement] = (), *,
                        tags: Mapping[str, Collection[str]] | None = None,
                        state_checks: Mapping[str, Callable[[Any], Any]] | None = None,
                        ) -> list[ExpectationResult]:
    """Each expectation the scenario declares, checked on ``trace`` (and ``turns``, that the
    run's turns all ran and that no tool call failed unexpectedly, which always hold), in the
    order :func:`check_expectations` reports their problems; a judged one by its verdict in
    ``judgements``. A regex that takes too long raises
    :class:`~agentkit.scenario._model.SlowRegexError`."""
    results: list[ExpectationResult] = []

    def add(name: str, problems: Sequence[str], kind: ProblemKind) -> None:
        results.append(ExpectationResult(name, tuple(
            p if isinstance(p, Problem) else Problem(p, kind) for p in problems)
            if problems else ()))

    _check_each(trace, turns, expect, judgements, tags, state_checks, add)
    return results


def _check_each(trace: Trace, turns: Sequence[Turn], expect: Expect,
                judgements: Sequence[Judgement], tags: Mapping[str, Collection[str]] | None,
                state_checks: Mapping[str, Callable[[Any], Any]] | None,
                add: Callable[[str, Sequence[str], ProblemKind], None]) -> None:
    """Check each expectation in turn, handing ``add`` its name, what fell short (empty: it
    holds) and the kind of that (:func:`expectation_results`)."""
    judged = _by_expectation(judgements) if judgements else {}
    for number, (turn, record) in enumerate(zip(turns, trace.turns, strict=False), start=1):
        if isinstance(turn.answer, Judged):
            add(f"turn {number} answer", _judged(f"turn {number}: answer {record.response!r}",
                                                 judged.get(f"turns.{number - 1}.answer")),
                "judged")
        elif turn.answer is not None:
            add(f"turn {number} answer", [] if turn.answer.matches(record.response) else [
                f"turn {number}: answer {record.response!r} does not match "
                f"{turn.answer.describe()}"], "answer")
    last = trace.turns[-1] if trace.turns else None
    failed = next((t for t in trace.turns if t.error), None)
    if expect.error is not None:
        if last is None or last.error is None:
            add("error", [f"expected the run to fail with an error matching "
                          f"{expect.error.describe()}, but it succeeded"], "error")
        else:
            add("error", [] if expect.error.matches(last.error) else [
                f"error {last.error!r} does not match {expect.error.describe()}"], "error")
    ran: list[str] = []
    if expect.error is None and failed is not None:
        ran.append(f"turn {trace.turns.index(failed) + 1} failed: {failed.error}")
    if len(trace.turns) < len(turns) and failed is None:
        ran.append(f"only {len(trace.turns)} of {len(turns)} turns ran")
    add("turns", ran, "turns")
    answer = expect.answer
    if isinstance(answer, Judged) and last is not None:
        add("answer", _judged(f"final answer {last.response!r}", judged.get("answer")),
            "judged")
    elif answer is not None and not isinstance(answer, Judged) and last is not None:
        add("answer", [] if answer.matches(last.response) else [
            f"final answer {last.response!r} does not match {answer.describe()}"], "answer")
    if expect.conversation is not None:
        add("conversation", _judged("the conversation", judged.get("conversation")), "judged")
    expected_errors: set[int] = set()
    if expect.tool_calls is not None:
        actual = [_Call.of(c, turn) for turn, record in enumerate(trace.turns)
                  for c in record.tool_calls]
        found, matched = _check_tool_calls(expect.tool_calls, actual)
        order = [Problem(p, "order") for p in _check_order(expect.tool_calls, actual, matched)]
        add("tool_calls", [*found, *order], "tool_calls")
        expected_errors = {matched[i] for i, spec in enumerate(expect.tool_calls.calls)
                           if i in matched and spec.error not in (None, False)}
    add("tool_errors", _check_tool_errors(trace, expect, expected_errors), "tool_errors")
    if expect.handoffs is not None:
        add("handoffs", _check_handoffs(expect.handoffs, trace), "handoffs")
    if (expect.max_steps is not None or expect.max_llm_calls is not None
            or expect.max_wall_time is not None):  # only for a budget: most scenarios set none
        _check_budgets(expect, trace, add)
    if expect.memory is not None and last is not None:
        add("memory", _check_memory(expect.memory, last.memory), "memory")
    if expect.state is not None:
        add("state", state_problems(trace, expect.state, state_checks or {}), "state")
    if expect.never is not None:
        add("never", rule_problems(trace, expect.never, tags or {}), "rule")
