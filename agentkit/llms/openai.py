"""The OpenAI backend: chat.completions through the official ``openai`` SDK.

Works with api.openai.com and any OpenAI-compatible server (vLLM, llama.cpp server, Ollama,
...) through ``base_url``. The sync hooks use the SDK's sync client and the async hooks its
async client (one per event loop, since an HTTP connection pool belongs to the loop that
opened it); both share the request/response mapping and the retry policy below.

Retries are ours, not the SDK's (it runs with ``max_retries=0``): HTTP 408, 429, 5xx,
timeouts and connection failures are retried up to ``max_retries`` times, waiting
``retry-after-ms`` / ``retry-after`` (seconds or an HTTP-date, capped at
:data:`RETRY_AFTER_MAX`) when the server sends one, else ``BACKOFF_INITIAL * 2**n`` capped at
:data:`BACKOFF_MAX`. The waits are :func:`agentkit.core.sim.wait` -- real, except inside a
:func:`agentkit.core.sim.simulation` (tests, the harness) without
:func:`agentkit.core.sim.real_time`; the sync path waits the same way through
:func:`agentkit.core.sim.run_sync`. Then a typed error from :mod:`agentkit.llms.errors`.

The API key never appears in an error message, a repr or a log line.
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import json
import logging
import os
import re
import ssl
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from typing import Any, TypeVar
from urllib.parse import urlsplit

import httpx
import openai as _sdk

from agentkit.core.ids import new_id
from agentkit.core.sim import run_sync, wait
from agentkit.llms import errors
from agentkit.llms.base import FunctionCallingLLM, LLMRequest
from agentkit.llms.types import (
    ChatMessage,
    ChatResponse,
    ImageBlock,
    LLMMetadata,
    MessageRole,
    TextBlock,
    ToolSelection,
    Usage,
)

__all__ = [
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

logger = logging.getLogger(__name__)

API_KEY_ENV = "OPENAI_API_KEY"
BASE_URL_ENV = "OPENAI_BASE_URL"
#: Sent as the key to a ``base_url`` server when no key is set: local servers need none.
NO_KEY_PLACEHOLDER = "no-key-set"
DEFAULT_MODEL = "gpt-4o-mini"
DEFAULT_TEMPERATURE = 0.1
DEFAULT_TIMEOUT = 60.0
DEFAULT_MAX_RETRIES = 3
#: Context window assumed for a model missing from :data:`KNOWN_MODELS` (small on purpose:
#: memory then never overflows a small local model; pass ``context_window=`` to raise it).
DEFAULT_CONTEXT_WINDOW = 4096
#: Unknown models are assumed to accept ``tools`` (the chat.completions contract; vLLM,
#: llama.cpp and Ollama all do); pass ``is_function_calling_model=False`` for one that won't.
DEFAULT_FUNCTION_CALLING = True
BACKOFF_INITIAL = 0.5
BACKOFF_MAX = 8.0
RETRY_AFTER_MAX = 60.0

_OPENAI_HOST = "api.openai.com"
_RETRYABLE_STATUS = frozenset({408, 429}) | frozenset(range(500, 600))
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


def to_openai_tool_choice(choice: str | dict[str, Any]) -> str | dict[str, Any]:
    """``"auto"``, ``"none"``, ``"required"`` as is; a tool name as a forced function call."""
    if isinstance(choice, dict) or choice in ("auto", "none", "required"):
        return choice
    if isinstance(choice, str) and choice:
        return {"type": "function", "function": {"name": choice}}
    raise ValueError(f"tool_choice must be 'auto', 'none', 'required', a tool name or an "
                     f"OpenAI tool_choice dict, got {choice!r}")


# --------------------------------------------------------------------------- response mapping
def _assistant(text: str, calls: Sequence[ToolSelection] = ()) -> ChatMessage:
    kwargs = {"tool_calls": list(calls)} if calls else {}
    return ChatMessage(role=MessageRole.ASSISTANT, content=text, additional_kwargs=kwargs)


def _tool_selection(tool_id: str | None, name: str, arguments: str | None) -> ToolSelection:
    """A tool call; arguments that are not a JSON object become ``arguments_error``."""
    tool_id = tool_id or new_id("call")  # some compatible servers send no id
    text = arguments or ""
    if not text.strip():
        return ToolSelection(tool_id=tool_id, tool_name=name, tool_kwargs={})
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        problem = f"they are not valid JSON ({exc.msg} at position {exc.pos})"
    else:
        if isinstance(value, dict):
            return ToolSelection(tool_id=tool_id, tool_name=name, tool_kwargs=value)
        problem = f"they are a JSON {type(value).__name__}, not an object"
    return ToolSelection(tool_id=tool_id, tool_name=name, tool_kwargs={}, arguments_error=(
        f"Could not read the arguments of tool `{name}`: {problem}. Arguments received: "
        f"{text[:300]!r}. Call the tool again with a JSON object of arguments."))


def _usage(usage: Any) -> Usage | None:
    if usage is None:
        return None
    return Usage(prompt_tokens=usage.prompt_tokens or 0,
                 completion_tokens=usage.completion_tokens or 0,
                 total_tokens=usage.total_tokens or 0)


def _from_completion(completion: Any) -> ChatResponse:
    if not completion.choices:
        raise errors.LLMError("the server answered with no choices", provider="openai")
    choice = completion.choices[0]
    message = choice.message
    calls = [_tool_selection(call.id, call.function.name or "", call.function.arguments)
             for call in message.tool_calls or [] if getattr(call, "function", None) is not None]
    extra: dict[str, Any] = {"finish_reason": choice.finish_reason}
    if getattr(message, "refusal", None):
        extra["refusal"] = message.refusal
    return ChatResponse(message=_assistant(message.content or "", calls), raw=completion,
                        usage=_usage(completion.usage), additional_kwargs=extra)


class _StreamAssembler:
    """Turns SDK chunks into cumulative :class:`ChatResponse` chunks.

    Text chunks carry the message so far and the new ``delta``; tool-call argument deltas are
    reassembled per index (and reported in ``additional_kwargs["tool_call_delta"]``, like the
    mock backends); :meth:`final` carries the tool calls, usage and finish reason.
    """

    def __init__(self) -> None:
        self.text = ""
        self.calls: dict[int, dict[str, Any]] = {}
        self.usage: Usage | None = None
        self.finish_reason: str | None = None
        self.raw: Any = None

    def feed(self, chunk: Any) -> Iterator[ChatResponse]:
        self.raw = chunk
        if getattr(chunk, "usage", None) is not None:
            self.usage = _usage(chunk.usage)
        for choice in chunk.choices:
            if choice.index != 0:
                continue
            if choice.finish_reason:
                self.finish_reason = choice.finish_reason
            delta = choice.delta
            if delta.content:
                self.text += delta.content
                yield ChatResponse(message=_assistant(self.text), delta=delta.content, raw=chunk)
            for call in delta.tool_calls or []:
                yield self._feed_call(call, chunk)

    def _feed_call(self, call: Any, chunk: Any) -> ChatResponse:
        slot = self.calls.setdefault(call.index, {"id": None, "name": "", "arguments": ""})
        if call.id:
            slot["id"] = call.id
        piece = ""
        if call.function is not None:
            if call.function.name and not slot["name"]:
                slot["name"] = call.function.name
            piece = call.function.arguments or ""
            slot["arguments"] += piece
        return ChatResponse(message=_assistant(self.text), delta="", raw=chunk, additional_kwargs={
            "tool_call_delta": {"index": call.index, "tool_id": slot["id"],
                                "tool_name": slot["name"], "arguments_delta": piece}})

    def final(self) -> ChatResponse:
        calls = [_tool_selection(slot["id"], slot["name"], slot["arguments"])
                 for _, slot in sorted(self.calls.items())]
        return ChatResponse(message=_assistant(self.text, calls), delta="", raw=self.raw,
                            usage=self.usage,
                            additional_kwargs={"finish_reason": self.finish_reason})


# --------------------------------------------------------------------------- errors
def parse_retry_after(headers: Any) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``retry-after`` (seconds or an HTTP-date).

    An HTTP-date is measured from the response's own ``Date`` header when there is one (no
    clock skew, and deterministic), else from the wall clock.
    """
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            return max(float(millis) / 1000, 0.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    when = _http_date(value)
    if when is None:
        return None
    reference = _http_date(headers.get("date")) or datetime.now(timezone.utc)
    return max((when - reference).total_seconds(), 0.0)


def _http_date(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    return when if when.tzinfo is not None else when.replace(tzinfo=timezone.utc)


_KEY_LIKE = re.compile(r"sk-[A-Za-z0-9_\-*]{6,}")
_TRANSPORT_MODULES = ("httpx", "httpx2", "httpcore", "httpcore2", "anyio")


def _is_transport_error(exc: BaseException) -> bool:
    return isinstance(exc, OSError) or type(exc).__module__.split(".")[0] in _TRANSPORT_MODULES


def _reraise_foreign_cause(exc: Exception) -> None:
    """Re-raise a non-network exception the SDK wrapped as a connection error.

    openai < 3 wraps *any* exception from the HTTP client (a bug in a custom transport, a
    mock's script error) in ``APIConnectionError``; retrying those would only hide them.
    """
    cause = exc.__cause__
    if (isinstance(exc, _sdk.APIConnectionError) and not isinstance(exc, _sdk.APITimeoutError)
            and isinstance(cause, Exception) and not _is_transport_error(cause)):
        raise cause from cause.__cause__


def _is_timeout(exc: BaseException) -> bool:
    return any("Timeout" in cls.__name__ for cls in type(exc).__mro__)


def _server_detail(exc: Any) -> str:
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        detail = body.get("message") or json.dumps(body)
    elif isinstance(body, str) and body:
        detail = body
    else:
        detail = getattr(exc, "message", None) or str(exc)
    return str(detail)[:500]


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
    """

    def __init__(self, model: str = DEFAULT_MODEL, temperature: float = DEFAULT_TEMPERATURE,
                 max_tokens: int | None = None, *, api_key: str | None = None,
                 base_url: str | None = None, timeout: float = DEFAULT_TIMEOUT,
                 max_retries: int = DEFAULT_MAX_RETRIES,
                 additional_kwargs: dict[str, Any] | None = None,
                 context_window: int | None = None,
                 is_function_calling_model: bool | None = None,
                 system_prompt: str | None = None,
                 default_headers: dict[str, str] | None = None,
                 http_client: Any | None = None, async_http_client: Any | None = None) -> None:
        _check_arguments(model, temperature, max_tokens, timeout, max_retries, context_window)
        self.model = model
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.base_url = base_url or os.environ.get(BASE_URL_ENV) or None
        self.timeout = timeout
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

    # ------------------------------------------------------------------ SDK clients
    def _client_options(self) -> dict[str, Any]:
        return {"api_key": self._api_key, "base_url": self.base_url, "timeout": self.timeout,
                "max_retries": 0, "default_headers": self.default_headers or None}

    def _client(self) -> _sdk.OpenAI:
        if self._sync_client is None:
            self._sync_client = _sdk.OpenAI(
                **self._client_options(),
                http_client=self._http_client or httpx.Client(**_HTTPX_OPTIONS,
                                                              verify=ssl_context()))
        return self._sync_client

    def _aclient(self) -> _sdk.AsyncOpenAI:
        if self._async_http_client is not None:
            if self._shared_async_client is None:
                self._shared_async_client = _sdk.AsyncOpenAI(
                    **self._client_options(), http_client=self._async_http_client)
            return self._shared_async_client
        loop = asyncio.get_running_loop()
        client = self._async_clients.get(loop)
        if client is None:
            client = self._async_clients[loop] = _sdk.AsyncOpenAI(
                **self._client_options(),
                http_client=httpx.AsyncClient(**_HTTPX_OPTIONS, verify=ssl_context()))
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
    def _chat(self, request: LLMRequest) -> ChatResponse:
        kwargs = self._create_kwargs(request)
        client = self._client()
        return _from_completion(self._with_retries(lambda: client.chat.completions.create(**kwargs)))

    async def _achat(self, request: LLMRequest) -> ChatResponse:
        kwargs = self._create_kwargs(request)
        client = self._aclient()
        return _from_completion(
            await self._awith_retries(lambda: client.chat.completions.create(**kwargs)))

    def _stream_chat(self, request: LLMRequest) -> Iterator[ChatResponse]:
        kwargs = self._create_kwargs(request)
        client = self._client()
        stream = self._with_retries(lambda: client.chat.completions.create(**kwargs))
        assembler = _StreamAssembler()
        try:
            for chunk in stream:
                yield from assembler.feed(chunk)
        except Exception as exc:
            raise self._mid_stream_error(exc) from None
        finally:
            stream.close()
        yield assembler.final()

    async def _astream_chat(self, request: LLMRequest) -> AsyncIterator[ChatResponse]:
        kwargs = self._create_kwargs(request)
        client = self._aclient()
        stream = await self._awith_retries(lambda: client.chat.completions.create(**kwargs))
        assembler = _StreamAssembler()
        try:
            async for chunk in stream:
                for response in assembler.feed(chunk):
                    yield response
        except Exception as exc:
            raise self._mid_stream_error(exc) from None
        finally:
            await stream.close()
        yield assembler.final()

    def _mid_stream_error(self, exc: Exception) -> Exception:
        """A stream that fails after it started is not retried (chunks were handed out)."""
        if isinstance(exc, _sdk.OpenAIError) or _is_transport_error(exc):
            return self._translate(exc, attempts=1)
        return exc

    # ------------------------------------------------------------------ retries
    def _with_retries(self, send: Callable[[], _T]) -> _T:
        for retries in itertools.count():
            try:
                return send()
            except _sdk.OpenAIError as exc:
                delay = self._delay_or_raise(exc, retries)
            run_sync(wait(delay))
        raise AssertionError("unreachable")

    async def _awith_retries(self, send: Callable[[], Awaitable[_T]]) -> _T:
        for retries in itertools.count():
            try:
                return await send()
            except _sdk.OpenAIError as exc:
                delay = self._delay_or_raise(exc, retries)
            await wait(delay)
        raise AssertionError("unreachable")

    def _delay_or_raise(self, exc: _sdk.OpenAIError, retries: int) -> float:
        """The retry policy, shared by the sync and async loops: the wait before the next
        attempt, or the translated agentkit error when there is none left."""
        _reraise_foreign_cause(exc)
        error = self._translate(exc, attempts=retries + 1)
        delay = self._retry_delay(error, retries)
        if delay is None:
            raise error from None  # the SDK's exception may echo part of the key
        self._log_retry(error, retries, delay)
        return delay

    def _retry_delay(self, error: errors.LLMError, retries: int) -> float | None:
        """Seconds to wait before retry number ``retries + 1``; ``None`` to give up."""
        if not error.retryable or retries >= self.max_retries:
            return None
        if error.retry_after is not None:
            return min(error.retry_after, RETRY_AFTER_MAX)
        return min(BACKOFF_INITIAL * 2 ** retries, BACKOFF_MAX)

    def _log_retry(self, error: errors.LLMError, retries: int, delay: float) -> None:
        logger.info("%s; retry %d of %d in %.3g s", error.message, retries + 1,
                    self.max_retries, delay)

    def _translate(self, exc: BaseException, *, attempts: int) -> errors.LLMError:
        """The agentkit error for an SDK or transport exception (message redacted)."""
        tries = f"{attempts} attempt{'s' if attempts != 1 else ''}"
        if isinstance(exc, _sdk.APIStatusError):
            return self._status_error(exc, tries, attempts)
        if isinstance(exc, _sdk.APITimeoutError) or (_is_transport_error(exc) and _is_timeout(exc)):
            return errors.APITimeoutError(
                f"{self._where} did not answer within {self.timeout} s ({tries})",
                attempts=attempts, provider="openai")
        if isinstance(exc, _sdk.APIConnectionError) or _is_transport_error(exc):
            return errors.APIConnectionError(
                f"could not reach {self._where} ({tries}): {type(exc).__name__}",
                attempts=attempts, provider="openai")
        return errors.LLMError(f"{self._where} failed ({tries}): "
                               f"{self._redact(_server_detail(exc))}",
                               attempts=attempts, provider="openai")

    def _status_error(self, exc: _sdk.APIStatusError, tries: str,
                      attempts: int) -> errors.LLMError:
        status = exc.status_code
        common = {"status_code": status, "request_id": exc.request_id, "attempts": attempts,
                  "provider": "openai"}
        if status == 401:  # the server's text may echo part of the key: never pass it on
            hint = (f"no API key is set: set {API_KEY_ENV} or pass api_key=..."
                    if self._key_is_placeholder
                    else f"check the api_key argument or the {API_KEY_ENV} environment variable")
            return errors.AuthenticationError(
                f"invalid API key: {self._where} answered HTTP 401 ({hint})", **common)
        cls = errors.error_for_status(status)
        if status == 429 and getattr(exc, "code", None) == "insufficient_quota":
            cls = errors.QuotaExceededError
        retry_after = parse_retry_after(exc.response.headers) if status in _RETRYABLE_STATUS else None
        return cls(f"{self._where} answered HTTP {status} ({tries}): "
                   f"{self._redact(_server_detail(exc))}", retry_after=retry_after, **common)

    def _redact(self, text: str) -> str:
        if self._api_key and len(self._api_key) >= 8:
            text = text.replace(self._api_key, "***")
        return _KEY_LIKE.sub("sk-***", text)


def _check_arguments(model: str, temperature: float, max_tokens: int | None, timeout: float,
                     max_retries: int, context_window: int | None) -> None:
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
    if isinstance(max_retries, bool) or not isinstance(max_retries, int) or max_retries < 0:
        raise ValueError(f"OpenAI max_retries must be an integer >= 0, got {max_retries!r}")
    if context_window is not None and context_window < 1:
        raise ValueError(f"OpenAI context_window must be at least 1 (or None), got "
                         f"{context_window!r}")


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
