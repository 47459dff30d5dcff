"""The LLM judges' verdicts on a run's judged expectations: data the verdict reads
(:mod:`agentkit.harness._llm_judge` asks the judges and files them)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["Vote", "Judgement"]


@dataclass(frozen=True)
class Vote:
    """One judge's answer to one judged expectation: its verdict, reason and score, and
    whether it passes (a ``pass`` verdict with at least the ``min_score``)."""

    judge: str
    verdict: Literal["pass", "fail"]
    reason: str
    score: float | None
    passed: bool

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"judge": self.judge, "verdict": self.verdict,
                                "reason": self.reason}
        if self.score is not None:
            data["score"] = self.score
        return data


@dataclass(frozen=True)
class Judgement:
    """The verdict on one judged expectation: ``at`` is the field of its rubric
    (``expect.answer.judge``, ``turns.0.answer.judge``, ``expect.conversation.judge``,
    ``user.goal``...), ``where`` its file and line, ``turn`` the turn (1-based) it is filed
    under. It passes when more votes pass than
    fail (a tie fails); ``error`` when a judge's answer was not a verdict."""

    at: str
    rubric: str
    turn: int
    votes: tuple[Vote, ...] = ()
    min_score: float | None = None
    where: str = field(default="", compare=False)
    error: str | None = None

    @property
    def passed(self) -> bool:
        yes = sum(vote.passed for vote in self.votes)
        return self.error is None and yes > len(self.votes) - yes

    @property
    def verdict(self) -> Literal["pass", "fail", "error"]:
        return "error" if self.error is not None else "pass" if self.passed else "fail"

    @property
    def split(self) -> bool:
        """Whether the votes disagree."""
        return len({vote.passed for vote in self.votes}) > 1

    @property
    def reason(self) -> str:
        """The reason of the first vote that agrees with the outcome."""
        return next((vote.reason for vote in self.votes if vote.passed == self.passed),
                    self.error or "")

    @property
    def score(self) -> float | None:
        """The mean score of the votes, when every vote gave one."""
        scores = [vote.score for vote in self.votes]
        if not scores or any(s is None for s in scores):
            return None
        return round(sum(s for s in scores if s is not None) / len(scores), 4)

    def tally(self) -> str:
        """``2 of 3 votes pass`` (empty for a single vote)."""
        if len(self.votes) < 2:
            return ""
        return f"{sum(v.passed for v in self.votes)} of {len(self.votes)} votes pass"

    def to_dict(self) -> dict[str, Any]:
        """What a trace keeps of it (the turn's ``judged`` entries)."""
        data: dict[str, Any] = {"at": self.at, "rubric": self.rubric, "verdict": self.verdict}
        if self.error is not None:
            data["error"] = self.error
            return data
        data["reason"] = self.reason
        if self.score is not None:
            data["score"] = self.score
        if self.min_score is not None:
            data["min_score"] = self.min_score
        if len(self.votes) == 1:
            data["judge"] = self.votes[0].judge
        else:
            data["votes"] = [vote.to_dict() for vote in self.votes]
            if self.split:
                data["split"] = True
        return data
