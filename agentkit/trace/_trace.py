"""Traces: the normalised, deterministic record of a scenario run, built from bus events only.

A :class:`TurnBuilder` turns the events of one user turn into a :class:`TurnTrace` (steps,
each with its LLM calls and tool calls). The tools the agent offered (name, description and
JSON schema of each, from :class:`ToolsOfferedEvent` and LLM requests) are kept once per run,
in the trace's ``tools``, so a changed docstring is a change of the trace. Ids are normalised
(``call_1``, ``call_2``... in order of first appearance) and times are virtual, so the JSON of
a trace is byte-identical across runs of the same scenario.

A trace writes each message once (:mod:`agentkit.core.reflists`): an LLM request's messages and
a turn's memory are lists in which what an earlier list of the trace holds is a reference to it
(``{"ref": "/turns/0/memory", "start": 0, "count": 4}``), so a trace grows with the turns, not
with their square. :mod:`agentkit.trace._read` expands them again for whoever reads
messages (diffs).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from json.encoder import c_make_encoder, encode_basestring  # type: ignore[attr-defined]
from typing import Any

from agentkit.core.bounded import BoundedStore
from agentkit.core.errors import ErrorKind, UserCode
from agentkit.core.events import (
    AgentLimitEvent,
    AgentStepEndEvent,
    AgentStepStartEvent,
    Event,
    EventFilter,
    LLMCallEndEvent,
    LLMCallStartEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
    ToolsOfferedEvent,
)
from agentkit.core.reflists import ListWriter, Shared
from agentkit.core.secrets import Redactor
from agentkit.llms.types import (
    ChatMessage,
    ChatResponse,
    ImageBlock,
    TextBlock,
    ToolSelection,
    fixed_memo,
)

__all__ = [
    "SimulatedToolError",
    "SampledTrace",
    "LLMCallTrace",
    "ToolCallTrace",
    "StepTrace",
    "TurnTrace",
    "Trace",
    "TraceTotals",
    "RoleCallTrace",
    "IdNormalizer",
    "build_turn",
    "extend_turn",
    "critical_path",
    "trace_handler",
    "TurnBuilder",
]


class SimulatedToolError(RuntimeError):
    """A failure the scenario's failure schedule injected (the tool world raises it; a trace
    marks the call ``scheduled``)."""

    injected: Any = None
    """The fault's record (:class:`agentkit.harness.InjectedFault`), when a fault raised it."""


TRACE_FORMAT = 3
"""The version of a trace's JSON (``"format"``): 3 since messages are written once, then
referenced (module docstring); 2 since traces hold the run's ``tools`` (each tool's name,
description and schema); 1 before. Formats 2 and 3 hold the same things and diff with each
other; a snapshot of another format than this one is reported as written by another agentkit
(run ``--snapshot-update``)."""


def _round(seconds: float) -> float:
    return round(seconds, 6)


_SAME_TIME = 1e-9
"""Simulated times closer than this are the same time."""


class IdNormalizer:
    """Maps run-specific ids (tool-call ids) to stable names in order of first appearance, and
    the run's messages to what a trace keeps of them: equal messages as one object, and each
    turn's memory as a :class:`~agentkit.core.reflists.Shared` view extending the last one,
    so a run of N turns holds N messages of memory, not N²."""

    def __init__(self) -> None:
        self._names: dict[str, str] = {}
        self._messages: dict[str, dict[str, Any]] = {}
        self._memory: tuple[list[ChatMessage], Shared[dict[str, Any]]] | None = None

    def __call__(self, raw: str | None) -> str | None:
        if raw is None:
            return None
        if raw not in self._names:
            self._names[raw] = f"call_{len(self._names) + 1}"
        return self._names[raw]

    def tool_call(self, call: ToolSelection) -> dict[str, Any]:
        return {"id": self(call.tool_id), **_call_part(call)}

    def message(self, message: ChatMessage) -> dict[str, Any]:
        """A message as a trace keeps it: normalised ids, images as mime type, size, sha256.

        What does not depend on the ids is converted once for a fixed message
        (:func:`~agentkit.llms.types.fix_message`: the bridge's, which a replayed conversation
        sends every time it is replayed) and kept with it, with its key for the ids it got.
        The usual message -- one text block, no tool calls -- is told apart first, its key
        looked up by its role and text (:data:`_PLAIN_KEYS`)."""
        memo = fixed_memo(message)
        if memo is None and not message.additional_kwargs:
            blocks = message.blocks
            if len(blocks) == 1 and type(blocks[0]) is TextBlock:
                return self._plain(message.role._value_, blocks[0].text)
        part = memo.get("trace") if memo is not None else None
        if part is None:
            part = _MessagePart(message, memo is not None)
            if memo is not None:
                memo["trace"] = part
        names = tuple(map(self, part.raw_ids)) if part.raw_ids else ()
        key = part.keys.get(names) if memo is not None else None
        if key is not None:
            found = self._messages.get(key)
            if found is not None:
                return found
        data = part.data(names)
        if key is None:
            key = "".join(_KEY_CHUNKS(data, 0))
            if memo is not None:
                if len(part.keys) >= _KEYS_KEPT:
                    part.keys.clear()
                part.keys[names] = key
        return self._messages.setdefault(key, data)

    def _plain(self, role: str, text: str) -> dict[str, Any]:
        """A message of one text block and nothing else as a trace keeps it (what
        ``_MessagePart(message).data(())`` is), its key worked out once per role and text."""
        key = _PLAIN_KEYS.get((role, text))
        if key is None:
            key = "".join(_KEY_CHUNKS({"role": role, "content": text}, 0))
            _PLAIN_KEYS.put((role, text), key, len(text))
        found = self._messages.get(key)
        if found is not None:
            return found
        return self._messages.setdefault(key, {"role": role, "content": text})

    def memory(self, messages: Sequence[ChatMessage],
               convert: Callable[[ChatMessage], dict[str, Any]] | None = None, *,
               convert_all: Callable[[Sequence[ChatMessage]], Iterable[dict[str, Any]]]
               | None = None) -> Shared[dict[str, Any]]:
        """The memory after a turn, sharing the previous turn's when it extends it (the
        common case: checked on the message objects, without converting them again).
        ``convert``: :meth:`message`, or a turn's cache of it (:meth:`TurnBuilder.message`);
        ``convert_all``: the same for a list of messages at once (``TurnBuilder._each``)."""
        if convert_all is None:
            one = convert or self.message
            convert_all = functools.partial(map, one)  # map: no generator per message
        current = list(messages)
        if self._memory is not None:
            before, view = self._memory
            if len(current) >= len(before) and current[:len(before)] == before:
                extended = view.extended(convert_all(current[len(before):]))
                self._memory = current, extended
                return extended
        fresh = Shared(convert_all(current))
        self._memory = current, fresh
        return fresh


class _MessagePart:
    """What :meth:`IdNormalizer.message` keeps of a message but its ids: the digest form
    without ``additional_kwargs``, each tool call but its id, the name of a tool's answer, and
    the raw ids to normalise (in the order they are met: the calls', then the answered one's)."""

    __slots__ = ("answers", "base", "calls", "keys", "name", "raw_ids")

    def __init__(self, message: ChatMessage, fixed: bool = False) -> None:
        blocks = message.blocks
        if fixed or [block for block in blocks if isinstance(block, ImageBlock)]:
            base = message.to_dict(images="digest")  # a fixed message's is worked out once
            base.pop("additional_kwargs", None)
        else:  # what to_dict gives without images, its additional_kwargs not converted
            base = {"role": message.role._value_,
                    "content": blocks[0].text if len(blocks) == 1
                    and type(blocks[0]) is TextBlock else message.content}
        extra = message.additional_kwargs
        self.base = base
        if not extra:  # most messages: no tool calls, no answer, no name
            self.calls, self.answers, self.name, self.raw_ids = _NONE, False, _NO, ()
        else:
            calls = message.tool_calls
            self.calls = [_call_part(call) for call in calls]
            self.answers = "tool_call_id" in extra
            self.name = extra["name"] if "name" in extra and message.role.value == "tool" else _NO
            self.raw_ids = (*(call.tool_id for call in calls),
                            *((extra["tool_call_id"],) if self.answers else ()))
        self.keys: dict[tuple[str | None, ...], str] = {}
        """The message's key among a run's (its JSON) for the ids it was given."""

    def data(self, names: tuple[str | None, ...]) -> dict[str, Any]:
        """The message as a trace keeps it, its ids normalised to ``names``."""
        data = dict(self.base)
        if self.calls:
            data["tool_calls"] = [{"id": name, **call} for name, call in zip(names, self.calls, strict=False)]
        if self.answers:
            data["tool_call_id"] = names[-1]
        if self.name is not _NO:
            data["name"] = self.name
        return data


_PLAIN_KEYS: BoundedStore[tuple[str, str], str] = BoundedStore(512, 1 << 18)
"""The key (:meth:`IdNormalizer.message`) of a message of one text block by its role and text:
the same system prompt and user turns come back in every replay of a scenario. Small: the
bundled scenarios' messages are 206 and 83 KB of text; a report of many scenarios, each
message seen once, gains nothing from it (at 4,096 messages and 4 MB it raised the peak memory
of BFCL's 1,240-scenario report by 2 MB)."""
_NO: Any = object()
_NONE: list[Any] = []
"""A message's tool calls when it has none (shared: read only)."""
_KEYS_KEPT = 8


def _call_part(call: ToolSelection) -> dict[str, Any]:
    """:meth:`IdNormalizer.tool_call` but the id."""
    data: dict[str, Any] = {"name": call.tool_name, "args": _jsonable(call.tool_kwargs)}
    if call.arguments_error is not None:
        data["arguments_error"] = call.arguments_error
    return data


_KEYS = json.JSONEncoder(sort_keys=True, ensure_ascii=False, default=str)
"""What ``json.dumps(..., sort_keys=True, ensure_ascii=False, default=str)`` builds on every
call, built once: a message's key (:meth:`IdNormalizer.message`)."""
_KEY_CHUNKS: Callable[[Any, int], Sequence[str]] = (
    c_make_encoder(None, str, encode_basestring, None, ": ", ", ", True, False, True)
    if c_make_encoder is not None else lambda data, _: (_KEYS.encode(data),))
"""What ``_KEYS.encode`` runs, without its two Python layers (and the encoder it builds on
every call): the chunks of a message's key. No circular-reference markers: a message's trace
form is plain data."""
_PLAIN = json.JSONEncoder(default=str)
_DECODE = json.JSONDecoder()


def _jsonable(value: Any) -> Any:
    """``value`` as its JSON text reads back (what ``json.loads(json.dumps(value,
    default=str))`` gives, with the encoder and decoder built once). A flat object of strings,
    booleans, nulls, floats and integers json reads back as they are (most tool calls'
    arguments) is copied without the text: each value reads back from its JSON text as itself
    (not an integer of thousands of digits, which ``json.loads`` refuses). A loop, not
    ``all()`` over a generator: no call per argument."""
    if type(value) is dict:
        for key, item in value.items():
            kind = type(item)
            if not (type(key) is str and (kind is str or kind is bool or item is None
                                          or kind is float
                                          or (kind is int and -_SHORT < item < _SHORT))):
                break
        else:
            return dict(value)
    return _DECODE.decode(_PLAIN.encode(value))


_SHORT = 10 ** 18


@dataclass
class LLMCallTrace:
    kind: str
    messages: list[dict[str, Any]]
    response: dict[str, Any] | None
    usage: dict[str, int] | None
    latency: float
    tools: list[str] | None = None
    error: str | None = None
    started: float = field(default=0.0, repr=False)
    model: str | None = field(default=None, repr=False)
    """The model the call went to (not written: a trace stays the same whichever model
    name a script or cassette carries; OpenTelemetry spans name it)."""
    provider: str = field(default="agentkit", repr=False)
    """Who answered (not written, as ``model``): OpenTelemetry's ``gen_ai.provider.name``."""


@dataclass
class ToolCallTrace:
    id: str | None
    name: str
    args: dict[str, Any]
    output: str
    is_error: bool
    latency: float
    started: float = field(default=0.0, repr=False)
    agent: str | None = None
    """The agent of a multi-agent workflow that made the call (omitted when None)."""
    scheduled: bool = field(default=False, repr=False)
    """The failure was injected by the scenario's schedule (a tool's ``failures:``): an
    expected error. Not written to the trace (its output says so)."""
    issued: int = field(default=0, repr=False)
    """The place of the call's start among the turn's events (not written)."""
    finished: int = field(default=0, repr=False)
    """The place of the call's end among the turn's events (not written): with ``issued``, it
    orders calls that start and end at the same simulated time."""
    raised: UserCode | None = field(default=None, repr=False)
    """Where the user's tool raised, when it did (not written: a trace stays the same
    wherever the project lives)."""

    def ended_before(self, other: ToolCallTrace) -> bool:
        """Whether this call (of the same turn) had finished when ``other`` started: on the
        simulated clock, and at the same simulated time by the order of the events."""
        if other.started > self.ended + _SAME_TIME:
            return True
        if other.started < self.ended - _SAME_TIME:
            return False
        return self.finished < other.issued

    @property
    def ended(self) -> float:
        return self.started + self.latency


@dataclass
class RoleCallTrace:
    """One call of a harness role's model (an LLM judge, a simulated user): counted apart from
    the agent's LLM calls, in the trace's ``totals.roles``."""

    role: str
    usage: dict[str, int] | None


@dataclass
class StepTrace:
    index: int
    input: str | None
    is_last: bool
    output: str | None
    llm_calls: list[LLMCallTrace] = field(default_factory=list)
    tool_calls: list[ToolCallTrace] = field(default_factory=list)
    error: str | None = None
    details: dict[str, Any] = field(default_factory=dict)
    """What registered trace handlers add (a plan, a joiner's decision...); written after the
    core fields, and only when not empty, so existing traces keep their shape."""


@dataclass
class TurnTrace:
    user: str
    steps: list[StepTrace]
    response: str | None
    error: str | None
    memory: Sequence[dict[str, Any]]
    """What the agent's memory holds after the turn (a :class:`Shared` view when built by
    :func:`build_turn`)."""
    wall_time: float
    serial_time: float
    details: dict[str, Any] = field(default_factory=dict)
    """Turn-level additions of trace handlers (hand-offs, agents...), written like a step's."""
    tools: list[dict[str, Any]] = field(default_factory=list)
    """The tools offered in this turn (written once per run, in the trace's ``tools``)."""
    warnings: list[str] = field(default_factory=list)
    """Why the turn's numbers may mislead (latency that ran where calls cannot overlap);
    written last, and only when not empty."""
    error_kind: ErrorKind | None = field(default=None, repr=False)
    """Whose problem ``error`` is (:func:`agentkit.core.errors.kind_of`); not written."""
    started: float = field(default=0.0, repr=False)
    """Virtual time the turn began (not written; a timeline of spans starts each turn
    here)."""
    role_calls: list[RoleCallTrace] = field(default_factory=list, repr=False)
    """The calls of the harness's roles filed into this turn (its details show each); only
    their sums are written, in ``totals.roles``."""
    world: dict[str, Any] | None = None
    """The scenario world after the turn: its ``state`` (plain data) and its ``changes``
    since the start of the run (:func:`~agentkit.trace.state_changes`); written after the
    memory, and only for a scenario with a ``world:``."""
    raised: UserCode | None = field(default=None, repr=False)
    """Where the user's code raised the turn's ``error``, when it did (not written)."""
    limit: str | None = field(default=None, repr=False)
    """The limit the agent ended the turn at while its model asked for more (``max_function_
    calls=5``), when it did (not written: what the model asked last is in the steps)."""

    @property
    def llm_calls(self) -> list[LLMCallTrace]:
        return [c for s in self.steps for c in s.llm_calls]

    @property
    def tool_calls(self) -> list[ToolCallTrace]:
        return [c for s in self.steps for c in s.tool_calls]


@dataclass
class TraceTotals:
    steps: int
    llm_calls: int
    tool_calls: int
    tool_errors: int
    prompt_tokens: int
    completion_tokens: int
    wall_time: float
    serial_time: float
    critical_path: float
    roles: dict[str, dict[str, int]] = field(default_factory=dict)
    """Per harness role (``judge``, ``user``): its LLM calls and tokens, apart from the
    agent's (written only when a role made calls)."""


@dataclass
class Trace:
    scenario: str
    agent: str
    turns: list[TurnTrace]
    world: dict[str, Any] | None = None
    """The scenario world at the start of the run (``{"start": state}``), before the agent
    was built; written after the tools, and only for a scenario with a ``world:``."""

    @property
    def steps(self) -> list[StepTrace]:
        return [s for t in self.turns for s in t.steps]

    @property
    def tools(self) -> list[dict[str, Any]]:
        """Every tool offered in the run, each distinct description once, in order of first
        offer."""
        seen: list[dict[str, Any]] = []
        for turn in self.turns:
            seen += [spec for spec in turn.tools if spec not in seen]
        return seen

    @property
    def llm_calls(self) -> list[LLMCallTrace]:
        return [c for t in self.turns for c in t.llm_calls]

    @property
    def tool_calls(self) -> list[ToolCallTrace]:
        return [c for t in self.turns for c in t.tool_calls]

    def totals(self) -> TraceTotals:
        llm = self.llm_calls
        tools = self.tool_calls
        intervals = [(c.started, c.latency) for c in llm] + [(c.started, c.latency) for c in tools]
        roles: dict[str, dict[str, int]] = {}
        for call in (c for t in self.turns for c in t.role_calls):
            sums = roles.setdefault(call.role, {"llm_calls": 0, "prompt_tokens": 0,
                                                "completion_tokens": 0})
            sums["llm_calls"] += 1
            sums["prompt_tokens"] += (call.usage or {}).get("prompt_tokens", 0)
            sums["completion_tokens"] += (call.usage or {}).get("completion_tokens", 0)
        return TraceTotals(
            steps=len(self.steps), llm_calls=len(llm), tool_calls=len(tools),
            tool_errors=sum(c.is_error for c in tools),
            prompt_tokens=sum((c.usage or {}).get("prompt_tokens", 0) for c in llm),
            completion_tokens=sum((c.usage or {}).get("completion_tokens", 0) for c in llm),
            wall_time=_round(sum(t.wall_time for t in self.turns)),
            serial_time=_round(sum(t.serial_time for t in self.turns)),
            critical_path=_round(critical_path(intervals)), roles=roles)

    def to_dict(self, redactor: Redactor | None = None) -> dict[str, Any]:
        """The JSON-ready form (what snapshots, ``--trace-dir``, reports and recordings store),
        with what any text may hold redacted: keys, bearer tokens, URL passwords, typed into a
        turn or returned by a tool. Values of this machine's environment are not looked at, so
        a trace is the same on every machine; a recording passes a ``redactor`` that also takes
        out its backend's secrets and those values, as in its cassette."""
        lists = ListWriter()
        data: dict[str, Any] = {"format": TRACE_FORMAT, "scenario": self.scenario,
                                "agent": self.agent, "tools": self.tools}
        if self.world is not None:
            data["world"] = self.world
        data["turns"] = [_turn_dict(t, f"/turns/{i}", lists) for i, t in enumerate(self.turns)]
        data["totals"] = _totals_dict(self.totals())
        redacted: dict[str, Any] = (redactor or Redactor(environ={})).data(data)
        return redacted

    def to_json(self, redactor: Redactor | None = None) -> str:
        return json.dumps(self.to_dict(redactor), indent=2, ensure_ascii=False) + "\n"


def _totals_dict(totals: TraceTotals) -> dict[str, Any]:
    data = asdict(totals)
    if not data["roles"]:
        del data["roles"]  # a run without judges or a simulated user keeps its shape
    return data


@dataclass
class SampledTrace:
    """The traces of a sampled recording's runs, one per sample in sample order: what the
    snapshot of a sampled agent type holds (``{"format": 3, "samples": [trace, ...]}``)."""

    samples: list[Trace]

    def to_dict(self, redactor: Redactor | None = None) -> dict[str, Any]:
        return {"format": TRACE_FORMAT,
                "samples": [trace.to_dict(redactor) for trace in self.samples]}

    def to_json(self, redactor: Redactor | None = None) -> str:
        return json.dumps(self.to_dict(redactor), indent=2, ensure_ascii=False) + "\n"


def _drop_internal(data: dict[str, Any]) -> dict[str, Any]:
    data.pop("started", None)
    data.pop("scheduled", None)
    data.pop("issued", None)
    data.pop("model", None)
    data.pop("provider", None)
    data.pop("finished", None)
    data.pop("raised", None)
    return {k: v for k, v in data.items() if v is not None or k in ("response", "output")}


def _call_dict(call: LLMCallTrace, pointer: str, lists: ListWriter) -> dict[str, Any]:
    data = _drop_internal(asdict(replace(call, messages=[])))  # messages: shared, not copied
    data["messages"] = lists.write(f"{pointer}/messages", call.messages)
    return data


def _turn_dict(turn: TurnTrace, pointer: str, lists: ListWriter) -> dict[str, Any]:
    steps = []
    for number, step in enumerate(turn.steps):
        at = f"{pointer}/steps/{number}/llm_calls"
        item = {"index": step.index, "input": step.input, "is_last": step.is_last,
                "output": step.output,
                "llm_calls": [_call_dict(c, f"{at}/{i}", lists)
                              for i, c in enumerate(step.llm_calls)],
                "tool_calls": [_drop_internal(asdict(c)) for c in step.tool_calls]}
        if step.error is not None:
            item["error"] = step.error
        _add_details(item, step.details)
        steps.append(item)
    data: dict[str, Any] = {"user": turn.user, "steps": steps, "response": turn.response}
    if turn.error is not None:
        data["error"] = turn.error
    _add_details(data, turn.details)
    data["memory"] = lists.write(f"{pointer}/memory", turn.memory)
    if turn.world is not None:
        data["world"] = turn.world
    data["time"] = {"wall": _round(turn.wall_time), "serial": _round(turn.serial_time)}
    if turn.warnings:
        data["warnings"] = list(turn.warnings)
    return data


def _add_details(target: dict[str, Any], details: dict[str, Any]) -> None:
    for key, value in details.items():
        if key in target:
            raise ValueError(f"trace detail `{key}` would overwrite a core field of the trace")
        target[key] = _jsonable(value)


def critical_path(intervals: Iterable[tuple[float, float]]) -> float:
    """Longest chain of (start, duration) intervals in which each starts after the last ends."""
    spans = sorted(((start, start + duration) for start, duration in intervals),
                   key=lambda s: s[1])
    best: list[float] = []
    for index, (start, end) in enumerate(spans):
        before = [best[j] for j in range(index) if spans[j][1] <= start + 1e-9]
        best.append((end - start) + max(before, default=0.0))
    return max(best, default=0.0)


def _response_dict(response: ChatResponse | None, ids: IdNormalizer) -> dict[str, Any] | None:
    if response is None:
        return None
    message = response.message
    data: dict[str, Any] = {"content": message.content}
    calls = message.additional_kwargs.get("tool_calls")  # the property copies them: read once
    if calls:
        data["tool_calls"] = [ids.tool_call(c) for c in calls]
    return data


TraceHandler = Callable[["TurnBuilder", Any], None]
_HANDLERS: dict[type, TraceHandler] = {}


def trace_handler(*event_types: type) -> Callable[[TraceHandler], TraceHandler]:
    """Register how events of ``event_types`` (and their subclasses) go into a turn's trace.

    This is the extension point for new kinds of events (a plan, a hand-off, an agent's
    output): a handler gets the :class:`TurnBuilder` and the event, and files what the trace
    needs -- into a step's or the turn's ``details`` for anything the core fields do not
    cover. Events with no handler are ignored.
    """
    def register(handler: TraceHandler) -> TraceHandler:
        for event_type in event_types:
            _HANDLERS[event_type] = handler
        _resolved.clear()
        TRACED.clear()
        return handler
    return register


_resolved: dict[type, TraceHandler | None] = {}


def _traced(event_type: type) -> bool:
    """Whether a turn's trace reads events of ``event_type``: those with a handler, and every
    other kind whose span no other event tells (``Event.span_told``), since any event may hold
    a span that the calls' owners are looked up through (:meth:`TurnBuilder.owner`). Events
    fed or not, the trace is the same: ``seq`` only orders the events it reads."""
    return _handler_for(event_type) is not None or not getattr(event_type, "span_told", False)


TRACED = EventFilter(_traced)
"""The event types a turn's trace reads (``collect_events(TRACED)``): not a streamed chunk
or a workflow step's end, which then are not even built when nobody else listens for them."""


def _handler_for(event_type: type) -> TraceHandler | None:
    if event_type not in _resolved:
        _resolved[event_type] = next(
            (_HANDLERS[t] for t in event_type.__mro__ if t in _HANDLERS), None)
    return _resolved[event_type]


class TurnBuilder:
    """One turn being assembled from its events: each event goes to its registered handler;
    an LLM or tool call belongs to the nearest enclosing step span."""

    def __init__(self, events: Sequence[Event], ids: IdNormalizer) -> None:
        self.ids = ids
        self._events = events
        self._parents: dict[str, str | None] | None = None
        self.steps: dict[str, StepTrace] = {}
        self.order: list[StepTrace] = []
        self.orphans = StepTrace(index=-1, input=None, is_last=False, output=None)
        self.starts: dict[str, Event] = {}
        self.details: dict[str, Any] = {}
        self.state: dict[str, Any] = {}
        """Handlers' own bookkeeping across events of the turn (never written to the trace)."""
        self.tools: list[dict[str, Any]] = []
        self.seq = 0
        """How many events were fed so far: the place of the current one."""
        self.limit: str | None = None
        """The limit the agent stopped at (:class:`AgentLimitEvent`), if it did."""
        self.role_calls: list[RoleCallTrace] = []
        """Calls of the harness's roles (judges, simulated users): counted apart."""
        self._messages: dict[int, tuple[ChatMessage, dict[str, Any]]] = {}
        self._sent: tuple[list[int], list[dict[str, Any]]] = ([], [])
        self._offered: dict[int, tuple[dict[str, Any], dict[str, Any]]] = {}

    def message(self, message: ChatMessage) -> dict[str, Any]:
        """:meth:`IdNormalizer.message`, once per message object of the turn: an agent sends
        the same messages with every call (its memory), and nothing changes them while the
        turn's trace is built."""
        found = self._messages.get(id(message))
        if found is None:
            found = self._messages[id(message)] = (message, self.ids.message(message))
        return found[1]

    def messages(self, messages: Sequence[ChatMessage]) -> list[dict[str, Any]]:
        """:meth:`message` of each of an LLM call's messages. An agent's call resends the
        last call's messages and adds to it: when the message objects before are the last
        call's (compared by identity: the events hold them), only the added ones are looked
        up."""
        ids = [*map(id, messages)]
        before, converted = self._sent
        if before and ids[:len(before)] == before:
            converted = [*converted, *self._each(messages[len(before):])]
        else:
            converted = self._each(messages)
        self._sent = ids, converted
        return converted

    def _each(self, messages: Sequence[ChatMessage]) -> list[dict[str, Any]]:
        """:meth:`message` of each of ``messages``, in one loop (no call per message the turn
        converted before)."""
        kept, convert = self._messages, self.ids.message
        converted = []
        for message in messages:
            found = kept.get(id(message))
            if found is None:
                found = kept[id(message)] = (message, convert(message))
            converted.append(found[1])
        return converted

    def offer(self, tools: Iterable[dict[str, Any]]) -> None:
        """Note tools the agent offered (name, description, parameters), each once. An agent
        offers the same spec objects with every call, and the events hold them while the
        turn's trace is built: each object is converted once (kept, like :meth:`message`)."""
        for given in tools:
            found = self._offered.get(id(given))
            if found is None:
                found = self._offered[id(given)] = (given, _jsonable(given))
            if found[1] not in self.tools:
                self.tools.append(found[1])

    def new_step(self, span_id: str, input: str | None) -> StepTrace:
        """Open a step for the span ``span_id``; calls inside that span belong to it."""
        step = StepTrace(index=len(self.order), input=input, is_last=False, output=None)
        self.steps[span_id] = step
        self.order.append(step)
        return step

    @property
    def parents(self) -> dict[str, str | None]:
        """Each span of the turn's events with its parent span; mapped when first asked for
        (most calls are made in their step's own span: :meth:`owner` needs none)."""
        if self._parents is None:
            parents: dict[str, str | None] = {}
            for event in self._events:
                if event.span_id is not None and event.span_id not in parents:
                    parents[event.span_id] = event.parent_id
            self._parents = parents
        return self._parents

    def owner(self, span: str | None) -> StepTrace:
        """The step a span belongs to (the nearest enclosing step span)."""
        if span in self.steps:
            return self.steps[span]
        while span is not None:
            if span in self.steps:
                return self.steps[span]
            span = self.parents.get(span)
        return self.orphans

    def feed(self, events: Iterable[Event]) -> None:
        """Hand each event, in turn, to the handler registered for its class."""
        resolved = _resolved
        for event in events:
            self.seq += 1
            kind = type(event)
            handler = resolved[kind] if kind in resolved else _handler_for(kind)
            if handler is not None:
                handler(self, event)

    def finish(self) -> list[StepTrace]:
        if self.orphans.llm_calls or self.orphans.tool_calls or self.orphans.details:
            self.orphans.index = len(self.order)
            self.order.append(self.orphans)
        for step in self.order:  # in the order they started, not the order they finished
            step.tool_calls.sort(key=lambda call: (call.started, call.issued))
        return self.order


@trace_handler(AgentStepStartEvent)
def _step_start(turn: TurnBuilder, event: AgentStepStartEvent) -> None:
    if event.span_id is not None:
        turn.new_step(event.span_id, getattr(event.step, "input", None))


@trace_handler(AgentStepEndEvent)
def _step_end(turn: TurnBuilder, event: AgentStepEndEvent) -> None:
    step = turn.steps.get(event.span_id or "")
    if step is None:
        return
    step.is_last = event.is_last
    step.error = event.error
    output = getattr(event.output, "output", None)
    step.output = None if output is None else str(output)


@trace_handler(ToolCallStartEvent)
def _call_start(turn: TurnBuilder, event: Event) -> None:
    if event.span_id:
        turn.starts[event.span_id] = event
        issued: dict[str, int] = turn.state.setdefault("issued", {})
        issued[event.span_id] = turn.seq


@trace_handler(LLMCallStartEvent)
def _llm_call_start(turn: TurnBuilder, event: LLMCallStartEvent) -> None:
    _call_start(turn, event)
    turn.offer(event.tools or [])


@trace_handler(AgentLimitEvent)
def _limit(turn: TurnBuilder, event: AgentLimitEvent) -> None:
    turn.limit = f"{event.limit}={event.value}"


@trace_handler(ToolsOfferedEvent)
def _tools_offered(turn: TurnBuilder, event: ToolsOfferedEvent) -> None:
    turn.offer(event.tools)


@trace_handler(LLMCallEndEvent)
def _llm_call_end(turn: TurnBuilder, event: LLMCallEndEvent) -> None:
    start = turn.starts.get(event.span_id or "")
    tools = start.tools if isinstance(start, LLMCallStartEvent) else None
    ids = turn.ids
    step = turn.steps.get(event.parent_id or "")  # the usual owner: the step's own span
    (step or turn.owner(event.parent_id)).llm_calls.append(LLMCallTrace(
        kind=event.kind, messages=turn.messages(event.messages),
        response=_response_dict(event.response, ids),
        usage=event.usage.model_dump() if event.usage is not None else None,
        latency=round(event.latency, 6), error=event.error,
        tools=[t["name"] for t in tools] if tools is not None else None,
        started=event.time - event.latency, model=event.model,
        provider=event.provider))


@trace_handler(ToolCallEndEvent)
def _tool_call_end(turn: TurnBuilder, event: ToolCallEndEvent) -> None:
    issued = turn.state.get("issued", {}).get(event.span_id or "", turn.seq)
    step = turn.steps.get(event.parent_id or "")  # the usual owner: the step's own span
    (step or turn.owner(event.parent_id)).tool_calls.append(ToolCallTrace(
        id=turn.ids(event.tool_id), name=event.tool_name, args=_jsonable(event.arguments),
        output=str(event.output), is_error=event.is_error,
        latency=round(event.latency, 6), started=event.time - event.latency, agent=event.agent,
        scheduled=isinstance(event.exception, SimulatedToolError), issued=issued,
        finished=turn.seq, raised=UserCode.of(event.exception)))


def build_turn(user: str, events: Sequence[Event], ids: IdNormalizer, *,
               response: str | None, error: str | None, memory: Sequence[ChatMessage],
               wall_time: float, serial_time: float,
               warnings: Sequence[str] = (), error_kind: ErrorKind | None = None,
               started: float = 0.0, raised: UserCode | None = None) -> TurnTrace:
    """Assemble one turn from its events (see :func:`trace_handler`); ``started`` is the
    virtual time the turn began, ``raised`` where the user's code raised its ``error``."""
    turn = TurnBuilder(events, ids)
    turn.feed(events)
    return TurnTrace(user=user, steps=turn.finish(), response=response, error=error,
                     memory=ids.memory(memory, convert_all=turn._each), wall_time=wall_time,
                     serial_time=serial_time, details=turn.details, tools=turn.tools,
                     warnings=list(warnings), error_kind=error_kind, started=started,
                     role_calls=turn.role_calls, raised=raised, limit=turn.limit)


def extend_turn(turn: TurnTrace, events: Sequence[Event], ids: IdNormalizer) -> None:
    """File events that came after ``turn`` was built -- an LLM judge's verdicts on it -- into
    it, through the same handlers (:func:`trace_handler`): what they add to the turn's
    ``details`` is appended to what is there."""
    builder = TurnBuilder(events, ids)
    builder.feed(events)
    for key, value in builder.details.items():
        if isinstance(value, list) and isinstance(turn.details.get(key), list):
            turn.details[key].extend(value)
        else:
            turn.details[key] = value
    turn.role_calls.extend(builder.role_calls)
