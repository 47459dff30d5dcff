"""The parts of the scenario file model every other part builds on: the strict base model,
import refs and what an answer must be (:class:`TextMatch`, whose regex is stopped when it
backtracks without end, or a :class:`Judged` rubric)."""

from __future__ import annotations

import re
from typing import Annotated, Any

import regex as _regex
from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, field_validator, model_validator

from agentkit.core.errors import BadInputError

__all__ = ["REGEX_TIMEOUT", "SlowRegexError", "TextMatch", "Judged", "AnswerMatch", "ANSWER_TAGS"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


_PYTHON_COMMANDS = ("python", "python3")


def _import_ref(value: str | None) -> str | None:
    if value is not None and not re.fullmatch(r"[\w.]+:[\w.]+", value):
        raise ValueError(f"{value!r} is not an import ref; write `package.module:name`")
    return value


REGEX_TIMEOUT = 2.0


class SlowRegexError(BadInputError):
    """An expectation's regex took longer than :data:`REGEX_TIMEOUT` on a text (catastrophic
    backtracking, e.g. ``(a+)+$``): the scenario's pattern must be simplified."""


class TextMatch(_Strict):
    """Exactly one of equals / contains / regex. A regex runs on the ``regex`` engine, which
    can stop a match that takes too long (Python's ``re`` cannot), in its ``re``-compatible
    mode."""

    equals: str | None = None
    contains: str | None = None
    regex: str | None = None

    @model_validator(mode="after")
    def _one(self) -> TextMatch:
        given = [k for k in ("equals", "contains", "regex") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError("give exactly one of `equals`, `contains` or `regex`")
        if self.regex is not None:
            try:
                _regex.compile(self.regex, flags=_regex.VERSION0)
            except _regex.error as exc:
                raise ValueError(f"invalid regex {self.regex!r}: {exc}") from None
        return self

    def matches(self, text: str | None) -> bool:
        """Whether ``text`` matches; :class:`SlowRegexError` when the regex takes too long."""
        text = text or ""
        if self.equals is not None:
            return text == self.equals
        if self.contains is not None:
            return self.contains in text
        try:
            return _regex.search(self.regex or "", text, flags=_regex.VERSION0,
                                 timeout=REGEX_TIMEOUT) is not None
        except TimeoutError:
            raise SlowRegexError(
                f"regex {self.regex!r} took more than {REGEX_TIMEOUT:g} s on a "
                f"{len(text):,}-character text (nested repetition such as `(a+)+` backtracks "
                "without end); write it without a repetition inside a repetition") from None

    def describe(self) -> str:
        for key in ("equals", "contains", "regex"):
            value = getattr(self, key)
            if value is not None:
                return f"{key} {value!r}"
        return ""


class Judged(_Strict):
    """An open-ended expectation an LLM judge decides: ``{judge: "<rubric>"}``, optionally
    with ``min_score`` (0-1: a vote passes only with at least this score) and ``samples``
    (how many times each judge is asked; every answer votes, a majority passes, a tie fails).
    See :mod:`agentkit.harness._llm_judge`."""

    judge: str = Field(description="the rubric: what the answer (or conversation) must do")
    min_score: float | None = Field(default=None, ge=0, le=1, allow_inf_nan=False)
    samples: int | None = Field(default=None, ge=1, le=25,
                                description="answers asked of each judge (default: the "
                                            "judge's `samples`)")

    @field_validator("judge")
    @classmethod
    def _rubric(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("the rubric is empty: say what the answer must do, e.g. `judge: "
                             "\"states the refund amount and promises no date\"`")
        return value

    def describe(self) -> str:
        return f"judge {self.judge!r}"


def _answer_kind(value: Any) -> str | None:
    if isinstance(value, Judged) or (isinstance(value, dict) and "judge" in value):
        return "judged"
    if isinstance(value, (TextMatch, dict)):
        return "text-match"
    return None


AnswerMatch = Annotated[
    Annotated[TextMatch, Tag("text-match")] | Annotated[Judged, Tag("judged")],
    Discriminator(_answer_kind, custom_error_type="answer_match",
                  custom_error_message="an answer expectation is a text match (`equals`, "
                                       "`contains` or `regex`) or a rubric an LLM judge "
                                       "decides (`judge: \"...\"`)"),
]
"""What an answer must be: a :class:`TextMatch`, or a :class:`Judged` rubric."""
ANSWER_TAGS: dict[str, type[BaseModel]] = {"text-match": TextMatch, "judged": Judged}
