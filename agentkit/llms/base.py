"""The LLM protocol: :class:`LLM` and :class:`FunctionCallingLLM`.

A backend implements a minimal set of hooks, each taking one :class:`LLMRequest`:

* ``_achat`` (async) or ``_chat`` (sync) -- one is enough;
* optionally ``_astream_chat`` / ``_stream_chat`` for real streaming (otherwise a stream is
  the full answer as one chunk).

Every public method (``chat``, ``achat``, ``stream_chat``, ``astream_chat``, ``complete``,
``acomplete``, ``stream_complete``, ``astream_complete`` and the ``*_with_tools`` variants)
is derived from those hooks and emits one LLM-call start/end event pair on the bus, with the
usage (estimated when a backend gives none) and the simulated latency of the call.

A subclass may instead override public methods, the way LlamaIndex users write their
``CustomLLM`` test doubles. As in LlamaIndex, an overridden sync method then serves its async
twin (``achat`` calls an overridden ``chat``, ``astream_chat`` an overridden ``stream_chat``,
likewise for ``complete``), and the ``*_with_tools`` variants call the overridden chat
methods (with ``tools``, ``tool_choice`` and ``allow_parallel_tool_calls`` as keywords); an
overridden async method is not used by its sync twin (nor is it upstream). On a
:class:`CustomLLM`, chat is also served by overridden ``complete`` / ``stream_complete``
(messages flattened by ``messages_to_prompt``). Overrides are recorded like hooks: one event
pair per call however it is reached, and an override calling ``super()`` reaches the hooks
without a second pair.
"""

from __future__ import annotations

import functools
import inspect
import json
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from agentkit.core import ids as _ids
from agentkit.core.events import (
    LLMCallEndEvent,
    LLMCallStartEvent,
    LLMStreamChunkEvent,
    Span,
    _current_span,
    _new_tuple,
    dispatcher,
)
from agentkit.core.sim import _clock, _default_clock, now, run_sync
from agentkit.core.tokens import count_tokens
from agentkit.llms.agent_response import AgentChatResponse
from agentkit.llms.tool_calling import (
    CALL_TOOL_WORDING,
    ListedTools,
    ToolRunner,
    tool_specs,
    tool_specs_tokens,
)
from agentkit.llms.types import (
    ChatMessage,
    ChatResponse,
    CompletionResponse,
    LLMMetadata,
    MessageRole,
    ToolSelection,
    Usage,
)

__all__ = ["DEFAULT_MODEL", "LLMRequest", "LLM", "CustomLLM", "FunctionCallingLLM", "WrappingLLM",
           "messages_to_prompt", "estimate_usage"]

#: The model live commands and the OpenAI backend use when none is named (``--model``,
#: ``AGENTKIT_MODEL``): defined here, not in :mod:`agentkit.llms.openai`, so naming it does not
#: import the openai SDK.
DEFAULT_MODEL = "gpt-4o-mini"

ToolChoice = str | dict[str, Any]


@dataclass
class LLMRequest:
    """Everything a backend needs for one call.

    ``kind`` is ``"chat"`` or ``"complete"``; a completion carries its ``prompt`` and, for
    chat backends, the same prompt as a single user message in ``messages``. ``tools`` are
    the tool objects offered (each with ``.metadata``, see :func:`tool_specs`);
    ``listed_tools`` those the prompt lists in its text (:class:`ListedTools`: for test
    doubles, never sent on the wire).
    """

    kind: Literal["chat", "complete"]
    messages: list[ChatMessage]
    stream: bool = False
    tools: list[Any] | None = None
    tool_choice: ToolChoice | None = None
    allow_parallel_tool_calls: bool = False
    prompt: str | None = None
    kwargs: dict[str, Any] = field(default_factory=dict)
    formatted: bool = False
    listed_tools: ListedTools | None = None

    @property
    def call_kind(self) -> str:
        """``chat``, ``stream_chat``, ``complete`` or ``stream_complete``."""
        return f"stream_{self.kind}" if self.stream else self.kind

    def tool_specs(self) -> list[dict[str, Any]] | None:
        """Name, description and JSON-schema parameters of each offered tool (specs shared by
        every request offering the same tools, see :func:`tool_specs`: treat them as
        read-only)."""
        return None if self.tools is None else tool_specs(self.tools)


def messages_to_prompt(messages: Sequence[ChatMessage]) -> str:
    """Flatten a chat into one prompt: ``role: content`` lines, ending with ``assistant: ``."""
    lines = []
    for message in messages:
        line = f"{message.role.value}: {message.content}"
        if message.additional_kwargs:
            line += f"\n{message.additional_kwargs}"
        lines.append(line)
    lines.append(f"{MessageRole.ASSISTANT.value}: ")
    return "\n".join(lines)


def estimate_usage(request: LLMRequest, message: ChatMessage) -> Usage:
    """Token usage by the default tokenizer: messages (and tool schemas) in, reply out."""
    messages = request.messages
    prompt = sum(map(count_tokens, [m.content or "" for m in messages])) + 4 * len(messages)
    if request.tools:
        prompt += tool_specs_tokens(request.tools)
    completion = count_tokens(message.content or "")
    for call in message.tool_calls:
        completion += count_tokens(call.tool_name) + count_tokens(json.dumps(call.tool_kwargs))
    return Usage(prompt_tokens=prompt, completion_tokens=completion,
                 total_tokens=prompt + completion)


_get = object.__getattribute__
_set = object.__setattr__


class _EstimatedUsage(Usage):
    """:func:`estimate_usage` of a call, computed when the usage is first read: an agent
    never reads it, and counting the tokens of every message sent made a step cost more the
    more steps came before it. On any attribute access (pydantic's own ``__dict__`` reads
    included) it becomes a plain :class:`Usage` holding the estimate, so comparing,
    dumping or copying it sees the same values an eager estimate has. It counts the
    messages as they are then: agentkit never edits a message it has sent."""

    def __getattribute__(self, name: str) -> Any:
        pending = _get(self, "__pydantic_private__")
        if pending is not None:
            _estimate_now(self, *pending)
        return _get(self, name)


def _estimate_now(usage: _EstimatedUsage, request: LLMRequest, message: ChatMessage) -> None:
    estimate = estimate_usage(request, message)
    _set(usage, "__dict__", estimate.__dict__)
    _set(usage, "__pydantic_fields_set__", estimate.__pydantic_fields_set__)
    _set(usage, "__pydantic_extra__", None)
    _set(usage, "__pydantic_private__", None)
    _set(usage, "__class__", Usage)


class _CallRecorder:
    """Emits the start/chunk/end events of one LLM call (streamed or not); an event nobody
    receives is not built."""

    def __init__(self, llm: LLM, request: LLMRequest) -> None:
        self.llm = llm
        self.request = request
        # dispatcher.new_span() and now(), inline: two frames less per model call
        parent = _current_span.get()
        numbers = _ids._current.get(_ids._default).span_numbers
        self.span: Span = _new_tuple(Span, (f"span-{next(numbers)}",
                                            parent.id if parent is not None else None))
        self.started = _clock.get(_default_clock)._now
        self.last: ChatResponse | None = None
        self.ended = False
        if dispatcher.wants(LLMCallStartEvent):
            self._emit(LLMCallStartEvent(kind=request.call_kind, model=self.model,
                                         messages=request.messages, tools=request.tool_specs(),
                                         tool_choice=request.tool_choice))

    @functools.cached_property
    def model(self) -> str:
        """The model's name (a backend may build its metadata anew on every read)."""
        return self.llm.metadata.model_name

    def _emit(self, event: Any) -> None:
        event.span_id, event.parent_id = self.span.id, self.span.parent_id
        dispatcher.emit(event)

    def chunk(self, response: ChatResponse) -> None:
        self.last = response
        # built in its span at once, one per streamed chunk; not at all when no listener
        # takes chunks (a trace files nothing from them)
        if dispatcher.wants(LLMStreamChunkEvent):
            span = self.span
            dispatcher.emit(LLMStreamChunkEvent(delta=response.delta, span_id=span.id,
                                                parent_id=span.parent_id))

    def end(self, response: ChatResponse | None = None, error: BaseException | None = None) -> None:
        if self.ended:
            return
        self.ended = True
        response = response if response is not None else self.last
        if response is not None and response.usage is None and error is None:
            # the usage estimate_usage gives, counted when first read (see _EstimatedUsage)
            estimate = _EstimatedUsage.__new__(_EstimatedUsage)
            _set(estimate, "__pydantic_private__", (self.request, response.message))
            if type(response) is ChatResponse:
                # what pydantic's __setattr__ does for a field without assignment validation
                # (its two Python calls left out: once per model call)
                response.__dict__["usage"] = estimate
                response.__pydantic_fields_set__.add("usage")
            else:
                response.usage = estimate
        if not dispatcher.wants(LLMCallEndEvent):
            return
        message = None
        if error is not None:
            message = (f"{type(error).__name__}: {error}" if not isinstance(error, GeneratorExit)
                       else "stream closed before its end")
        self._emit(LLMCallEndEvent(kind=self.request.call_kind, model=self.model,
                                   provider=self.llm.provider,
                                   messages=self.request.messages, response=response,
                                   usage=response.usage if response is not None else None,
                                   latency=now() - self.started, error=message))


# The public methods a subclass may override instead of the hooks, by the requests they serve.
_PUBLIC_METHODS: dict[str, tuple[Literal["chat", "complete"], bool]] = {
    "chat": ("chat", False), "achat": ("chat", False),
    "stream_chat": ("chat", True), "astream_chat": ("chat", True),
    "complete": ("complete", False), "acomplete": ("complete", False),
    "stream_complete": ("complete", True), "astream_complete": ("complete", True),
}

# Ids of the LLMs whose own overridden public methods are running in this context: their
# calls to public methods (super(), or each other) are part of the call already recorded.
_inside_overrides: ContextVar[frozenset[int]] = ContextVar("agentkit_llm_overrides",
                                                           default=frozenset())
_END = object()


@contextmanager
def _inside(llm: LLM) -> Iterator[None]:
    token = _inside_overrides.set(_inside_overrides.get() | {id(llm)})
    try:
        yield
    finally:
        _inside_overrides.reset(token)


def _is_inside(llm: LLM) -> bool:
    return id(llm) in _inside_overrides.get()


def _routed_through_base(name: str, method: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap a subclass's override of public method ``name``: called from outside, it goes
    through the recorded base method (which routes back to it); called while the LLM's own
    overrides run, it is the plain override."""
    base = getattr(LLM, name)
    if inspect.iscoroutinefunction(base):
        @functools.wraps(method)
        async def routed_async(self: LLM, *args: Any, **kwargs: Any) -> Any:
            if _is_inside(self):
                return await _resolved(method(self, *args, **kwargs))
            return await base(self, *args, **kwargs)
        wrapper: Callable[..., Any] = routed_async
    else:
        @functools.wraps(method)
        def routed(self: LLM, *args: Any, **kwargs: Any) -> Any:
            if _is_inside(self):
                return method(self, *args, **kwargs)
            return base(self, *args, **kwargs)
        wrapper = routed
    wrapper._agentkit_override = method  # type: ignore[attr-defined]
    return wrapper


async def _resolved(result: Any) -> Any:
    """An async override's result: awaited when it is awaitable; an async generator function
    (``async def astream_chat(...): yield ...``) returns its generator directly."""
    return await result if inspect.isawaitable(result) else result


class LLM:
    """Base class of every model backend (see the module docstring for the hooks)."""

    system_prompt: str | None = None
    # CustomLLM: chat requests are served by overridden complete / stream_complete.
    _chat_from_complete: ClassVar[bool] = False
    # Which overridden public method serves a (kind, stream, async) request, per class.
    _served_by: ClassVar[dict[tuple[str, bool, bool], str | None]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for name in _PUBLIC_METHODS:
            method = cls.__dict__.get(name)
            if inspect.isfunction(method) and not hasattr(method, "_agentkit_override"):
                setattr(cls, name, _routed_through_base(name, method))
        cls._served_by = {(kind, stream, is_async): cls._serving(kind, stream, is_async)
                          for kind, stream in set(_PUBLIC_METHODS.values())
                          for is_async in (False, True)}

    @classmethod
    def _serving(cls, kind: str, stream: bool, is_async: bool) -> str | None:
        sync_name = f"stream_{kind}" if stream else kind
        names = [f"a{sync_name}", sync_name] if is_async else [sync_name]
        if kind == "chat" and cls._chat_from_complete:
            names.append("stream_complete" if stream else "complete")
        for name in names:
            if getattr(cls, name) is not getattr(LLM, name):
                return name
        return None

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata()

    @property
    def provider(self) -> str:
        """Who answers this model's requests, as OpenTelemetry's ``gen_ai.provider.name``
        says it: ``agentkit`` for a model that answers itself (scripts, mocks; a custom value,
        which the conventions allow), the vendor's name for a backend that sends requests to
        one (``openai``: the OpenAI wire, whichever server speaks it)."""
        return "agentkit"

    @property
    def secrets(self) -> dict[str, str]:
        """Values this backend was configured with that must never be written anywhere (an API
        key, auth header values), by name; recordings redact them. None by default."""
        return {}

    # ----------------------------------------------------------------- request building
    def _request(self, kind: Literal["chat", "complete"], messages: Sequence[ChatMessage] | None,
                 *, stream: bool, prompt: str | None = None, formatted: bool = False,
                 **kwargs: Any) -> LLMRequest:
        if kind == "complete":
            messages = [ChatMessage(role=MessageRole.USER, content=prompt)]
        else:
            messages = list(messages or [])
            if self.system_prompt and not (messages and messages[0].role == MessageRole.SYSTEM):
                messages.insert(0, ChatMessage(role=MessageRole.SYSTEM, content=self.system_prompt))
        tools = kwargs.pop("tools", None)
        listed = kwargs.pop("listed_tools", None)
        if listed is not None and not isinstance(listed, ListedTools):
            raise TypeError(f"listed_tools must be an agentkit.llms.ListedTools, got "
                            f"{type(listed).__name__}")
        return LLMRequest(kind=kind, messages=messages, stream=stream,
                          tools=list(tools) if tools is not None else None,
                          tool_choice=kwargs.pop("tool_choice", None),
                          allow_parallel_tool_calls=kwargs.pop("allow_parallel_tool_calls", False),
                          prompt=prompt, kwargs=kwargs, formatted=formatted,
                          listed_tools=listed)

    def messages_to_prompt(self, messages: Sequence[ChatMessage]) -> str:
        return messages_to_prompt(messages)

    # ----------------------------------------------------------------- overridden methods
    def _invoke(self, name: str, request: LLMRequest) -> Any:
        """Call the overridden public method ``name`` for ``request`` (inside the overrides)."""
        if _PUBLIC_METHODS[name][0] == "chat":
            kwargs = dict(request.kwargs)
            if request.tools is not None:
                kwargs.update(tools=request.tools, tool_choice=request.tool_choice,
                              allow_parallel_tool_calls=request.allow_parallel_tool_calls)
            return getattr(self, name)(request.messages, **kwargs)
        if request.kind == "complete":
            return getattr(self, name)(request.prompt, formatted=request.formatted,
                                       **request.kwargs)
        return getattr(self, name)(self.messages_to_prompt(request.messages), formatted=True,
                                   **request.kwargs)

    def _as_chat(self, name: str, response: Any) -> ChatResponse:
        if isinstance(response, ChatResponse):
            return response
        if isinstance(response, CompletionResponse):
            return ChatResponse(message=ChatMessage(role=MessageRole.ASSISTANT,
                                                    content=response.text),
                                raw=response.raw, delta=response.delta, usage=response.usage,
                                additional_kwargs=response.additional_kwargs)
        raise TypeError(f"{type(self).__name__}.{name} returned {type(response).__name__}; "
                        f"expected ChatResponse or CompletionResponse")

    def _overridden_chunks(self, name: str, request: LLMRequest) -> Iterator[ChatResponse]:
        with _inside(self):
            chunks = iter(self._invoke(name, request))
        yield from self._each_inside(name, chunks)

    async def _aoverridden_chunks(self, name: str,
                                  request: LLMRequest) -> AsyncIterator[ChatResponse]:
        with _inside(self):
            chunks = await _resolved(self._invoke(name, request))
        if not hasattr(chunks, "__anext__"):  # the sync stream_* serving an async stream
            for chunk in self._each_inside(name, iter(chunks)):
                yield chunk
            return
        while True:
            with _inside(self):
                item = await anext(chunks, _END)
            if item is _END:
                return
            yield self._as_chat(name, item)

    def _each_inside(self, name: str, chunks: Iterator[Any]) -> Iterator[ChatResponse]:
        """Advance an override's stream inside the overrides (not across ``yield``: the
        consumer's code between chunks is outside)."""
        while True:
            with _inside(self):
                chunk = next(chunks, _END)
            if chunk is _END:
                return
            yield self._as_chat(name, chunk)

    # ----------------------------------------------------------------- recorded calls
    def _call(self, request: LLMRequest) -> ChatResponse:
        if id(self) in _inside_overrides.get():  # _is_inside(self), one frame less per call
            return self._chat(request)
        name = self._served_by.get((request.kind, request.stream, False))
        recorder = _CallRecorder(self, request)
        try:
            if name is None:
                response = self._chat(request)
            else:
                with _inside(self):
                    response = self._as_chat(name, self._invoke(name, request))
        except BaseException as exc:
            recorder.end(error=exc)
            raise
        recorder.end(response)
        return response

    async def _acall(self, request: LLMRequest) -> ChatResponse:
        if id(self) in _inside_overrides.get():  # _is_inside(self), one frame less per call
            return await self._achat(request)
        name = self._served_by.get((request.kind, request.stream, True))
        recorder = _CallRecorder(self, request)
        try:
            if name is None:
                response = await self._achat(request)
            else:
                with _inside(self):
                    response = self._as_chat(name, await _resolved(self._invoke(name, request)))
        except BaseException as exc:
            recorder.end(error=exc)
            raise
        recorder.end(response)
        return response

    def _stream(self, request: LLMRequest) -> Iterator[ChatResponse]:
        if _is_inside(self):
            yield from self._stream_chat(request)
            return
        name = self._served_by.get((request.kind, request.stream, False))
        recorder = _CallRecorder(self, request)
        try:
            chunks = (self._stream_chat(request) if name is None
                      else self._overridden_chunks(name, request))
            for chunk in chunks:
                recorder.chunk(chunk)
                yield chunk
        except BaseException as exc:
            recorder.end(error=exc)
            raise
        recorder.end()

    async def _astream(self, request: LLMRequest) -> AsyncIterator[ChatResponse]:
        if _is_inside(self):
            async for chunk in self._astream_chat(request):
                yield chunk
            return
        name = self._served_by.get((request.kind, request.stream, True))
        recorder = _CallRecorder(self, request)
        note = recorder.chunk  # looked up once per stream: a reply streams in dozens of chunks
        try:
            chunks = (self._astream_chat(request) if name is None
                      else self._aoverridden_chunks(name, request))
            async for chunk in chunks:
                note(chunk)
                yield chunk
        except BaseException as exc:
            recorder.end(error=exc)
            raise
        recorder.end()

    # ----------------------------------------------------------------- public chat API
    def chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        return self._call(self._request("chat", messages, stream=False, **kwargs))

    async def achat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        return await self._acall(self._request("chat", messages, stream=False, **kwargs))

    def stream_chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> Iterator[ChatResponse]:
        return self._stream(self._request("chat", messages, stream=True, **kwargs))

    async def astream_chat(self, messages: Sequence[ChatMessage],
                           **kwargs: Any) -> AsyncIterator[ChatResponse]:
        """Like LlamaIndex: ``gen = await llm.astream_chat(msgs)`` then ``async for``."""
        return self._astream(self._request("chat", messages, stream=True, **kwargs))

    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        return _to_completion(self._call(self._request("complete", None, stream=False,
                                                       prompt=prompt, formatted=formatted,
                                                       **kwargs)))

    async def acomplete(self, prompt: str, formatted: bool = False,
                        **kwargs: Any) -> CompletionResponse:
        return _to_completion(await self._acall(self._request(
            "complete", None, stream=False, prompt=prompt, formatted=formatted, **kwargs)))

    def stream_complete(self, prompt: str, formatted: bool = False,
                        **kwargs: Any) -> Iterator[CompletionResponse]:
        request = self._request("complete", None, stream=True, prompt=prompt,
                                formatted=formatted, **kwargs)
        return (_to_completion(chunk) for chunk in self._stream(request))

    async def astream_complete(self, prompt: str, formatted: bool = False,
                               **kwargs: Any) -> AsyncIterator[CompletionResponse]:
        request = self._request("complete", None, stream=True, prompt=prompt,
                                formatted=formatted, **kwargs)
        return _map_async(self._astream(request), _to_completion)

    # ----------------------------------------------------------------- backend hooks
    def _overrides(self, name: str) -> bool:
        return getattr(type(self), name) is not getattr(LLM, name)

    async def _achat(self, request: LLMRequest) -> ChatResponse:
        if self._overrides("_chat"):
            return self._chat(request)
        if self._overrides("_astream_chat") or self._overrides("_stream_chat"):
            last = None
            async for chunk in self._astream_chat(request):
                last = chunk
            return _final(last)
        raise NotImplementedError(f"{type(self).__name__} must implement `_achat` or `_chat`")

    def _chat(self, request: LLMRequest) -> ChatResponse:
        if self._overrides("_achat") or self._overrides("_astream_chat"):
            return run_sync(self._achat(request))
        if self._overrides("_stream_chat"):
            last = None
            for chunk in self._stream_chat(request):
                last = chunk
            return _final(last)
        raise NotImplementedError(f"{type(self).__name__} must implement `_achat` or `_chat`")

    async def _astream_chat(self, request: LLMRequest) -> AsyncIterator[ChatResponse]:
        if self._overrides("_stream_chat"):
            for chunk in self._stream_chat(request):
                yield chunk
            return
        response = await self._achat(request)
        yield _as_single_chunk(response)

    def _stream_chat(self, request: LLMRequest) -> Iterator[ChatResponse]:
        if self._overrides("_astream_chat"):
            stream = self._astream_chat(request)
            while True:
                try:
                    chunk = run_sync(stream.__anext__())
                except StopAsyncIteration:
                    return
                yield chunk
        yield _as_single_chunk(self._chat(request))


class CustomLLM(LLM):
    """LlamaIndex's base for hand-written models: override ``complete`` and
    ``stream_complete`` (and ``metadata``); chat, streamed or not, sync or async, is served
    by them with the messages flattened by ``messages_to_prompt``."""

    _chat_from_complete = True


def _as_single_chunk(response: ChatResponse) -> ChatResponse:
    return response.model_copy(update={"delta": response.message.content or ""})


def _final(last: ChatResponse | None) -> ChatResponse:
    if last is None:
        raise RuntimeError("the backend's stream ended without a single chunk")
    return last.model_copy(update={"delta": None})


def _to_completion(response: ChatResponse) -> CompletionResponse:
    return CompletionResponse(text=response.message.content or "", raw=response.raw,
                              delta=response.delta, usage=response.usage,
                              additional_kwargs=response.additional_kwargs)


async def _map_async(stream: AsyncIterator[Any], fn: Any) -> AsyncIterator[Any]:
    async for item in stream:
        yield fn(item)


class FunctionCallingLLM(LLM):
    """An LLM that can be offered tools and answers with :class:`ToolSelection` calls."""

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(is_chat_model=True, is_function_calling_model=True)

    def _tools_request(self, tools: Sequence[Any], user_msg: str | ChatMessage | None,
                       chat_history: Sequence[ChatMessage] | None, *, stream: bool,
                       allow_parallel_tool_calls: bool, tool_choice: ToolChoice,
                       kwargs: dict[str, Any]) -> LLMRequest:
        messages = list(chat_history or [])
        if isinstance(user_msg, str):
            user_msg = ChatMessage(role=MessageRole.USER, content=user_msg)
        if user_msg is not None:
            messages.append(user_msg)
        kwargs.pop("verbose", None)
        return self._request("chat", messages, stream=stream, tools=list(tools),
                             tool_choice=tool_choice,
                             allow_parallel_tool_calls=allow_parallel_tool_calls, **kwargs)

    def chat_with_tools(self, tools: Sequence[Any], user_msg: str | ChatMessage | None = None,
                        chat_history: Sequence[ChatMessage] | None = None, verbose: bool = False,
                        allow_parallel_tool_calls: bool = False, tool_choice: ToolChoice = "auto",
                        **kwargs: Any) -> ChatResponse:
        request = self._tools_request(tools, user_msg, chat_history, stream=False,
                                      allow_parallel_tool_calls=allow_parallel_tool_calls,
                                      tool_choice=tool_choice, kwargs=kwargs)
        return _single_call_unless_parallel(self._call(request), allow_parallel_tool_calls)

    async def achat_with_tools(self, tools: Sequence[Any], user_msg: str | ChatMessage | None = None,
                               chat_history: Sequence[ChatMessage] | None = None,
                               verbose: bool = False, allow_parallel_tool_calls: bool = False,
                               tool_choice: ToolChoice = "auto", **kwargs: Any) -> ChatResponse:
        request = self._tools_request(tools, user_msg, chat_history, stream=False,
                                      allow_parallel_tool_calls=allow_parallel_tool_calls,
                                      tool_choice=tool_choice, kwargs=kwargs)
        response = await self._acall(request)
        if allow_parallel_tool_calls:  # every call kept: nothing to cut (no call to say so)
            return response
        return _single_call_unless_parallel(response, allow_parallel_tool_calls)

    def stream_chat_with_tools(self, tools: Sequence[Any], user_msg: str | ChatMessage | None = None,
                               chat_history: Sequence[ChatMessage] | None = None,
                               verbose: bool = False, allow_parallel_tool_calls: bool = False,
                               tool_choice: ToolChoice = "auto",
                               **kwargs: Any) -> Iterator[ChatResponse]:
        stream = self._stream(self._tools_request(
            tools, user_msg, chat_history, stream=True,
            allow_parallel_tool_calls=allow_parallel_tool_calls, tool_choice=tool_choice,
            kwargs=kwargs))
        return (_single_call_unless_parallel(c, allow_parallel_tool_calls) for c in stream)

    async def astream_chat_with_tools(self, tools: Sequence[Any],
                                      user_msg: str | ChatMessage | None = None,
                                      chat_history: Sequence[ChatMessage] | None = None,
                                      verbose: bool = False, allow_parallel_tool_calls: bool = False,
                                      tool_choice: ToolChoice = "auto",
                                      **kwargs: Any) -> AsyncIterator[ChatResponse]:
        stream = self._astream(self._tools_request(
            tools, user_msg, chat_history, stream=True,
            allow_parallel_tool_calls=allow_parallel_tool_calls, tool_choice=tool_choice,
            kwargs=kwargs))
        if allow_parallel_tool_calls:  # every chunk as it is: nothing to map, chunk by chunk
            return stream
        return _map_async(stream, lambda c: _single_call_unless_parallel(
            c, allow_parallel_tool_calls))

    def get_tool_calls_from_response(self, response: ChatResponse,
                                     error_on_no_tool_call: bool = True,
                                     **kwargs: Any) -> list[ToolSelection]:
        calls = response.message.tool_calls
        if not calls and error_on_no_tool_call:
            raise ValueError(f"Expected at least one tool call, but got {len(calls)} tool calls.")
        return calls

    def predict_and_call(self, tools: Sequence[Any], user_msg: str | ChatMessage | None = None,
                         chat_history: Sequence[ChatMessage] | None = None, verbose: bool = False,
                         allow_parallel_tool_calls: bool = False,
                         error_on_no_tool_call: bool = True, error_on_tool_error: bool = False,
                         **kwargs: Any) -> AgentChatResponse:
        return run_sync(self.apredict_and_call(
            tools, user_msg, chat_history, verbose, allow_parallel_tool_calls,
            error_on_no_tool_call, error_on_tool_error, **kwargs))

    async def apredict_and_call(self, tools: Sequence[Any], user_msg: str | ChatMessage | None = None,
                                chat_history: Sequence[ChatMessage] | None = None,
                                verbose: bool = False, allow_parallel_tool_calls: bool = False,
                                error_on_no_tool_call: bool = True,
                                error_on_tool_error: bool = False,
                                **kwargs: Any) -> AgentChatResponse:
        """Ask the model which tools to call, call them, and return their joined outputs."""
        response = await self.achat_with_tools(tools, user_msg, chat_history,
                                               allow_parallel_tool_calls=allow_parallel_tool_calls,
                                               **kwargs)
        calls = self.get_tool_calls_from_response(response, error_on_no_tool_call)
        outputs = [outcome.output for outcome in
                   await ToolRunner(tools, wording=CALL_TOOL_WORDING).arun(calls)]
        if error_on_tool_error and any(o.is_error for o in outputs):
            raise ValueError("\n\n".join(o.content for o in outputs if o.is_error))
        if not outputs:
            return AgentChatResponse(response=response.message.content or "", sources=[])
        return AgentChatResponse(response="\n\n".join(o.content for o in outputs), sources=outputs)


def _single_call_unless_parallel(response: ChatResponse, allow_parallel: bool) -> ChatResponse:
    """Keep only the first tool call when parallel calls were not allowed (LlamaIndex's rule)."""
    calls = response.message.tool_calls
    if not allow_parallel and len(calls) > 1:
        response.message.additional_kwargs["tool_calls"] = calls[:1]
    return response


class WrappingLLM(FunctionCallingLLM):
    """A model that sends its requests on to another (``llm``), changing how: it answers for
    that model's metadata, secrets and server."""

    def __init__(self, llm: LLM) -> None:
        self.llm = llm

    @property
    def metadata(self) -> LLMMetadata:
        return self.llm.metadata

    @property
    def provider(self) -> str:
        return self.llm.provider

    @property
    def secrets(self) -> dict[str, str]:
        return self.llm.secrets

    @property
    def base_url(self) -> str | None:
        """The server of the wrapped model (a cassette's header keeps it)."""
        return getattr(self.llm, "base_url", None)
