"""The OpenAI backend: chat.completions through the official ``openai`` SDK.

Works with api.openai.com and any OpenAI-compatible server (vLLM, llama.cpp server, Ollama,
...) through ``base_url``. The sync hooks use the SDK's sync client and the async hooks its
async client (one per event loop, since an HTTP connection pool belongs to the loop that
opened it); both share the request/response mapping and the retry policy below.

Retries are ours, not the SDK's (it runs with ``max_retries=0``), on the SDK's rules: HTTP
408, 409, 429, 5xx, timeouts and connection failures are retried up to ``max_retries`` times,
and a server's ``x-should-retry: true`` / ``false`` overrides that for its answer. The wait is
``retry-after-ms`` / ``retry-after`` (seconds or an HTTP-date) when the server asks for more
than 0 and at most :data:`RETRY_AFTER_MAX` seconds, else ``BACKOFF_INITIAL * 2**n`` capped at
:data:`BACKOFF_MAX`; a server asking for longer is not retried at all (the error carries its
``retry_after``). The policy is :mod:`agentkit.llms.retries`, which the scripted doubles follow
too. Where agentkit differs from the SDK (no jitter, no retry of a refused
connection, HTTP-dates read against the answer's ``Date``) docs/reliability.md says why.
The waits are :func:`agentkit.core.sim.wait` -- real, except inside a
:func:`agentkit.core.sim.simulation` (tests, the harness) without
:func:`agentkit.core.sim.real_time`; the sync path waits the same way through
:func:`agentkit.core.sim.run_sync`. Then a typed error from :mod:`agentkit.llms.errors`.

The API key never appears in an error message, a repr or a log line.
"""

from __future__ import annotations

import asyncio
import copy
import functools
import itertools
import json
import math
import os
import re
import ssl
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any, TypeVar
from urllib.parse import urlsplit

import httpx
import openai as _sdk

from agentkit.core.secrets import Redactor
from agentkit.core.sim import run_sync, wait
from agentkit.llms import errors, http_deadline
from agentkit.llms.base import DEFAULT_MODEL, FunctionCallingLLM, LLMRequest
from agentkit.llms.openai_wire import (
    SSEDecoder,
    StreamAssembler,
    WireError,
    parse_completion,
    to_openai_messages,
)
from agentkit.llms.retries import (
    BACKOFF_INITIAL,
    BACKOFF_MAX,
    DEFAULT_MAX_RETRIES,
    RETRY_AFTER_MAX,
    check_max_retries,
    log_retry,
    retry_delay,
)
from agentkit.llms.types import (
    ChatResponse,
    LLMMetadata,
)

__all__ = [
    "DEFAULT_MODEL",
    "OpenAI",
    "ModelInfo",
    "KNOWN_MODELS",
    "lookup_model",
    "to_openai_messages",
    "to_openai_tool_choice",
    "parse_retry_after",
    "API_KEY_ENV",
    "BASE_URL_ENV",
    "NO_KEY_PLACEHOLDER",
    "DEFAULT_CONTEXT_WINDOW",
    "BACKOFF_INITIAL",
    "BACKOFF_MAX",
    "RETRY_AFTER_MAX",
]

API_KEY_ENV = "OPENAI_API_KEY"
BASE_URL_ENV = "OPENAI_BASE_URL"
#: Sent as the key to a ``base_url`` server when no key is set: local servers need none.
NO_KEY_PLACEHOLDER = "no-key-set"
DEFAULT_TEMPERATURE = 0.1
DEFAULT_TIMEOUT = 60.0
#: Context window assumed for a model missing from :data:`KNOWN_MODELS` (small on purpose:
#: memory then never overflows a small local model; pass ``context_window=`` to raise it).
DEFAULT_CONTEXT_WINDOW = 4096
#: Unknown models are assumed to accept ``tools`` (the chat.completions contract; vLLM,
#: llama.cpp and Ollama all do); pass ``is_function_calling_model=False`` for one that won't.
DEFAULT_FUNCTION_CALLING = True
_OPENAI_HOST = "api.openai.com"
_T = TypeVar("_T")


# --------------------------------------------------------------------------- model table
@dataclass(frozen=True)
class ModelInfo:
    """What agentkit needs to know about a model.

    ``reasoning`` models (o-series, gpt-5) reject ``temperature`` and take
    ``max_completion_tokens`` instead of ``max_tokens``.
    """

    context_window: int
    function_calling: bool = True
    reasoning: bool = False


KNOWN_MODELS: dict[str, ModelInfo] = {
    "gpt-5": ModelInfo(400_000, reasoning=True),
    "gpt-5-mini": ModelInfo(400_000, reasoning=True),
    "gpt-5-nano": ModelInfo(400_000, reasoning=True),
    "gpt-4.1": ModelInfo(1_047_576),
    "gpt-4.1-mini": ModelInfo(1_047_576),
    "gpt-4.1-nano": ModelInfo(1_047_576),
    "gpt-4.5-preview": ModelInfo(128_000),
    "gpt-4o": ModelInfo(128_000),
    "gpt-4o-mini": ModelInfo(128_000),
    "chatgpt-4o-latest": ModelInfo(128_000, function_calling=False),
    "gpt-4-turbo": ModelInfo(128_000),
    "gpt-4-turbo-preview": ModelInfo(128_000),
    "gpt-4-1106-preview": ModelInfo(128_000),
    "gpt-4-0125-preview": ModelInfo(128_000),
    "gpt-4": ModelInfo(8_192),
    "gpt-4-32k": ModelInfo(32_768),
    "gpt-3.5-turbo": ModelInfo(16_385),
    "gpt-3.5-turbo-16k": ModelInfo(16_385),
    "o1": ModelInfo(200_000, reasoning=True),
    "o1-mini": ModelInfo(128_000, function_calling=False, reasoning=True),
    "o1-preview": ModelInfo(128_000, function_calling=False, reasoning=True),
    "o3": ModelInfo(200_000, reasoning=True),
    "o3-mini": ModelInfo(200_000, reasoning=True),
    "o3-pro": ModelInfo(200_000, reasoning=True),
    "o4-mini": ModelInfo(200_000, reasoning=True),
}


def lookup_model(model: str) -> ModelInfo | None:
    """The table entry for ``model``, also for dated snapshots (``gpt-4o-2024-08-06``),
    fine-tunes (``ft:gpt-4o-mini-2024-07-18:org::id``) and ``provider/model`` names."""
    name = model.strip().lower()
    if name.startswith("ft:"):
        name = name[3:].split(":", 1)[0]
    name = name.rsplit("/", 1)[-1]
    if name in KNOWN_MODELS:
        return KNOWN_MODELS[name]
    prefixes = [key for key in KNOWN_MODELS if name.startswith(key + "-")]
    return KNOWN_MODELS[max(prefixes, key=len)] if prefixes else None


# --------------------------------------------------------------------------- request mapping
def to_openai_tool_choice(choice: str | dict[str, Any]) -> str | dict[str, Any]:
    """``"auto"``, ``"none"``, ``"required"`` as is; a tool name as a forced function call."""
    if isinstance(choice, dict) or choice in ("auto", "none", "required"):
        return choice
    if isinstance(choice, str) and choice:
        return {"type": "function", "function": {"name": choice}}
    raise ValueError(f"tool_choice must be 'auto', 'none', 'required', a tool name or an "
                     f"OpenAI tool_choice dict, got {choice!r}")


# --------------------------------------------------------------------------- errors
def parse_retry_after(headers: Any) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``retry-after`` (seconds or an HTTP-date).

    An HTTP-date is measured from the response's own ``Date`` header when there is one (no
    clock skew, and deterministic), else from the wall clock.
    """
    millis = _number(headers.get("retry-after-ms"))
    if millis is not None:
        return max(millis / 1000, 0.0)
    value = headers.get("retry-after")
    if value is None:
        return None
    seconds = _number(value)
    if seconds is not None:
        return max(seconds, 0.0)
    when = _http_date(value)
    if when is None:
        return None
    reference = _http_date(headers.get("date")) or datetime.now(UTC)
    return max((when - reference).total_seconds(), 0.0)


def _number(value: str | None) -> float | None:
    """A header's number; ``None`` for none or ``nan`` (no wait can be made of it; an infinite
    one is capped by the caller)."""
    try:
        number = float(value) if value is not None else math.nan
    except ValueError:
        return None
    return None if math.isnan(number) else number


def _http_date(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


_KEY_LIKE = re.compile(r"sk-[A-Za-z0-9_\-*]{6,}")
_TRANSPORT_MODULES = ("httpx", "httpx2", "httpcore", "httpcore2", "anyio")


def _is_transport_error(exc: BaseException) -> bool:
    return (isinstance(exc, (OSError, httpx.TransportError))
            or type(exc).__module__.split(".")[0] in _TRANSPORT_MODULES)


def _reraise_foreign_cause(exc: Exception) -> None:
    """Re-raise a non-network exception the SDK wrapped as a connection error.

    openai < 3 wraps *any* exception from the HTTP client (a bug in a custom transport, a
    mock's script error) in ``APIConnectionError``; retrying those would only hide them.
    """
    cause = exc.__cause__
    if (isinstance(exc, _sdk.APIConnectionError) and not isinstance(exc, _sdk.APITimeoutError)
            and isinstance(cause, Exception) and not _is_transport_error(cause)):
        raise cause from cause.__cause__


def _refused(exc: BaseException | None) -> bool:
    """Whether a connection failure was a refused connection (somewhere in its causes)."""
    seen = 0
    while exc is not None and seen < 10:
        if isinstance(exc, ConnectionRefusedError) or "connection refused" in str(exc).lower():
            return True
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return False


def _is_deadline(exc: BaseException) -> bool:
    """Whether the total deadline (not a per-read timeout) cut the answer off."""
    return isinstance(exc, http_deadline.DeadlineExceeded) or isinstance(
        exc.__cause__, http_deadline.DeadlineExceeded)


def _is_timeout(exc: BaseException) -> bool:
    return any("Timeout" in cls.__name__ for cls in type(exc).__mro__)


def _before_sending(exc: BaseException | None) -> bool:
    """Whether a timeout struck before the request was handed to the server (connecting, or
    waiting for a pooled connection): somewhere in its causes. Any other timeout -- a read
    timeout above all -- came after the server had the request, which it may still be
    serving."""
    seen = 0
    while exc is not None and seen < 10:
        if isinstance(exc, (httpx.ConnectTimeout, httpx.PoolTimeout)) or type(exc).__name__ in (
                "ConnectTimeout", "PoolTimeout"):
            return True
        exc, seen = exc.__cause__ or exc.__context__, seen + 1
    return False


def _server_detail(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        detail = body.get("message") or json.dumps(body)
    elif isinstance(body, str) and body:
        detail = body
    else:
        detail = getattr(exc, "message", None) or str(exc)
    return str(detail)[:500]


class _StreamReader:
    """A streamed answer's bytes as response chunks: the decoding shared by the sync and
    async streams."""

    def __init__(self) -> None:
        self._decoder = SSEDecoder()
        self._assembler = StreamAssembler()

    def feed(self, data: bytes) -> Iterator[ChatResponse]:
        """The chunks of the events ``data`` completes."""
        for event in self._decoder.feed(data):
            yield from self._assembler.feed(*event)

    def end(self) -> Iterator[ChatResponse]:
        """The chunks of a last event without its blank line, then the whole answer (or a
        :class:`WireError` for a stream cut short)."""
        for event in self._decoder.close():
            yield from self._assembler.feed(*event)
        yield self._assembler.final()


# --------------------------------------------------------------------------- the backend
#: What the SDK's own default client sets (its timeout is passed per request).
_HTTPX_OPTIONS: dict[str, Any] = {
    "follow_redirects": True,
    "limits": httpx.Limits(max_connections=1000, max_keepalive_connections=100),
}


@functools.cache
def ssl_context() -> ssl.SSLContext:
    """One TLS context for every client: loading the CA bundle per client costs ~50 ms."""
    return ssl.create_default_context()


class OpenAI(FunctionCallingLLM):
    """An OpenAI chat model (or any OpenAI-compatible server through ``base_url``).

    ``api_key`` defaults to ``$OPENAI_API_KEY`` and ``base_url`` to ``$OPENAI_BASE_URL``. With
    no key at all, talking to api.openai.com is a :class:`~agentkit.llms.errors.MissingAPIKeyError`
    naming ``OPENAI_API_KEY``; a ``base_url`` server is sent :data:`NO_KEY_PLACEHOLDER`
    (local servers need no key; one that does answers 401, reported as an invalid key).
    ``context_window`` and ``is_function_calling_model`` override :data:`KNOWN_MODELS`.
    ``additional_kwargs`` go into every request (``seed``, ``top_p``, ``response_format``...);
    a ``None`` value leaves that parameter out (``stream_options=None`` for a server that
    rejects it).
    ``http_client`` / ``async_http_client`` are handed to the SDK (an ``httpx`` or ``httpx2``
    client: proxies, custom transports). Without them the backend builds ``httpx`` clients
    itself, which every supported SDK version accepts (openai 3.x would default to
    ``httpx2``): one HTTP stack in production and in tests, where respx intercepts it.

    Two timeouts, in real seconds:

    * ``timeout`` bounds each step of an attempt -- connecting, and each read: a server that
      keeps sending a byte now and then never exceeds it (the SDK's meaning, kept);
    * ``total_timeout`` (default ``None``: no bound) bounds the whole call: every attempt,
      the back-off between them and reading the answer (a stream to its end). Past it the
      call raises :class:`~agentkit.llms.errors.APITimeoutError` and is not retried. It is
      checked as bytes arrive; a server that stalls completely is cut when the per-read
      timeout (capped at the time left when the attempt starts) runs out. Enforced on
      ``httpx`` clients (the ones built here and ``httpx`` clients passed in).
    """

    def __init__(self, model: str = DEFAULT_MODEL, temperature: float = DEFAULT_TEMPERATURE,
                 max_tokens: int | None = None, *, api_key: str | None = None,
                 base_url: str | None = None, timeout: float = DEFAULT_TIMEOUT,
                 total_timeout: float | None = None,
                 max_retries: int = DEFAULT_MAX_RETRIES,
                 additional_kwargs: dict[str, Any] | None = None,
                 context_window: int | None = None,
                 is_function_calling_model: bool | None = None,
                 system_prompt: str | None = None,
                 default_headers: dict[str, str] | None = None,
                 http_client: Any | None = None, async_http_client: Any | None = None) -> None:
        _check_arguments(model, temperature, max_tokens, timeout, max_retries, context_window,
                         total_timeout)
        self.model = model
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.base_url = base_url or os.environ.get(BASE_URL_ENV) or None
        self.timeout = timeout
        self.total_timeout = total_timeout
        self.max_retries = max_retries
        self.additional_kwargs = dict(additional_kwargs or {})
        self.context_window = context_window
        self.is_function_calling_model = is_function_calling_model
        self.system_prompt = system_prompt
        self.default_headers = dict(default_headers or {})
        self._api_key, self._key_is_placeholder = self._resolve_key(api_key)
        self._http_client = http_client
        self._async_http_client = async_http_client
        self._sync_client: _sdk.OpenAI | None = None
        self._shared_async_client: _sdk.AsyncOpenAI | None = None
        self._async_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop,
                                                       _sdk.AsyncOpenAI] = weakref.WeakKeyDictionary()

    def _resolve_key(self, api_key: str | None) -> tuple[str, bool]:
        key = api_key or os.environ.get(API_KEY_ENV) or ""
        if key:
            return key, False
        if not self._is_openai_host:
            return NO_KEY_PLACEHOLDER, True
        raise errors.MissingAPIKeyError(
            f"No OpenAI API key: set the {API_KEY_ENV} environment variable or pass "
            f"api_key=... (an OpenAI-compatible server given by base_url needs none)",
            provider="openai")

    @property
    def _is_openai_host(self) -> bool:
        return self.base_url is None or urlsplit(self.base_url).hostname == _OPENAI_HOST

    @property
    def _where(self) -> str:
        return "OpenAI" if self._is_openai_host else f"the server at {self.base_url}"

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(model={self.model!r}, base_url={self.base_url!r}, "
                f"temperature={self.temperature!r}, max_retries={self.max_retries!r})")

    def with_limits(self, *, max_tokens: int | None = None,
                    timeout: float | None = None) -> OpenAI:
        """A copy of this backend (same server, key and sampling) whose answers stop at
        ``max_tokens`` and whose every call ends within ``timeout`` real seconds in all (its
        ``total_timeout``; each read too); ``None`` keeps this one's. How an agent type's
        ``max_tokens`` and ``timeout`` reach the live model that records it."""
        limited = copy.copy(self)
        limited.max_tokens = self.max_tokens if max_tokens is None else max_tokens
        if timeout is not None:
            limited.timeout = min(self.timeout, timeout)
            limited.total_timeout = timeout
        _check_arguments(limited.model, limited.temperature, limited.max_tokens,
                         limited.timeout, limited.max_retries, limited.context_window,
                         limited.total_timeout)
        limited._sync_client = None
        limited._shared_async_client = None
        limited._async_clients = weakref.WeakKeyDictionary()
        return limited

    @property
    def metadata(self) -> LLMMetadata:
        info = lookup_model(self.model)
        context_window = self.context_window or (info.context_window if info
                                                 else DEFAULT_CONTEXT_WINDOW)
        function_calling = self.is_function_calling_model
        if function_calling is None:
            function_calling = info.function_calling if info else DEFAULT_FUNCTION_CALLING
        return LLMMetadata(context_window=context_window, num_output=self.max_tokens or -1,
                           is_chat_model=True, is_function_calling_model=function_calling,
                           model_name=self.model)

    @property
    def provider(self) -> str:
        return "openai"

    # ------------------------------------------------------------------ SDK clients
    def _client_options(self) -> dict[str, Any]:
        return {"api_key": self._api_key, "base_url": self.base_url, "timeout": self.timeout,
                "max_retries": 0, "default_headers": self.default_headers or None}

    def _client(self) -> _sdk.OpenAI:
        if self._sync_client is None:
            # Any: openai 3.x annotates http_client with httpx2's classes, 1.x/2.x with httpx's,
            # and every one of them takes an httpx client (see pyproject.toml)
            http: Any = self._http_client or httpx.Client(**_HTTPX_OPTIONS, verify=ssl_context())
            http_deadline.install(http)
            self._sync_client = _sdk.OpenAI(**self._client_options(), http_client=http)
        return self._sync_client

    def _aclient(self) -> _sdk.AsyncOpenAI:
        if self._async_http_client is not None:
            if self._shared_async_client is None:
                http_deadline.install(self._async_http_client)
                self._shared_async_client = _sdk.AsyncOpenAI(
                    **self._client_options(), http_client=self._async_http_client)
            return self._shared_async_client
        loop = asyncio.get_running_loop()
        client = self._async_clients.get(loop)
        if client is None:
            http: Any = httpx.AsyncClient(**_HTTPX_OPTIONS, verify=ssl_context())  # as above
            http_deadline.install(http)
            client = self._async_clients[loop] = _sdk.AsyncOpenAI(**self._client_options(),
                                                                  http_client=http)
        return client

    # ------------------------------------------------------------------ request
    def _create_kwargs(self, request: LLMRequest) -> dict[str, Any]:
        info = lookup_model(self.model)
        reasoning = bool(info and info.reasoning)
        kwargs: dict[str, Any] = {"model": self.model,
                                  "messages": to_openai_messages(request.messages)}
        if not reasoning:
            kwargs["temperature"] = self.temperature
        if self.max_tokens is not None:
            kwargs["max_completion_tokens" if reasoning else "max_tokens"] = self.max_tokens
        tools = [tool.metadata.to_openai_tool() for tool in request.tools or []]
        if tools:
            kwargs["tools"] = tools
            if request.tool_choice is not None:
                kwargs["tool_choice"] = _checked_tool_choice(request.tool_choice, tools)
            kwargs["parallel_tool_calls"] = request.allow_parallel_tool_calls
        if request.stream:
            kwargs["stream_options"] = {"include_usage": True}
        kwargs.update(self.additional_kwargs)
        kwargs.update(request.kwargs)
        if request.stream:
            kwargs["stream"] = True
        else:
            kwargs.pop("stream", None)
            kwargs.pop("stream_options", None)
        return {key: value for key, value in kwargs.items() if value is not None}

    # ------------------------------------------------------------------ hooks
    # The body is read through the SDK's raw response and parsed by agentkit.llms.openai_wire:
    # a malformed answer or a stream cut short is a typed error, and the total deadline sees
    # every byte.
    def _chat(self, request: LLMRequest) -> ChatResponse:
        raw = self._with_retries(self._sender(self._client(), request))
        return self._read(parse_completion, raw.http_response.content)

    async def _achat(self, request: LLMRequest) -> ChatResponse:
        raw = await self._awith_retries(self._sender(self._aclient(), request))
        return self._read(parse_completion, raw.http_response.content)

    def _stream_chat(self, request: LLMRequest) -> Iterator[ChatResponse]:
        http = self._with_retries(self._sender(self._client(), request)).http_response
        reader = _StreamReader()
        try:
            for data in http.iter_bytes():
                yield from reader.feed(data)
            yield from reader.end()
        except Exception as exc:  # noqa: BLE001 (any failure mid-stream is the call's error)
            raise self._mid_stream_error(exc) from None
        finally:
            http.close()

    async def _astream_chat(self, request: LLMRequest) -> AsyncIterator[ChatResponse]:
        http = (await self._awith_retries(self._sender(self._aclient(), request))).http_response
        reader = _StreamReader()
        try:
            async for data in http.aiter_bytes():
                for response in reader.feed(data):
                    yield response
            for response in reader.end():
                yield response
        except Exception as exc:  # noqa: BLE001 (any failure mid-stream is the call's error)
            raise self._mid_stream_error(exc) from None
        finally:
            await http.aclose()

    def _sender(self, client: _sdk.OpenAI | _sdk.AsyncOpenAI,
                request: LLMRequest) -> Callable[[float], Any]:
        """``send(timeout)``: one attempt at the request through ``client`` (sync or async)."""
        create: Callable[..., Any] = client.chat.completions.with_raw_response.create
        kwargs = _as_written(self._create_kwargs(request))
        return lambda timeout: create(**kwargs, timeout=timeout)

    def _read(self, parse: Callable[[bytes], _T], body: bytes) -> _T:
        try:
            return parse(body)
        except WireError as exc:
            raise self._wire_error(exc, attempts=1) from None

    def _wire_error(self, exc: WireError, *, attempts: int) -> errors.LLMError:
        return exc.error(f"{self._where}: {self._redact(exc.detail)}", attempts=attempts,
                         provider="openai")

    def _mid_stream_error(self, exc: Exception) -> Exception:
        """A stream that fails after it started is not retried (chunks were handed out)."""
        if isinstance(exc, WireError):
            return self._wire_error(exc, attempts=1)
        if isinstance(exc, _sdk.OpenAIError) or _is_transport_error(exc):
            return self._translate(exc, attempts=1)
        return exc

    # ------------------------------------------------------------------ retries
    # Two thin drivers of one policy (_attempt_timeout, _delay_or_raise). The sync one is not
    # run_sync(self._awith_retries(...)): a blocking attempt inside a running loop would make
    # sync transports that check for a loop (the fake server's) take the async path.
    def _with_retries(self, send: Callable[[float], _T]) -> _T:
        """``send(timeout)`` until it succeeds or the retry policy gives up."""
        at = self._deadline()
        with http_deadline.deadline(at):
            for retries in itertools.count():
                timeout = self._attempt_timeout(at, retries)
                try:
                    return send(timeout)
                except _sdk.OpenAIError as exc:
                    delay = self._delay_or_raise(exc, retries, at, timeout)
                run_sync(wait(delay))
        raise AssertionError("unreachable")

    async def _awith_retries(self, send: Callable[[float], Awaitable[_T]]) -> _T:
        """``await send(timeout)`` until it succeeds or the retry policy gives up."""
        at = self._deadline()
        with http_deadline.deadline(at):
            for retries in itertools.count():
                timeout = self._attempt_timeout(at, retries)
                try:
                    return await send(timeout)
                except _sdk.OpenAIError as exc:
                    delay = self._delay_or_raise(exc, retries, at, timeout)
                await wait(delay)
        raise AssertionError("unreachable")

    def _deadline(self) -> float | None:
        """When a call starting now must be done by (monotonic seconds), if ever."""
        return http_deadline.after(self.total_timeout)

    def _attempt_timeout(self, at: float | None, retries: int) -> float:
        """The per-read timeout of the next attempt: ``timeout``, capped at the time left."""
        left = http_deadline.time_left(at)
        if left is None:
            return self.timeout
        if left <= 0:
            raise self._total_timeout_error(retries)
        return min(self.timeout, left)

    def _total_timeout_error(self, attempts: int) -> errors.APITimeoutError:
        tries = f"{attempts} attempt{'s' if attempts != 1 else ''}"
        return errors.APITimeoutError(
            f"{self._where} did not finish within total_timeout={self.total_timeout:g} s "
            f"({tries})", attempts=attempts, provider="openai")

    def _delay_or_raise(self, exc: _sdk.OpenAIError, retries: int, at: float | None,
                        timeout: float) -> float:
        """The retry policy, shared by the sync and async loops: the wait before the next
        attempt, or the translated agentkit error when there is none left (nor time, under a
        total deadline). ``timeout`` is the attempt's read timeout: when the deadline cut it
        shorter than ``self.timeout`` and it ran out, the deadline is what ended the call."""
        _reraise_foreign_cause(exc)
        error = self._translate(exc, attempts=retries + 1)
        if isinstance(error, errors.APITimeoutError) and timeout < self.timeout:
            raise self._total_timeout_error(retries + 1) from None
        delay = retry_delay(error, retries, self.max_retries)
        left = http_deadline.time_left(at)
        if delay is None or (left is not None and delay >= left):
            raise error from None  # the SDK's exception may echo part of the key
        log_retry(error, retries, self.max_retries, delay)
        return delay

    def _translate(self, exc: BaseException, *, attempts: int) -> errors.LLMError:
        """The agentkit error for an SDK or transport exception (message redacted)."""
        tries = f"{attempts} attempt{'s' if attempts != 1 else ''}"
        if isinstance(exc, _sdk.APIStatusError):
            return self._status_error(exc, tries, attempts)
        if _is_deadline(exc):
            error = self._total_timeout_error(attempts)
            error.retryable = False
            return error
        if isinstance(exc, _sdk.APITimeoutError) or (_is_transport_error(exc) and _is_timeout(exc)):
            if _before_sending(exc):
                return errors.APITimeoutError(
                    f"could not connect to {self._where} within {self.timeout:g} s ({tries})",
                    attempts=attempts, provider="openai")
            # the server has the request and may still be generating its answer: sent again,
            # it would queue behind that (a one-slot local server serves them in turn)
            served = errors.APITimeoutError(
                f"{self._where} did not answer within {self.timeout:g} s ({tries}); not "
                "retried: the server may still be generating that answer (raise `timeout`, "
                "or bound the answer with `max_tokens`)", attempts=attempts, provider="openai")
            served.retryable = False
            return served
        if isinstance(exc, _sdk.APIConnectionError) or _is_transport_error(exc):
            if _refused(exc):  # nothing listens there: waiting would not change that
                refused = errors.APIConnectionError(
                    f"could not reach {self._where} ({tries}): connection refused; is the "
                    "server running at that address?", attempts=attempts, provider="openai")
                refused.retryable = False
                return refused
            return errors.APIConnectionError(
                f"could not reach {self._where} ({tries}): {type(exc).__name__}",
                attempts=attempts, provider="openai")
        return errors.LLMError(f"{self._where} failed ({tries}): "
                               f"{self._redact(_server_detail(exc))}",
                               attempts=attempts, provider="openai")

    def _status_error(self, exc: _sdk.APIStatusError, tries: str,
                      attempts: int) -> errors.LLMError:
        status = exc.status_code
        headers = exc.response.headers
        common: dict[str, Any] = {"status_code": status, "request_id": exc.request_id,
                                  "attempts": attempts, "provider": "openai",
                                  "retry_after": parse_retry_after(headers)}
        error: errors.LLMError
        if status == 401:  # the server's text may echo part of the key: never pass it on
            hint = (f"no API key is set: set {API_KEY_ENV} or pass api_key=..."
                    if self._key_is_placeholder
                    else f"check the api_key argument or the {API_KEY_ENV} environment variable")
            error = errors.AuthenticationError(
                f"invalid API key: {self._where} answered HTTP 401 ({hint})", **common)
        else:
            cls = errors.error_for_status(status)
            if status == 429 and getattr(exc, "code", None) == "insufficient_quota":
                cls = errors.QuotaExceededError
            error = cls(f"{self._where} answered HTTP {status} ({tries}): "
                        f"{self._redact(_server_detail(exc))}", **common)
        should_retry = headers.get("x-should-retry")
        if should_retry in ("true", "false"):  # the server knows best, as the SDK assumes
            error.retryable = should_retry == "true"
        return error

    @property
    def secrets(self) -> dict[str, str]:
        """What must never reach an error message, a log line or a cassette, by name: the API
        key and the value of every header configured in ``default_headers``."""
        values = {} if self._key_is_placeholder else {"api_key": self._api_key}
        values.update({f"header {name}": str(value)
                       for name, value in self.default_headers.items()})
        return values

    def _redact(self, text: str) -> str:
        """A server's text with our secrets, secret env values, masked keys (``sk-ab***yz``),
        bearer tokens and URL passwords taken out."""
        return _KEY_LIKE.sub("sk-***", Redactor(secrets=self.secrets).text(text))


def _check_arguments(model: str, temperature: float, max_tokens: int | None, timeout: float,
                     max_retries: int, context_window: int | None,
                     total_timeout: float | None) -> None:
    if not isinstance(model, str) or not model.strip():
        raise ValueError(f"OpenAI model must be a non-empty model name, got {model!r}")
    for name, value in (("temperature", temperature), ("timeout", timeout)):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValueError(f"OpenAI {name} must be a number, got {value!r}")
    if not 0 <= temperature <= 2:
        raise ValueError(f"OpenAI temperature must be between 0 and 2, got {temperature!r}")
    if max_tokens is not None and max_tokens < 1:
        raise ValueError(f"OpenAI max_tokens must be at least 1 (or None), got {max_tokens!r}")
    if not timeout > 0:
        raise ValueError(f"OpenAI timeout must be > 0 seconds, got {timeout!r}")
    if total_timeout is not None and (isinstance(total_timeout, bool)
                                      or not isinstance(total_timeout, (int, float))
                                      or not total_timeout > 0):
        raise ValueError(f"OpenAI total_timeout must be > 0 seconds (or None), got "
                         f"{total_timeout!r}")
    check_max_retries("OpenAI", max_retries)
    if context_window is not None and context_window < 1:
        raise ValueError(f"OpenAI context_window must be at least 1 (or None), got "
                         f"{context_window!r}")


_WRITTEN_AS_THEY_ARE = ("messages", "tools")
"""The request fields the SDK is handed as ``extra_body`` (:func:`_as_written`)."""


def _as_written(kwargs: dict[str, Any]) -> dict[str, Any]:
    """``create``'s keywords with the messages and tools handed over as ``extra_body``.

    The SDK's request transform walks every message and tool against its TypedDict unions (a
    few hundred calls a request) to rename and reformat fields; for the plain JSON data
    built here it changes nothing. ``extra_body`` is written as it is, over an empty
    placeholder left in the field's place: the body's bytes are the same. A caller's own
    ``extra_body`` still wins."""
    moved = {key: kwargs[key] for key in _WRITTEN_AS_THEY_ARE if key in kwargs}
    if not moved:
        return kwargs
    return {**kwargs, **dict.fromkeys(moved, ()),
            "extra_body": {**moved, **(kwargs.get("extra_body") or {})}}


def _checked_tool_choice(choice: str | dict[str, Any],
                         tools: list[dict[str, Any]]) -> str | dict[str, Any]:
    mapped = to_openai_tool_choice(choice)
    if isinstance(mapped, dict) and mapped.get("type") == "function":
        name = mapped.get("function", {}).get("name")
        offered = [tool["function"]["name"] for tool in tools]
        if name not in offered:
            raise ValueError(f"tool_choice names the tool {name!r}, which is not among the "
                             f"offered tools: {', '.join(offered)}")
    return mapped
