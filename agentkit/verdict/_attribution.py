"""Whose failure a failed run is, where the trace shows it, first that holds:

* **infrastructure** -- the run stopped on an infrastructure error (a server error, a
  timeout, a rate limit) of the agent's model, a tool's service or a role's model;
* **judge** -- an LLM judge gave no verdict (its answer was not one), or a judge passed an
  answer that an objective check of the same run fails (a text match on an answer): the
  judge contradicts a check that cannot be talked round;
* **simulated_user** -- the simulated user broke its persona or goal: it wrote as the
  assistant ("How can I help you?", "As an AI..."), gave its instructions away (its goal
  word for word, "my goal is"), echoed the agent's answer back, or wrote nothing;
* **agent** -- otherwise: nothing shows that another component is at fault.

Failures of the existing kinds ``input`` (a malformed file) and ``recording`` (the recording
no longer fits) are those kinds, not attributed; nor is a run whose only failure is a snapshot
not there to compare with (not written yet, or from before an upgrade changed what traces
hold): it says nothing about any component."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from agentkit.verdict._run import Run
    from agentkit.verdict._verdict import Verdict

__all__ = ["Cause", "CAUSES", "Attribution", "attribute"]

Cause = Literal["agent", "simulated_user", "judge", "infrastructure"]
CAUSES: tuple[Cause, ...] = Cause.__args__  # type: ignore[attr-defined]

_AS_ASSISTANT = re.compile(
    r"^\s*assistant\s*:|\bhow (?:can|may) i (?:help|assist) you\b|\bas an ai\b|"
    r"\bi(?: am|'m) an? (?:ai|assistant|language model)\b|\bas a language model\b",
    re.IGNORECASE)
_GIVES_AWAY = re.compile(r"\bmy goal is\b|\bmy persona\b|\bi am (?:simulating|playing) "
                         r"(?:a|the) (?:user|customer)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Attribution:
    """The component a failed run's failure is attributed to, and the evidence."""

    cause: Cause
    why: str

    def line(self) -> str:
        return f"failure attributed to the {self.cause.replace('_', ' ')}: {self.why}"

    def to_dict(self) -> dict[str, str]:
        return {"cause": self.cause, "why": self.why}


def attribute(run: Run, verdict: Verdict) -> Attribution | None:
    """Whose failure the failed ``run`` is (module docstring); None for a run that passed or
    failed on bad input or a recording that no longer fits."""
    if verdict.passed or verdict.kind in ("input", "recording"):
        return None
    if not verdict.problems and verdict.snapshot in ("missing", "stale"):
        return None
    return (_stopped(run, verdict) or _judge(run) or _simulated_user(run)
            or Attribution("agent", "no other component is shown at fault"))


def _stopped(run: Run, verdict: Verdict) -> Attribution | None:
    for turn in run.trace.turns:
        for entry in turn.details.get("judged") or []:
            if entry.get("verdict") == "error":
                return Attribution("judge", f"the judge of {entry.get('at')} gave no verdict: "
                                            f"{_first(str(entry.get('error') or ''))}")
    error = next((t.error for t in run.trace.turns if t.error), None)
    if error is not None and error.startswith("EmptyMessageError"):
        return Attribution("simulated_user", f"it wrote nothing: {_first(error)}")
    if verdict.kind == "infrastructure" and error is not None:
        return Attribution("infrastructure", _first(error))
    return None


def _judge(run: Run) -> Attribution | None:
    answer_problems = [p for p in run.problems if p.kind == "answer"]
    passed = [j for j in run.judgements if j.passed and not j.at.startswith("expect.conversation")]
    if answer_problems and passed:
        return Attribution("judge", f"it passed {passed[0].at}, but an objective check of the "
                                    f"answer fails: {_first(answer_problems[0])}")
    return None


def _simulated_user(run: Run) -> Attribution | None:
    user = run.scenario.user
    if user is None:
        return None
    previous = None
    for number, turn in enumerate(run.trace.turns, start=1):
        if "simulated_user" in turn.details:
            said = turn.user.strip()
            where = f"turn {number}: {said[:80]!r}"
            if not said:
                return Attribution("simulated_user", f"turn {number}: it wrote nothing")
            if _AS_ASSISTANT.search(said):
                return Attribution("simulated_user", f"it broke its persona, writing as the "
                                                     f"assistant in {where}")
            goal = (user.goal or "").strip()
            if _GIVES_AWAY.search(said) or (len(goal) >= 12 and goal.lower() in said.lower()):
                return Attribution("simulated_user", f"it gave its instructions away in "
                                                     f"{where}")
            if previous and said.lower() == previous.strip().lower():
                return Attribution("simulated_user", f"it echoed the agent's answer in "
                                                     f"{where}")
        previous = turn.response
    return None


def _first(text: str) -> str:
    return text.splitlines()[0] if text else ""
