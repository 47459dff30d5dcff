"""Trajectories: one description of what an agent should do, rendered into the LLM script of
every agent type in that type's wire format.

A scenario's ``trajectory:`` lists the tool calls in order -- with parallel groups and ``$N``
references to earlier calls' outputs -- and then the final answer::

    trajectory:
      - call: population              # call 1
        args: {city: Paris}
        thought: Paris first.         # optional; text formats write it before the call
      - parallel:                     # calls 2 and 3: independent, made together
          - {call: population, args: {city: Tokyo}}
          - {call: population, args: {city: Lima}}
      - call: add                     # call 4: $1 and $2 are what calls 1 and 2 returned
        args: {a: $1, b: $2}
      - answer: "Paris and Tokyo have {$4} people."   # {$N}: call N's output as text
        thought: I have the sum.

Rules (the loader checks them, naming file, line and field): calls are numbered 1, 2, ...
in the order written, a parallel group's calls in their order. ``$N`` is a whole argument
value (also as an element of a list or object value): the value call N returned. It must name
an earlier call outside its own group; ``$N`` inside longer text is an error, because
LLMCompiler plans would read it as a reference. The answer comes last, exactly once; ``{$N}``
in it is call N's output as text. A trajectory describes one turn. Thoughts are one line
without the markers of the text formats (``Action:``, ``Answer:``, ``Observation:``,
``[FUNC``). Tool names and argument names are checked against the scenario's tools.

An agent type renders trajectories when its declaration has a :data:`TrajectoryRenderer`
(``AgentType(..., trajectory=...)``, ``register_agent_type(..., trajectory=...)``: the
renderer is part of the agent type, :mod:`agentkit.harness._agent_types`): given a
:class:`RenderContext` it returns the ScriptedLLM items of that type. Values a renderer needs
from earlier calls are the **actual** outputs of the run: an item that needs them is a
callable the LLM evaluates when it is called (:meth:`RenderContext.deferred`), by which time
the agent has made the calls it depends on (the harness feeds each finished tool call to
:attr:`RenderContext.outputs`). The bundled renderers are their families'
(:mod:`agentkit.harness._families`).
"""

from __future__ import annotations

import difflib
import json
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, Protocol

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator, model_validator

__all__ = [
    "CallOutputs",
    "Ref",
    "RenderContext",
    "Trajectory",
    "TrajectoryAnswer",
    "TrajectoryCall",
    "TrajectoryCallSpec",
    "TrajectoryError",
    "TrajectoryRenderer",
    "TrajectoryStep",
    "DEFAULT_ANSWER_THOUGHT",
    "compile_trajectory",
    "map_refs",
    "tool_call_problems",
]

Loc = tuple[str | int, ...]

_WHOLE_REF = re.compile(r"\$([0-9]+)")
_ANY_REF = re.compile(r"\$\{?[0-9]+")
_ANSWER_REF = re.compile(r"\{\$([0-9]+)\}")
_THOUGHT_MARKERS = ("Action:", "Answer:", "Observation:", "[FUNC")


# ---------------------------------------------------------------------------- the file model
class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _one_line_thought(value: str | None) -> str | None:
    if value is None:
        return None
    value = value.strip()
    if "\n" in value or "\r" in value:
        raise ValueError("a thought is one line (LLMCompiler plans and ReAct texts read one)")
    marker = next((m for m in _THOUGHT_MARKERS if m in value), None)
    if marker is not None:
        raise ValueError(f"a thought must not contain `{marker}`: the agents' text formats "
                         "would read it as a marker")
    return value or None


class _WithThought(_Strict):
    thought: str | None = Field(default=None, description="one line of reasoning before it")

    @field_validator("thought")
    @classmethod
    def _one_line(cls, value: str | None) -> str | None:
        return _one_line_thought(value)


def _numbers_not_names(value: Any) -> Any:
    if isinstance(value, list):
        for item in value:
            if isinstance(item, str) and not item.strip().isdigit():
                raise ValueError(
                    "`after` lists the numbers of earlier entries, counted from 1 (`after: [1, "
                    f"2]`), not tool names: got {item!r}")
    return value


CallNumbers = Annotated[list[int], BeforeValidator(_numbers_not_names)]
"""``after:``'s value: 1-based numbers of earlier entries (a tool name gets an error saying
so, not pydantic's "expected a whole number")."""


class TrajectoryCallSpec(_WithThought):
    """One tool call of a trajectory as written: ``{call: name, args: {...}, thought: ...,
    after: [N, ...]}``."""

    call: str
    args: dict[str, Any] = Field(default_factory=dict)
    after: CallNumbers = Field(default_factory=list, description=(
        "numbers of earlier calls that must have finished before this one starts (besides "
        "those whose outputs it uses)"))


class TrajectoryStep(_WithThought):
    """One step of a trajectory: a ``call`` (with ``args``), a ``parallel`` group of calls, or
    the ``answer``; a call or the answer may carry a ``thought``."""

    call: str | None = None
    args: dict[str, Any] | None = None
    parallel: list[TrajectoryCallSpec] | None = Field(
        None, min_length=2, description="calls made together (two or more)")
    answer: str | None = Field(default=None, description="the final answer; {$N} is call N's output")
    after: CallNumbers = Field(default_factory=list, description=(
        "numbers of earlier calls that must have finished before this call (each call of this "
        "parallel group) starts"))

    @model_validator(mode="after")
    def _one_kind(self) -> TrajectoryStep:
        kinds = [k for k in ("call", "parallel", "answer") if getattr(self, k) is not None]
        if len(kinds) != 1:
            raise ValueError("a trajectory step is one of `call` (with `args`), `parallel` (a "
                             "list of calls) or `answer`" + (
                                 f"; this one has {' and '.join(kinds)}" if kinds else ""))
        if self.args is not None and self.call is None:
            raise ValueError("`args` belong to a `call`")
        if self.thought is not None and self.parallel is not None:
            raise ValueError("put thoughts on the calls of a parallel group")
        if self.answer is not None and not self.answer.strip():
            raise ValueError("the answer is empty; write the text the agent should answer")
        if self.after and self.answer is not None:
            raise ValueError("`after` orders calls; the answer comes after every call anyway")
        return self


# ---------------------------------------------------------------------------- compiled
@dataclass(frozen=True, slots=True)
class Ref:
    """``$N`` in an argument: the output of call ``number``."""

    number: int


def map_refs(value: Any, replace: Callable[[Ref], Any]) -> Any:
    """``value`` with every :class:`Ref` inside (lists, object values) replaced."""
    if isinstance(value, Ref):
        return replace(value)
    if isinstance(value, list):
        return [map_refs(item, replace) for item in value]
    if isinstance(value, dict):
        return {key: map_refs(item, replace) for key, item in value.items()}
    return value


def _refs_in(value: Any) -> Iterable[int]:
    found: list[int] = []
    map_refs(value, lambda ref: found.append(ref.number))
    return found


class CallOutputs(Protocol):
    """The outputs of the calls made so far, by trajectory call number."""

    def value(self, number: int) -> Any:
        """What a ``$N`` argument becomes: the value call N returned (its text if the value
        is not JSON)."""

    def text(self, number: int) -> str:
        """Call N's output as text (what ``{$N}`` in the answer becomes)."""


@dataclass(frozen=True, slots=True)
class TrajectoryCall:
    """One call of a compiled trajectory. ``args`` hold literals and :class:`Ref` s; ``group``
    is the index of its step (the calls of a parallel group share it); ``loc`` is where it is
    in the scenario file."""

    number: int
    name: str
    args: Mapping[str, Any]
    group: int
    loc: Loc
    thought: str | None = None
    after: tuple[int, ...] = ()
    """Earlier calls that must have finished before it starts (``after:``), besides ``refs``."""

    @property
    def refs(self) -> tuple[int, ...]:
        """The calls whose outputs it uses, sorted."""
        return tuple(sorted(set(_refs_in(dict(self.args)))))

    @property
    def prerequisites(self) -> tuple[int, ...]:
        """Every call that must have finished before it starts: its refs and ``after``."""
        return tuple(sorted({*self.refs, *self.after}))

    def arguments(self, outputs: CallOutputs) -> dict[str, Any]:
        """The arguments with each ``$N`` replaced by call N's output value."""
        arguments: dict[str, Any] = map_refs(dict(self.args), lambda ref: outputs.value(ref.number))
        return arguments

    def describe(self) -> str:
        """``add(a=$1, b=2)``, for messages."""
        def shown(value: Any) -> str:
            if isinstance(value, Ref):
                return f"${value.number}"
            return json.dumps(map_refs(value, lambda ref: f"${ref.number}"), ensure_ascii=False)
        return f"{self.name}({', '.join(f'{k}={shown(v)}' for k, v in self.args.items())})"


@dataclass(frozen=True, slots=True)
class TrajectoryAnswer:
    """The final answer: ``text`` with ``{$N}`` placeholders."""

    text: str
    loc: Loc
    thought: str | None = None

    @property
    def refs(self) -> tuple[int, ...]:
        return tuple(sorted({int(n) for n in _ANSWER_REF.findall(self.text)}))

    @property
    def fixed_text(self) -> str:
        """The answer without its placeholders: what is known before the run."""
        return _ANSWER_REF.sub("", self.text)

    def render(self, outputs: CallOutputs) -> str:
        """The answer with each ``{$N}`` replaced by call N's output text."""
        return _ANSWER_REF.sub(lambda m: outputs.text(int(m.group(1))), self.text)


@dataclass(frozen=True, slots=True)
class Trajectory:
    """A checked trajectory: its calls in number order and its answer."""

    calls: tuple[TrajectoryCall, ...]
    answer: TrajectoryAnswer

    @property
    def groups(self) -> tuple[tuple[TrajectoryCall, ...], ...]:
        """The calls by step: one call, or a parallel group's calls."""
        groups: dict[int, list[TrajectoryCall]] = {}
        for call in self.calls:
            groups.setdefault(call.group, []).append(call)
        return tuple(tuple(calls) for calls in groups.values())

    def call(self, number: int) -> TrajectoryCall:
        return self.calls[number - 1]


class TrajectoryError(ValueError):
    """A trajectory that cannot be used: ``problems`` are ``(location, message)`` pairs (the
    loader turns each into ``file:line: field: message``)."""

    def __init__(self, problems: Sequence[tuple[Loc, str]]) -> None:
        self.problems = list(problems)
        super().__init__("; ".join(f"{'.'.join(map(str, loc))}: {message}"
                                   for loc, message in self.problems))


class _Compiler:
    """Numbers the calls, reads ``$N`` references and checks them (see the module docstring)."""

    def __init__(self, tools: Sequence[Any] | None) -> None:
        self.tools = {t.metadata.name: t for t in tools} if tools is not None else None
        self.problems: list[tuple[Loc, str]] = []
        self.calls: list[TrajectoryCall] = []

    def compile(self, steps: Sequence[TrajectoryStep]) -> Trajectory:
        answer: TrajectoryAnswer | None = None
        for index, step in enumerate(steps):
            loc: Loc = ("trajectory", index)
            if answer is not None:
                self.problems.append((loc, f"the answer (step {answer.loc[1]}) must be the last "
                                           "step; move the calls before it"))
                continue
            if step.answer is not None:
                answer = TrajectoryAnswer(step.answer.strip(), (*loc, "answer"), step.thought)
            elif step.parallel is not None:
                first = len(self.calls) + 1
                for number, spec in enumerate(step.parallel):
                    self._call(spec.call, spec.args, spec.thought, index,
                               (*loc, "parallel", number), first, [*step.after, *spec.after],
                               (loc if step.after else (*loc, "parallel", number)))
            else:
                assert step.call is not None
                self._call(step.call, step.args or {}, step.thought, index, loc,
                           len(self.calls) + 1, step.after, loc)
        if answer is None:
            self.problems.append((("trajectory",), "the trajectory has no `answer`; end it with "
                                                   "`- answer: <the final answer>`"))
        else:
            for number in answer.refs:
                if not 1 <= number <= len(self.calls):
                    self.problems.append((answer.loc, f"{{${number}}} names no call (the "
                                                      f"trajectory has {len(self.calls)})"))
        if self.problems:
            raise TrajectoryError(self.problems)
        assert answer is not None
        return Trajectory(tuple(self.calls), answer)

    def _call(self, name: str, raw_args: Mapping[str, Any], thought: str | None, group: int,
              loc: Loc, group_start: int, after: Sequence[int], after_loc: Loc) -> None:
        number = len(self.calls) + 1
        args = {key: self._value(value, (*loc, "args", key), number, group_start)
                for key, value in raw_args.items()}
        self._check_tool(name, args, loc)
        for index, earlier in enumerate(after):
            if not 1 <= earlier < group_start:
                where = ("it is in the same parallel group" if group_start <= earlier < number
                         else f"call {number} can only follow calls 1 to {group_start - 1}"
                         if group_start > 1 else "it is the first call")
                self.problems.append(((*after_loc, "after", index),
                                      f"after: {earlier} names no earlier call ({where})"))
        self.calls.append(TrajectoryCall(number, name, args, group, loc, thought,
                                         tuple(sorted(set(after)))))

    def _value(self, value: Any, loc: Loc, number: int, group_start: int) -> Any:
        """An argument value as a literal or a :class:`Ref`, its problems noted."""
        if isinstance(value, str):
            whole = _WHOLE_REF.fullmatch(value)
            if whole is None:
                if _ANY_REF.search(value):
                    self.problems.append((loc, f"{value!r}: `$N` must be a whole value (`$1`), "
                                               "not inside text (LLMCompiler plans would read "
                                               "it as a reference)"))
                return value
            ref = int(whole.group(1))
            if not 1 <= ref < number:
                earlier = (f"calls 1 to {number - 1}" if number > 2 else "call 1" if number == 2
                           else "no call (it is the first)")
                self.problems.append((loc, f"${ref} does not name an earlier call: call {number} "
                                           f"can use the outputs of {earlier}"))
            elif ref >= group_start:
                self.problems.append((loc, f"${ref} is in the same parallel group as call "
                                           f"{number}: calls made together cannot use each "
                                           "other's outputs; move it to a later step"))
            return Ref(ref)
        if isinstance(value, list):
            return [self._value(v, (*loc, i), number, group_start) for i, v in enumerate(value)]
        if isinstance(value, dict):
            return {k: self._value(v, (*loc, k), number, group_start) for k, v in value.items()}
        if isinstance(value, float) and not math.isfinite(value):
            self.problems.append((loc, f"{value!r} is not a JSON number"))
        elif value is not None and not isinstance(value, (bool, int, float)):
            self.problems.append((loc, f"{value!r} ({type(value).__name__}) is not a JSON "
                                       "value; quote it to make it a string"))
        return value

    def _check_tool(self, name: str, args: Mapping[str, Any], loc: Loc) -> None:
        if self.tools is not None:
            self.problems += tool_call_problems(name, args, self.tools, loc)


def tool_call_problems(name: str, arg_names: Iterable[str], tools: Mapping[str, Any],
                       loc: Loc, *, complete: bool = True) -> list[tuple[Loc, str]]:
    """What is wrong with a trajectory call of ``name`` with these arguments at ``loc`` among
    ``tools`` (by name): an unknown tool, an unknown parameter, a required one left out
    (unless the arguments are not ``complete``: a step written wrongly may hold them
    elsewhere)."""
    tool = tools.get(name)
    if tool is None:
        close = difflib.get_close_matches(name, list(tools), n=1)
        hint = f"did you mean `{close[0]}`? " if close else ""
        return [((*loc, "call"), f"unknown tool `{name}`; {hint}(the scenario's tools: "
                                 f"{', '.join(tools) or 'none'})")]
    problems: list[tuple[Loc, str]] = []
    schema = tool.metadata.get_parameters_dict()
    known = list(schema.get("properties") or {})
    given = list(arg_names)
    for key in given:
        if key not in known:
            close = difflib.get_close_matches(key, known, n=1)
            hint = f"did you mean `{close[0]}`? " if close else ""
            problems.append(((*loc, "args", key), f"`{name}` has no parameter `{key}`; {hint}"
                                                  f"(its parameters: {', '.join(known) or 'none'})"))
    missing = [p for p in schema.get("required") or () if p not in given]
    if missing and complete:
        problems.append(((*loc, "args"), f"`{name}` needs {', '.join(missing)}; add "
                                         f"{'it' if len(missing) == 1 else 'them'}"))
    return problems


def compile_trajectory(steps: Sequence[TrajectoryStep],
                       tools: Sequence[Any] | None = None) -> Trajectory:
    """Number and check ``steps``; with ``tools``, tool and argument names are checked too.
    :class:`TrajectoryError` lists every problem with its location."""
    return _Compiler(tools).compile(steps)


# ---------------------------------------------------------------------------- renderers
@dataclass(frozen=True, kw_only=True)
class RenderContext:
    """What a renderer gets: the trajectory, the scenario's tools (for their schemas), the
    agent type, and the outputs of the run's calls as they are made."""

    agent_type: str
    trajectory: Trajectory
    tools: tuple[Any, ...] = ()
    outputs: CallOutputs = field(repr=False)

    def deferred(self, build: Callable[[], Any], needs: Iterable[int] = ()) -> Any:
        """A script item: ``build()`` now when it needs no call's output, else a callable the
        LLM evaluates when it is called (the calls ``needs`` names are made by then)."""
        if not tuple(needs):
            return build()
        return lambda messages, tools: build()

    def parameters(self, tool_name: str) -> list[str]:
        """The tool's parameter names in schema order (for formats with positional
        arguments)."""
        tool = next((t for t in self.tools if t.metadata.name == tool_name), None)
        if tool is None:
            return []
        return list(tool.metadata.get_parameters_dict().get("properties") or {})

    def positional(self, call: TrajectoryCall) -> list[Any] | None:
        """The call's arguments in schema order, for formats that pass them by position;
        ``None`` when a parameter before the last one given is left out."""
        order = self.parameters(call.name)
        given = [name for name in order if name in call.args]
        if given != order[:len(given)] or len(given) != len(call.args):
            return None
        return [call.args[name] for name in given]

    def answer_item(self) -> Any:
        """The final answer's text as a script item (``{$N}`` filled in when it is asked for)."""
        answer = self.trajectory.answer
        return self.deferred(lambda: answer.render(self.outputs), answer.refs)


TrajectoryRenderer = Callable[[RenderContext], list[Any]]
"""Renders an agent type's ScriptedLLM items (strings, ``ScriptedResponse`` s, callables...)
from a trajectory; raise :class:`TrajectoryError` for what the format cannot express."""

DEFAULT_ANSWER_THOUGHT = "I can answer without using any more tools."
"""The thought a text format writes before the answer when the trajectory gives none."""
