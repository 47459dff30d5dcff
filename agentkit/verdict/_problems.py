"""What a check finds: a problem is its text (what every command prints) with a kind (what a
face tests), so no face reads a verdict by searching its wording."""

from __future__ import annotations

from typing import Literal, Self

__all__ = ["Problem", "ProblemKind", "PROBLEM_KINDS"]

ProblemKind = Literal[
    "recording_mismatch",  # the recording no longer fits the agent (a resumed prefix, a sample)
    "turns",  # a turn failed or did not run
    "error",  # the error the scenario expects
    "answer",  # a turn's or the final answer
    "judged",  # an LLM judge's verdict on a judged expectation
    "tool_calls",
    "order",  # ``after:`` between expected tool calls
    "tool_errors",
    "handoffs",
    "budget",  # max_steps, max_llm_calls, max_wall_time
    "memory",
    "state",  # expect.state: the scenario world after the run
    "rule",  # expect.never: a policy rule the run broke
    "conversation",  # the simulated user's goal
    "trajectory",
    "leftover",  # script replies, recorded exchanges or MCP exchanges not used
    "tool_accounting",  # tool runs the trace does not show, or a shadowed scenario tool
    "fault_outcome",  # a faulted run's outcome class is not one expect.on_fault allows
    "limit",  # the agent stopped at its own limit (told once, with the run's other problems)
    "unchecked",  # an expectation that could not be checked (a regex too slow)
    "pass_rate",  # a sampled case under its min_pass_rate
    "sample_failed",  # one failed sample of a sampled case below its min_pass_rate
]
PROBLEM_KINDS: tuple[ProblemKind, ...] = ProblemKind.__args__  # type: ignore[attr-defined]


class Problem(str):
    """One problem of a run: the text commands print, with its :data:`ProblemKind`. It is a
    ``str``, so ``result.problems`` reads as it always did."""

    kind: ProblemKind

    def __new__(cls, text: str, kind: ProblemKind) -> Self:
        problem = super().__new__(cls, text)
        problem.kind = kind
        return problem

    def __reduce__(self) -> tuple[type[Problem], tuple[str, ProblemKind]]:
        return Problem, (str(self), self.kind)
