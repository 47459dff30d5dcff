"""The parts of the scenario file model every other part builds on: the strict base model,
import refs and what an answer must be (:class:`TextMatch`, whose regex is stopped when it
backtracks without end, or a :class:`Judged` rubric)."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

import regex as _regex
from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, field_validator, model_validator

from agentkit.core.errors import BadInputError
from agentkit.core.models import Seconds

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




class MCPServerSpec(_Strict):
    """An MCP server whose tools join the world: started over stdio (``command``, ``args``,
    ``env``, ``cwd``) or reached over streamable HTTP (``url``, ``headers``)."""

    name: str | None = Field(default=None, description="names its exchanges in the cassette "
                                                       "(default: the command's or host's name)")
    command: str | None = None
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict,
                                description="environment of the server (never recorded)")
    cwd: str | None = Field(default=None, description="the server's working folder, relative to "
                                                      "the scenario file (default: its folder)")
    url: str | None = None
    headers: dict[str, str] = Field(default_factory=dict,
                                    description="HTTP headers (never recorded)")
    timeout: Seconds = Field(default=60.0, gt=0, description="real seconds a live request may "
                                                            "take before the run stops (the "
                                                            "start: at least a minute)")
    lifetime: Literal["run", "session"] = Field(
        default="run", description="a live server lives for one run, or for the whole session")

    @model_validator(mode="after")
    def _stdio_or_http(self) -> MCPServerSpec:
        if (self.command is None) == (self.url is None):
            raise ValueError("give exactly one of `command` (a server started over stdio) or "
                             "`url` (a streamable HTTP server)")
        if self.url is not None:
            stdio = [k for k in ("args", "env", "cwd") if k in self.model_fields_set]
            if stdio:
                raise ValueError(f"`{stdio[0]}` is for a server started with `command`, not "
                                 "one reached at `url`")
            if not re.match(r"https?://", self.url):
                raise ValueError(f"`url` must be an http:// or https:// URL, got {self.url!r}")
        elif self.headers:
            raise ValueError("`headers` are for a server reached at `url`, not one started "
                             "with `command`")
        if self.command is not None and not self.command.strip():
            raise ValueError("`command` is empty")
        if self.name is not None and not re.fullmatch(r"[A-Za-z0-9_.-]+", self.name):
            raise ValueError(f"`name` {self.name!r}: use letters, digits, '_', '-' and '.'")
        return self

    def server_name(self) -> str:
        """``name``, or the command's file name (``python -m pkg.mod``: ``mod``), or the host."""
        if self.name is not None:
            return self.name
        if self.command is not None:
            base = re.split(r"[\\/]", self.command.strip())[-1]
            if base in _PYTHON_COMMANDS and len(self.args) >= 2 and self.args[0] == "-m":
                return self.args[1].rsplit(".", 1)[-1]
            return re.sub(r"[^A-Za-z0-9_.-]", "_", base) or "server"
        from urllib.parse import urlsplit

        return re.sub(r"[^A-Za-z0-9_.-]", "_", urlsplit(self.url or "").hostname or "server")
