"""The bridge: an OpenAI-compatible endpoint answered by any agentkit LLM.

:class:`Bridge` answers ``POST {base}/chat/completions`` (JSON, or SSE when the request
streams; tool calls, parallel tool calls, usage), the Responses API's ``POST {base}/responses``
(:mod:`agentkit.bridge.responses_wire`; ``previous_response_id`` chains are kept per bridge:
:meth:`Bridge.conversation`), Anthropic's ``POST {base}/messages``
(:mod:`agentkit.bridge.messages_wire`) and ``GET {base}/models`` with the model it is
given: a scenario's script or the one rendered from its trajectory, a cassette, or -- while
recording -- the live model it proxies to (a :class:`~agentkit.recording.RecordingLLM`,
which records the exchanges into the cassette as it does for agentkit's own agents). Requests
are read and answers written by the wire format of :mod:`agentkit.llms.openai_wire`, the one
the fake OpenAI endpoint uses too; every model call goes into the agent's trace through
:class:`~agentkit.bridge.wire_trace.WireTrace`.

It is transport-free: :meth:`Bridge.handle` (sync) and :meth:`Bridge.ahandle` (async) take a
method, a path and a body and give an :class:`HTTPAnswer`, which the in-process httpx
transport (:mod:`agentkit.bridge.transport`) and the loopback server
(:mod:`agentkit.bridge.server`) put on their wire. Every bridge has state of its own (its
model, its turns), so bridges in other threads or processes never mix.

Errors are HTTP statuses with OpenAI-style bodies (Anthropic-style on ``/messages``):

* a malformed request (not JSON, a message without a role, an unknown parameter...) -> 400
  naming the field; an unknown path -> 404; a known path with another method -> 405;
* a request the harness cannot answer (a cassette miss, a script that ran out, a trajectory
  the agent left) -> 400 naming the scenario, the turn and (a cassette miss) the nearest
  recorded request; the run then fails with that error, as agentkit's own agents' runs do;
  any other failure of the harness -> 500, failing the run likewise;
* an error the model gives (a scripted or recorded 429, 500...) -> its status, ``retry-after``
  included: the agent handles it as it would a live one's; a scripted timeout or connection
  failure is acted out by the transport.
"""

from __future__ import annotations

import asyncio
import json
import threading
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urlsplit

from agentkit.bridge.messages_wire import WIRE as MESSAGES_WIRE
from agentkit.bridge.messages_wire import error_body as anthropic_error
from agentkit.bridge.messages_wire import message_body, message_events, parse_messages_request
from agentkit.bridge.responses_wire import WIRE as RESPONSES_WIRE
from agentkit.bridge.responses_wire import (
    named_sse_body,
    parse_responses_request,
    response_body,
    response_events,
)
from agentkit.bridge.wire_trace import WireStep, WireTrace, WireTurn
from agentkit.core.errors import RecordingMismatchError
from agentkit.core.events import dispatcher
from agentkit.core.sim import now, run_sync
from agentkit.llms import errors
from agentkit.llms.base import LLM
from agentkit.llms.openai_wire import (
    EPOCH,
    RequestError,
    WireReply,
    WireRequest,
    WireTool,
    completion_body,
    completion_events,
    error_body,
    http_date,
    http_error_for,
    parse_request,
    sse_body,
)
from agentkit.llms.types import ChatMessage, ChatResponse, Usage
from agentkit.recording import RecordedLLMError, current_wire, on_wire

__all__ = ["Bridge", "HTTPAnswer", "DEFAULT_BASE_URL", "API_KEY"]

_WIRES = ("/chat/completions", "/responses", "/messages")
"""The endpoints of model calls, each read and answered by its wire (module docstring)."""

DEFAULT_BASE_URL = "http://bridge.agentkit.invalid/v1"
"""The base URL of an in-process bridge (a reserved name: nothing on the network answers it)."""
API_KEY = "agentkit-bridge"
"""The API key a bridge hands out; it accepts any key (it is never a secret)."""


@dataclass
class HTTPAnswer:
    """What a bridge answers: status, headers and body -- or, for a scripted timeout or
    connection failure, no answer at all (``failure``), which the transport acts out."""

    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    failure: Literal["timeout", "connect"] | None = None

    @classmethod
    def json(cls, status: int, data: Any, headers: dict[str, str] | None = None) -> HTTPAnswer:
        return cls(status, {"content-type": "application/json", **(headers or {})},
                   json.dumps(data).encode())


class Bridge:
    """An OpenAI-compatible endpoint answered by ``llm`` (see the module docstring).

    ``scenario`` names the run in error messages; ``external`` marks an agent in another
    process (the loopback server of ``agentkit serve``), whose turns end when a request begins
    the next one. :attr:`wire` holds the turns the harness opens (:meth:`WireTrace.turn`)."""

    def __init__(self, llm: LLM, *, scenario: str | None = None, external: bool = False,
                 base_url: str = DEFAULT_BASE_URL) -> None:
        self.llm = llm
        self.base_url = base_url.rstrip("/")
        self.wire = WireTrace(scenario=scenario, external=external)
        self._prefix = urlsplit(self.base_url).path.rstrip("/")
        self._answers = 0
        self._messages: dict[str, ChatMessage] = {}  # every message read, by its JSON
        self._read: dict[str, list[ChatMessage]] = {}  # the same, of the Messages API
        self._offered: dict[str, list[WireTool]] = {}  # every tools array read, by its JSON
        self._conversations: dict[str, list[ChatMessage]] = {}  # by Responses API answer id
        self._lock = threading.Lock()  # sync callers take turns: one exchange at a time
        self._count = threading.Lock()

    @property
    def model(self) -> str:
        """The model name the bridge lists (its LLM's)."""
        return self.llm.metadata.model_name

    # ------------------------------------------------------------------ entry points
    def handle(self, method: str, path: str, body: bytes) -> HTTPAnswer:
        """Answer one HTTP request (from sync code: a sync client, a server thread)."""
        routed = self._route(method, path, body)
        if not isinstance(routed, tuple):
            return self._shaped(path, routed)
        request, turn = routed
        with self._lock:
            answer: HTTPAnswer = turn.context.copy().run(self._exchange, request, turn)
        return self._shaped(path, answer)

    async def ahandle(self, method: str, path: str, body: bytes) -> HTTPAnswer:
        """Answer one HTTP request (from async code: an async client)."""
        routed = self._route(method, path, body)
        if not isinstance(routed, tuple):
            return self._shaped(path, routed)
        request, turn = routed
        # the turn's context (clock, ids, listeners), whichever loop the client runs on
        task = asyncio.get_running_loop().create_task(self._aexchange(request, turn),
                                                      context=turn.context.copy())
        return self._shaped(path, await task)

    def stop(self) -> None:
        """Answer no more model calls (503) and end the turn of an agent in another process."""
        self.wire.stop()

    # ------------------------------------------------------------------ routing
    def _route(self, method: str, path: str,
               body: bytes) -> HTTPAnswer | tuple[WireRequest, WireTurn]:
        """An answer for anything but a model call to make; else its request and turn."""
        if not path.startswith(self._prefix + "/"):
            return self._unknown(method, path)
        endpoint = path[len(self._prefix):].rstrip("/")
        if endpoint in _WIRES:
            if method != "POST":
                return self._wrong_method(method, path, "POST")
            try:
                request = self._parse(endpoint, body)
                return request, self.wire.turn_for(request)
            except RequestError as exc:
                return self._request_error(exc)
        if endpoint == "/models" or endpoint.startswith("/models/"):
            if method != "GET":
                return self._wrong_method(method, path, "GET")
            return self._models(endpoint.removeprefix("/models").lstrip("/"))
        return self._unknown(method, path)

    def _parse(self, endpoint: str, body: bytes) -> WireRequest:
        """The request of a model call, read by the wire of its endpoint."""
        if endpoint == "/responses":
            return parse_responses_request(body, self._messages, self.conversation)
        if endpoint == "/messages":
            return parse_messages_request(body, self._read)
        return parse_request(body, self._messages, self._offered)

    def conversation(self, response_id: str) -> list[ChatMessage] | None:
        """The conversation a Responses API answer of this bridge ended (its request's input,
        after the instructions, and its reply): what ``previous_response_id`` continues."""
        with self._count:
            return self._conversations.get(response_id)

    def _shaped(self, path: str, answer: HTTPAnswer) -> HTTPAnswer:
        """An error answer to the Messages API in Anthropic's shape (the others are
        OpenAI's)."""
        if answer.status < 400 or not path.rstrip("/").endswith(self._prefix + "/messages"):
            return answer
        error = json.loads(answer.body)["error"]
        return HTTPAnswer.json(answer.status, anthropic_error(answer.status, error["message"]),
                               {k: v for k, v in answer.headers.items() if k != "content-type"})

    def _unknown(self, method: str, path: str) -> HTTPAnswer:
        return HTTPAnswer.json(404, error_body(
            f"Unknown request URL: {method} {path}. The agentkit bridge serves POST "
            f"{self._prefix}/chat/completions, POST {self._prefix}/responses, POST "
            f"{self._prefix}/messages and GET {self._prefix}/models.",
            code="unknown_url"), self._headers())

    def _wrong_method(self, method: str, path: str, allowed: str) -> HTTPAnswer:
        return HTTPAnswer.json(405, error_body(
            f"{method} is not allowed on {path}; use {allowed}", code="method_not_allowed"),
            {**self._headers(), "allow": allowed})

    def _models(self, wanted: str) -> HTTPAnswer:
        model = {"id": self.model, "object": "model", "created": int(EPOCH.timestamp()),
                 "owned_by": "agentkit"}
        if not wanted:
            return HTTPAnswer.json(200, {"object": "list", "data": [model]}, self._headers())
        if wanted == self.model:
            return HTTPAnswer.json(200, model, self._headers())
        return HTTPAnswer.json(404, error_body(
            f"The model `{wanted}` does not exist; this bridge serves `{self.model}`",
            code="model_not_found"), self._headers())

    def _headers(self) -> dict[str, str]:
        return self._numbered()[1]

    def _numbered(self) -> tuple[int, dict[str, str]]:
        """The next answer's number, and its headers (date, request id)."""
        with self._count:
            self._answers += 1
            number = self._answers
        return number, {"date": http_date(now()), "x-request-id": f"req_{number}"}

    def _request_error(self, error: RequestError) -> HTTPAnswer:
        return HTTPAnswer.json(error.status, error.body(), self._headers())

    # ------------------------------------------------------------------ a model call
    def _exchange(self, request: WireRequest, turn: WireTurn) -> HTTPAnswer:
        """One model call from sync code, in the turn's context: the step opens, the model
        answers (its sync call: a replayed answer with no latency to wait out takes no trip
        through the event loop), the step ends (:class:`WireTrace`)."""
        step = self._begin(request, turn)
        if isinstance(step, HTTPAnswer):
            return step
        try:
            with dispatcher.resume(step.span):
                asked = (self._ask(request) if not request.stream
                         else run_sync(self._aask(request)))
        except Exception as exc:  # noqa: BLE001 (every failure is an HTTP answer)
            return self._failure(step, exc)
        return self._answered(step, request, *asked)

    async def _aexchange(self, request: WireRequest, turn: WireTurn) -> HTTPAnswer:
        """:meth:`_exchange` from async code."""
        step = self._begin(request, turn)
        if isinstance(step, HTTPAnswer):
            return step
        try:
            with dispatcher.resume(step.span):
                asked = await self._aask(request)
        except Exception as exc:  # noqa: BLE001 (every failure is an HTTP answer)
            return self._failure(step, exc)
        return self._answered(step, request, *asked)

    def _begin(self, request: WireRequest, turn: WireTurn) -> WireStep | HTTPAnswer:
        try:
            return self.wire.begin(turn, request)
        except RequestError as exc:
            return self._request_error(exc)

    def _answered(self, step: WireStep, request: WireRequest, message: ChatMessage,
                  usage: Usage, chunks: list[str] | None) -> HTTPAnswer:
        self.wire.answered(step, request, message)
        return self._completion(request, message, usage, chunks)

    def _options(self, request: WireRequest) -> dict[str, Any]:
        """The model call's options: the request's, and its tools."""
        options: dict[str, Any] = dict(request.options)
        if request.tools is not None:
            options.update(tools=request.tools, tool_choice=request.tool_choice,
                           allow_parallel_tool_calls=request.parallel_tool_calls)
        return options

    def _ask(self, request: WireRequest) -> tuple[ChatMessage, Usage, list[str] | None]:
        """The model's reply to ``request`` (not streamed), from sync code."""
        with _on_wire(request):
            response = self.llm.chat(request.messages, **self._options(request))
        return response.message, _usage(response), None

    async def _aask(self, request: WireRequest) -> tuple[ChatMessage, Usage, list[str] | None]:
        """The model's reply to ``request``: its message, usage and (streamed) text chunks."""
        options = self._options(request)
        if not request.stream:
            with _on_wire(request):
                response = await self.llm.achat(request.messages, **options)
            return response.message, _usage(response), None
        last: ChatResponse | None = None
        deltas: list[str] = []
        with _on_wire(request):
            async for chunk in await self.llm.astream_chat(request.messages, **options):
                last = chunk
                if chunk.delta:
                    deltas.append(chunk.delta)
        if last is None:
            raise RuntimeError(f"the model {self.model!r} streamed no chunk at all")
        text = last.message.content or ""
        return last.message, _usage(last), deltas if "".join(deltas) == text else None

    def _completion(self, request: WireRequest, message: ChatMessage, usage: Usage,
                    chunks: list[str] | None) -> HTTPAnswer:
        """The answer to ``request`` in its wire's format (JSON, or its stream's events)."""
        number, headers = self._numbered()
        created = int(_EPOCH + now())
        reply = WireReply.of(message, usage, chunks)
        stream = {**headers, "content-type": "text/event-stream"} if request.stream else {}
        if request.wire == RESPONSES_WIRE:
            with self._count:
                self._conversations[f"resp_{number}"] = [
                    *request.messages[request.conversation:], message]
            if not request.stream:
                return HTTPAnswer.json(200, response_body(
                    request, reply, usage, number=number, created=created), headers)
            return HTTPAnswer(200, stream, named_sse_body(response_events(
                request, reply, usage, number=number, created=created)))
        if request.wire == MESSAGES_WIRE:
            if not request.stream:
                return HTTPAnswer.json(200, message_body(request, reply, usage, number=number),
                                       headers)
            return HTTPAnswer(200, stream, named_sse_body(message_events(
                request, reply, usage, number=number)))
        envelope: dict[str, Any] = {"completion_id": f"chatcmpl-{number}",
                                    "model": request.model, "created": created}
        if not request.stream:
            return HTTPAnswer.json(200, completion_body(reply, usage, **envelope), headers)
        events = completion_events(reply, usage if request.include_usage else None, **envelope)
        return HTTPAnswer(200, stream, sse_body(events))

    def _failure(self, step: WireStep, error: Exception) -> HTTPAnswer:
        """The answer to a model call that failed (module docstring)."""
        answer = http_error_for(error)
        if answer is not None:  # the model's own error answer: the agent handles it
            self.wire.failed(step, error, fails_run=False)
            status, headers, body = answer.answer(now())
            return HTTPAnswer.json(status, body, {**self._headers(), **headers})
        if isinstance(error, (TimeoutError, errors.APIConnectionError, ConnectionError)):
            self.wire.failed(step, error, fails_run=False)
            return HTTPAnswer(0, failure="timeout" if isinstance(error, TimeoutError)
                              else "connect")
        if isinstance(error, (errors.LLMError, RecordedLLMError)):
            self.wire.failed(step, error, fails_run=False)
            return HTTPAnswer.json(502 if isinstance(error, errors.LLMError) else 500, error_body(
                f"the model failed: {type(error).__name__}: {error}", type="server_error"),
                self._headers())
        self.wire.failed(step, error, fails_run=True)
        cannot_answer = isinstance(error, RecordingMismatchError)
        message = (f"agentkit bridge: {self.wire.where(step.turn)}: "
                   f"{type(error).__name__}: {error}")
        return HTTPAnswer.json(400 if cannot_answer else 500, error_body(
            message, type="invalid_request_error" if cannot_answer else "server_error",
            code="unanswerable_request" if cannot_answer else "agentkit_error"),
            {**self._headers(), "x-should-retry": "false"})


_EPOCH = EPOCH.timestamp()


def _on_wire(request: WireRequest) -> AbstractContextManager[None]:
    """:func:`~agentkit.recording.on_wire` for the request's model call; nothing to do for
    chat completions when no other wire is set (the usual call)."""
    if request.wire is None and current_wire() is None:
        return nullcontext()
    return on_wire(request.wire)


def _usage(response: ChatResponse) -> Usage:
    """The call's usage (every agentkit model reports one; an estimate when it gives none)."""
    usage = response.usage
    return Usage(prompt_tokens=usage.prompt_tokens, completion_tokens=usage.completion_tokens,
                 total_tokens=usage.total_tokens) if usage is not None else Usage()

