"""The chat.completions wire format, both sides: one implementation of it in agentkit.

**Client side** (the OpenAI backend reads the HTTP body itself, the SDK's raw response): our
messages as the request's JSON (:func:`to_openai_messages`), and answers and SSE streams read
from the server's bytes. Every way a server can get an answer wrong is one :class:`WireError`
saying what was wrong, which the backend turns into a typed :mod:`agentkit.llms.errors` error:

* a body or an SSE event that is not JSON, or JSON of another shape (``choices`` missing, a
  message that is not an object, ...) -> :class:`~agentkit.llms.errors.MalformedResponseError`
  naming the field;
* JSON past agentkit's limits -- a body, an event or a tool call's arguments nested too deep
  (:data:`~agentkit.core.yamlsafe.MAX_DEPTH` levels; arguments :data:`MAX_ARGUMENT_DEPTH`), an
  integer longer than Python converts -> the same, never a ``RecursionError``;
* an answer, or a finished stream, with no choices -> the same, "no choices";
* a stream that ends before ``[DONE]`` and without a finish_reason ->
  :class:`~agentkit.llms.errors.IncompleteStreamError` ("stream ended before completion");
* an ``error`` event in a stream -> :class:`~agentkit.llms.errors.LLMError` with the server's
  message.

``ChatResponse.raw`` is the decoded JSON the server sent (the completion, or the last chunk).

**Server side** (the fake endpoint of :mod:`agentkit.recording` and the bridge of
:mod:`agentkit.bridge`): a request body read into our messages and tools
(:func:`parse_request`; a malformed one is a :class:`RequestError` with the HTTP status and the
OpenAI-style error body naming the field), and answers written -- a completion, the SSE events
of a streamed one (text deltas, tool-call argument deltas, a usage chunk), OpenAI-style error
bodies (:func:`error_body`, :class:`HTTPError`).
"""

from __future__ import annotations

import base64
import functools
import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agentkit.core.bounded import BoundedStore
from agentkit.core.ids import new_id
from agentkit.core.textfiles import JsonLimitError, loads_json
from agentkit.core.yamlsafe import MAX_DEPTH
from agentkit.llms import errors
from agentkit.llms.mock import split_words
from agentkit.llms.types import (
    ChatMessage,
    ChatResponse,
    ImageBlock,
    MessageRole,
    TextBlock,
    ToolSelection,
    Usage,
    fix_message,
)

__all__ = [
    # the client side
    "WireError", "parse_completion", "SSEDecoder", "StreamAssembler", "tool_selection",
    "to_openai_messages", "MAX_ARGUMENT_DEPTH", "image_block", "checked_tool", "chosen_tool",
    # the server side
    "RequestError", "WireRequest", "WireTool", "parse_request", "from_openai_messages",
    "ANSWER_OPTIONS", "IGNORED_OPTIONS", "WireReply", "completion_body", "completion_events",
    "sse_body", "usage_body", "error_body", "HTTPError", "http_error_for", "http_date", "EPOCH",
]

#: How deep a tool call's arguments may nest: a cassette and a trace keep them a few levels
#: down their own structure, which must stay within the MAX_DEPTH every file is read with.
MAX_ARGUMENT_DEPTH = MAX_DEPTH // 2


class WireError(Exception):
    """The server's answer cannot be read; ``error`` is the agentkit error class to raise."""

    def __init__(self, detail: str, error: type[errors.LLMError] = errors.MalformedResponseError
                 ) -> None:
        super().__init__(detail)
        self.detail = detail
        self.error = error


# --------------------------------------------------------------------------- shapes
class _Wire(BaseModel):
    model_config = ConfigDict(extra="ignore")


class _Function(_Wire):
    name: str | None = None
    arguments: str | None = None


class _ToolCall(_Wire):
    index: int = 0
    id: str | None = None
    function: _Function | None = None


class _Message(_Wire):
    content: str | None = None
    tool_calls: list[_ToolCall] | None = None
    refusal: str | None = None


class _Choice(_Wire):
    index: int = 0
    message: _Message
    finish_reason: str | None = None


class _Usage(_Wire):
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    total_tokens: int | None = None


class _Completion(_Wire):
    choices: list[_Choice]
    usage: _Usage | None = None


class _Delta(_Wire):
    content: str | None = None
    tool_calls: list[_ToolCall] | None = None


class _ChunkChoice(_Wire):
    index: int = 0
    delta: _Delta = Field(default_factory=_Delta)
    finish_reason: str | None = None


class _Chunk(_Wire):
    choices: list[_ChunkChoice] = Field(default_factory=list)
    usage: _Usage | None = None


def _decoded(text: str | bytes, what: str, *, max_depth: int = MAX_DEPTH) -> Any:
    try:
        if isinstance(text, bytes):
            text = text.decode(json.detect_encoding(text))
        return loads_json(text, max_depth=max_depth)
    except UnicodeDecodeError:
        raise WireError(f"{what} is not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise WireError(f"{what} is not valid JSON ({exc.msg} at position {exc.pos})"
                        ) from None
    except JsonLimitError as exc:
        raise WireError(f"{what} exceeds agentkit's limits: {exc.problem} (line {exc.line}, "
                        f"column {exc.column})") from None


def _checked(model: type[_Wire], value: Any, what: str) -> Any:
    try:
        return model.model_validate(value)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top level)"
        message = re.sub(r" or instance of \w+$", "", first["msg"])  # no internal names
        raise WireError(f"{what} is not a chat.completions object: {where}: {message}"
                        ) from None


# --------------------------------------------------------------------------- mapping
def _assistant(text: str, calls: Sequence[ToolSelection] = ()) -> ChatMessage:
    kwargs = {"tool_calls": list(calls)} if calls else {}
    return ChatMessage(role=MessageRole.ASSISTANT, content=text, additional_kwargs=kwargs)


def tool_selection(tool_id: str | None, name: str, arguments: str | None) -> ToolSelection:
    """A tool call; arguments that are not a JSON object become ``arguments_error`` (the
    model can try again), arguments past agentkit's limits a :class:`WireError`."""
    tool_id = tool_id or new_id("call")  # some compatible servers send no id
    text = arguments or ""
    if not text.strip():
        return ToolSelection(tool_id=tool_id, tool_name=name, tool_kwargs={})
    try:
        value = loads_json(text, max_depth=MAX_ARGUMENT_DEPTH)
    except json.JSONDecodeError as exc:
        problem = f"they are not valid JSON ({exc.msg} at position {exc.pos})"
    except JsonLimitError as exc:
        raise WireError(f"the arguments of tool call `{name}` exceed agentkit's limits: "
                        f"{exc.problem} (line {exc.line}, column {exc.column})") from None
    else:
        if isinstance(value, dict):
            return ToolSelection(tool_id=tool_id, tool_name=name, tool_kwargs=value)
        problem = f"they are a JSON {type(value).__name__}, not an object"
    return ToolSelection(tool_id=tool_id, tool_name=name, tool_kwargs={}, arguments_error=(
        f"Could not read the arguments of tool `{name}`: {problem}. Arguments received: "
        f"{text[:300]!r}. Call the tool again with a JSON object of arguments."))


def _usage(usage: _Usage | None) -> Usage | None:
    if usage is None:
        return None
    return Usage(prompt_tokens=usage.prompt_tokens or 0,
                 completion_tokens=usage.completion_tokens or 0,
                 total_tokens=usage.total_tokens or 0)


def parse_completion(body: bytes) -> ChatResponse:
    """The answer of a non-streamed chat.completions call, from its body."""
    value = _decoded(body, "the answer")
    completion = _checked(_Completion, value, "the answer")
    if not completion.choices:
        raise WireError("the answer has no choices")
    choice = completion.choices[0]
    message = choice.message
    calls = [tool_selection(call.id, call.function.name or "", call.function.arguments)
             for call in message.tool_calls or [] if call.function is not None]
    extra: dict[str, Any] = {"finish_reason": choice.finish_reason}
    if message.refusal:
        extra["refusal"] = message.refusal
    return ChatResponse(message=_assistant(message.content or "", calls), raw=value,
                        usage=_usage(completion.usage), additional_kwargs=extra)


# --------------------------------------------------------------------------- streams
_LINE_END = re.compile(rb"\r\n|\n|\r")


class SSEDecoder:
    """Splits a server-sent-events byte stream into events: ``(event name, data)`` pairs."""

    def __init__(self) -> None:
        self._buffer = b""
        self._event = ""
        self._data: list[str] = []

    def feed(self, chunk: bytes) -> list[tuple[str, str]]:
        """The events completed by ``chunk`` (a partial line waits for the next one)."""
        self._buffer += chunk
        events: list[tuple[str, str]] = []
        while True:
            end = _LINE_END.search(self._buffer)
            if end is None or (end.group() == b"\r" and end.end() == len(self._buffer)):
                return events  # no whole line yet (a lone \r may be half of \r\n)
            line, self._buffer = self._buffer[:end.start()], self._buffer[end.end():]
            if not line:
                if self._data:
                    events.append((self._event, "\n".join(self._data)))
                self._event, self._data = "", []
                continue
            if line.startswith(b":"):
                continue  # a comment (keep-alive)
            name, _, value = line.partition(b":")
            try:
                text = value.removeprefix(b" ").decode("utf-8")
            except UnicodeDecodeError:
                raise WireError("a stream line is not UTF-8 text") from None
            if name == b"data":
                self._data.append(text)
            elif name == b"event":
                self._event = text

    def close(self) -> list[tuple[str, str]]:
        """The last event, if the stream ended without the blank line after it."""
        events = self.feed(b"\n") if self._buffer.endswith(b"\r") else []  # a last lone \r
        if self._data:
            events.append((self._event, "\n".join(self._data)))
        self._event, self._data = "", []
        return events


class StreamAssembler:
    """Turns SSE events into cumulative :class:`ChatResponse` chunks.

    Text chunks carry the message so far and the new ``delta``; tool-call argument deltas are
    reassembled per index (and reported in ``additional_kwargs["tool_call_delta"]``, like the
    mock backends); :meth:`final` carries the tool calls, usage and finish reason, or raises
    if the stream was cut short.
    """

    def __init__(self) -> None:
        self.text = ""
        self.calls: dict[int, dict[str, Any]] = {}
        self.usage: Usage | None = None
        self.finish_reason: str | None = None
        self.raw: Any = None
        self.events = 0
        self.choices_seen = False
        self.done = False

    def feed(self, event: str, data: str) -> Iterator[ChatResponse]:
        if data.strip() == "[DONE]":
            self.done = True
            return
        self.events += 1
        what = f"stream event {self.events}"
        value = _decoded(data, what)
        if event == "error" or (isinstance(value, dict) and "error" in value):
            error = value.get("error") if isinstance(value, dict) else value
            message = error.get("message") if isinstance(error, dict) else error
            raise WireError(f"error in the stream: {message or data}", errors.LLMError)
        chunk = _checked(_Chunk, value, what)
        self.raw = value
        if chunk.usage is not None:
            self.usage = _usage(chunk.usage)
        for choice in chunk.choices:
            self.choices_seen = True
            if choice.index != 0:
                continue
            if choice.finish_reason:
                self.finish_reason = choice.finish_reason
            if choice.delta.content:
                self.text += choice.delta.content
                yield ChatResponse(message=_assistant(self.text), delta=choice.delta.content,
                                   raw=value)
            for call in choice.delta.tool_calls or []:
                yield self._feed_call(call, value)

    def _feed_call(self, call: _ToolCall, raw: Any) -> ChatResponse:
        slot = self.calls.setdefault(call.index, {"id": None, "name": "", "arguments": ""})
        if call.id:
            slot["id"] = call.id
        piece = ""
        if call.function is not None:
            if call.function.name and not slot["name"]:
                slot["name"] = call.function.name
            piece = call.function.arguments or ""
            slot["arguments"] += piece
        return ChatResponse(message=_assistant(self.text), delta="", raw=raw, additional_kwargs={
            "tool_call_delta": {"index": call.index, "tool_id": slot["id"],
                                "tool_name": slot["name"], "arguments_delta": piece}})

    def final(self) -> ChatResponse:
        """The whole answer; a stream cut short (no ``[DONE]``, no finish_reason) or one with no
        choices at all is a :class:`WireError`."""
        if not self.done and self.finish_reason is None:
            raise WireError("stream ended before completion (no finish_reason and no [DONE] "
                            f"after {self.events} event(s))", errors.IncompleteStreamError)
        if not self.choices_seen:
            raise WireError("the answer has no choices")
        calls = [tool_selection(slot["id"], slot["name"], slot["arguments"])
                 for _, slot in sorted(self.calls.items())]
        return ChatResponse(message=_assistant(self.text, calls), delta="", raw=self.raw,
                            usage=self.usage,
                            additional_kwargs={"finish_reason": self.finish_reason})


# --------------------------------------------------------------------------- requests (client)
def to_openai_messages(messages: Sequence[ChatMessage]) -> list[dict[str, Any]]:
    """Our messages in chat.completions format (images as ``image_url`` parts)."""
    return [_to_openai_message(message, index) for index, message in enumerate(messages)]


def _to_openai_message(message: ChatMessage, index: int) -> dict[str, Any]:
    role = message.role.value
    if message.role == MessageRole.TOOL:
        call_id = message.additional_kwargs.get("tool_call_id")
        if not call_id:
            raise ValueError(f"message #{index} (role tool) has no additional_kwargs"
                             "['tool_call_id']; OpenAI needs it to pair the result with the "
                             "assistant's tool call")
        return {"role": role, "tool_call_id": call_id, "content": message.content or ""}
    has_images = any(isinstance(block, ImageBlock) for block in message.blocks)
    if has_images and message.role != MessageRole.USER:
        raise ValueError(f"message #{index} ({role}) has an image block; OpenAI accepts images "
                         "in user messages only")
    # never null: some OpenAI-compatible servers (llama.cpp) reject a null content
    data: dict[str, Any] = {"role": role,
                            "content": _content_parts(message) if has_images else message.content or ""}
    if message.role == MessageRole.ASSISTANT and message.tool_calls:
        data["tool_calls"] = [
            {"id": call.tool_id, "type": "function",
             "function": {"name": call.tool_name, "arguments": json.dumps(call.tool_kwargs)}}
            for call in message.tool_calls]
    if message.additional_kwargs.get("name"):
        data["name"] = message.additional_kwargs["name"]
    return data


def _content_parts(message: ChatMessage) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for block in message.blocks:
        if isinstance(block, TextBlock):
            parts.append({"type": "text", "text": block.text})
        else:
            image_url = {"url": block.as_url()}
            if block.detail:
                image_url["detail"] = block.detail
            parts.append({"type": "image_url", "image_url": image_url})
    return parts


# --------------------------------------------------------------------------- requests (server)
class RequestError(Exception):
    """A request the server side will not answer: its HTTP status and what is wrong, where
    (``param``: the request field, e.g. ``messages[2].role``), as an OpenAI-style error body."""

    def __init__(self, message: str, *, status: int = 400, param: str | None = None,
                 code: str | None = None, type: str = "invalid_request_error") -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.param = param
        self.code = code
        self.type = type

    def body(self) -> dict[str, Any]:
        return error_body(self.message, type=self.type, param=self.param, code=self.code)


def error_body(message: str, *, type: str = "invalid_request_error", param: str | None = None,
               code: str | None = None) -> dict[str, Any]:
    """An OpenAI-style error body: ``{"error": {"message", "type", "param", "code"}}``."""
    return {"error": {"message": message, "type": type, "param": param, "code": code}}


class _WireToolMetadata:
    """What a backend reads of an offered tool, from the request's JSON (see :class:`WireTool`)."""

    def __init__(self, name: str, description: str, parameters: dict[str, Any]) -> None:
        self.name = name
        self.description = description
        self.parameters = parameters
        self.fn_schema_str = json.dumps(parameters)

    def get_parameters_dict(self) -> dict[str, Any]:
        parameters: dict[str, Any] = json.loads(self.fn_schema_str)
        return parameters

    def to_openai_tool(self, skip_length_check: bool = False) -> dict[str, Any]:
        return {"type": "function", "function": {
            "name": self.name, "description": self.description,
            "parameters": self.get_parameters_dict()}}


class WireTool:
    """A tool a request offers (name, description, JSON-schema parameters): what a model backend
    needs of a tool (its ``metadata``), without anything to call -- the client runs it."""

    def __init__(self, name: str, description: str = "",
                 parameters: dict[str, Any] | None = None) -> None:
        self.metadata = _WireToolMetadata(name, description,
                                          parameters if parameters is not None
                                          else {"type": "object", "properties": {}})

    def __repr__(self) -> str:
        return f"WireTool({self.metadata.name!r})"


@dataclass
class WireRequest:
    """A chat.completions request as the server side reads it: our messages and tools, and
    what else decides the answer (``options``: sampling and format parameters, as sent)."""

    body: dict[str, Any]
    model: str
    messages: list[ChatMessage]
    tools: list[WireTool] | None = None
    tool_choice: str | dict[str, Any] | None = None
    parallel_tool_calls: bool = True
    stream: bool = False
    include_usage: bool = False
    options: dict[str, Any] = field(default_factory=dict)
    wire: str | None = None
    """The API it came over when not chat completions (``openai_responses``,
    ``anthropic_messages``: :data:`agentkit.recording.WIRES`)."""
    conversation: int = 0
    """Where the conversation begins in ``messages``: after the system messages the request's
    own ``instructions`` or ``system`` made (a Responses API chain keeps what follows)."""

    def last_text(self) -> str:
        """The last user or tool message's text (for messages naming the request)."""
        return next((m.content or "" for m in reversed(self.messages)
                     if m.role in (MessageRole.USER, MessageRole.TOOL)), "")


#: Request parameters that decide the answer: kept as the request's ``options`` (a recording
#: keeps them, a live model gets them).
ANSWER_OPTIONS = ("temperature", "top_p", "max_tokens", "max_completion_tokens", "seed", "stop",
                  "presence_penalty", "frequency_penalty", "logit_bias", "logprobs",
                  "top_logprobs", "response_format", "reasoning_effort", "verbosity",
                  "modalities", "audio", "prediction", "web_search_options")
#: Request parameters that do not change the answer's content (bookkeeping, caching): accepted
#: and not passed on.
IGNORED_OPTIONS = ("user", "metadata", "store", "service_tier", "safety_identifier",
                   "prompt_cache_key", "prompt_cache_options", "prompt_cache_retention",
                   "moderation")
_MAPPED = ("model", "messages", "tools", "tool_choice", "parallel_tool_calls", "stream",
           "stream_options", "n")
_KNOWN_KEYS = frozenset((*_MAPPED, *ANSWER_OPTIONS, *IGNORED_OPTIONS))
_ANSWER_KEYS = frozenset(ANSWER_OPTIONS)
_ROLES = {"system": MessageRole.SYSTEM, "developer": MessageRole.SYSTEM,
          "user": MessageRole.USER, "assistant": MessageRole.ASSISTANT,
          "tool": MessageRole.TOOL}


def parse_request(content: bytes, known: dict[str, ChatMessage] | None = None,
                  offered: dict[str, list[WireTool]] | None = None) -> WireRequest:
    """A chat.completions request body read into our messages and tools; anything malformed
    or unsupported is a :class:`RequestError` (HTTP 400) naming the field. ``known``: the
    messages read from earlier requests of the conversation (see
    :func:`from_openai_messages`); ``offered``: the tools read from them, by their JSON (a
    client offers the same tools with every request: read once, the same objects each time).
    With ``known``, a body read before (a replayed conversation sends the same bodies every
    time it is replayed) is not read again (:data:`_PARSED`)."""
    if known is not None:
        parsed = _PARSED.get(content)
        if parsed is not None:
            return parsed.again(known, offered)
    try:
        body = _decoded(content, "the request body")
    except WireError as exc:
        raise RequestError(f"{exc.detail}; send a chat.completions request as a JSON object"
                           ) from None
    if not isinstance(body, dict):
        raise RequestError(f"the request body is a JSON {_json_type(body)}, not an object "
                           "with `model` and `messages`")
    for key in body:
        if key not in _KNOWN_KEYS:
            hint = (" (the legacy function calling API: send `tools` instead)"
                    if key in ("functions", "function_call") else "")
            raise RequestError(f"Unrecognized request argument supplied: {key}{hint}",
                               param=key)
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise RequestError("you must provide a model parameter (a string)", param="model")
    if body.get("n") not in (None, 1):
        raise RequestError(f"n: only 1 choice per request is supported, got {body['n']!r}",
                           param="n")
    stream = _flag(body, "stream", False)
    options = body.get("stream_options")
    if options is not None and not isinstance(options, dict):
        raise RequestError("stream_options must be an object", param="stream_options")
    include_usage = bool(stream and options and options.get("include_usage"))
    tools = _tools(body.get("tools"), offered)
    keys: list[str] = []
    request = WireRequest(
        body=body, model=model, messages=_read_messages(body.get("messages"), known, keys),
        tools=tools, tool_choice=_tool_choice(body.get("tool_choice"), tools),
        parallel_tool_calls=_flag(body, "parallel_tool_calls", True), stream=stream,
        include_usage=include_usage,
        options=({key: body[key] for key in ANSWER_OPTIONS if body.get(key) is not None}
                 if not _ANSWER_KEYS.isdisjoint(body) else {}))
    if known is not None:
        _Parsed.keep(content, request, keys, repr(body["tools"]) if tools is not None else None)
    return request


@dataclass(frozen=True)
class _Parsed:
    """A request body :func:`parse_request` read, as it read it: the request, each message's
    key among the ``known`` messages, and the tools' among the ``offered`` ones."""

    request: WireRequest
    keys: list[str]
    tools: str | None

    @staticmethod
    def keep(content: bytes, request: WireRequest, keys: list[str], tools: str | None) -> None:
        """Keep ``request`` as what ``content`` reads as (:data:`_PARSED`, emptied first when
        it is full; a body of more than a sixteenth of it is not kept)."""
        kept = WireRequest(  # its own lists: the caller has the request's
            body=request.body, model=request.model, messages=list(request.messages),
            tools=list(request.tools) if request.tools is not None else None,
            tool_choice=request.tool_choice, parallel_tool_calls=request.parallel_tool_calls,
            stream=request.stream, include_usage=request.include_usage,
            options=dict(request.options))
        _PARSED.put(content, _Parsed(kept, keys, tools), len(content))

    def again(self, known: dict[str, ChatMessage],
              offered: dict[str, list[WireTool]] | None) -> WireRequest:
        """The request read again for a conversation whose messages and tools are ``known``
        and ``offered``: what it knows, else the objects read the first time (and now known),
        as :func:`from_openai_messages` and the tools' reader give them."""
        kept = self.request
        messages = []
        for key, message in zip(self.keys, kept.messages, strict=True):
            found = known.get(key)
            if found is None:
                found = known[key] = message
            messages.append(found)
        tools = kept.tools
        if tools is not None and offered is not None and self.tools is not None:
            tools = offered.setdefault(self.tools, list(tools))
        return WireRequest(
            body=kept.body, model=kept.model, messages=messages,
            tools=list(tools) if tools is not None else None, tool_choice=kept.tool_choice,
            parallel_tool_calls=kept.parallel_tool_calls, stream=kept.stream,
            include_usage=kept.include_usage, options=dict(kept.options), wire=kept.wire,
            conversation=kept.conversation)


_PARSED: BoundedStore[bytes, _Parsed] = BoundedStore(1024, 1 << 22)
"""The chat.completions bodies :func:`parse_request` read for a server's conversations (with
``known``), by their bytes: a body sent again -- the same conversation replayed -- is read as
it was (its messages and tools the same objects), not decoded, checked and read again. A body
that does not read (a 400) is never kept: it is refused every time. At most 1,024 bodies
and 4 MiB of them."""


def _json_type(value: Any) -> str:
    return {list: "array", str: "string", bool: "boolean", type(None): "null"}.get(
        type(value), "number")


def _flag(body: dict[str, Any], key: str, default: bool) -> bool:
    value = body.get(key)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise RequestError(f"{key} must be true or false, got {json.dumps(value)}", param=key)
    return value


def _tools(value: Any, offered: dict[str, list[WireTool]] | None = None) -> list[WireTool] | None:
    if value is None or value == []:
        return None
    if offered is None:
        return _read_tools(value)
    key = repr(value)  # as for messages: repr tells apart what JSON does, and is quicker
    found = offered.get(key)
    if found is None:
        found = _OFFERED.get(key)
        if found is None:
            found = _read_tools(value)
            _OFFERED.put(key, found)
        offered[key] = found
    return list(found)


_OFFERED: BoundedStore[str, list[WireTool]] = BoundedStore(256)
"""The tools :func:`_tools` read for any conversation, by their JSON's ``repr`` (as
:data:`_READ` keeps messages): a replayed conversation offers the same tools every time."""


def _read_tools(value: Any) -> list[WireTool]:
    if not isinstance(value, list):
        raise RequestError("tools must be an array of {\"type\": \"function\", \"function\": "
                           "{...}} objects", param="tools")
    tools = []
    for index, item in enumerate(value):
        where = f"tools[{index}]"
        function = item.get("function") if isinstance(item, dict) else None
        if not isinstance(item, dict) or item.get("type", "function") != "function" \
                or not isinstance(function, dict):
            raise RequestError(f"{where}: a tool must be {{\"type\": \"function\", \"function\": "
                               "{\"name\": ..., \"parameters\": {...}}}", param=where)
        tools.append(checked_tool(f"{where}.function", function.get("name"),
                                  function.get("description", ""), function.get("parameters")))
    return tools


def checked_tool(at: str, name: Any, description: Any, parameters: Any) -> WireTool:
    """A function tool of a request (Chat Completions or Responses), its fields checked;
    ``at`` is where they are in the body (``tools[0].function``)."""
    if not isinstance(name, str) or not name:
        raise RequestError(f"{at}.name: missing (a tool needs a name)", param=f"{at}.name")
    if not isinstance(description, str):
        raise RequestError(f"{at}.description must be a string", param=f"{at}.description")
    if parameters is not None and not isinstance(parameters, dict):
        raise RequestError(f"{at}.parameters must be a JSON schema object",
                           param=f"{at}.parameters")
    return WireTool(name, description, parameters)


def chosen_tool(name: str, tools: list[WireTool] | None) -> dict[str, Any]:
    """``tool_choice`` naming the function ``name``, which must be among ``tools``."""
    offered = [tool.metadata.name for tool in tools or []]
    if name not in offered:
        raise RequestError(f"tool_choice names the tool {name!r}, which is not among the "
                           f"offered tools ({', '.join(offered) or 'none'})",
                           param="tool_choice")
    return {"type": "function", "function": {"name": name}}


def _tool_choice(value: Any, tools: list[WireTool] | None) -> str | dict[str, Any] | None:
    if value is None or value in ("auto", "none", "required"):
        return value  # type: ignore[no-any-return]
    function = value.get("function") if isinstance(value, dict) else None
    name = function.get("name") if isinstance(function, dict) else None
    if not isinstance(name, str):
        raise RequestError("tool_choice must be \"auto\", \"none\", \"required\" or "
                           "{\"type\": \"function\", \"function\": {\"name\": ...}}",
                           param="tool_choice")
    return chosen_tool(name, tools)


def from_openai_messages(messages: Any,
                         known: dict[str, ChatMessage] | None = None) -> list[ChatMessage]:
    """A request's ``messages`` as our messages (the inverse of :func:`to_openai_messages`);
    a malformed message is a :class:`RequestError` naming it.

    ``known`` holds the messages read before, by their JSON, and gets the new ones: a client
    sends its whole conversation with every request, and a message sent again is the same
    object as the first time, fixed (:func:`~agentkit.llms.types.fix_message`) -- read once,
    known as the same message by whatever keeps track of messages (the trace), and what is
    worked out from it (a cassette's request hash) worked out once. A message ``known`` lacks
    is looked for among those any earlier conversation of the process read (:data:`_READ`):
    a replayed conversation sends the same messages every time it is replayed."""
    return _read_messages(messages, known, [])


def _read_messages(messages: Any, known: dict[str, ChatMessage] | None,
                   keys: list[str]) -> list[ChatMessage]:
    """:func:`from_openai_messages`, giving each message's key in ``known`` to ``keys``."""
    if not isinstance(messages, list) or not messages:
        raise RequestError("messages must be a non-empty array of messages", param="messages")
    if known is None:
        return [_from_openai_message(message, f"messages[{index}]")
                for index, message in enumerate(messages)]
    read = []
    for index, message in enumerate(messages):
        # a client sends a message the same way every time; repr tells apart what JSON does
        # (1 and true, 1 and 1.0, key order) and is quicker to write
        key = repr(message)
        keys.append(key)
        found = known.get(key)
        if found is None:
            found = _READ.get(key)
            if found is None:
                found = _from_openai_message(message, f"messages[{index}]")
                fix_message(found)
                _READ.put(key, found, len(key))
            known[key] = found
        read.append(found)
    return read


_READ: BoundedStore[str, ChatMessage] = BoundedStore(4096, 1 << 22)
"""The fixed messages :func:`from_openai_messages` read for any conversation, by their JSON's
``repr``: shared between conversations (a fixed message is read-only), each conversation
keeping its own in ``known`` as well (so emptying this, when it is full, changes no
conversation's objects). At most 4,096 messages and 4 Mi characters of their JSON (a message
over a sixteenth of that, an image, is kept by its conversation only)."""


def _from_openai_message(data: Any, where: str) -> ChatMessage:
    if not isinstance(data, dict):
        raise RequestError(f"{where}: a message must be an object with `role` and `content`",
                           param=where)
    role = _ROLES.get(data.get("role"))  # type: ignore[arg-type]
    if role is None:
        raise RequestError(f"{where}.role: {json.dumps(data.get('role'))} is not one of "
                           f"{', '.join(_ROLES)}", param=f"{where}.role")
    extra: dict[str, Any] = {}
    if isinstance(data.get("name"), str) and data["name"]:
        extra["name"] = data["name"]
    if role == MessageRole.TOOL:
        call_id = data.get("tool_call_id")
        if not isinstance(call_id, str) or not call_id:
            raise RequestError(f"{where}.tool_call_id: a tool message must say which tool call "
                               "it answers", param=f"{where}.tool_call_id")
        extra["tool_call_id"] = call_id
    if role == MessageRole.ASSISTANT and data.get("tool_calls"):
        extra["tool_calls"] = _message_calls(data["tool_calls"], f"{where}.tool_calls")
    content = data.get("content")
    if content is None or isinstance(content, str):
        if content is None and role in (MessageRole.USER, MessageRole.SYSTEM, MessageRole.TOOL):
            raise RequestError(f"{where}.content: missing (a {data['role']} message needs "
                               "content)", param=f"{where}.content")
        return ChatMessage(role=role, content=content or "", additional_kwargs=extra)
    blocks = _content_blocks(content, f"{where}.content", images=role == MessageRole.USER)
    return ChatMessage(role=role, blocks=blocks, additional_kwargs=extra)


def _message_calls(calls: Any, where: str) -> list[ToolSelection]:
    if not isinstance(calls, list):
        raise RequestError(f"{where} must be an array", param=where)
    selections = []
    for index, call in enumerate(calls):
        function = call.get("function") if isinstance(call, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str) \
                or not isinstance(call.get("id"), str):
            raise RequestError(f"{where}[{index}]: a tool call must be {{\"id\": ..., "
                               "\"type\": \"function\", \"function\": {\"name\": ..., "
                               "\"arguments\": \"...\"}}", param=f"{where}[{index}]")
        arguments = function.get("arguments")
        if arguments is not None and not isinstance(arguments, str):
            arguments = json.dumps(arguments)  # some clients send the object itself
        try:
            selections.append(tool_selection(call["id"], function["name"], arguments))
        except WireError as exc:
            raise RequestError(f"{where}[{index}]: {exc.detail}",
                               param=f"{where}[{index}]") from None
    return selections


def _content_blocks(parts: Any, where: str, *, images: bool) -> list[TextBlock | ImageBlock]:
    if not isinstance(parts, list):
        raise RequestError(f"{where} must be a string or an array of content parts",
                           param=where)
    blocks: list[TextBlock | ImageBlock] = []
    for index, part in enumerate(parts):
        at = f"{where}[{index}]"
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text" and isinstance(part.get("text"), str):
            blocks.append(TextBlock(text=part["text"]))
        elif kind == "image_url" and images:
            blocks.append(image_block(part.get("image_url"), at))
        else:
            allowed = "text and image_url" if images else "text"
            raise RequestError(f"{at}: unsupported content part {json.dumps(kind)} (this "
                               f"message takes {allowed} parts)", param=at)
    return blocks


_DATA_URL = re.compile(r"data:(?P<mime>[\w.+-]+/[\w.+-]+)?(?:;[\w-]+=[^;,]*)*;base64,(?P<data>.*)",
                       re.DOTALL)


def image_block(image: Any, where: str) -> ImageBlock:
    """An image part's ``{"url", "detail"}`` as an image block (a data: URL decoded); a
    malformed one is a :class:`RequestError` at ``where``."""
    url = image.get("url") if isinstance(image, dict) else None
    if not isinstance(url, str) or not url:
        raise RequestError(f"{where}.image_url.url: missing (an image part needs a URL or a "
                           "data: URL)", param=f"{where}.image_url.url")
    detail = image.get("detail") if isinstance(image.get("detail"), str) else None
    data = _DATA_URL.fullmatch(url)
    if data is None:
        return ImageBlock(url=url, detail=detail)
    try:
        raw = base64.b64decode(data["data"], validate=True)
    except ValueError:
        raise RequestError(f"{where}.image_url.url: the data: URL is not valid base64",
                           param=f"{where}.image_url.url") from None
    return ImageBlock(image=raw, image_mimetype=data["mime"], detail=detail)


# --------------------------------------------------------------------------- answers (server)
#: The wall-clock date that virtual time 0 stands for (``Date`` headers of scripted servers).
EPOCH = datetime(2025, 1, 1, tzinfo=UTC)
_ARGUMENT_PIECE = 8


def http_date(at: float) -> str:
    """The ``Date`` header value for virtual time ``at`` (whole seconds after :data:`EPOCH`)."""
    return _http_date(int(at))


@functools.lru_cache(maxsize=1024)  # every answer has one; most are of the same few seconds
def _http_date(seconds: int) -> str:
    return format_datetime(EPOCH + timedelta(seconds=seconds), usegmt=True)


@dataclass
class WireReply:
    """An answer to write: text, tool calls as ``(id, name, arguments JSON)``, usage, and the
    text's stream chunks (word chunks when None)."""

    text: str
    calls: list[tuple[str, str, str]] = field(default_factory=list)
    usage: Usage | None = None
    chunks: list[str] | None = None

    @classmethod
    def of(cls, message: ChatMessage, usage: Usage | None = None,
           chunks: list[str] | None = None) -> WireReply:
        """The reply that writes our assistant ``message``."""
        return cls(message.content or "", [(c.tool_id, c.tool_name, json.dumps(c.tool_kwargs))
                                           for c in message.tool_calls], usage, chunks)

    @property
    def finish_reason(self) -> str:
        return "tool_calls" if self.calls else "stop"


def usage_body(usage: Usage) -> dict[str, int]:
    return {"prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens,
            "total_tokens": usage.total_tokens}


def _envelope(obj: str, completion_id: str, model: str, created: int) -> dict[str, Any]:
    return {"id": completion_id, "object": obj, "created": created, "model": model}


def completion_body(reply: WireReply, usage: Usage, *, completion_id: str, model: str,
                    created: int) -> dict[str, Any]:
    """A ``chat.completion`` object answering with ``reply``."""
    message: dict[str, Any] = {"role": "assistant",
                               "content": reply.text if reply.text or not reply.calls else None}
    if reply.calls:
        message["tool_calls"] = [
            {"id": call_id, "type": "function", "function": {"name": name, "arguments": args}}
            for call_id, name, args in reply.calls]
    return {**_envelope("chat.completion", completion_id, model, created), "choices": [{
        "index": 0, "message": message, "logprobs": None,
        "finish_reason": reply.finish_reason}], "usage": usage_body(usage)}


def completion_events(reply: WireReply, usage: Usage | None, *, completion_id: str, model: str,
                      created: int) -> list[dict[str, Any]]:
    """The ``chat.completion.chunk`` events streaming ``reply``: a role chunk, the text chunks,
    each tool call's name then its arguments in pieces, the finish reason, and (when ``usage``
    is given: the request asked for it) a last chunk with the usage and no choices."""
    envelope = _envelope("chat.completion.chunk", completion_id, model, created)

    def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> dict[str, Any]:
        return {**envelope, "choices": [{"index": 0, "delta": delta, "logprobs": None,
                                         "finish_reason": finish_reason}]}

    events = [chunk({"role": "assistant", "content": ""})]
    pieces = reply.chunks if reply.chunks is not None else split_words(reply.text)
    events += [chunk({"content": piece}) for piece in pieces]
    for index, (call_id, name, args) in enumerate(reply.calls):
        events.append(chunk({"tool_calls": [{"index": index, "id": call_id, "type": "function",
                                             "function": {"name": name, "arguments": ""}}]}))
        events += [chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
                   for piece in _pieces(args)]
    events.append(chunk({}, reply.finish_reason))
    if usage is not None:
        events.append({**envelope, "choices": [], "usage": usage_body(usage)})
    return events


def sse_body(events: Sequence[dict[str, Any]]) -> bytes:
    """Server-sent events carrying ``events``, then ``data: [DONE]``."""
    lines = [f"data: {json.dumps(event)}\n\n" for event in events] + ["data: [DONE]\n\n"]
    return "".join(lines).encode()


def _pieces(text: str) -> list[str]:
    return [text[i:i + _ARGUMENT_PIECE] for i in range(0, len(text), _ARGUMENT_PIECE)]


@dataclass
class HTTPError:
    """An HTTP error answer: status, OpenAI-style body, and ``retry_after`` sent as
    ``retry-after`` seconds (``"seconds"``), ``retry-after-ms`` (``"ms"``) or an HTTP-date that
    many seconds after the response's ``Date`` (``"http-date"``)."""

    status: int
    message: str = "scripted error"
    retry_after: float | None = None
    retry_after_format: Literal["seconds", "ms", "http-date"] = "seconds"
    code: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    type: str = "scripted_error"

    def answer(self, at: float) -> tuple[int, dict[str, str], dict[str, Any]]:
        """Status, headers (``date`` is virtual time ``at``) and body of this answer."""
        headers = dict(self.headers)
        if self.retry_after is not None:
            if self.retry_after_format == "ms":
                headers["retry-after-ms"] = str(int(self.retry_after * 1000))
            elif self.retry_after_format == "http-date":
                headers["retry-after"] = http_date(at + self.retry_after)
            else:
                headers["retry-after"] = f"{self.retry_after:g}"
        return self.status, {"date": http_date(at), **headers}, error_body(
            self.message, type=self.type, code=self.code)


def http_error_for(error: BaseException) -> HTTPError | None:
    """The HTTP answer an agentkit model error stands for (``RateLimitError`` 429,
    ``ServerError`` 500 or its ``status_code``, ...; its ``retry_after`` kept), or None when it
    is not an HTTP answer: a timeout or a connection failure is the transport's to act out,
    any other exception the caller's to handle."""
    if isinstance(error, (TimeoutError, errors.APIConnectionError, ConnectionError)):
        return None
    if isinstance(error, errors.LLMError) and error.status_code is not None:
        code = "insufficient_quota" if isinstance(error, errors.QuotaExceededError) else None
        return HTTPError(error.status_code, error.message or "scripted error",
                         retry_after=error.retry_after, code=code)
    return None
