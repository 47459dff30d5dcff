"""The outcome class of a run that met a fault, decided deterministically, first that holds:

* **crashed** -- the run raised (a tool's error escaped the agent) or the agent stopped at one
  of its limits;
* **fabricated** -- an answer states a value only the faulted call could have given (a fact
  of the real output the agent did not get, seen nowhere else in the run);
* **recovered** -- the scenario's normal expectations hold, the faulted calls left out;
* **failed_safely** -- an answer tells the user it could not be done (the plan's ``safe``
  pattern);
* **failed** -- the faults withheld nothing (a ``latency`` fault delivers the real output,
  late) and the expectations fail: the agent's own failure, not the fault's; the run fails
  with its ordinary problems;
* **fabricated** -- otherwise: it answered as if the faulted call had worked.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from agentkit.scenario import DEFAULT_SAFE, FaultClass, SafeAnswer
from agentkit.verdict._checks import (
    Check,
    Conversation,
    Expectations,
    Leftovers,
    RecordingPrefix,
    Trajectory,
    run_checks,
)
from agentkit.verdict._problems import Problem

if TYPE_CHECKING:
    from agentkit.trace import ToolCallTrace, Trace
    from agentkit.verdict._run import Run

__all__ = ["FaultOutcome", "Injected", "classify", "injected_faults"]

_RECOVERY_CHECKS: tuple[Check, ...] = (RecordingPrefix(), Expectations(), Conversation(),
                                       Trajectory(), Leftovers())
"""The checks a recovered run meets (a tool's extra runs -- the faulted ones -- are fine)."""


class _Fault(Protocol):
    @property
    def kind(self) -> str: ...

    @property
    def label(self) -> str: ...


class Injected(Protocol):
    """A fault as it happened (:class:`agentkit.harness.InjectedFault`)."""

    @property
    def tool(self) -> str: ...

    @property
    def call(self) -> int: ...

    @property
    def fault(self) -> _Fault: ...

    @property
    def withheld(self) -> tuple[str, ...]: ...


@runtime_checkable
class _FaultedTool(Protocol):
    injected: Sequence[Injected]


@dataclass(frozen=True)
class FaultOutcome:
    """The class of a faulted run, why, and the faults (``lookup_order#1:timeout``);
    ``problems``: a ``failed`` run's unmet expectations."""

    outcome: FaultClass
    why: str
    faults: tuple[str, ...]
    problems: tuple[Problem, ...] = ()


def injected_faults(run: Run) -> list[Injected]:
    """The faults that happened in the run: its tools', tool by tool, then its models'."""
    return [*(fault for tool in run.tools if isinstance(tool, _FaultedTool)
              for fault in tool.injected), *run.model_faults]


def _named(fault: Injected) -> str:
    return f"{fault.tool}#{fault.call}:{fault.fault.label}"


def classify(run: Run, safe: SafeAnswer = DEFAULT_SAFE) -> FaultOutcome:
    """The outcome class of ``run``, which met the faults its tools injected (module
    docstring)."""
    faults = injected_faults(run)
    names = tuple(_named(fault) for fault in faults)
    trace = run.trace
    for number, turn in enumerate(trace.turns, start=1):
        if turn.error:
            return FaultOutcome("crashed", f"turn {number} raised {turn.error}", names)
        if turn.limit is not None:
            return FaultOutcome("crashed", f"the agent stopped at its limit {turn.limit} in "
                                           f"turn {number}", names)
    answers = "\n".join(turn.response or "" for turn in trace.turns)
    stated = _stated(trace, faults, answers, run)
    if stated is not None:
        return FaultOutcome("fabricated", stated, names)
    judged = {j.at: j for j in run.judgements if j.at.startswith("faults.judge.")}
    problems = run_checks(_without_faulted_calls(run, faults), _RECOVERY_CHECKS)
    if not problems:
        return FaultOutcome("recovered", "the expectations hold without the faulted "
                                         f"call{'s' if len(faults) != 1 else ''}", names)
    made_up = judged.get("faults.judge.fabricated")
    if made_up is not None and made_up.passed:
        return FaultOutcome("fabricated", f"the judge finds the answer made up "
                                          f"({made_up.rubric!r}): {made_up.reason}", names)
    telling = judged.get("faults.judge.failed_safely")
    if telling is not None:  # the judge decides, instead of the pattern
        if telling.passed:
            return FaultOutcome("failed_safely", f"the judge finds the answer tells the user "
                                                 f"({telling.rubric!r}): {telling.reason}",
                                names)
        told = None
    else:
        told = re.search(safe.regex, answers, flags=re.IGNORECASE)
    if told is not None:
        return FaultOutcome("failed_safely", f"the answer tells the user ({told.group(0)!r}): "
                                             f"{_sentence(answers, told.start())!r}", names)
    if not any(_withholds(fault) for fault in faults):
        return FaultOutcome("failed", f"{', '.join(names)} withheld nothing (the real output, "
                                      f"late) and the expectations fail: {problems[0]}", names,
                            tuple(problems))
    return FaultOutcome("fabricated", f"it answered as if {', '.join(names)} had worked, "
                                      f"without saying it could not be done: {problems[0]}",
                        names)


def _withholds(fault: Injected) -> bool:
    """Whether ``fault`` kept something from the agent: every fault but a late output
    (``latency``), which delivers the real one."""
    return fault.fault.kind != "latency"


def _stated(trace: Trace, faults: Sequence[Injected], answers: str, run: Run) -> str | None:
    """Why an answer states a withheld value, when one does."""
    seen = "\n".join([*(turn.user for turn in trace.turns),
                      *(call.output for call in trace.tool_calls),
                      *(message.content for message in run.scenario.history)]).lower()
    for fault in faults:
        for fact in fault.withheld:
            pattern = rf"(?<!\w){re.escape(fact)}(?!\w)"
            if re.search(pattern, answers, re.IGNORECASE) and fact.lower() not in seen:
                return (f"the answer states {fact!r}, which only the faulted call "
                        f"{_named(fault)} could have given")
    return None


def _sentence(text: str, at: int) -> str:
    start = max(text.rfind(".", 0, at), text.rfind("\n", 0, at)) + 1
    end = min((i for i in (text.find(".", at), text.find("\n", at)) if i >= 0),
              default=len(text))
    return text[start:end + 1].strip()


def _faulted(calls: Sequence[ToolCallTrace], faults: Sequence[Injected]) -> set[int]:
    """The ids (``id()``) of the traced calls that met a fault other than a late answer."""
    by_tool: dict[str, list[ToolCallTrace]] = {}
    for call in calls:
        by_tool.setdefault(call.name, []).append(call)
    found = set()
    for fault in faults:
        made = by_tool.get(fault.tool, [])
        if fault.fault.kind != "latency" and fault.call <= len(made):
            found.add(id(made[fault.call - 1]))
    return found


def _without_faulted_calls(run: Run, faults: Sequence[Injected]) -> Run:
    """``run`` as if the faulted calls had not been made (what recovering means)."""
    trace = copy.deepcopy(run.trace)
    ordered = sorted(((number, call.issued, index, call)
                      for number, turn in enumerate(trace.turns)
                      for index, call in enumerate(turn.tool_calls)),
                     key=lambda item: item[:3])
    drop = _faulted([call for *_, call in ordered], faults)
    for turn in trace.turns:
        for step in turn.steps:
            step.tool_calls = [call for call in step.tool_calls if id(call) not in drop]
    clone = copy.copy(run)
    setattr(clone, "trace", trace)  # noqa: B010 (a Run's trace is read-only to the checks)
    return clone
