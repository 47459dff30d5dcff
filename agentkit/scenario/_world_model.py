"""The world a scenario's tools act on and what is checked of it: ``world:`` (:class:`WorldSpec`),
end-state checks (``expect.state``: :class:`StateExpect`, :class:`StateMatch`) and policy rules
(``expect.never``: :class:`Rule`, :class:`RuleEvent`, :class:`CallPattern`). Part of the
scenario file model (:mod:`agentkit.scenario._model`)."""

from __future__ import annotations

import json
import re
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BeforeValidator, ConfigDict, Field, field_validator, model_validator

from agentkit.scenario._model_base import TextMatch, _import_ref, _Strict

__all__ = ["WorldSpec", "StateMatch", "StateExpect", "CallPattern", "RuleEvent", "Rule",
           "state_path"]


class WorldSpec(_Strict):
    """The state the scenario's tools act on: built fresh for every run by the factory ``ref``
    (called with ``data`` as keyword arguments), or ``object``, state the project keeps
    already (a module-level object: saved before each run, restored after it). Tools with a
    parameter named ``world`` receive it, hidden from the model; the trace records its state
    after each turn (:mod:`agentkit.harness._state`)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    ref: str | None = Field(default=None, description="`module:name` of a factory (a class or "
                                                      "function) building a fresh world")
    object_: str | None = Field(default=None, alias="object", description=(
        "`module:name` of an object the project keeps (saved before each run, restored "
        "after it)"))
    data: dict[str, Any] | None = Field(default=None, description="the initial data: keyword "
                                                                  "arguments of the factory")

    _refs = field_validator("ref", "object_")(_import_ref)

    @model_validator(mode="after")
    def _factory_or_object(self) -> WorldSpec:
        if (self.ref is None) == (self.object_ is None):
            raise ValueError("give a world exactly one of `ref` (a factory building a fresh "
                             "world per run) or `object` (state your project keeps, saved "
                             "and restored around each run)")
        if self.object_ is not None and self.data is not None:
            raise ValueError("`data` is what the factory `ref` is called with; an `object` "
                             "is used as it is: drop `data` or use `ref`")
        return self

    @property
    def source(self) -> str:
        """The ref the world comes from (its factory's or its object's)."""
        return self.ref or self.object_ or ""


_STATE_PATH = re.compile(r"[^.\s]+(\.[^.\s]+)*")
_MATCHES = ("equals", "contains", "regex", "unchanged")


def state_path(path: str) -> tuple[str | int, ...]:
    """``bookings.0.status`` as its parts (whole numbers -- ``-1`` too -- index lists)."""
    return tuple(int(part) if re.fullmatch(r"-?[0-9]+", part) else part
                 for part in path.split("."))


def _path_shape(path: str) -> str:
    if not _STATE_PATH.fullmatch(path):
        raise ValueError(f"path {path!r}: write keys and list indexes joined by dots "
                         "(`bookings.0.status`), without spaces or empty parts")
    return path


StatePath = Annotated[str, AfterValidator(_path_shape)]


class StateMatch(_Strict):
    """What the world's value at a path must be: exactly one of ``equals`` (the same data),
    ``contains`` (a text's part, a list's item, a mapping's items; a mapping in a list
    matches an item holding its keys), ``regex`` (searched in the text, or the JSON of other
    data) or ``unchanged: true`` (as at the start of the run)."""

    equals: Any = None
    contains: Any = None
    regex: str | None = None
    unchanged: Literal[True] | None = None

    @model_validator(mode="after")
    def _one(self) -> StateMatch:
        given = [k for k in _MATCHES if k in self.model_fields_set]
        if len(given) != 1:
            raise ValueError("give exactly one of `equals`, `contains`, `regex` or "
                             "`unchanged: true`")
        if self.regex is not None:
            TextMatch(regex=self.regex)  # the same check: a pattern that compiles
        return self

    def describe(self) -> str:
        key = next(k for k in _MATCHES if k in self.model_fields_set)
        if key == "unchanged":
            return "unchanged"
        return f"{key} {json.dumps(getattr(self, key), sort_keys=True, ensure_ascii=False)}"


class StateExpect(_Strict):
    """What the world holds after the run (or after turn ``turn``): values at ``paths``, the
    whole world ``unchanged``, and a ``check`` function of yours for anything else (it gets
    the world's state as data and returns nothing, or the problems it found)."""

    paths: dict[StatePath, StateMatch] = Field(default_factory=dict, description=(
        "dotted paths into the world's state (`bookings.0.status`) and what each must be"))
    unchanged: bool = Field(default=False, description="the whole world is as at the start")
    check: str | None = Field(default=None, description="`module:function` given the state, "
                                                        "returning its problems")
    turn: int | None = Field(default=None, ge=1, description="the turn after which the state "
                                                             "is read (default: the last)")

    _check_ref = field_validator("check")(_import_ref)

    @model_validator(mode="after")
    def _something(self) -> StateExpect:
        if not self.paths and not self.unchanged and self.check is None:
            raise ValueError("say what the world must hold: `paths`, `unchanged: true` or a "
                             "`check` function")
        return self


def _call_shorthand(value: Any) -> Any:
    return {"name": value} if isinstance(value, str) else value


class CallPattern(_Strict):
    """Which tool calls a rule is about: by ``name``, by a ``tag`` of the tool (``tags:`` in
    ``tools``), by ``args`` (each a value the argument equals, or a text match on it:
    ``{regex: ...}``) -- together, all must hold. A string is a name."""

    name: str | None = None
    tag: str | None = None
    args: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _something(self) -> CallPattern:
        if self.name is None and self.tag is None and not self.args:
            raise ValueError("say which calls: give `name`, `tag` or `args`")
        return self

    def describe(self) -> str:
        what = self.name or "a call"
        if self.tag is not None:
            what = f"{what} tagged {self.tag}" if self.name else f"a `{self.tag}` call"
        if self.args:
            what += f" with {json.dumps(self.args, sort_keys=True, ensure_ascii=False)}"
        return what


CallSelector = Annotated[CallPattern, BeforeValidator(_call_shorthand)]


class RuleEvent(_Strict):
    """What a rule orders calls against: a ``call`` (when it starts), its successful
    ``result`` (when it ends without an error), or a ``user`` message matching a text. A
    string is a call's name."""

    call: CallSelector | None = None
    result: CallSelector | None = None
    user: TextMatch | None = None

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, value: Any) -> Any:
        return {"call": value} if isinstance(value, str) else value

    @model_validator(mode="after")
    def _one(self) -> RuleEvent:
        given = [k for k in ("call", "result", "user") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError("give exactly one of `call` (a call starts), `result` (a call "
                             "succeeds) or `user` (the user says something)")
        return self

    def describe(self) -> str:
        if self.call is not None:
            return f"a call of {self.call.describe()}"
        if self.result is not None:
            return f"a successful result of {self.result.describe()}"
        assert self.user is not None
        return f"the user said something matching {self.user.describe()}"


class Rule(_Strict):
    """A policy the run must never break: calls matching ``call`` at all, or ``before`` /
    ``after`` an event, or ``more_than`` N times; checked on the simulated clock
    (:mod:`agentkit.verdict._rules`)."""

    name: str | None = Field(default=None, description="what the rule is called in messages")
    call: CallSelector
    before: RuleEvent | None = Field(default=None, description="a call before this happened")
    after: RuleEvent | None = Field(default=None, description="a call after this happened")
    more_than: int | None = Field(default=None, ge=0, description="more calls than this")

    @model_validator(mode="after")
    def _one_condition(self) -> Rule:
        given = [k for k in ("before", "after", "more_than") if getattr(self, k) is not None]
        if len(given) > 1:
            raise ValueError(f"give at most one of `before`, `after` or `more_than` (got "
                             f"{' and '.join(given)}); write two rules for two conditions")
        return self

    def describe(self) -> str:
        """``pay before the user said ...``: what the rule forbids."""
        what = self.call.describe()
        if self.before is not None:
            return f"{what} before {self.before.describe()}"
        if self.after is not None:
            return f"{what} after {self.after.describe()}"
        if self.more_than is not None:
            return f"{what} more than {self.more_than} time{'' if self.more_than == 1 else 's'}"
        return f"{what} at all"
