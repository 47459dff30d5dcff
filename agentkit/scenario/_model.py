"""The scenario file model (YAML, ``format: 1``), validated with pydantic.

A scenario is user turns + a tool world + expectations, run under one or more agent types,
each with its own LLM script or recording. ``docs/reference/scenario-format.md`` describes the
format.
"""

from __future__ import annotations

import difflib
import operator
import os
import re
import weakref
from pathlib import Path
from typing import Annotated, Any, Literal, Protocol

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    PrivateAttr,
    Tag,
    ValidationInfo,
    field_validator,
    model_validator,
)

from agentkit.core.models import Seconds
from agentkit.core.sim import MAX_LATENCY
from agentkit.llms.retries import DEFAULT_MAX_RETRIES
from agentkit.scenario._arg_match import OneOf, with_matchers
from agentkit.scenario._faults import Fault, FaultPlan, ModelFault, OutcomeClass
from agentkit.scenario._model_base import (
    ANSWER_TAGS,
    REGEX_TIMEOUT,
    AnswerMatch,
    Judged,
    MCPServerSpec,
    SlowRegexError,
    TextMatch,
    _import_ref,
    _Strict,
)
from agentkit.scenario._thresholds import Threshold, Thresholds
from agentkit.scenario._trajectory import CallNumbers, TrajectoryStep
from agentkit.scenario._world_model import (
    CallPattern,
    Rule,
    RuleEvent,
    StateExpect,
    StateMatch,
    WorldSpec,
    state_path,
)

__all__ = [  # with the names of _model_base and _world_model, which it is made of
    "SCENARIO_FORMAT",
    "REGEX_TIMEOUT",
    "SlowRegexError",
    "ANSWER_TAGS",
    "state_path",
    "MCPServerSpec",
    "ToolSpec",
    "OneOf",
    "Turn",
    "TextMatch",
    "Judged",
    "AnswerMatch",
    "JudgeSpec",
    "SimulatedUser",
    "ToolCallSpec",
    "ToolCallsExpect",
    "MessageExpect",
    "Expect",
    "ErrorItem",
    "ScriptReply",
    "LLMSource",
    "TeamAgent",
    "ResumeFrom",
    "HandoffSpec",
    "HandoffsExpect",
    "AgentSpec",
    "HistoryMessage",
    "WorldSpec",
    "StateMatch",
    "StateExpect",
    "CallPattern",
    "RuleEvent",
    "Rule",
    "Threshold",
    "Thresholds",
    "Scenario",
    "run_memo",
    "given_agents",
]

SCENARIO_FORMAT = 1


class ToolSpec(_Strict):
    """A tool of the scenario's world -- an import ref, or the tools of an MCP server (all, or
    those named in ``only``) -- plus simulated latency and failures (an MCP entry's schedule
    applies to each of its tools)."""

    ref: str | None = Field(default=None,
                            description="`module:attribute` of a function, a tool, or a tool "
                                        "class (instantiated with no arguments)")
    mcp: MCPServerSpec | None = Field(default=None, description="an MCP server whose tools "
                                                                "join the world")
    only: list[str] | None = Field(default=None, min_length=1,
                                   description="the MCP server's tools to use (default: all)")
    name: str | None = None
    description: str | None = None
    parameters: dict[str, Any] | None = Field(default=None, description=(
        "the tool's arguments as a JSON schema (`type: object`), told to the model instead of "
        "the schema of the ref's signature (a ref taking `**arguments`)"))
    return_direct: bool = False
    latency: Seconds = 0.0
    failures: list[int] = Field(default_factory=list,
                                description="1-based numbers of the calls that fail")
    error: str = "simulated tool failure"
    faults: list[Fault] = Field(default_factory=list, description=(
        "faults of its calls by number: a timeout, a truncated or corrupted output... "
        "(agentkit.scenario._faults)"))
    tags: list[str] = Field(default_factory=list, description=(
        "words policy rules select the tool by (`expect.never: [{call: {tag: mutating}}]`)"))

    _ref_shape = field_validator("ref")(_import_ref)

    @field_validator("tags")
    @classmethod
    def _tag_words(cls, value: list[str]) -> list[str]:
        for tag in value:
            if not re.fullmatch(r"[A-Za-z0-9_.-]+", tag):
                raise ValueError(f"tag {tag!r}: use letters, digits, '_', '-' and '.'")
        return value

    @field_validator("parameters")
    @classmethod
    def _object_schema(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        if value is not None and (value.get("type") != "object"
                                  or not isinstance(value.get("properties", {}), dict)):
            raise ValueError("`parameters` is the JSON schema of the tool's arguments: a "
                             "mapping with `type: object` and its `properties`")
        return value

    @field_validator("only")
    @classmethod
    def _unique(cls, value: list[str] | None) -> list[str] | None:
        twice = sorted({name for name in value or () if (value or []).count(name) > 1})
        if twice:
            raise ValueError(f"`only` names {', '.join(twice)} more than once")
        return value

    @model_validator(mode="after")
    def _ref_or_mcp(self) -> ToolSpec:
        if (self.ref is None) == (self.mcp is None):
            raise ValueError("give a tool exactly one of `ref` (a function or tool) or `mcp` "
                             "(an MCP server's tools)")
        if self.mcp is not None and self.parameters is not None:
            raise ValueError("`parameters` gives a `ref` tool its JSON schema; an MCP server's "
                             "tools keep the schemas the server lists")
        if self.ref is not None and self.only is not None:
            raise ValueError("`only` picks an MCP server's tools; it goes with `mcp`, not `ref`")
        if self.mcp is not None and (self.name or self.description) and (
                self.only is None or len(self.only) != 1):
            given = "name" if self.name else "description"
            raise ValueError(f"`{given}` renames one tool: with `mcp`, give it with `only: "
                             "[<the tool>]` (one entry per tool to rename)")
        return self

    @field_validator("failures")
    @classmethod
    def _positive(cls, value: list[int]) -> list[int]:
        bad = [n for n in value if n < 1]
        if bad:
            raise ValueError(f"call numbers start at 1 (the first call), got {bad[0]}")
        return value

    @field_validator("faults")
    @classmethod
    def _one_fault_per_call(cls, value: list[Fault], info: ValidationInfo) -> list[Fault]:
        # `failures` is validated first: an error fault of each of its calls
        taken = set(info.data.get("failures") or ())
        for fault in value:
            if fault.call in taken:
                raise ValueError(f"call {fault.call} has two faults (in `failures` or "
                                 "`faults`); give each call one")
            taken.add(fault.call)
        return value


#: Real seconds one expectation's regex may take on one text: far beyond any sane pattern
#: (microseconds), far below a hang. ``(a+)+$`` on 30 ``a``s and a ``b`` takes minutes.
class Turn(_Strict):
    user: str
    stream: bool = False
    answer: AnswerMatch | None = Field(default=None, description="expected answer of this turn")
    images: list[str] = Field(default_factory=list,
                              description="image files sent with this turn (paths relative to "
                                          "the scenario file; agent types that take images)")
    human: list[str] = Field(default_factory=list,
                             description="a workflow's human answers to its input requests in "
                                         "this turn, in order")


class ToolCallSpec(_Strict):
    """One expected tool call: its name and arguments (as ``args`` mode says), and optionally
    the agent that makes it, whether it fails (``error``), what it returns (``output``) and
    which earlier expected calls must have finished before it starts (``after``)."""

    name: str
    args: dict[str, Any] = Field(default_factory=dict, description=(
        "the arguments; a value may be a matcher `{one_of: [...], optional: true, loose: "
        "true}` (agentkit.scenario._arg_match)"))
    agent: str | None = Field(default=None, description="the team agent that must make the call")
    error: bool | TextMatch | None = Field(
        default=None, description="true: the call fails (its error is expected); or what its "
                                  "error text must match; false: it must not fail")
    output: TextMatch | None = Field(default=None, description="what a successful call returns")
    after: CallNumbers = Field(default_factory=list, description=(
        "numbers (1-based, in this list) of the calls that must have finished before this "
        "one starts, on the simulated clock"))

    @field_validator("args", mode="before")
    @classmethod
    def _matchers(cls, value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        return {key: with_matchers(item, f"argument `{key}`") for key, item in value.items()}

    @field_validator("error", mode="before")
    @classmethod
    def _flag_or_match(cls, value: Any) -> Any:
        if value is None or isinstance(value, (bool, dict, TextMatch)):
            return value
        close = difflib.get_close_matches(str(value).lower(), ["true", "false"], n=1)
        hint = f"; did you mean `{close[0]}`?" if close else ""
        raise ValueError(f"expected `true`, `false` or what the error text must match "
                         f"(`{{contains: ...}}`, `{{equals: ...}}`, `{{regex: ...}}`), got "
                         f"{value!r}{hint}")

    @field_validator("output")
    @classmethod
    def _output_or_error(cls, value: TextMatch | None, info: ValidationInfo) -> TextMatch | None:
        # a field validator (`error` is validated before `output`), so the problem is
        # reported at `output`, the line to change
        if value is not None and info.data.get("error") not in (None, False):
            raise ValueError("`output` is what a successful call returns; a call expected to "
                             "fail (`error`) has none: give one of them")
        return value

    def describe_outcome(self) -> str:
        """`` -> error`` / `` -> output contains 'x'`` (empty when neither is expected)."""
        if self.error is True:
            return " -> error"
        if isinstance(self.error, TextMatch):
            return f" -> error {self.error.describe()}"
        if self.output is not None:
            return f" -> output {self.output.describe()}"
        return ""


class HandoffSpec(_Strict):
    """One hand-off between team agents: ``{from: a, to: b}``."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    from_: str = Field(alias="from")
    to: str


class HandoffsExpect(_Strict):
    """The sequence of hand-offs, matched like tool calls."""

    match: Literal["strict", "unordered", "subset", "superset"] = "strict"
    calls: list[HandoffSpec]


class ToolCallsExpect(_Strict):
    match: Literal["strict", "unordered", "subset", "superset"] = "strict"
    args: Literal["exact", "ignore", "subset"] = "exact"
    calls: list[ToolCallSpec]


class MessageExpect(_Strict):
    role: Literal["system", "user", "assistant", "tool"]
    content: str | None = None
    contains: str | None = None


class Expect(_Strict):
    """What a run must do. Tool calls that fail are unexpected unless something here (or the
    tool's failure schedule) expects them: see :func:`agentkit.scenario.check.check_expectations`."""

    answer: AnswerMatch | None = Field(default=None, description="the final turn's answer")
    conversation: Judged | None = Field(
        default=None, description="what an LLM judge must find of the whole conversation")
    error: TextMatch | None = Field(default=None, description="the final turn fails with this error")
    tool_calls: ToolCallsExpect | None = None
    handoffs: HandoffsExpect | None = None
    max_steps: int | None = Field(default=None, ge=0)
    max_llm_calls: int | None = Field(default=None, ge=0)
    max_wall_time: Seconds | None = None
    memory: list[MessageExpect] | None = Field(default=None, description="memory after the last turn")
    tool_errors: Literal["allow"] | int | None = Field(
        default=None, description="failed tool calls the run may make besides those expected "
                                  "per call: `allow` (any number) or a maximum (default 0)")
    state: StateExpect | None = Field(default=None, description="what the scenario's `world` "
                                                                "holds after the run")
    never: list[Rule] | None = Field(default=None, description="policy rules: calls the run "
                                                               "must never make")
    on_fault: list[OutcomeClass] | None = Field(default=None, min_length=1, description=(
        "a run with a fault is classified (recovered, failed_safely, fabricated, crashed) and "
        "must end in one of these classes instead of meeting the expectations above"))

    @field_validator("tool_errors", mode="before")
    @classmethod
    def _allow_or_count(cls, value: Any) -> Any:
        if value is None or value == "allow" or (
                isinstance(value, int) and not isinstance(value, bool) and value >= 0):
            return value
        close = difflib.get_close_matches(str(value), ["allow"], n=1)
        hint = "; did you mean `allow`?" if close else ""
        raise ValueError(f"expected `allow` or a whole number >= 0, got {value!r}{hint}")

    def merged(self, override: Expect | None) -> Expect:
        """These expectations with the fields ``override`` sets taken from it (an agent
        type's own ``expect``). Worked out once per pair of objects (every stage of a run
        asks): like the expectations it comes from, read-only."""
        if override is None:
            return self
        key = (id(self), id(override))
        kept = _MERGED.get(key)
        if kept is not None and kept[0]() is self and kept[1]() is override:
            return kept[2]
        merged = self.model_copy(update={k: getattr(override, k)
                                         for k in override.model_fields_set})
        if key not in _MERGED:  # forgotten with the override (an id is then reused)
            weakref.finalize(override, _MERGED.pop, key, None)
        _MERGED[key] = (weakref.ref(self), weakref.ref(override), merged)
        return merged


_MERGED: dict[tuple[int, int], tuple[weakref.ReferenceType[Expect],
                                      weakref.ReferenceType[Expect], Expect]] = {}
""":meth:`Expect.merged`'s results by the ids of the two objects merged (checked against
them: an id outlives its object only until the entry goes with the override)."""


class _ToolCallItem(_Strict):
    name: str
    args: dict[str, Any] | None = None
    arguments: str | None = Field(default=None, description="raw (possibly invalid) JSON arguments")

    @model_validator(mode="after")
    def _one(self) -> _ToolCallItem:
        if self.args is not None and self.arguments is not None:
            raise ValueError("give a tool call either `args` or raw `arguments`, not both")
        return self


class ScriptReply(_Strict):
    """A scripted model reply with tool calls, usage, latency or explicit stream chunks."""

    text: str = ""
    tool_calls: list[_ToolCallItem] = Field(default_factory=list)
    usage: dict[str, int] | None = None
    latency: Seconds | None = None
    chunks: list[str] | None = None

    @model_validator(mode="after")
    def _chunks_make_the_text(self) -> ScriptReply:
        if self.chunks is not None and self.text and "".join(self.chunks) != self.text:
            raise ValueError("`chunks` must join to `text` (the streamed pieces of the reply); "
                             "leave `text` out to make it their concatenation")
        return self


class _ErrorSpec(_Strict):
    type: Literal["rate_limit", "server", "timeout", "bad_request", "authentication"]
    message: str = ""
    retry_after: Seconds | None = None


class ErrorItem(_Strict):
    """A scripted failure of one LLM call (an HTTP error on the OpenAI backend)."""

    error: _ErrorSpec


def _script_item_kind(value: Any) -> str | None:
    if isinstance(value, str):
        return "text-item"
    if isinstance(value, ErrorItem) or (isinstance(value, dict) and "error" in value):
        return "error-item"
    if isinstance(value, (ScriptReply, dict)):
        return "reply-item"
    return None


ScriptItem = Annotated[
    Annotated[str, Tag("text-item")] | Annotated[ErrorItem, Tag("error-item")]
    | Annotated[ScriptReply, Tag("reply-item")],
    Discriminator(_script_item_kind, custom_error_type="script_item",
                  custom_error_message="a script item is reply text (a string), a reply "
                                       "mapping (`text`, `tool_calls`, `usage`, `latency`, "
                                       "`chunks`) or an error (`error: {type: rate_limit}`)"),
]
SCRIPT_ITEM_TAGS: dict[str, type[BaseModel] | None] = {
    "text-item": None, "error-item": ErrorItem, "reply-item": ScriptReply}


class LLMSource(_Strict):
    """Where an agent's model answers come from: a script or a recording."""

    backend: Literal["scripted", "openai"] = Field(
        "scripted", description="`openai`: the OpenAI backend against a local fake endpoint")
    latency: Seconds = Field(default=0.0, description="simulated latency of every LLM call")
    script: list[ScriptItem] | None = None
    recording: str | None = Field(default=None, description="cassette path, relative to the scenario")
    faults: list[ModelFault] = Field(default_factory=list, description=(
        "faults of the model's calls by number (a 429, a 500, a timeout, an empty reply, a "
        "cut stream), each before the reply of that call: the script's, or the recording's "
        "(replayed, or recorded live after the fault)"))
    max_retries: int = Field(default=DEFAULT_MAX_RETRIES, ge=0, le=100, description=(
        "retries of a failed model call, by the OpenAI backend's policy (a 429, a 5xx, a cut "
        "connection: the next script item answers the retry), scripted or `backend: openai`"))
    max_tokens: int | None = Field(default=None, ge=1, description=(
        "the longest answer, in tokens, of a live model recording this agent (`agentkit "
        "record`, `eval`, the plugin's record modes); a scripted model ignores it"))
    timeout: Annotated[float, Field(gt=0, le=MAX_LATENCY, allow_inf_nan=False)] | None = Field(
        default=None, description=(
        "real seconds one call to the live model that records this agent may take in all; "
        "past it the call fails and is not retried"))

    @field_validator("faults")
    @classmethod
    def _one_fault_per_call(cls, value: list[ModelFault],
                            info: ValidationInfo) -> list[ModelFault]:
        calls = [fault.call for fault in value]
        twice = sorted({n for n in calls if calls.count(n) > 1})
        if twice:
            raise ValueError(f"call {twice[0]} has two faults; give each call one")
        return value

    def _sources(self) -> list[str]:
        return [k for k in ("script", "recording") if getattr(self, k) is not None]


class JudgeSpec(_Strict):
    """Who judges the scenario's judged expectations (:class:`Judged`): an LLM on agentkit's
    protocol, asked with the documented prompt of :mod:`agentkit.harness._llm_judge`.

    With ``script`` its answers are scripted, in the order the judge is asked (offline; no
    model). Without, it is the recording's: its calls replay from the agent type's cassette and
    are recorded with it, through ``model`` (or ``agentkit record --judge-model``, the pytest
    plugin's ``judge_llm``; by default the agent's own live model). ``model`` is part of what
    a recorded verdict is keyed by: naming another model is a cassette miss, never a silent
    re-judgement."""

    model: str | None = Field(default=None, description="the judge's model (recorded)")
    script: list[ScriptItem] | None = Field(default=None, description="scripted answers, in "
                                                                      "the order asked")
    samples: int = Field(default=1, ge=1, le=25, description="answers asked per judged "
                                                             "expectation; each votes")
    latency: Seconds = Field(default=0.0, description="simulated latency of a scripted answer")
    params: dict[str, Any] = Field(default_factory=dict, description=(
        "keyword arguments sent with every judge request (e.g. `response_format`)"))


Judges = JudgeSpec | list[JudgeSpec]
"""A scenario's judge, or a panel of judges whose answers all vote."""


def judge_panel(judges: Judges | None) -> list[JudgeSpec]:
    """The judges of a ``judge:`` field, as a list (one default judge when none is given)."""
    if judges is None:
        return [JudgeSpec()]
    return judges if isinstance(judges, list) else [judges]


def _check_panel(judges: Judges | None) -> Judges | None:
    if isinstance(judges, list):
        if not judges:
            raise ValueError("a panel needs at least one judge")
        recorded = [judge.model for judge in judges if judge.script is None]
        if len(recorded) > 1 and len(set(recorded)) < len(recorded):
            raise ValueError("the recorded judges of a panel each name a different `model` "
                             "(their verdicts are keyed by it)")
    return judges


class SimulatedUser(_Strict):
    """A user an LLM plays instead of fixed turns: ``simulate`` (the persona) writes each next
    user message from the conversation so far, toward its ``goal``, until ``stop_when``
    holds (a text match on the agent's answer, or a rubric judged on the conversation; by
    default the goal itself, judged) or ``max_turns`` turns ran (then the run fails). Its
    messages come from ``script`` (replies in order), ``ref`` (a function of a
    :class:`~agentkit.harness._simulated_user.SimulatedUserContext`) or a model: the
    recording's, keyed by ``model`` like a judge's. See :mod:`agentkit.harness._simulated_user`."""

    simulate: str = Field(description="the persona: who the user is and how they behave")
    goal: str | None = Field(default=None, description="what the user wants from the agent")
    opening: str | None = Field(default=None, description="a fixed first message (default: the "
                                                          "simulated user writes it)")
    max_turns: int = Field(default=6, ge=1, le=100)
    stop_when: AnswerMatch | None = Field(default=None, description=(
        "when the goal is reached: a text match on the agent's last answer, or a rubric a "
        "judge decides on the conversation (default: the goal, judged)"))
    model: str | None = Field(default=None, description="the simulated user's model (recorded)")
    script: list[ScriptItem] | None = Field(default=None, description="its messages, in order")
    ref: str | None = Field(default=None, description="`module:function` writing each message")
    latency: Seconds = Field(default=0.0, description="simulated latency of a scripted message")
    params: dict[str, Any] = Field(default_factory=dict, description=(
        "keyword arguments sent with every request of the simulated user"))

    @field_validator("simulate")
    @classmethod
    def _persona(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("the persona is empty: say who the simulated user is, e.g. "
                             "`simulate: \"a customer whose parcel is late\"`")
        return value

    @field_validator("ref")
    @classmethod
    def _ref_shape(cls, value: str | None) -> str | None:
        if value is not None and not re.fullmatch(r"[\w.]+:[\w.]+", value):
            raise ValueError(f"{value!r} is not an import ref; write `package.module:name`")
        return value

    @model_validator(mode="after")
    def _goal_and_source(self) -> SimulatedUser:
        if self.goal is None or not self.goal.strip():
            raise ValueError("a simulated user needs a `goal`: what the persona wants from the "
                             "agent (its messages work toward it, and by default the "
                             "conversation ends when a judge finds it reached)")
        if self.script is not None and self.ref is not None:
            raise ValueError("give a simulated user at most one of `script` or `ref` (or "
                             "neither: the recording's model plays it)")
        return self


class TeamAgent(LLMSource):
    """One agent of a multi-agent workflow: who it is, its tools, whom it may hand off to,
    and its own script or recording."""

    name: str
    description: str
    kind: Literal["function", "react"] = "function"
    system_prompt: str | None = None
    tools: list[str] | None = Field(default=None, description="names of the scenario tools it may use "
                                                      "(default: all of them)")
    can_handoff_to: list[str] | None = None
    params: dict[str, Any] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _script_or_recording(self) -> TeamAgent:
        if len(self._sources()) != 1:
            raise ValueError("give each team agent exactly one of `script` or `recording`")
        return self


class ResumeFrom(_Strict):
    """Where a workflow agent type takes over a recorded run: the agent type of this scenario
    whose recording is replayed (``recording``) and the number of its recorded steps that are
    replayed before this agent type's own script or model goes on (``step``; steps are
    counted over the turns, from 1)."""

    recording: str = Field(description="the agent type (of this scenario) whose recorded run "
                                       "is resumed")
    step: int = Field(ge=1, description="how many of its recorded steps are replayed first")


class AgentSpec(LLMSource):
    """How one agent type runs the scenario: its parameters and its LLM script or recording
    (or, for a multi-agent workflow, its ``team`` of agents and their ``root``). With neither
    script nor recording, its script is rendered from the scenario's ``trajectory``. With
    ``resume_from``, it goes on from a checkpoint of another agent type's recorded run
    (:mod:`agentkit.harness._resume`)."""

    params: dict[str, Any] = Field(default_factory=dict)
    expect: Expect | None = None
    judge: Judges | None = Field(default=None, description="this agent type's judge(s), "
                                                          "instead of the scenario's")
    team: list[TeamAgent] | None = Field(default=None, min_length=1)
    root: str | None = Field(default=None, description="the team agent that starts each run")
    resume_from: ResumeFrom | None = Field(
        default=None, description="replay another agent type's recorded run up to a step, "
                                  "then go on with this agent type's script or model")

    _panel = field_validator("judge")(_check_panel)

    @model_validator(mode="after")
    def _script_or_recording(self) -> AgentSpec:
        if self.resume_from is not None and self.team is None and not self._sources():
            raise ValueError("a resumed agent type goes on with a `script` or `recording` of "
                             "its own (a trajectory renders a whole run, not its continuation)")
        if self.team is None:
            if len(self._sources()) > 1:
                raise ValueError("give each agent type exactly one of `script` or `recording`")
            if self.root is not None:
                raise ValueError("`root` names a team agent; give it with `team`")
            return self
        if self._sources():
            raise ValueError("a team's scripts belong to its agents: move `script`/`recording` "
                             "into the team agents")
        names = [agent.name for agent in self.team]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValueError(f"team agent names must be unique: {', '.join(twice)}")
        if self.root is None and len(names) > 1:
            raise ValueError(f"a team of several agents needs a `root` (one of {', '.join(names)})")
        if self.root is not None and self.root not in names:
            raise ValueError(f"root `{self.root}` is not a team agent ({', '.join(names)})")
        for agent in self.team:
            unknown = [n for n in agent.can_handoff_to or () if n not in names]
            if unknown:
                raise ValueError(f"team agent `{agent.name}` can_handoff_to names unknown "
                                 f"agent(s) {', '.join(unknown)} (team: {', '.join(names)})")
        return self

    def recorded(self) -> list[str | None]:
        """Whose model replays a recording: ``[None]`` for the agent type's own ``recording``,
        the names of a team's agents with one (in team order), ``[]`` when all is scripted."""
        if self.team is None:
            return [None] if self.recording is not None else []
        return [agent.name for agent in self.team if agent.recording is not None]


class HistoryMessage(_Strict):
    """A message already in the agent's memory when the scenario starts."""

    role: Literal["system", "user", "assistant", "tool"]
    content: str


def given_agents(data: dict[str, Any]) -> Any:
    """The ``agents`` of a scenario file's data as a mapping of agent type to its settings
    (``{}`` for a type named without any), as :class:`Scenario` reads them; other values as
    they are (validation reports them). With a ``trajectory`` and no ``agents``: none yet
    (planning it, :func:`agentkit.harness.plan_scenario`, gives it those that render it)."""
    agents = data.get("agents")
    if agents is None and data.get("trajectory") is not None:
        agents = {}
    if isinstance(agents, list) and all(isinstance(name, str) for name in agents):
        agents = dict.fromkeys(agents)
    if isinstance(agents, dict):
        return {name: {} if spec is None else spec for name, spec in agents.items()}
    return agents


class LineOf(Protocol):
    """The line of a field of a scenario file, by its path (its key's line with ``key``)."""

    def __call__(self, path: tuple[str | int, ...], /, *, key: bool = False) -> int: ...


class Scenario(_Strict):
    format: int
    name: str
    description: str = ""
    tags: list[str] = Field(default_factory=list)
    tools: list[ToolSpec] = Field(default_factory=list)
    world: WorldSpec | None = Field(default=None, description=(
        "the state the tools act on, fresh per run; `expect.state` reads it"))
    history: list[HistoryMessage] = Field(
        default_factory=list, description="the agent's memory before the first turn (e.g. "
                                          "few-shot examples as earlier turns)")
    user: SimulatedUser | None = Field(
        default=None, description="a simulated user writing the turns (instead of `turns`)")
    turns: list[Turn] = Field(description="the user messages, in order (none with `user`)")
    trajectory: list[TrajectoryStep] | None = Field(
        None, description="the tool calls and the answer, rendered into the script of every "
                          "agent type without one (agentkit.scenario._trajectory)")
    agents: dict[str, AgentSpec] = Field(description=(
        "the agent types that run it, each with its settings (with a `trajectory`, left out: "
        "every agent type that can render it, chosen when the scenario is planned)"))
    expect: Expect = Field(default_factory=Expect)
    faults: FaultPlan | None = Field(default=None, description=(
        "expand the scenario into fault variants, one per tool, call and fault kind "
        "(agentkit faults; agentkit.harness._faults)"))
    judge: Judges | None = Field(default=None, description="who decides judged expectations "
                                                          "(agentkit.harness._llm_judge)")
    thresholds: Thresholds = Field(
        default_factory=Thresholds, description="how much more cost than in a report's "
                                                "baseline is a regression (per metric)")
    min_pass_rate: float | None = Field(
        None, ge=0, le=1, allow_inf_nan=False,
        description="samples (a sampled recording, an evaluation): the pass rate the case must "
                    "not fall below beyond noise (default: every sample passes)")
    confidence: float = Field(
        0.95, gt=0, lt=1, allow_inf_nan=False,
        description="the confidence level of pass-rate intervals and of the tests that call a "
                    "difference real (default 0.95)")
    path: str | None = Field(default=None, exclude=True, description="the file it was loaded from")
    _line_of: LineOf | None = PrivateAttr(None)
    _script_trajectory: list[TrajectoryStep] | None = PrivateAttr(None)

    def set_script_trajectory(self, steps: list[TrajectoryStep]) -> None:
        """Render the scripts of agent types without one from ``steps`` instead of
        ``trajectory`` (a fault variant's: the steps up to the fault, then what a correct
        agent does), while the expectations keep reading ``trajectory``."""
        self._script_trajectory = steps

    @property
    def script_trajectory(self) -> list[TrajectoryStep] | None:
        """The steps rendered scripts follow: ``trajectory``, unless a variant set its own."""
        return self._script_trajectory if self._script_trajectory is not None else self.trajectory

    def set_locations(self, line_of: LineOf) -> None:
        """Remember where each field is in the file (the loader calls this)."""
        self._line_of = line_of

    def where(self, *field_path: str | int, key: bool = False, kept: bool = False) -> str:
        """``file:line`` of a field (its key's line with ``key``), for error messages; with no
        field, the file (or the scenario's name when it was not loaded from one). ``kept``:
        for what a trace keeps, the file as its project names it (:meth:`project_path`),
        the same from any working folder; otherwise as it was given."""
        place = (self.project_path() if kept else self.path) or self.name
        return place if self._line_of is None or not field_path else \
            f"{place}:{self.line(*field_path, key=key)}"

    def project_path(self) -> str | None:
        """The scenario's file relative to its project (the folder of the nearest
        pyproject.toml above it; without one, its own folder), in ``/`` form: a name that does
        not depend on the working folder or on how the path was spelled."""
        if self.path is None:
            return None
        file = Path(os.path.realpath(self.path))
        root = next((folder for folder in file.parents
                     if (folder / "pyproject.toml").is_file()), file.parent)
        return file.relative_to(root).as_posix()

    def line(self, *field_path: str | int, key: bool = False) -> int:
        """The line of a field in the file (1 when the scenario was not loaded from one)."""
        return 1 if self._line_of is None else self._line_of(field_path, key=key)

    @model_validator(mode="before")
    @classmethod
    def _agent_list(cls, data: Any) -> Any:
        """``agents`` may name types without settings (``react:`` or ``[react, coa]``); a
        scenario with a ``trajectory`` and no ``agents`` runs under every agent type that can
        render it, chosen when it is planned (:func:`agentkit.harness.plan_scenario`)."""
        if not isinstance(data, dict):
            return data
        if "user" in data and "turns" not in data:
            data = {**data, "turns": []}  # a simulated user writes them
        agents = given_agents(data)
        return {**data, "agents": agents} if isinstance(agents, dict) else data

    @field_validator("turns")
    @classmethod
    def _turns_or_user(cls, value: list[Turn], info: ValidationInfo) -> list[Turn]:
        # `user` is validated first: None when not given (absent when it is invalid, which
        # is reported at `user`)
        if "user" in info.data and info.data["user"] is None and not value:
            raise ValueError("needs at least 1 entry; add one (or a simulated `user:`)")
        if info.data.get("user") is not None and value:
            raise ValueError("a simulated `user:` writes the turns: give `turns` or `user`, "
                             "not both")
        return value

    _panel = field_validator("judge")(_check_panel)

    @field_validator("agents")
    @classmethod
    def _some(cls, value: dict[str, AgentSpec], info: ValidationInfo) -> dict[str, AgentSpec]:
        # `trajectory` is validated first: absent when it is invalid (reported there)
        if not value and "trajectory" in info.data and info.data["trajectory"] is None:
            raise ValueError("needs at least 1 entry; add one")
        return value

    @field_validator("format")
    @classmethod
    def _supported(cls, value: int) -> int:
        if value != SCENARIO_FORMAT:
            raise ValueError(f"format {value} is not supported (this agentkit reads format "
                             f"{SCENARIO_FORMAT})")
        return value

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        if not re.fullmatch(r"[A-Za-z0-9_.-]+", value):
            raise ValueError("use letters, digits, '_', '-' and '.' only (it names files)")
        return value

    def expect_for(self, agent_type: str) -> Expect:
        own = self.agents[agent_type].expect
        return self.expect if own is None else self.expect.merged(own)


def run_memo(scenario: Scenario, agent_type: str) -> dict[str, Any]:
    """A dict for what every run of ``scenario`` under ``agent_type`` works out the same way
    (where its files are, its model's script items, which expectations are judged...), each
    entry under a name of its reader's: filled by the first run, read by the next. It belongs
    to this object and agent type alone (a copy, a variant or a mutant has its own) and is
    emptied when a field of the scenario or of the agent type's settings is given another
    object (as :meth:`Expect.merged` is); what it holds is read-only."""
    fields = (*scenario.__dict__.values(), *(scenario.__pydantic_private__ or {}).values())
    spec = scenario.agents[agent_type]
    kept = _MEMOS.get((id(scenario), agent_type))
    if (kept is not None and kept[0]() is scenario and kept[1] is spec
            and len(kept[2]) == len(fields) and all(map(operator.is_, kept[2], fields))
            and all(map(operator.is_, kept[3], spec.__dict__.values()))):
        return kept[4]
    memo: dict[str, Any] = {}
    if id(scenario) not in _WATCHED:  # forgotten with the object (its id is then reused)
        _WATCHED[id(scenario)] = set()
        weakref.finalize(scenario, _forget, id(scenario))
    _WATCHED[id(scenario)].add(agent_type)
    _MEMOS[(id(scenario), agent_type)] = (weakref.ref(scenario), spec, fields,
                                           tuple(spec.__dict__.values()), memo)
    return memo


def _forget(scenario_id: int) -> None:
    for agent_type in _WATCHED.pop(scenario_id, ()):
        _MEMOS.pop((scenario_id, agent_type), None)


_MEMOS: dict[tuple[int, str], tuple[weakref.ReferenceType[Scenario], AgentSpec,
                                    tuple[Any, ...], tuple[Any, ...], dict[str, Any]]] = {}
""":func:`run_memo`'s dicts by the scenario's id and the agent type, each with what it was
worked out from (checked by identity: an id outlives its object only until the object's
entries go with it)."""
_WATCHED: dict[int, set[str]] = {}
"""The agent types with a :func:`run_memo` of each living scenario object, by its id."""
