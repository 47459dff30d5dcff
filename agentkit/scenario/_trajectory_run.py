"""A trajectory in a run: the agent type's script rendered, the agent's calls matched to the
trajectory's, the expectations the trajectory implies checked.

Matching is one rule, used both for the outputs rendered scripts read while the run goes on
and for the expectations checked after it.

An observed call is trajectory call N when it has N's tool name and exactly N's arguments,
where a ``$M`` argument must equal call M's output (its value, or its text). Observed calls
are taken in the order they finished, each assigned to the first call (by number) that it
fits and that is not taken yet. A call that uses ``$M`` can only be made after call M
finished, so M is matched first.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from agentkit.core.errors import RecordingMismatchError
from agentkit.core.events import Event, ToolCallEndEvent, dispatcher
from agentkit.core.fmt import seconds
from agentkit.scenario._loader import located_error
from agentkit.scenario._model import Expect, Scenario
from agentkit.scenario._trajectory import (
    Ref,
    Trajectory,
    TrajectoryCall,
    TrajectoryError,
    TrajectoryStep,
    compile_trajectory,
)
from agentkit.trace._trace import ToolCallTrace, Trace

__all__ = ["ObservedCall", "TrajectoryOutputs", "TrajectoryDeviationError", "check_trajectory",
           "trajectory_outputs"]

_TOLERANCE = 1e-9


@dataclass(frozen=True, slots=True)
class ObservedCall:
    """A tool call the agent made: name, arguments, output (``content``, and ``value``: what a
    ``$N`` argument becomes) and when it ran (virtual seconds)."""

    name: str
    args: Mapping[str, Any]
    content: str
    value: Any
    start: float = 0.0
    end: float = 0.0
    source: ToolCallTrace | None = None
    """The traced call it was read from (after the run), which orders same-time calls."""

    def ended_before(self, other: ObservedCall) -> bool:
        """Whether this call had finished when ``other`` started."""
        if self.source is not None and other.source is not None:
            return self.source.ended_before(other.source)
        return other.start >= self.end - _TOLERANCE

    def describe(self) -> str:
        return f"{self.name}({json.dumps(dict(self.args), ensure_ascii=False, default=str)})"


class TrajectoryDeviationError(RecordingMismatchError, RuntimeError):
    """A rendered script needs the output of a trajectory call the agent has not made."""


def _output_value(output: Any) -> Any:
    """The value a ``$N`` argument takes (as LLMCompiler and CoA pass it): what the tool
    returned, or its text when that is not a JSON value (or the call failed)."""
    raw = getattr(output, "raw_output", None)
    if raw is None or getattr(output, "is_error", False):
        return str(output)
    try:
        return json.loads(json.dumps(raw))
    except (TypeError, ValueError):
        return str(output)


def _same(expected: Any, actual: Any, matched: Mapping[int, ObservedCall]) -> bool:
    if isinstance(expected, Ref):
        source = matched.get(expected.number)
        return source is not None and (actual == source.value or _text(actual) == source.content)
    if isinstance(expected, dict):
        return (isinstance(actual, dict) and expected.keys() == actual.keys()
                and all(_same(v, actual[k], matched) for k, v in expected.items()))
    if isinstance(expected, list):
        return (isinstance(actual, (list, tuple)) and len(expected) == len(actual)
                and all(_same(e, a, matched) for e, a in zip(expected, actual, strict=True)))
    return isinstance(expected, bool) == isinstance(actual, bool) and expected == actual


def _text(value: Any) -> str:
    return value if isinstance(value, str) else str(value)


def _fits(call: TrajectoryCall, observed: ObservedCall,
          matched: Mapping[int, ObservedCall]) -> bool:
    return call.name == observed.name and _same(dict(call.args), dict(observed.args), matched)


class TrajectoryOutputs:
    """The agent's calls matched to the trajectory's (module docstring): fed by the bus while
    a run goes on (:meth:`observing`), read by rendered script items (:class:`CallOutputs`)
    and by :func:`check_trajectory`."""

    def __init__(self, trajectory: Trajectory) -> None:
        self.trajectory = trajectory
        self.matched: dict[int, ObservedCall] = {}
        self.unexpected: list[ObservedCall] = []

    def add(self, observed: ObservedCall) -> None:
        """Match one finished call to the first trajectory call it fits, if any."""
        for call in self.trajectory.calls:
            if call.number not in self.matched and _fits(call, observed, self.matched):
                self.matched[call.number] = observed
                return
        self.unexpected.append(observed)

    @contextmanager
    def observing(self) -> Iterator[TrajectoryOutputs]:
        """Add every tool call that finishes inside this block."""
        with dispatcher.listen(self._on_event):
            yield self

    def _on_event(self, event: Event) -> None:
        if isinstance(event, ToolCallEndEvent):
            self.add(ObservedCall(event.tool_name, event.arguments, str(event.output),
                                  _output_value(event.output), event.time - event.latency,
                                  event.time))

    def made(self) -> str:
        """The calls made so far, for messages."""
        return ", ".join(c.describe() for c in [*self.matched.values(), *self.unexpected]) or "none"

    def _get(self, number: int) -> ObservedCall:
        found = self.matched.get(number)
        if found is None:
            raise TrajectoryDeviationError(
                f"the script needs the output of trajectory call {number} "
                f"{self.trajectory.call(number).describe()}, which the agent has not made "
                f"(made so far: {self.made()})")
        return found

    def value(self, number: int) -> Any:
        return self._get(number).value

    def text(self, number: int) -> str:
        return self._get(number).content


def _observed_in(trace: Trace) -> list[ObservedCall]:
    return [ObservedCall(c.name, c.args, c.output, c.output, c.started, c.ended, c)
            for c in trace.tool_calls]


def _check_calls(outputs: TrajectoryOutputs) -> list[str]:
    problems = []
    trajectory = outputs.trajectory
    for call in trajectory.calls:
        observed = outputs.matched.get(call.number)
        if observed is None:
            problems.append(f"trajectory call {call.number} {call.describe()} was not made "
                            f"(made: {outputs.made()})")
            continue
        early = [ref for ref in call.prerequisites if ref in outputs.matched
                 and not outputs.matched[ref].ended_before(observed)]
        if early:
            before = outputs.matched[early[0]]
            why = "whose output it uses" if early[0] in call.refs else "which it must follow"
            problems.append(f"trajectory call {call.number} {call.describe()} started at "
                            f"{seconds(observed.start)}, before call {early[0]} "
                            f"{before.describe()} ({why}) finished at {seconds(before.end)}")
    problems += [f"unexpected tool call {c.describe()} (not in the trajectory)"
                 for c in outputs.unexpected]
    return problems


def _check_answer(outputs: TrajectoryOutputs, response: str | None) -> list[str]:
    answer = outputs.trajectory.answer
    missing = [n for n in answer.refs if n not in outputs.matched]
    if missing:
        return [f"the trajectory's answer uses the output of call {missing[0]}, which was not "
                "made"]
    expected = answer.render(outputs)
    if response != expected:
        return [f"final answer {response!r} is not the trajectory's answer {expected!r}"]
    return []


def check_trajectory(trace: Trace, trajectory: Trajectory, expect: Expect) -> list[str]:
    """The expectations a trajectory implies, unless ``expect`` gives its own: every
    trajectory call made once (in any order, but each after the calls whose outputs it uses:
    planners run independent calls together) and no other call (unless ``expect.tool_calls``);
    the final answer equal to the trajectory's answer (unless ``expect.answer``)."""
    outputs = TrajectoryOutputs(trajectory)
    for observed in _observed_in(trace):
        outputs.add(observed)
    problems: list[str] = []
    if expect.tool_calls is None:
        problems += _check_calls(outputs)
    last = trace.turns[-1] if trace.turns else None
    if expect.answer is None and expect.error is None and last is not None and not last.error:
        problems += _check_answer(outputs, last.response)
    return problems



def trajectory_outputs(scenario: Scenario, tools: Sequence[Any],
                       steps: Sequence[TrajectoryStep] | None = None) -> TrajectoryOutputs | None:
    """The run's outputs of the scenario's trajectory, or of ``steps`` (``None`` without
    one)."""
    steps = scenario.trajectory if steps is None else steps
    if steps is None:
        return None
    try:
        return TrajectoryOutputs(compile_trajectory(steps, tools))
    except TrajectoryError as exc:
        raise located_error(scenario, exc.problems) from None
