"""Faults: what can go wrong with one call of a scenario tool, as small declarative values.

A tool's ``faults:`` schedule them by call number, beside (and extending) its ``failures:``::

    tools:
      - ref: shop.tools:lookup_order
        faults:
          - {call: 1, kind: timeout, after: 30}
          - {call: 2, kind: truncate, keep: 40}

A scenario's ``faults:`` expands it into one variant per tool, call and kind
(:mod:`agentkit.harness._faults`), each classified (:mod:`agentkit.verdict._outcomes`); its
``on_fault:`` is what a correct agent does after the faulted call, rendered into the scripts
of the agent types that render the trajectory.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from agentkit.core.sim import MAX_LATENCY
from agentkit.scenario._model_base import Judged
from agentkit.scenario._trajectory import TrajectoryStep

__all__ = ["DEFAULT_SAFE", "FAULT_CLASSES", "FAULT_KINDS", "MODEL_FAULT_KINDS", "OUTCOME_CLASSES",
           "FaultJudges", "Fault", "FaultClass", "FaultKind", "FaultPlan", "ModelFault", "ModelFaultKind",
           "OnFaultStep", "OutcomeClass", "SafeAnswer"]

FaultKind = Literal["error", "timeout", "rate_limit", "latency", "empty", "truncate",
                    "drop_fields", "corrupt_fields", "malformed_json", "wrong_type",
                    "disconnect"]
FAULT_KINDS: tuple[FaultKind, ...] = FaultKind.__args__  # type: ignore[attr-defined]


ModelFaultKind = Literal["rate_limit", "server", "timeout", "empty", "cut"]
MODEL_FAULT_KINDS: tuple[ModelFaultKind, ...] = ModelFaultKind.__args__  # type: ignore[attr-defined]

OutcomeClass = Literal["recovered", "failed_safely", "fabricated", "crashed"]
OUTCOME_CLASSES: tuple[OutcomeClass, ...] = OutcomeClass.__args__  # type: ignore[attr-defined]
"""The classes ``expect.on_fault`` can allow."""

FaultClass = Literal["recovered", "failed_safely", "fabricated", "crashed", "failed"]
"""A faulted run's class: one of :data:`OutcomeClass`, or ``failed`` -- the faults withheld
nothing (a late output) and the expectations fail: the agent's own failure, which fails the run
with its ordinary problems whatever ``on_fault`` allows."""
FAULT_CLASSES: tuple[FaultClass, ...] = FaultClass.__args__  # type: ignore[attr-defined]

_REFERENCE = re.compile(r"\$[0-9]|\{\$[0-9]")

_PARAMETERS: dict[str, tuple[str, ...]] = {
    "error": ("message",), "timeout": ("after",), "rate_limit": ("retry_after",),
    "latency": ("after",), "truncate": ("keep",), "drop_fields": ("fields",),
    "corrupt_fields": ("fields",), "disconnect": ("message",),
}
"""The parameters each kind takes besides ``call`` and ``kind``."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Fault(_Strict):
    """One fault on call ``call`` (1-based) of a tool: ``error`` (it raises ``message``),
    ``timeout`` (it fails after ``after`` simulated seconds), ``rate_limit`` (it fails asking
    to retry after ``retry_after`` s), ``latency`` (it answers ``after`` s late), ``empty``
    (an empty output), ``truncate`` (the first ``keep`` characters, or items of a list),
    ``drop_fields`` / ``corrupt_fields`` (``fields`` of a JSON object left out, or set to
    null; default: all but the first), ``malformed_json`` (JSON cut off mid-value),
    ``wrong_type`` (a value of another type), ``disconnect`` (the server dies mid-call).

    The tool runs first -- a fault is what came back, not whether the work was done -- so
    what the fault withheld is known (a tool's ``failures:`` are ``error`` faults that come
    before the tool runs)."""

    call: int = Field(ge=1, description="the tool's call (1-based) that has the fault")
    kind: FaultKind
    message: str | None = Field(default=None, description="error, disconnect: the error text")
    after: float | None = Field(default=None, gt=0, le=MAX_LATENCY, allow_inf_nan=False,
                                description="timeout, latency: simulated seconds")
    retry_after: float | None = Field(default=None, ge=0, le=MAX_LATENCY, allow_inf_nan=False,
                                      description="rate_limit: seconds the tool asks to wait")
    keep: int | None = Field(default=None, ge=0, description="truncate: characters (items of "
                                                              "a list) kept")
    fields: list[str] | None = Field(default=None, min_length=1, description=(
        "drop_fields, corrupt_fields: the JSON object's fields (default: all but the first)"))

    @model_validator(mode="after")
    def _parameters_of_the_kind(self) -> Fault:
        takes = _PARAMETERS.get(self.kind, ())
        for name in ("message", "after", "retry_after", "keep", "fields"):
            if name in self.model_fields_set and name not in takes:
                also = f" (it takes {', '.join(f'`{t}`' for t in takes)})" if takes else ""
                raise ValueError(f"`{name}` is not a parameter of a `{self.kind}` fault{also}")
        return self

    @property
    def label(self) -> str:
        """``timeout`` / ``truncate(keep=40)``: the kind with the parameters given."""
        given = [f"{name}={_shown(getattr(self, name))}" for name in _PARAMETERS.get(self.kind, ())
                 if name in self.model_fields_set]
        return f"{self.kind}({', '.join(given)})" if given else self.kind


def _shown(value: Any) -> str:
    if isinstance(value, list):
        return "+".join(map(str, value))
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


class ModelFault(_Strict):
    """One fault of an agent's model on its call ``call`` (1-based), before the scripted reply
    of that call: ``rate_limit`` (a 429, asking to retry after ``retry_after`` s), ``server``
    (a 500), ``timeout`` (a read timeout), ``empty`` (an empty reply), ``cut`` (the reply's
    connection closes mid-answer: a stream gets half of it, then a connection error; a call
    not streamed, the error). The model's client retries a 429, a 500 and a cut call not
    streamed (``max_retries`` of the agent type, the OpenAI backend's policy), each retry
    meeting the fault again for ``times`` attempts in all, then the scripted reply."""

    call: int = Field(ge=1, description="the model's call (1-based) that has the fault")
    kind: ModelFaultKind
    message: str | None = Field(default=None, description="the error text")
    retry_after: float | None = Field(default=None, ge=0, le=MAX_LATENCY, allow_inf_nan=False,
                                      description="rate_limit: seconds the server asks to wait")
    times: int = Field(default=1, ge=1, le=100, description=(
        "the attempts of the call in a row that meet the fault (a retry is an attempt); more "
        "than the agent type's `max_retries` and the call fails"))

    @model_validator(mode="after")
    def _parameters_of_the_kind(self) -> ModelFault:
        if self.retry_after is not None and self.kind != "rate_limit":
            raise ValueError(f"`retry_after` is not a parameter of a `{self.kind}` fault (it "
                             "goes with `rate_limit`)")
        if self.message is not None and self.kind in ("empty", "cut"):
            raise ValueError(f"`message` is not a parameter of an `{self.kind}` fault (its reply "
                             "is the scripted one, emptied or cut)")
        if self.times != 1 and self.kind == "empty":
            raise ValueError("`times` is not a parameter of an `empty` fault (an empty reply is "
                             "an answer: nothing retries it)")
        return self

    @property
    def label(self) -> str:
        """``rate_limit`` / ``server(times=4)``: the kind, with ``times`` when given."""
        return f"{self.kind}(times={self.times})" if "times" in self.model_fields_set else self.kind


class SafeAnswer(_Strict):
    """What an answer that tells the user the task could not be done matches (a regex,
    searched case-insensitively)."""

    regex: str = Field(description="searched in each answer, case-insensitively")

    @field_validator("regex")
    @classmethod
    def _compiles(cls, value: str) -> str:
        try:
            re.compile(value)
        except re.error as exc:
            raise ValueError(f"invalid regex {value!r}: {exc}") from None
        return value


DEFAULT_SAFE = SafeAnswer(regex=(
    r"\b(sorry|unable|could ?n[o']t|cannot|can't|failed|unavailable|not available|"
    r"try again|did not work|didn't work|went wrong|timed out|incomplete)\b"))
"""The default: an answer saying sorry, unable, could not, failed, try again..."""

class FaultJudges(_Strict):
    """An LLM judge of a faulted run's class, beside the patterns (``faults.judge``): each a
    rubric the scenario's judge decides on the final answer, asked only of a run that met a
    fault (its calls recorded with the run's, so a replay is offline)."""

    failed_safely: Judged | None = Field(default=None, description=(
        "what an answer telling the user it could not be done does; decides failed_safely "
        "instead of `safe`"))
    fabricated: Judged | None = Field(default=None, description=(
        "what an answer made up from a failed call does; met, the run fabricated (after the "
        "check of the withheld values, which needs no judge)"))


OnFaultStep = Literal["retry"] | list[TrajectoryStep]
"""What a correct agent does after the faulted call: ``retry`` (the call again, then the rest
of the trajectory) or trajectory steps (usually one ``answer`` telling the user)."""


class FaultPlan(_Strict):
    """A scenario's ``faults:``: the variants to expand it into (tools, kinds, a budget) and
    how scripted agent types go on after a fault."""

    kinds: list[FaultKind | ModelFaultKind] = Field(
        default_factory=lambda: list(dict.fromkeys([*FAULT_KINDS, *MODEL_FAULT_KINDS])),
        min_length=1, description="the fault kinds, of the tools and the model (default: all)")
    tools: list[str] | None = Field(default=None, min_length=1, description=(
        "the tools to fault, `model` for the agent's model (default: all and the model)"))
    model_kinds: list[ModelFaultKind] | None = Field(default=None, min_length=1, description=(
        "the model's fault kinds, of those `kinds` names (`timeout`, `rate_limit` and `empty` "
        "are kinds of a tool and of the model; default: all)"))
    max_variants: int | None = Field(default=None, ge=1, description=(
        "at most this many variants: a deterministic sample of them when there are more"))
    on_fault: dict[str, OnFaultStep] = Field(default_factory=dict, description=(
        "what a correct agent does after the faulted call, by kind (`default`: the others; "
        "without one, `retry`)"))
    safe: SafeAnswer = Field(default=DEFAULT_SAFE, description=(
        "what an answer that tells the user it could not be done matches"))
    judge: FaultJudges | None = Field(default=None, description=(
        "rubrics an LLM judge decides the classes by (failed_safely, fabricated)"))

    @field_validator("on_fault")
    @classmethod
    def _kinds(cls, value: dict[str, OnFaultStep]) -> dict[str, OnFaultStep]:
        for kind, then in value.items():
            if kind != "default" and kind not in FAULT_KINDS:
                raise ValueError(f"`{kind}` is not a fault kind (kinds: "
                                 f"{', '.join(FAULT_KINDS)}; or `default`)")
            if then == "retry":
                continue
            if not then or then[-1].answer is None:
                raise ValueError(f"`{kind}`: the steps after a fault end the turn: end them with "
                                 "an `answer`")
            if any(_REFERENCE.search(json.dumps(step.model_dump())) for step in then):
                raise ValueError(f"`{kind}`: steps after a fault cannot use `$N` or `{{$N}}` "
                                 "(their numbers depend on where the fault is)")
        return value

    def continuation(self, kind: str) -> OnFaultStep:
        """What a correct agent does after a fault of ``kind``."""
        return self.on_fault.get(kind, self.on_fault.get("default", "retry"))
