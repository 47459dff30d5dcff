"""The chat.completions wire format: answers and SSE streams read from the server's bytes.

The OpenAI backend reads the HTTP body itself (the SDK's raw response), so every way a server
can get an answer wrong is one :class:`WireError` saying what was wrong, which the backend
turns into a typed :mod:`agentkit.llms.errors` error:

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
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agentkit.core.ids import new_id
from agentkit.core.textfiles import JsonLimitError, loads_json
from agentkit.core.yamlsafe import MAX_DEPTH
from agentkit.llms import errors
from agentkit.llms.types import ChatMessage, ChatResponse, MessageRole, ToolSelection, Usage

__all__ = ["WireError", "parse_completion", "SSEDecoder", "StreamAssembler", "tool_selection",
           "MAX_ARGUMENT_DEPTH"]

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
