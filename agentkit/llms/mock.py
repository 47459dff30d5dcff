"""Deterministic model backends: the heart of offline agent tests.

* :class:`ScriptedLLM` answers each call with the next item of a script and fails loudly when
  the script runs out (it never wraps around).
* :class:`FunctionLLM` computes each answer with a function of the request
  (:data:`~agentkit.llms.doubles.ModelFunction`: the messages and a typed
  :class:`~agentkit.llms.doubles.RequestInfo`).
* :class:`MockLLM` echoes its prompt, like LlamaIndex's ``MockLLM``.
* :class:`SchemaLLM` calls every tool it is offered with arguments made up from the tool's
  JSON schema, then answers with the results: a smoke test for a tool set.
* :class:`CassetteLLM` replays recorded exchanges (defined in :mod:`agentkit.recording`, a
  layer above this one: importable from here as before, loaded on first use).

They are real backends (they implement the LLM hooks), so agents cannot tell them from a live
model: streaming splits text into word chunks and streams tool-call arguments, every call
reports usage, simulated latency runs on the virtual clock, and a scripted error the OpenAI
backend would retry (a 429, a 5xx, a connection cut before the answer) is retried by the same
policy (:mod:`agentkit.llms.retries`: ``max_retries``, default 3, the wait on the virtual
clock), each attempt taking the next script item.

Each is a :class:`~agentkit.llms.doubles.ModelDouble`: it says what of its script no call
used (``leftovers()``) and can be excused for it (``excuse(reason)``), which is all the harness
asks of a double, whatever its class.

A script item is one of: ``str`` (assistant text), :class:`ChatMessage`,
:class:`ScriptedResponse`, a :class:`ToolSelection` (see :func:`tool_call`) or a list of
them, :class:`ChatResponse`, an ``Exception`` instance (raised by that call), or a callable
``(messages, tools) -> item`` evaluated at call time.
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from agentkit.core.errors import RecordingMismatchError
from agentkit.core.ids import new_id
from agentkit.core.lazy import lazy_names
from agentkit.core.sim import asleep, simulated_wait
from agentkit.llms.base import (
    CustomLLM,
    FunctionCallingLLM,
    LLMRequest,
    messages_to_prompt,
)
from agentkit.llms.doubles import (
    Excusable,
    ModelAnswer,
    ModelDouble,
    ModelFunction,
    RequestInfo,
)
from agentkit.llms.errors import APIConnectionError, LLMError
from agentkit.llms.retries import DEFAULT_MAX_RETRIES, check_max_retries, retrying
from agentkit.llms.schema_values import example_arguments
from agentkit.llms.types import (
    ChatMessage,
    ChatResponse,
    LLMMetadata,
    MessageRole,
    ToolSelection,
    Usage,
    model_metadata,
    text_message,
)

__all__ = [
    "ScriptedLLM",
    "ScriptedResponse",
    "ScriptExhaustedError",
    "StreamCut",
    "Script",
    "tool_call",
    "FunctionLLM",
    "MockLLM",
    "SchemaLLM",
    "CassetteLLM",
    "RecordingLLM",
    "split_words",
    "track_scripts",
    "ModelDouble",
    "ModelFunction",
    "ModelAnswer",
    "RequestInfo",
]

if TYPE_CHECKING:
    from agentkit.recording import CassetteLLM, RecordingLLM


# ``CassetteLLM`` and ``RecordingLLM``, re-exported from :mod:`agentkit.recording` on first
# use: that layer stands on this one, so it is imported only when they are asked for
__getattr__, __dir__ = lazy_names(__name__, {"CassetteLLM": "agentkit.recording",
                                             "RecordingLLM": "agentkit.recording"})


class ScriptExhaustedError(RecordingMismatchError, RuntimeError):
    """A :class:`ScriptedLLM` was called more often than its script allows."""


_tracked: ContextVar[list[ScriptedLLM] | None] = ContextVar("agentkit_tracked_scripts",
                                                            default=None)


@contextmanager
def track_scripts() -> Iterator[list[ScriptedLLM]]:
    """Collect every :class:`ScriptedLLM` created in this block (the pytest plugin checks
    them with ``assert_complete`` at teardown)."""
    scripts: list[ScriptedLLM] = []
    token = _tracked.set(scripts)
    try:
        yield scripts
    finally:
        _tracked.reset(token)


class Script:
    """Scripted items consumed one per use, in order; it never wraps around.

    Shared by :class:`ScriptedLLM` (one item per LLM call) and the fake OpenAI endpoint (one
    item per HTTP request). ``owner`` and ``unit`` name them in the error messages.
    """

    def __init__(self, items: Iterable[Any], *, owner: str, unit: str = "call",
                 strict: bool = True) -> None:
        self.items = list(items)
        self.owner = owner
        self.unit = unit
        self.strict = strict
        self.position = 0
        self.attempts = 0  # uses asked for, including those past the end

    @property
    def remaining(self) -> int:
        return len(self.items) - self.position

    def take(self, last_message: str) -> Any:
        """The next item, or :class:`ScriptExhaustedError` naming the use and the last
        user/observation message."""
        self.attempts += 1
        if self.position >= len(self.items):
            raise ScriptExhaustedError(
                f"{self.owner} ran out of script: {self.unit} #{self.attempts} has no scripted "
                f"response (the script has {len(self.items)}). Last user/observation message: "
                f"{last_message[:200]!r}")
        item = self.items[self.position]
        self.position += 1
        return item

    def assert_complete(self) -> None:
        """Fail if a strict script has items nothing consumed."""
        if self.strict and self.remaining:
            raise AssertionError(
                f"{self.owner} left {self.remaining} scripted response(s) unused "
                f"({self.position} of {len(self.items)} consumed); next unused: "
                f"{self.items[self.position]!r}")

    def reset(self) -> None:
        self.position = 0
        self.attempts = 0


def tool_call(name: str, /, **kwargs: Any) -> ToolSelection:
    """A scripted tool call with an id from the seeded id source."""
    return ToolSelection(tool_id=new_id("call"), tool_name=name, tool_kwargs=kwargs)


@dataclass
class ScriptedResponse:
    """A scripted reply with the details a plain string cannot carry.

    ``chunks`` fixes how the text is streamed (they must join to ``text``; ``text`` may be
    left empty and is then their concatenation). ``latency`` overrides the LLM's per-call
    latency; ``usage`` overrides the estimate.
    """

    text: str = ""
    tool_calls: list[ToolSelection] = field(default_factory=list)
    usage: Usage | dict[str, int] | None = None
    latency: float | None = None
    chunks: list[str] | None = None

    def __post_init__(self) -> None:
        if self.chunks is not None:
            joined = "".join(self.chunks)
            if not self.text:
                self.text = joined
            elif joined != self.text:
                raise ValueError(f"ScriptedResponse chunks {self.chunks!r} do not join to its "
                                 f"text {self.text!r}")
        if isinstance(self.usage, dict):
            self.usage = Usage(**self.usage)
        if self.latency is not None and not self.latency >= 0:
            raise ValueError(f"ScriptedResponse latency must be >= 0, got {self.latency!r}")


@dataclass
class StreamCut:
    """A reply whose connection is cut mid-answer: a streamed call gets the first half of
    ``reply``'s text chunks, then an :class:`~agentkit.llms.errors.APIConnectionError`; a call
    that is not streamed gets the error alone (its body never arrived whole)."""

    reply: Any
    """The script item cut (a str or :class:`ScriptedResponse`, mostly)."""


CUT_MESSAGE = "the connection closed mid-answer (a stream cut)"


_WORDS = re.compile(r"\S+\s*|\s+")


def split_words(text: str) -> list[str]:
    """Stream chunks of ``text``: each word with the whitespace after it."""
    return _WORDS.findall(text)


def _chunk_arguments(arguments: str, size: int = 8) -> list[str]:
    return [arguments[i:i + size] for i in range(0, len(arguments), size)] or [""]


@dataclass(slots=True)
class _Reply:
    message: ChatMessage
    usage: Usage | None = None
    latency: float | None = None
    chunks: list[str] | None = None
    cut: bool = False


def _assistant(text: str | None, calls: Sequence[ToolSelection] = ()) -> ChatMessage:
    # the default empty additional_kwargs without calls: nothing to validate
    additional_kwargs = {"tool_calls": list(calls)} if calls else None
    if isinstance(text, str):
        return text_message(MessageRole.ASSISTANT, text, additional_kwargs)
    if additional_kwargs is None:
        return ChatMessage(role=MessageRole.ASSISTANT, content=text)
    return ChatMessage(role=MessageRole.ASSISTANT, content=text,
                       additional_kwargs=additional_kwargs)


class _ProgrammedLLM(FunctionCallingLLM, Excusable):
    """Shared machinery of the scripted backends: rendering items, streaming, latency, the
    retries of the OpenAI backend's policy (``max_retries``)."""

    def __init__(self, *, name: str, function_calling: bool, latency: float,
                 context_window: int, max_retries: int = DEFAULT_MAX_RETRIES) -> None:
        if not latency >= 0:
            raise ValueError(f"latency must be >= 0 seconds, got {latency!r}")
        check_max_retries(type(self).__name__, max_retries)
        self.max_retries = max_retries
        self.name = name
        self.function_calling = function_calling
        self.latency = latency
        self.context_window = context_window
        self.requests: list[LLMRequest] = []

    @property
    def metadata(self) -> LLMMetadata:
        return model_metadata(self.name, function_calling=self.function_calling,
                              context_window=self.context_window)

    async def _next_item(self, request: LLMRequest) -> Any:
        raise NotImplementedError

    async def _reply(self, request: LLMRequest, *, streamed: bool) -> _Reply:
        """The reply to ``request`` after the retries the policy makes: each attempt takes
        the next item; a cut reply fails an attempt not streamed (its body never arrived),
        while a stream gets it, to cut after handing out chunks (not retried).

        The first attempt is made here, since most calls succeed at once; its failure is
        then the first the retry policy meets, as if it had made that attempt itself."""
        try:
            # self._attempt(request)'s body, inline: no coroutine of its own for the attempt
            # that (nearly always) succeeds; the retries below go through _attempt
            self.requests.append(request)
            item = await self._next_item(request)
            reply = (_Reply(text_message(MessageRole.ASSISTANT, item)) if type(item) is str
                     else await self._render(item, request, depth=0))
            latency = reply.latency if reply.latency is not None else self.latency
            if latency:
                await asleep(latency)
            if reply.cut and not streamed:
                raise _cut_error()
        except LLMError as exc:
            first = exc
        else:
            return reply
        failed: list[LLMError] = [first]
        unseen = [first]  # the policy's first attempt meets the failure already had

        async def attempt() -> _Reply:
            if unseen:
                raise unseen.pop()
            try:
                reply = await self._attempt(request)
                if reply.cut and not streamed:
                    raise _cut_error()
            except LLMError as exc:
                failed.append(exc)
                raise
            except ScriptExhaustedError as exc:  # a retry's: the first attempt's goes as it is
                raise ScriptExhaustedError(
                    f"{exc} -- the call was a retry: its attempt {len(failed)} failed with "
                    f"{type(failed[-1]).__name__} ({failed[-1].message!r}), which the retry "
                    f"policy retries (max_retries={self.max_retries}); script what the retry "
                    "gets, or give max_retries=0") from None
            return reply
        return await retrying(attempt, self.max_retries, simulated_wait)

    async def _attempt(self, request: LLMRequest) -> _Reply:
        self.requests.append(request)
        item = await self._next_item(request)
        # the usual item, a reply's text, without a coroutine for _render
        reply = (_Reply(text_message(MessageRole.ASSISTANT, item)) if type(item) is str
                 else await self._render(item, request, depth=0))
        latency = reply.latency if reply.latency is not None else self.latency
        if latency:
            await asleep(latency)
        return reply

    async def _render(self, item: Any, request: LLMRequest, depth: int) -> _Reply:
        if isinstance(item, BaseException):
            if self.latency:
                await asleep(self.latency)
            raise item
        if isinstance(item, str):
            return _Reply(text_message(MessageRole.ASSISTANT, item))
        if isinstance(item, ChatMessage):
            return _Reply(item.model_copy(deep=True))
        if isinstance(item, ChatResponse):
            return _Reply(item.message.model_copy(deep=True), usage=item.usage)
        if isinstance(item, ScriptedResponse):
            usage = cast(Usage | None, item.usage)  # __post_init__ made a dict a Usage
            return _Reply(_assistant(item.text, item.tool_calls), usage=usage,
                          latency=item.latency, chunks=item.chunks)
        if isinstance(item, StreamCut) and depth < 2:
            cut = await self._render(item.reply, request, depth=2)
            cut.cut = True
            return cut
        if isinstance(item, ToolSelection):
            return _Reply(_assistant("", [item]))
        if isinstance(item, list) and item and all(isinstance(c, ToolSelection) for c in item):
            return _Reply(_assistant("", item))
        if callable(item) and depth == 0:
            result = item(request.messages, request.tools)
            if inspect.isawaitable(result):
                result = await result
            return await self._render(result, request, depth=1)
        raise TypeError(f"{type(self).__name__} {self.name!r} cannot answer with {item!r}: a "
                        "script item must be a str, ChatMessage, ScriptedResponse, ToolSelection "
                        "(or list of them), ChatResponse, Exception or callable")

    async def _achat(self, request: LLMRequest) -> ChatResponse:
        reply = await self._reply(request, streamed=False)
        # ChatResponse(...) validated without BaseModel.__init__'s frame: once per call
        return ChatResponse.__pydantic_validator__.validate_python(  # type: ignore[no-any-return]
            {"message": reply.message, "usage": reply.usage})

    async def _astream_chat(self, request: LLMRequest) -> AsyncIterator[ChatResponse]:
        reply = await self._reply(request, streamed=True)
        if reply.cut:
            text = reply.message.content or ""
            pieces = reply.chunks if reply.chunks is not None else split_words(text)
            so_far = ""
            for piece in pieces[:len(pieces) // 2]:
                so_far += piece
                yield ChatResponse(message=_assistant(so_far), delta=piece)
            raise _cut_error()
        for chunk in _stream_reply(reply):
            yield chunk


def _cut_error() -> Exception:
    return APIConnectionError(CUT_MESSAGE)


def _stream_reply(reply: _Reply) -> Iterator[ChatResponse]:
    """Text in word chunks (or the scripted ones), then each tool call's arguments in pieces;
    the last chunk carries the whole message (with its tool calls) and the usage. (A plain
    generator: it never waits, and a scripted reply streams in dozens of chunks.)"""
    text = reply.message.content or ""
    pieces = reply.chunks if reply.chunks is not None else split_words(text)
    calls = reply.message.tool_calls
    so_far = ""
    for piece in pieces:
        so_far += piece
        yield ChatResponse(message=text_message(MessageRole.ASSISTANT, so_far), delta=piece)
    for index, call in enumerate(calls):
        for part in _chunk_arguments(json.dumps(call.tool_kwargs)):
            yield ChatResponse(message=text_message(MessageRole.ASSISTANT, so_far), delta="",
                               additional_kwargs={"tool_call_delta": {
                                   "index": index, "tool_id": call.tool_id,
                                   "tool_name": call.tool_name, "arguments_delta": part}})
    yield ChatResponse(message=reply.message, delta="", usage=reply.usage)


class ScriptedLLM(_ProgrammedLLM):
    """Answers call *n* with script item *n* (see the module docstring for item kinds); an
    error item the retry policy retries (``max_retries``) moves the call on to the next item,
    as a retried request to a server does.

    ``strict`` makes :meth:`assert_complete` (which the pytest plugin runs at teardown) fail
    when items were left unused; ``.requests`` keeps every request received (each attempt).
    """

    def __init__(self, responses: Iterable[Any], *, function_calling: bool = True,
                 latency: float = 0.0, strict: bool = True, name: str = "scripted",
                 context_window: int = 3900, max_retries: int = DEFAULT_MAX_RETRIES) -> None:
        super().__init__(name=name, function_calling=function_calling, latency=latency,
                         context_window=context_window, max_retries=max_retries)
        self.script = Script(responses, owner=f"ScriptedLLM {name!r}", strict=strict)
        tracked = _tracked.get()
        if tracked is not None:
            tracked.append(self)

    @property
    def responses(self) -> list[Any]:
        return self.script.items

    @property
    def strict(self) -> bool:
        return self.script.strict

    @strict.setter
    def strict(self, value: bool) -> None:
        self.script.strict = value

    @property
    def calls(self) -> int:
        return self.script.position

    @property
    def remaining(self) -> int:
        return self.script.remaining

    async def _next_item(self, request: LLMRequest) -> Any:
        script = self.script
        position = script.position
        if position < len(script.items) and type(script) is Script:
            # an item left: Script.take's bookkeeping, inline (once per call)
            script.attempts += 1
            script.position = position + 1
            return script.items[position]
        # the last user text is only for the error of a script that has run out
        return script.take("" if position < len(script.items)
                           else _last_user_text(request.messages))

    def leftovers(self) -> list[str]:
        left = self.remaining
        if not left:
            return []
        return [f"the script has {left} unused repl{'y' if left == 1 else 'ies'} (the agent "
                f"made {self.calls} LLM calls)"]

    def assert_complete(self) -> None:
        """Fail if a strict script has items no call consumed (unless it was excused)."""
        if self.excused is None:
            self.script.assert_complete()

    def reset(self) -> None:
        """Start the script over, forget the recorded requests and any excuse."""
        self.script.reset()
        self.requests.clear()
        self.excused = None


def _last_user_text(messages: Sequence[ChatMessage]) -> str:
    for message in reversed(messages):
        if message.role in (MessageRole.USER, MessageRole.TOOL):
            return message.content or ""
    return ""


StreamFn = Callable[[list[ChatMessage], list[Any] | None], Iterable[Any]]


class FunctionLLM(_ProgrammedLLM):
    """Answers each call with ``function(messages, info)`` (a :data:`ModelFunction`: ``info``
    is the call's :class:`RequestInfo` -- the offered tools' specs, the tools the prompt lists,
    the keywords), sync or async, returning any script item. The older form ``fn(messages,
    tools)``, given positionally, is handed the offered tool objects (None: none offered).

    ``stream_fn(messages, tools)``, if given, drives streaming instead: it yields ``str``
    deltas and/or :class:`ToolSelection` calls.
    """

    def __init__(self, fn: Callable[..., Any] | None = None, stream_fn: StreamFn | None = None,
                 *, function: ModelFunction | None = None, function_calling: bool = True,
                 latency: float = 0.0, name: str = "function",
                 context_window: int = 3900, max_retries: int = DEFAULT_MAX_RETRIES) -> None:
        if (fn is None) == (function is None):
            raise TypeError("FunctionLLM answers with one function: function=f (f(messages, "
                            "info)) or fn (fn(messages, tools)), not "
                            + ("both" if fn is not None else "neither"))
        super().__init__(name=name, function_calling=function_calling, latency=latency,
                         context_window=context_window, max_retries=max_retries)
        self.fn = fn
        self.function = function
        self.stream_fn = stream_fn

    async def _next_item(self, request: LLMRequest) -> Any:
        function = self.function
        if function is None:
            return self.fn
        info = RequestInfo.of(request)
        return lambda messages, tools: function(messages, info)

    async def _astream_chat(self, request: LLMRequest) -> AsyncIterator[ChatResponse]:
        if self.stream_fn is None:
            async for chunk in super()._astream_chat(request):
                yield chunk
            return
        self.requests.append(request)
        if self.latency:
            await asleep(self.latency)
        chunks: list[str] = []
        calls: list[ToolSelection] = []
        for part in self.stream_fn(request.messages, request.tools):
            if isinstance(part, ToolSelection):
                calls.append(part)
            elif isinstance(part, str):
                chunks.append(part)
            else:
                raise TypeError(f"FunctionLLM stream_fn yielded {part!r}; yield str or ToolSelection")
        reply = _Reply(_assistant("".join(chunks), calls), chunks=chunks)
        for chunk in _stream_reply(reply):
            yield chunk


class MockLLM(CustomLLM, Excusable):
    """Echoes the prompt (chat: the flattened messages), or ``"text"`` × ``max_tokens``.

    A CustomLLM, as LlamaIndex's: a subclass overriding ``complete`` serves chat too."""

    def __init__(self, max_tokens: int | None = None, *, system_prompt: str | None = None) -> None:
        self.max_tokens = max_tokens
        self.system_prompt = system_prompt

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(model_name="mock", num_output=self.max_tokens or 256)

    def _pieces(self, request: LLMRequest) -> list[str]:
        if self.max_tokens is not None:
            return ["text"] + [" text"] * (self.max_tokens - 1) if self.max_tokens > 0 else []
        text = request.prompt if request.kind == "complete" else messages_to_prompt(request.messages)
        return list(text or "")

    async def _achat(self, request: LLMRequest) -> ChatResponse:
        return ChatResponse(message=_assistant("".join(self._pieces(request))))

    async def _astream_chat(self, request: LLMRequest) -> AsyncIterator[ChatResponse]:
        so_far = ""
        for piece in self._pieces(request) or [""]:  # an empty answer is still one chunk
            so_far += piece
            yield ChatResponse(message=_assistant(so_far), delta=piece)


_REACT_ACTION = re.compile(r"^Action: (\S+)", re.MULTILINE)
_OBSERVATION = "Observation:"


def _this_turn(messages: Sequence[ChatMessage]) -> list[ChatMessage]:
    """The messages after the user's last message (a ReAct observation is not one)."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.role == MessageRole.USER and not (message.content or "").startswith(
                _OBSERVATION):
            return list(messages[index + 1:])
    return list(messages)


class SchemaLLM(_ProgrammedLLM):
    """Calls every tool it is offered once, with arguments made up from each tool's JSON schema
    (:mod:`agentkit.llms.schema_values`: deterministic, valid for the schema), then answers
    with a JSON object of each tool's output by tool name -- a smoke test for a new tool set,
    with no script to write (the idea of pydantic-ai's ``TestModel``).

    How it talks depends on how it is shown the tools, as a real model's would:

    * offered through the tool-calling API (the request's ``tools``: ``FunctionCallingAgent``,
      the workflow ``FunctionAgent``): one reply calling every tool (parallel tool calls), then,
      with the results in the conversation, the answer;
    * listed in a ReAct prompt (the request's ``listed_tools`` in the ``react`` format:
      ``ReActAgent``, the multimodal ReAct worker, the workflow ``ReActAgent``): one
      ``Thought / Action / Action Input`` reply per tool, in the listed order, then
      ``Thought / Answer``;
    * otherwise (LLMCompiler's and CoA's formats, or no tools): the answer ``{}`` at once.

    It reads the tools from the request (:class:`~agentkit.llms.ListedTools` for a prompt
    that lists them), never from the prompt's text.

    Each user turn starts over: every tool is called again. ``tools=[names]`` calls only
    those (a name that is not offered is an error naming the offered ones).
    """

    def __init__(self, *, tools: Sequence[str] | None = None, latency: float = 0.0,
                 name: str = "schema", context_window: int = 3900) -> None:
        super().__init__(name=name, function_calling=True, latency=latency,
                         context_window=context_window)
        self.only = list(tools) if tools is not None else None

    async def _next_item(self, request: LLMRequest) -> Any:
        if request.tools:
            offered = [(s["name"], s["parameters"]) for s in request.tool_specs() or ()]
            return self._tool_calls(self._chosen(offered), _this_turn(request.messages))
        listed = request.listed_tools
        if listed is not None and listed.format == "react" and listed.specs:
            return self._react(self._chosen([(s["name"], s["parameters"]) for s in listed.specs]),
                               _this_turn(request.messages))
        return self._answer({})

    def _chosen(self, offered: list[tuple[str, dict[str, Any]]]) -> list[tuple[str, dict[str, Any]]]:
        if self.only is None:
            return offered
        names = [name for name, _ in offered]
        missing = [name for name in self.only if name not in names]
        if missing:
            raise ValueError(f"SchemaLLM {self.name!r} was asked to call {', '.join(missing)}, "
                             f"which the agent does not offer (offered: {', '.join(names) or 'none'})")
        return [tool for tool in offered if tool[0] in self.only]

    @staticmethod
    def _answer(results: Mapping[str, str]) -> str:
        return json.dumps(dict(results), ensure_ascii=False)

    def _tool_calls(self, tools: list[tuple[str, dict[str, Any]]],
                    turn: Sequence[ChatMessage]) -> Any:
        asked = {call.tool_id: call.tool_name for message in turn
                 if message.role == MessageRole.ASSISTANT for call in message.tool_calls}
        if not asked:
            return ScriptedResponse(tool_calls=[tool_call(name, **example_arguments(schema))
                                                for name, schema in tools]) if tools else "{}"
        return self._answer({asked[m.additional_kwargs["tool_call_id"]]: m.content or ""
                             for m in turn if m.role == MessageRole.TOOL
                             and m.additional_kwargs.get("tool_call_id") in asked})

    def _react(self, tools: list[tuple[str, dict[str, Any]]], turn: Sequence[ChatMessage]) -> str:
        called = [match.group(1) for message in turn if message.role == MessageRole.ASSISTANT
                  for match in [_REACT_ACTION.search(message.content or "")] if match]
        for name, schema in tools:
            if name not in called:
                arguments = json.dumps(example_arguments(schema), ensure_ascii=False)
                return (f"Thought: I will try {name}.\nAction: {name}\n"
                        f"Action Input: {arguments}")
        observations = [(m.content or "").removeprefix(_OBSERVATION).strip() for m in turn
                        if m.role != MessageRole.ASSISTANT and (m.content or "").startswith(
                            _OBSERVATION)]
        results = dict(zip(called, observations, strict=False))
        return f"Thought: I called every tool.\nAnswer: {self._answer(results)}"
