"""Judges that can fail: for each judged expectation, known-bad transcripts made offline from
the scenario's own run -- its answer with the numbers wrong, a refusal, no answer, a promise
nothing backs, an answer off the subject -- that the judge must fail. A judge that passes
one is reported as such, never silently trusted: a scripted judge answers what its script
says whatever it is shown, and a rubric too weak to tell a refusal from an answer passes
it."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentkit.harness import Case, RoleModels, ScenarioResult, run_case
from agentkit.quality._coverage import judged_fields
from agentkit.quality._mutants import corrupted
from agentkit.scenario import Scenario
from agentkit.tools import BaseTool
from agentkit.trace import Trace

__all__ = ["known_bad", "BadAnswer", "JudgeTrial", "judge_trials"]

_PROMISE = " I have also refunded you in full; the money arrives tomorrow."


def known_bad(answer: str) -> list[tuple[str, str]]:
    """The known-bad answers made from a good ``answer``, each with what is wrong with it:
    its numbers changed (when it has any), a refusal, no answer, a promise nothing in the run
    backs, an answer off the subject."""
    bad = [("wrong numbers", corrupted(answer))] if re.search(r"\d", answer) else []
    return [*bad, ("a refusal", "I'm sorry, I can't help with that."), ("no answer", ""),
            ("an invented promise", answer + _PROMISE),
            ("off the subject", "The weather today is sunny with a light breeze.")]


@dataclass(frozen=True)
class _AnswerChange:
    """A known-bad transcript as a change of a run (:class:`~agentkit.harness.RunChange`):
    turn ``turn``'s answer replaced before the judges read it."""

    turn: int
    text: str

    def tools(self, tools: Sequence[BaseTool]) -> list[BaseTool]:
        return list(tools)

    def answers(self, trace: Trace) -> None:
        if self.turn < len(trace.turns):
            trace.turns[self.turn].response = self.text


@dataclass(frozen=True)
class BadAnswer:
    """One known-bad transcript and what the judge said of it: ``fail`` (as it must),
    ``pass``, or ``unjudged`` (``reason``: why, e.g. a recorded judge has no answer for a
    transcript it never saw)."""

    label: str
    text: str
    verdict: str
    reason: str

    def to_dict(self) -> dict[str, str]:
        return {"label": self.label, "answer": self.text, "verdict": self.verdict,
                "reason": self.reason}


@dataclass
class JudgeTrial:
    """One judged expectation of a case, given its known-bad transcripts (``why``: it was
    not tried, and why)."""

    case: str
    at: str
    rubric: str
    bad: list[BadAnswer] = field(default_factory=list)
    why: str | None = None

    def passed(self) -> list[BadAnswer]:
        """The known-bad transcripts the judge passed."""
        return [b for b in self.bad if b.verdict == "pass"]

    def score(self) -> tuple[int, int]:
        """(known-bad transcripts failed, judged)."""
        judged = [b for b in self.bad if b.verdict != "unjudged"]
        return sum(b.verdict == "fail" for b in judged), len(judged)

    def to_dict(self) -> dict[str, Any]:
        failed, judged = self.score()
        return {"case": self.case, "at": self.at, "rubric": self.rubric, "failed": failed,
                "judged": judged, "known_bad": [b.to_dict() for b in self.bad],
                **({"left_out": self.why} if self.why is not None else {})}


def _turn_of(at: str, result: ScenarioResult) -> int:
    """The turn (0-based) whose answer the judged expectation at ``at`` reads."""
    found = re.fullmatch(r"turns\.(\d+)\.answer\.judge", at)
    return int(found.group(1)) if found else len(result.trace.turns) - 1


def _verdict(result: ScenarioResult | None, at: str) -> tuple[str, str]:
    judgement = next((j for j in result.judgements if j.at == at), None) if result else None
    if judgement is not None and judgement.error is None:
        return judgement.verdict, judgement.reason
    stopped = result.stopped_by if result is not None else None
    why = (judgement.error if judgement is not None else stopped) or "the judge was not asked"
    return "unjudged", str(why).splitlines()[0]


def judge_trials(scenarios: Iterable[Scenario], agent_types: Sequence[str] | None = None,
                 roles: RoleModels | None = None) -> list[JudgeTrial]:
    """Every judged expectation of the scenarios' cases (only ``agent_types``, if given),
    judged on the case's good run and then on each of its known-bad transcripts, offline:
    a scripted judge answers from its script, a recorded one from the recording (a
    transcript it never saw is ``unjudged``); ``roles`` are live models of the roles (a
    test's judge function). A simulated user's goal, judged while the conversation runs, is
    left out."""
    trials = []
    for scenario in scenarios:
        for name in scenario.agents:
            if agent_types is not None and name not in agent_types:
                continue
            fields = [at for at in judged_fields(scenario, name) if not at.startswith("user.")]
            if not fields:
                continue
            good = run_case(Case(scenario, name, samples=False, roles=roles))
            for at in fields:
                rubric = _rubric(good.result, at)
                trial = JudgeTrial(f"{scenario.name}[{name}]", at, rubric)
                trials.append(trial)
                result = good.result
                verdict, reason = _verdict(result, at)
                if result is None or verdict != "pass":
                    trial.why = (f"its judge does not pass the good run ({verdict}: {reason})"
                                 if result is not None else "the case does not run")
                    continue
                turn = _turn_of(at, result)
                answer = result.trace.turns[turn].response or ""
                for label, text in known_bad(answer):
                    bad = run_case(Case(scenario, name, samples=False, roles=roles,
                                        change=_AnswerChange(turn, text)))
                    verdict, reason = _verdict(bad.result, at)
                    trial.bad.append(BadAnswer(label, text, verdict, reason))
    return trials


def _rubric(result: ScenarioResult | None, at: str) -> str:
    judgement = next((j for j in result.judgements if j.at == at), None) if result else None
    return judgement.rubric if judgement is not None else ""
