"""A fake OpenAI endpoint on respx, scripted like :class:`agentkit.llms.mock.ScriptedLLM`.

:class:`FakeOpenAIServer` answers ``POST {base_url}/chat/completions`` -- JSON, or SSE when the
request streams (text deltas, tool-call argument deltas, a usage chunk when the request asks
for ``stream_options.include_usage``) -- one script item per HTTP request (so a retried call
consumes one item per attempt). It records every request body in ``.requests``.

Script items, as for ScriptedLLM: ``str``, ``ChatMessage``, ``ScriptedResponse``, ``ChatResponse``,
``tool_call(...)`` / a list of them, a callable ``(messages, tools) -> item`` (here the JSON
messages and tools of the request), and exceptions:

* :class:`HTTPError` -> that HTTP status with an OpenAI-style error body (``retry_after`` as
  seconds, milliseconds or an HTTP-date);
* agentkit errors -> their HTTP status (``RateLimitError`` 429, ``ServerError`` 500 or its
  ``status_code``, ...); ``APITimeoutError``/``TimeoutError`` -> a transport timeout,
  ``APIConnectionError``/``ConnectionError`` -> a refused connection;
* any other exception is raised inside the transport, i.e. it reaches the caller unchanged.

Plus :class:`RawToolCall` (tool-call arguments sent verbatim, e.g. invalid JSON) and
``httpx.Response`` (sent as is). :meth:`FakeOpenAIServer.llm` builds an ``OpenAI`` whose HTTP
clients are routed to this server alone (an ``httpx.MockTransport``): servers in different
threads never mix. :meth:`FakeOpenAIServer.start` additionally patches ``httpx`` process-wide
with respx, so an ``OpenAI`` built elsewhere (the CLI's) and pointed at the server's
``base_url`` reaches it too.

The ``Date`` header is virtual time (``EPOCH`` + clock), so HTTP-date ``retry-after`` values
are deterministic. ``latency`` (per server, or ``ScriptedResponse.latency`` per reply) is
simulated server time on the virtual clock.

``mocks/openai_server.py`` re-exports it with a pytest fixture; the harness uses it
for scenarios with ``backend: openai``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Self

import httpx
import respx

from agentkit.core.sim import asleep, now, sleep
from agentkit.core.tokens import count_tokens
from agentkit.llms import errors
from agentkit.llms.base import DEFAULT_MODEL
from agentkit.llms.doubles import Excusable
from agentkit.llms.mock import CUT_MESSAGE, Script, ScriptedResponse, StreamCut
from agentkit.llms.openai_wire import (
    EPOCH,
    HTTPError,
    RequestError,
    WireReply,
    completion_body,
    completion_events,
    http_date,
    http_error_for,
    parse_request,
    sse_body,
)
from agentkit.llms.types import ChatMessage, ChatResponse, ToolSelection, Usage

if TYPE_CHECKING:
    from agentkit.llms.openai import OpenAI

__all__ = ["FakeOpenAIServer", "HTTPError", "RawToolCall", "EPOCH", "DEFAULT_BASE_URL",
           "TEST_API_KEY"]

DEFAULT_BASE_URL = "https://api.openai.com/v1"
TEST_API_KEY = "-".join(("sk", "test-fake-server-key"))  # built: no key-shaped text is tracked


@dataclass
class RawToolCall:
    """A tool call whose ``arguments`` string is served verbatim (it may be invalid JSON)."""

    name: str
    arguments: str
    id: str = "call_raw"


class FakeOpenAIServer(Excusable):
    """A scripted chat.completions endpoint (see the module docstring): a
    :class:`~agentkit.llms.doubles.ModelDouble` of the server, whose leftovers are the script's
    unused replies.

    With ``api_key`` set, requests carrying another bearer token get OpenAI's 401 answer (which,
    like OpenAI's, echoes a masked part of the key) and consume no script item.
    """

    def __init__(self, script: Iterable[Any] = (), *, base_url: str = DEFAULT_BASE_URL,
                 api_key: str | None = None, strict: bool = True, latency: float = 0.0) -> None:
        if not latency >= 0:
            raise ValueError(f"latency must be >= 0 seconds, got {latency!r}")
        self.script = Script(script, owner="FakeOpenAIServer", unit="request", strict=strict)
        self.latency = latency
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.requests: list[dict[str, Any]] = []
        self.http_requests: list[httpx.Request] = []
        self._router: respx.MockRouter | None = None

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> Self:
        router = respx.mock(base_url=self.base_url, assert_all_called=False,
                            assert_all_mocked=True)
        router.post("/chat/completions").mock(side_effect=self._handle)
        router.start()
        self._router = router
        return self

    def stop(self) -> None:
        if self._router is not None:
            self._router.stop()
            self._router = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, *exc: object) -> None:
        self.stop()
        if exc_type is None:
            self.assert_complete()

    def llm(self, model: str = DEFAULT_MODEL, **kwargs: Any) -> OpenAI:
        """An :class:`OpenAI` talking to this server through its own HTTP clients, routed to
        this server only (no :meth:`start` needed): runs in other threads with their own
        servers never see each other's replies."""
        kwargs.setdefault("api_key", self.api_key or TEST_API_KEY)
        if self.base_url != DEFAULT_BASE_URL:
            kwargs.setdefault("base_url", self.base_url)
        # one handler for both clients: it returns a coroutine only on a running loop (the async
        # client's case), which httpx's two handler types cannot say in one signature
        route: Any = self._route
        transport = httpx.MockTransport(route)
        kwargs.setdefault("http_client", httpx.Client(transport=transport))
        kwargs.setdefault("async_http_client", httpx.AsyncClient(transport=transport))
        from agentkit.llms.openai import OpenAI  # the SDK only when a client is built

        return OpenAI(model, **kwargs)

    # ------------------------------------------------------------------ script state
    @property
    def calls(self) -> int:
        """HTTP requests received."""
        return len(self.requests)

    @property
    def remaining(self) -> int:
        return self.script.remaining

    def leftovers(self) -> list[str]:
        left = self.remaining
        if not left:
            return []
        return [f"the script has {left} unused repl{'y' if left == 1 else 'ies'} (the endpoint "
                f"got {self.calls} requests)"]

    def assert_complete(self) -> None:
        """Fail if a strict script has items no request consumed (unless it was excused)."""
        if self.excused is None:
            self.script.assert_complete()

    @staticmethod
    def http_date(offset: float = 0.0) -> str:
        """The ``Date`` header value at virtual time ``now() + offset`` (whole seconds)."""
        return http_date(now() + offset)

    # ------------------------------------------------------------------ serving
    def _route(self, request: httpx.Request) -> httpx.Response | Awaitable[httpx.Response]:
        """What :meth:`start`'s router does for a client of :meth:`llm`: serve
        ``POST <base_url>/chat/completions``, nothing else."""
        if request.method == "POST" and str(request.url) == f"{self.base_url}/chat/completions":
            return self._handle(request)
        return httpx.Response(404, json={"error": {"message": f"FakeOpenAIServer serves POST "
                                                              f"{self.base_url}/chat/completions "
                                                              f"only, not {request.method} "
                                                              f"{request.url}"}})

    def _handle(self, request: httpx.Request) -> httpx.Response | Awaitable[httpx.Response]:
        try:
            parsed = parse_request(request.content)
        except RequestError as exc:  # what a real server says to a malformed request
            self.http_requests.append(request)
            return httpx.Response(exc.status, headers=self._headers(), json=exc.body())
        body = parsed.body
        self.requests.append(body)
        self.http_requests.append(request)
        if self.api_key is not None and request.headers.get("authorization") != f"Bearer {self.api_key}":
            return self._unauthorized(request)
        item = self.script.take(parsed.last_text())
        if callable(item) and not isinstance(item, (BaseException, type)):
            item = item(body.get("messages", []), body.get("tools"))
        latency = self.latency
        if isinstance(item, ScriptedResponse) and item.latency is not None:
            latency = item.latency
        if not latency:
            return self._respond(item, body, request)
        try:
            asyncio.get_running_loop()
        except RuntimeError:  # the sync client: advance the clock, then answer
            sleep(latency)
            return self._respond(item, body, request)
        return self._respond_later(latency, item, body, request)

    async def _respond_later(self, latency: float, item: Any, body: dict[str, Any],
                             request: httpx.Request) -> httpx.Response:
        """Simulated server latency on the virtual clock (respx awaits async side effects)."""
        await asleep(latency)
        return self._respond(item, body, request)

    def _headers(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        return {"date": self.http_date(), "x-request-id": f"req_{self.calls}", **(extra or {})}

    def _unauthorized(self, request: httpx.Request) -> httpx.Response:
        sent = request.headers.get("authorization", "").removeprefix("Bearer ")
        masked = f"{sent[:3]}{'*' * 8}{sent[-4:]}" if len(sent) > 8 else "***"
        return httpx.Response(401, headers=self._headers(), json={"error": {
            "message": f"Incorrect API key provided: {masked}. You can find your API key in "
                       "your account settings.",
            "type": "invalid_request_error", "param": None, "code": "invalid_api_key"}})

    def _respond(self, item: Any, body: dict[str, Any], request: httpx.Request) -> httpx.Response:
        if isinstance(item, httpx.Response):
            return item
        if isinstance(item, BaseException):
            item = _as_http_error(item, request)
        if isinstance(item, HTTPError):
            status, headers, error = item.answer(now())
            return httpx.Response(status, headers=self._headers(headers), json=error)
        cut = isinstance(item, StreamCut)
        if cut and not body.get("stream"):  # the body never arrives whole
            raise httpx.RemoteProtocolError(CUT_MESSAGE, request=request)
        reply = _to_reply(item.reply if cut else item)
        usage = _usage(reply, body)
        envelope: dict[str, Any] = {"completion_id": f"chatcmpl-{self.calls}", "created": int(now()),
                                    "model": body.get("model", "")}
        if body.get("stream"):
            include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
            events = completion_events(reply, usage if include_usage else None, **envelope)
            if cut:  # half the events, then the connection closes: no finish, no [DONE]
                events = events[:len(events) // 2]
                return httpx.Response(200, headers=self._headers(
                    {"content-type": "text/event-stream"}),
                    content=sse_body(events).removesuffix(b"data: [DONE]\n\n"))
            return httpx.Response(200, headers=self._headers(
                {"content-type": "text/event-stream"}), content=sse_body(events))
        return httpx.Response(200, headers=self._headers(),
                              json=completion_body(reply, usage, **envelope))


def _as_http_error(error: BaseException, request: httpx.Request) -> HTTPError:
    """The HTTP answer for a scripted exception, or raise it inside the transport."""
    answer = http_error_for(error)
    if answer is not None:
        return answer
    if isinstance(error, TimeoutError):  # errors.APITimeoutError included
        raise httpx.ReadTimeout("scripted timeout", request=request)
    if isinstance(error, (errors.APIConnectionError, ConnectionError)):
        raise httpx.ConnectError("scripted connection failure", request=request)
    if isinstance(error, httpx.RequestError):
        error.request = request
    raise error


def _to_reply(item: Any) -> WireReply:
    if isinstance(item, str):
        return WireReply(item)
    if isinstance(item, ChatMessage):
        return WireReply.of(item)
    if isinstance(item, ChatResponse):
        return WireReply.of(item.message, item.usage)
    if isinstance(item, ScriptedResponse):
        return WireReply(item.text, _calls(item.tool_calls), item.usage, item.chunks)  # type: ignore[arg-type]
    if isinstance(item, (ToolSelection, RawToolCall)):
        return WireReply("", _calls([item]))
    if isinstance(item, list) and item and all(isinstance(c, (ToolSelection, RawToolCall)) for c in item):
        return WireReply("", _calls(item))
    raise TypeError(f"FakeOpenAIServer cannot answer with {item!r}: a script item must be a str, "
                    "ChatMessage, ScriptedResponse, ChatResponse, ToolSelection/RawToolCall (or "
                    "a list of them), HTTPError, httpx.Response, exception or callable")


def _calls(calls: Sequence[ToolSelection | RawToolCall]) -> list[tuple[str, str, str]]:
    return [(call.id, call.name, call.arguments) if isinstance(call, RawToolCall)
            else (call.tool_id, call.tool_name, json.dumps(call.tool_kwargs)) for call in calls]


def _usage(reply: WireReply, body: dict[str, Any]) -> Usage:
    """The scripted usage, or an estimate from the request's messages and the reply."""
    if reply.usage is not None:
        return reply.usage
    prompt = sum(count_tokens(_text_of(m.get("content"))) + 4 for m in body.get("messages", []))
    completion = count_tokens(reply.text) + sum(count_tokens(name) + count_tokens(args)
                                                for _, name, args in reply.calls)
    return Usage(prompt_tokens=prompt, completion_tokens=completion)


def _text_of(content: Any) -> str:
    if isinstance(content, list):
        return " ".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content or ""
