"""The shape of a cassette file, checked when it is loaded (not when a replay reaches it).

Every part a replay reads is validated here -- header numbers, each exchange's response
message, tool calls, usage and stream chunks, recorded errors, latencies -- so a malformed
cassette is a :class:`~agentkit.recording.CassetteError` naming the file, the line and
the field, never an agent failure with a raw pydantic or type error halfway through a run.
An unknown key is an error too, in the header as in an exchange (``lantecy: 2`` would
otherwise replay with no latency), and a recorded answer is the assistant's. What is free
form stays so: the canonical request (its hash decides the match), a message's
``additional_kwargs`` and its blocks.
"""

from __future__ import annotations

import difflib
import typing
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from agentkit.core.errors import one_line
from agentkit.core.models import Seconds
from agentkit.core.reflists import is_ref
from agentkit.core.yamlsafe import YamlLocations
from agentkit.llms.types import ChatMessage, MessageRole
from agentkit.recording._errors import CassetteError

__all__ = ["CassetteData", "ExchangeData", "MCPExchangeData", "MCP_HANDSHAKES", "MCP_METHODS",
           "MCPMethod", "PART_FORMATS", "check_cassette", "parts_of"]



class _Strict(BaseModel):
    """Unknown keys are errors: a misspelt key must not pass as a missing one (a newer
    agentkit that adds keys writes a newer ``format``)."""

    model_config = ConfigDict(extra="forbid")


class _ToolCallData(_Strict):
    tool_id: str
    tool_name: str
    tool_kwargs: dict[str, Any] = Field(default_factory=dict)
    arguments_error: str | None = None


class _MessageKwargs(_Strict):
    model_config = ConfigDict(extra="allow")
    tool_calls: list[_ToolCallData] | None = None


class _MessageData(_Strict):
    role: MessageRole = MessageRole.ASSISTANT
    content: str | None = None
    additional_kwargs: _MessageKwargs = Field(default_factory=_MessageKwargs)
    blocks: list[dict[str, Any]] | None = None

    @field_validator("role")
    @classmethod
    def _the_assistants(cls, role: MessageRole) -> MessageRole:
        if role is not MessageRole.ASSISTANT:
            raise ValueError(f"a recorded answer is the assistant's (role: assistant), got "
                             f"{role.value!r}")
        return role


class _UsageData(_Strict):
    prompt_tokens: int = Field(default=0, ge=0)
    completion_tokens: int = Field(default=0, ge=0)
    total_tokens: int = Field(default=0, ge=0)


class _ResponseData(_Strict):
    message: _MessageData | None = None
    usage: _UsageData | None = None
    chunks: list[str] | None = None

    @model_validator(mode="after")
    def _chunks_make_the_text(self) -> _ResponseData:
        if self.chunks is not None:
            text = (self.message.content if self.message else None) or ""
            if "".join(self.chunks) != text:
                raise ValueError("`chunks` must join to `message.content` (the streamed text "
                                 "is the answer's text)")
        return self


class _ErrorData(_Strict):
    type: str
    message: str = ""
    status_code: int | None = None


class _RoleKeyData(_Strict):
    """A role exchange's key (:class:`agentkit.recording.RoleKey`): the scenario field it
    serves, the model that answered, its subject's hashes and the transcript's."""

    at: str
    model: str | None = None
    rubric: str | None = None
    persona: str | None = None
    goal: str | None = None
    transcript: str


class ExchangeData(_Strict):
    """One recorded exchange: a request and its response (or error), with its latency; a
    harness role's (a judge's, a simulated user's) names its ``role`` and ``key``."""

    role: Literal["judge", "user"] | None = None
    key: _RoleKeyData | None = None
    wire: Literal["openai_responses", "anthropic_messages"] | None = None
    variant: str | None = Field(default=None, min_length=1)
    sample: int | None = Field(default=None, ge=0)
    request: dict[str, Any]
    request_hash: str | None = None
    response: _ResponseData | None = None
    error: _ErrorData | None = None
    latency: Seconds = 0.0

    @model_validator(mode="after")
    def _answered(self) -> ExchangeData:
        if self.response is None and self.error is None:
            raise ValueError("needs `response` (or `error`)")
        if (self.role is None) != (self.key is None):
            raise ValueError("a role exchange gives both `role` and `key` (an agent's, neither)")
        return self


MCP_HANDSHAKES = ("initialize", "server/discover")
"""The MCP handshake methods a cassette keeps the server's answer to (``agentkit mcp-proxy``
replays them to its client): each once per server, never a tool exchange to replay."""


MCPMethod = Literal["tools/list", "tools/call", "resources/list", "resources/templates/list",
                   "resources/read", "resources/subscribe", "resources/unsubscribe",
                   "prompts/list", "prompts/get", "completion/complete", "logging/setLevel"]
MCP_METHODS: tuple[MCPMethod, ...] = typing.get_args(MCPMethod)
"""The MCP requests a cassette keeps the exchanges of: a server's tools (what
:class:`~agentkit.tools.mcp.MCPToolset` replays), its resources, prompts and completions, and
the log level a client set and its resource subscriptions (what ``agentkit mcp-proxy``
replays besides)."""

_NAMED_BY = {"tools/call": ("name", "the tool"), "prompts/get": ("name", "the prompt"),
             "resources/read": ("uri", "the resource"), "resources/subscribe": ("uri", "the resource"),
             "resources/unsubscribe": ("uri", "the resource"),
             "logging/setLevel": ("level", "the level")}
"""The parameter a request of each method cannot do without, and what it names."""


class _MCPRequestData(_Strict):
    server: str
    method: Literal[MCPMethod, "initialize", "server/discover"]
    params: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _names_what_it_asks(self) -> _MCPRequestData:
        needed = _NAMED_BY.get(self.method)
        if needed is not None and not isinstance((self.params or {}).get(needed[0]), str):
            raise ValueError(f"a `{self.method}` request needs `params.{needed[0]}` "
                             f"({needed[1]})")
        if self.method == "completion/complete" and not all(
                isinstance((self.params or {}).get(key), dict) for key in ("ref", "argument")):
            raise ValueError("a `completion/complete` request needs `params.ref` and "
                             "`params.argument` (objects)")
        return self


class _MCPNotificationData(_Strict):
    """A notification the server sent while it answered the request (progress, a log
    message), kept in the order it came."""

    method: str
    params: dict[str, Any] | None = None

    @field_validator("method")
    @classmethod
    def _a_notification(cls, method: str) -> str:
        if not method.startswith("notifications/"):
            raise ValueError(f"`{method}` is not a notification (`notifications/...`)")
        return method


class _MCPErrorData(_Strict):
    code: int
    message: str = ""
    data: Any = None


class _MCPToolData(BaseModel):
    """A tool of a recorded ``tools/list`` (the MCP fields agentkit reads; others are kept)."""

    model_config = ConfigDict(extra="allow")
    name: str
    description: str | None = None
    inputSchema: dict[str, Any]


class _MCPContentData(BaseModel):
    """One content block of a recorded ``tools/call`` result."""

    model_config = ConfigDict(extra="allow")
    type: str


_LISTED = {"tools/list": ("tools", ("name",)),
           "resources/list": ("resources", ("uri", "name")),
           "resources/templates/list": ("resourceTemplates", ("uriTemplate", "name")),
           "prompts/list": ("prompts", ("name",)),
           "resources/read": ("contents", ("uri",)),
           "prompts/get": ("messages", ("role",))}
"""The list a result of each method holds, and the text fields each of its items needs."""


def _check_listed(method: str, response: dict[str, Any]) -> None:
    """A result of a method of :data:`_LISTED` holds its list, each item with its fields."""
    key, fields = _LISTED[method]
    items = response.get(key)
    if not isinstance(items, list):
        raise ValueError(f"a `{method}` result needs `{key}` (a list)")
    for index, item in enumerate(items):
        if method == "tools/list":
            _MCPToolData.model_validate(item)
            continue
        missing = next((f for f in fields if not isinstance(
            item.get(f) if isinstance(item, dict) else None, str)), None)
        if missing is not None:
            raise ValueError(f"`{key}[{index}]` of a `{method}` result needs "
                             f"`{missing}` (text)")
        content = item.get("content")
        if method == "prompts/get" and not (isinstance(content, dict) and isinstance(
                content.get("type"), str)):
            raise ValueError(f"`messages[{index}]` of a `prompts/get` result needs "
                             "`content` (a block with a `type`)")
        elif method == "resources/read" and not any(
                isinstance(item.get(f), str) for f in ("text", "blob")):
            raise ValueError(f"`contents[{index}]` of a `resources/read` result needs "
                             "`text` or `blob`")


class MCPExchangeData(_Strict):
    """One recorded MCP exchange: the request (server, method, params), the notifications the
    server sent while it answered, and its result (or JSON-RPC error), with its latency. The
    result's MCP shape is checked per method; a handshake's (:data:`MCP_HANDSHAKES`) request
    has no params."""

    request: _MCPRequestData
    request_hash: str | None = None
    notifications: list[_MCPNotificationData] | None = None
    response: dict[str, Any] | None = None
    error: _MCPErrorData | None = None
    latency: Seconds = 0.0

    @model_validator(mode="after")
    def _answered(self) -> MCPExchangeData:
        if (self.response is None) == (self.error is None):
            raise ValueError("needs exactly one of `response` (the result) or `error`")
        if self.response is None:
            return self
        method = self.request.method
        if method == "initialize":
            if not isinstance(self.response.get("protocolVersion"), str):
                raise ValueError("an `initialize` result needs `protocolVersion` (text)")
        elif method == "server/discover":
            versions = self.response.get("supportedVersions")
            if not isinstance(versions, list) or not all(isinstance(v, str) for v in versions):
                raise ValueError("a `server/discover` result needs `supportedVersions` (a list "
                                 "of protocol versions)")
        elif method in _LISTED:
            _check_listed(method, self.response)
        elif method == "completion/complete":
            completion = self.response.get("completion")
            if not isinstance(completion, dict) or not isinstance(completion.get("values"),
                                                                  list):
                raise ValueError("a `completion/complete` result needs `completion.values` "
                                 "(a list)")
        elif self.response.get("resultType") == "input_required":
            if not (isinstance(self.response.get("inputRequests"), dict)
                    or isinstance(self.response.get("requestState"), str)):
                raise ValueError(f"an input-required `{method}` result needs `inputRequests` "
                                 "(an object) or `requestState` (text)")
        elif method == "tools/call":
            content = self.response.get("content")
            if not isinstance(content, list):
                raise ValueError("a `tools/call` result needs `content` (a list of blocks)")
            for block in content:
                _MCPContentData.model_validate(block)
        return self


class _SamplingData(_Strict):
    temperature: float | None = None
    seed: int | None = None


class CassetteData(_Strict):
    """A cassette file's header and exchanges (its optional parts each need a minimum
    ``format``: :data:`PART_FORMATS`, checked by :func:`check_cassette`)."""

    format: Literal[1, 2, 3, 4, 5]
    model: str = "unknown"
    function_calling: bool = True
    context_window: int = Field(default=3900, ge=1)
    agent_type: str | None = None
    scenario: str | None = None
    test: str | None = None
    recorded_at: str | None = None
    agentkit_version: str | None = None
    base_url: str | None = None
    samples: int | None = Field(default=None, ge=1)
    sampling: _SamplingData | None = None
    complete: list[int] = Field(default_factory=list)
    redactions: list[str] = Field(default_factory=list)
    exchanges: list[ExchangeData]
    mcp_exchanges: list[MCPExchangeData] = Field(default_factory=list)

    @model_validator(mode="after")
    def _samples_fit(self) -> CassetteData:
        if self.samples is None:
            if self.sampling is not None or self.complete:
                raise ValueError("`sampling` and `complete` belong to a sampled cassette: give "
                                 "`samples` (how many runs it holds)")
            if any(e.sample is not None for e in self.exchanges):
                raise ValueError("an exchange's `sample` belongs to a sampled cassette: give "
                                 "`samples` (how many runs it holds)")
            return self
        for index, exchange in enumerate(self.exchanges):
            if exchange.sample is None:
                raise ValueError(f"exchanges.{index}: needs `sample` (which run it belongs to)")
            if exchange.sample >= self.samples:
                raise ValueError(f"exchanges.{index}.sample: {exchange.sample} is not one of "
                                 f"the {self.samples} samples (0-{self.samples - 1})")
        outside = [i for i in self.complete if not 0 <= i < self.samples]
        if outside:
            raise ValueError(f"complete: sample {outside[0]} is not one of the {self.samples} "
                             f"samples (0-{self.samples - 1})")
        return self


PART_FORMATS: dict[str, int] = {"samples": 2, "mcp_exchanges": 2, "role exchanges": 3,
                                "message references": 3, "wires": 4, "variants": 5}
"""The lowest cassette format that holds each optional part (the package docstring); a
cassette with none of them is format 1."""

_NEEDS = {
    "samples": "samples (`samples`, `sampling`, `complete`, an exchange's `sample`) are "
               "cassette format 2",
    "mcp_exchanges": "`mcp_exchanges` are cassette format 2",
    "role exchanges": "a role exchange (`role: judge|user`) belongs to a cassette of `format: 3`",
    "message references": "a message reference belongs to a cassette of `format: 3`",
    "wires": "an exchange's `wire` (the Responses or Messages API) belongs to a cassette of "
             "`format: 4`",
    "variants": "an exchange's `variant` (the fault variant whose continuation it is) belongs "
                "to a cassette of `format: 5`",
}


def parts_of(data: dict[str, Any]) -> list[tuple[tuple[str | int, ...], str]]:
    """The optional parts a cassette's data holds, each with where it first is (the key path):
    what decides the format it is written in and the format it must declare."""
    found: list[tuple[tuple[str | int, ...], str]] = []
    exchanges = data.get("exchanges")
    exchanges = exchanges if isinstance(exchanges, list) else []
    header = next((key for key in ("samples", "sampling", "complete")
                   if data.get(key) not in (None, [])), None)
    sampled = next((i for i, e in enumerate(exchanges)
                    if isinstance(e, dict) and e.get("sample") is not None), None)
    if header is not None:
        found.append(((header,), "samples"))
    elif sampled is not None:
        found.append((("exchanges", sampled, "sample"), "samples"))
    if data.get("mcp_exchanges"):
        found.append((("mcp_exchanges",), "mcp_exchanges"))
    role = next((i for i, e in enumerate(exchanges)
                 if isinstance(e, dict) and e.get("role") is not None), None)
    if role is not None:
        found.append((("exchanges", role), "role exchanges"))
    wire = next((i for i, e in enumerate(exchanges)
                 if isinstance(e, dict) and e.get("wire") is not None), None)
    if wire is not None:
        found.append((("exchanges", wire, "wire"), "wires"))
    variant = next((i for i, e in enumerate(exchanges)
                    if isinstance(e, dict) and e.get("variant") is not None), None)
    if variant is not None:
        found.append((("exchanges", variant, "variant"), "variants"))
    for index, exchange in enumerate(exchanges):
        request = exchange.get("request") if isinstance(exchange, dict) else None
        messages = request.get("messages") if isinstance(request, dict) else None
        at = next((j for j, m in enumerate(messages) if is_ref(m)), None) \
            if isinstance(messages, list) else None
        if at is not None:
            found.append((("exchanges", index, "request", "messages", at), "message references"))
            break
    return found


def _format_problems(data: dict[str, Any], declared: int, path: Path | None,
                     where: YamlLocations | None) -> list[tuple[int, str]]:
    """A part that needs a higher format than the file declares, at its line."""
    problems = []
    for loc, part in parts_of(data):
        need = PART_FORMATS[part]
        if need <= declared:
            continue
        line = where.line(loc) if where is not None else 0
        place = f"{path or '<cassette>'}{f':{line}' if where is not None else ''}"
        problems.append((line, f"{place}: {'.'.join(map(str, loc))}: {_NEEDS[part]}, but the "
                               f"file says `format: {declared}`; write `format: {need}` (or "
                               "re-record it)"))
    return problems


def check_cassette(data: dict[str, Any], path: Path | None,
                   where: YamlLocations | None) -> CassetteData:
    """The checked header and exchanges of a cassette file's data (each recorded message also
    as a full :class:`ChatMessage`, blocks and all), or a :class:`CassetteError` listing every
    problem, one line each, in file order."""
    problems: list[tuple[int, str]] = []
    place = str(path or "<cassette>")
    for key, line, first in where.duplicates if where is not None else ():
        problems.append((line, f"{place}:{line}: {'.'.join(map(str, key))}: duplicate key "
                               f"`{key[-1]}` (first at line {first}); remove one"))
    checked = None
    broken: set[Any] = set()  # the exchanges whose message has a problem already
    try:
        checked = CassetteData.model_validate(data)
    except ValidationError as exc:
        problems += _describe(path, exc, where)
        broken = {item["loc"][1] for item in exc.errors() if len(item["loc"]) >= 4
                  and (item["loc"][0], *item["loc"][2:4]) == ("exchanges", "response", "message")}
    exchanges = data.get("exchanges")
    for index, exchange in enumerate(exchanges if isinstance(exchanges, list) else ()):
        response = exchange.get("response") if isinstance(exchange, dict) else None
        message = response.get("message") if isinstance(response, dict) else None
        if message is None or index in broken:
            continue
        try:
            ChatMessage.model_validate(message)
        except ValidationError as exc:
            problems += _describe(path, exc, where, ("exchanges", index, "response", "message"))
    if checked is not None:
        problems += _format_problems(data, checked.format, path, where)
    if problems or checked is None:
        lines = dict.fromkeys(one_line(text) for _, text in sorted(problems, key=lambda p: p[0]))
        raise CassetteError("\n".join(lines))
    return checked


def _describe(path: Path | None, error: ValidationError, where: YamlLocations | None,
              prefix: tuple[str | int, ...] = ()) -> list[tuple[int, str]]:
    """``file:line: field.path: what is wrong`` for each problem (``field.path`` from the top
    of the file), with its line."""
    lines = []
    for item in error.errors():
        loc = (*prefix, *(p for p in item["loc"]
                          if not (isinstance(p, str) and p.startswith(("function-", "union[")))))
        dotted = ".".join(str(p) for p in loc) or "(top level)"
        place = str(path or "<cassette>")
        line = where.line(loc) if where is not None else 0
        if where is not None:
            place += f":{line}"
        message = item["msg"].removeprefix("Value error, ")
        if item["type"] == "extra_forbidden":
            message = _unknown_field(str(loc[-1]), loc[:-1])
        elif "input" in item and item["type"] not in ("missing", "value_error"):
            shown = repr(item["input"])
            message += f", got {shown if len(shown) <= 60 else shown[:57] + '...'}"
        lines.append((line, f"{place}: {dotted}: {message}"))
    return lines


def _unknown_field(name: str, parent: tuple[str | int, ...]) -> str:
    """"unknown field `x`" and the field meant (or the ones there are)."""
    known = sorted(_model_at(CassetteData, parent).model_fields)
    close = difflib.get_close_matches(name, known, n=1)
    hint = f"did you mean `{close[0]}`?" if close else f"known fields here: {', '.join(known)}"
    return f"unknown field `{name}`; {hint}"


def _model_at(model: type[BaseModel], loc: tuple[str | int, ...]) -> type[BaseModel]:
    """The model that validates the mapping at ``loc`` under ``model``."""
    for part in loc:
        if isinstance(part, str) and part in model.model_fields:
            model = _model_in(model.model_fields[part].annotation) or model
    return model


def _model_in(annotation: Any) -> type[BaseModel] | None:
    """The model inside ``X | None``, ``list[X]`` and the like."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for argument in typing.get_args(annotation):
        found = _model_in(argument)
        if found is not None:
            return found
    return None
