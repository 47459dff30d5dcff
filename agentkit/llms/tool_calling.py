"""Calling tools the way agents do: never raising, always a :class:`ToolOutput`.

A tool that raises, gets bad arguments, or does not exist yields an ``is_error`` output whose
content the model can read (a :class:`~agentkit.core.errors.HarnessError` is not the tool's
answer but the harness's trouble -- a cassette miss, an MCP server that died -- and stops the
run) (``"Error: ..."`` in the runner agents' wording; agent workflows
bring their own :class:`ToolErrorWording`). Every call emits a tool-call start/end event
pair. :class:`ToolRunner` runs calls against a set of tools (lookup by name, ``return_direct``,
sequential or concurrent batches, a workflow context for tools that take one); every agent
calls tools through it. Tools are duck-typed (``.metadata.name`` and ``acall``/``call``, and
``requires_context`` for tools that want a workflow ``Context``), so this module needs nothing
from the layers above it.
"""

from __future__ import annotations

import functools
import inspect
import json
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import Any, Literal

from agentkit.core import ids as _ids
from agentkit.core.errors import HarnessError
from agentkit.core.events import (
    Span,
    ToolCallEndEvent,
    ToolCallStartEvent,
    ToolsOfferedEvent,
    _current_span,
    _new_tuple,
    dispatcher,
)
from agentkit.core.models import replaced
from agentkit.core.sim import _clock, _default_clock, now, run_sync
from agentkit.core.tokens import count_tokens
from agentkit.llms.types import ToolOutput, ToolSelection

__all__ = [
    "ListedTools",
    "ListingFormat",
    "ToolRunner",
    "ToolErrorWording",
    "CALL_TOOL_WORDING",
    "ToolCallOutcome",
    "acall_tool",
    "call_tool",
    "acall_tool_with_selection",
    "call_tool_with_selection",
    "no_such_tool_output",
    "error_output",
    "tool_specs",
    "tool_specs_tokens",
]


class ToolErrorWording:
    """How a failed call reads to the model (and what its output holds). This base is the
    wording of LlamaIndex's ReAct worker (``Error: ...``, the exception as ``raw_output``),
    which the ReAct, LLMCompiler and CoA workers use; :data:`CALL_TOOL_WORDING` is
    LlamaIndex's ``call_tool`` (the function-calling worker, ``predict_and_call``); agent
    workflows bring their own."""

    positional_single_argument = False
    """Record a one-parameter tool called with one argument as called positionally
    (``raw_input={"args": (value,), "kwargs": {}}``), as LlamaIndex's ``call_tool`` calls
    it, when the tool takes it so (``BaseTool.takes_positional_input``; else call_tool's
    fallback, the keyword form); the call itself still goes by keyword, so the tool's schema
    checks it."""

    def unknown_tool(self, tool_name: str) -> str:
        return f"Error: No such tool named `{tool_name}`."

    def bad_arguments(self, message: str) -> str:
        """A call that must not run (``arguments_error``: undecodable arguments...)."""
        return f"Error: {message}"

    def failure(self, exc: Exception) -> str:
        """A tool that raised (its arguments did not fit, or it failed)."""
        return f"Error: {str(exc) or type(exc).__name__}"

    def raw_failure(self, exc: Exception) -> Any:
        """The ``raw_output`` of a failed call."""
        return exc


class _CallToolWording(ToolErrorWording):
    """LlamaIndex's ``call_tool`` wording: ``Encountered error: <exc>`` with the message as
    ``raw_output``; an unknown tool is its function-calling worker's "Tool with name x not
    found, please double check."."""

    positional_single_argument = True

    def unknown_tool(self, tool_name: str) -> str:
        return f"Tool with name {tool_name} not found, please double check."

    def bad_arguments(self, message: str) -> str:
        return f"Encountered error: {message}"

    def failure(self, exc: Exception) -> str:
        # Python's own words for a call that does not fit (upstream calls the function and
        # Python raises them), when the tool kept them (FunctionTool's ToolArgumentsError)
        return f"Encountered error: {getattr(exc, 'python_message', None) or exc}"

    def raw_failure(self, exc: Exception) -> Any:
        return self.failure(exc).removeprefix("Encountered error: ")



_OBSERVATIONS = ToolErrorWording()
CALL_TOOL_WORDING: ToolErrorWording = _CallToolWording()


def error_output(tool_name: str, arguments: dict[str, Any], message: str,
                 raw_output: Any = None) -> ToolOutput:
    """An ``is_error`` output in the runner agents' wording (``Error: <message>``)."""
    return _error(tool_name, arguments, _OBSERVATIONS.bad_arguments(message), raw_output)


def _error(tool_name: str, arguments: dict[str, Any], content: str,
           raw_output: Any = None) -> ToolOutput:
    return ToolOutput(content=content, tool_name=tool_name, raw_input=_raw_input(arguments),
                      raw_output=raw_output if raw_output is not None else content, is_error=True)


def _raw_input(arguments: dict[str, Any]) -> dict[str, Any]:
    """The ``raw_input`` shape of every ToolOutput: positional and keyword arguments."""
    return {"args": (), "kwargs": arguments}


def _as_positional(tool: Any, arguments: dict[str, Any], output: ToolOutput) -> ToolOutput:
    """``output`` of a one-parameter tool given one argument, its ``raw_input`` in the
    positional form LlamaIndex's ``call_tool`` calls such a tool with."""
    if len(arguments) != 1 or output.raw_input != _raw_input(arguments):
        return output
    metadata = getattr(tool, "metadata", None)
    if metadata is None or _parameter_count(metadata) != 1:
        return output
    if not getattr(tool, "takes_positional_input", True):  # call_tool's keyword fallback
        return output
    return replaced(output, {"raw_input": {"args": tuple(arguments.values()), "kwargs": {}}})


def _parameter_count(metadata: Any) -> int:
    """How many parameters the tool's JSON schema has: its ``get_parameters_dict()`` is
    ``json.loads(fn_schema_str)`` (a fresh dict each time), so the count is kept per text."""
    schema = getattr(metadata, "fn_schema_str", None)
    if isinstance(schema, str):
        return _property_count(schema)
    return len(metadata.get_parameters_dict().get("properties", {}))


@functools.lru_cache(maxsize=1024)
def _property_count(schema: str) -> int:
    return len(json.loads(schema).get("properties", {}))


def no_such_tool_output(tool_name: str, arguments: dict[str, Any]) -> ToolOutput:
    return _error(tool_name, arguments, _OBSERVATIONS.unknown_tool(tool_name))


async def _invoke(tool: Any, arguments: dict[str, Any], context: Any) -> Any:
    if context is not None and getattr(tool, "requires_context", False):
        arguments = {**arguments, "ctx": context}
    acall = getattr(tool, "acall", None)
    if acall is not None:
        return await acall(**arguments)
    result = (tool.call if hasattr(tool, "call") else tool)(**arguments)
    return await result if inspect.isawaitable(result) else result


async def acall_tool(tool: Any | None, arguments: dict[str, Any], *, tool_name: str | None = None,
                     tool_id: str | None = None, arguments_error: str | None = None,
                     context: Any = None, agent: str | None = None,
                     wording: ToolErrorWording = _OBSERVATIONS) -> ToolOutput:
    """Call ``tool`` (``None`` = unknown tool ``tool_name``) and return its output or an error.

    ``context`` (a workflow ``Context``) is passed as ``ctx=`` to a tool whose
    ``requires_context`` is true; ``agent`` names the calling agent on the bus events."""
    name = tool.metadata.name if tool is not None else (tool_name or "unknown")
    # dispatcher.span()'s block, inline (its __enter__ and __exit__ are two frames each time)
    parent = _current_span.get()
    numbers = _ids._current.get(_ids._default).span_numbers
    token = _current_span.set(_new_tuple(Span, (f"span-{next(numbers)}",
                                                parent.id if parent is not None else None)))
    try:
        if dispatcher.wants(ToolCallStartEvent):  # an event nobody takes is not built
            dispatcher.emit(ToolCallStartEvent(tool_name=name, tool_id=tool_id,
                                               arguments=arguments, agent=agent))
        started = _clock.get(_default_clock)._now  # now(), inline
        raised: BaseException | None = None
        if arguments_error is not None:  # the caller's reason not to run it is the news
            output = _error(name, arguments, wording.bad_arguments(arguments_error))
        elif tool is None:
            output = _error(name, arguments, wording.unknown_tool(name))
        else:
            try:
                acall = getattr(tool, "acall", None) if context is None else None
                # the usual tool, called as _invoke would, without a coroutine around it
                result = (await acall(**arguments) if acall is not None
                          else await _invoke(tool, arguments, context))
            except HarnessError:
                # the harness's own trouble (a cassette miss, a dead MCP server) is not the
                # tool's answer: the run stops on it, with its kind
                raise
            except Exception as exc:  # noqa: BLE001 (a failing tool is an observation, not a crash)
                raised = exc
                output = _error(name, arguments, wording.failure(exc),
                                raw_output=wording.raw_failure(exc))
            else:
                output = result if isinstance(result, ToolOutput) else ToolOutput(
                    content=str(result), tool_name=name, raw_input=_raw_input(arguments),
                    raw_output=result)
                if wording.positional_single_argument:
                    output = _as_positional(tool, arguments, output)
        if dispatcher.wants(ToolCallEndEvent):
            dispatcher.emit(ToolCallEndEvent(tool_name=name, tool_id=tool_id,
                                             arguments=arguments, output=output,
                                             is_error=output.is_error, latency=now() - started,
                                             agent=agent, exception=raised))
    finally:
        _current_span.reset(token)
    return output


def call_tool(tool: Any | None, arguments: dict[str, Any], **kwargs: Any) -> ToolOutput:
    return run_sync(acall_tool(tool, arguments, **kwargs))


async def acall_tool_with_selection(selection: ToolSelection, tools: Sequence[Any]) -> ToolOutput:
    """Call the tool named by ``selection`` among ``tools``."""
    (outcome,) = await ToolRunner(tools, wording=CALL_TOOL_WORDING).arun([selection])
    return outcome.output


def call_tool_with_selection(selection: ToolSelection, tools: Sequence[Any]) -> ToolOutput:
    return run_sync(acall_tool_with_selection(selection, tools))


@dataclass(frozen=True, slots=True)
class ToolCallOutcome:
    """One finished tool call: its output, and whether that output is the task's answer
    (the tool is ``return_direct`` and did not fail)."""

    output: ToolOutput
    return_direct: bool = False


def tool_specs(tools: Sequence[Any]) -> list[dict[str, Any]]:
    """Name, description and JSON-schema parameters of each tool: what a model is told about
    it (in a request, on the bus, in a trace's ``tools``). Agents offer the same tools on
    every call, so the specs are built once per (name, description, ``fn_schema_str``) of
    each tool's metadata and shared: treat them as read-only."""
    return list(_offered(_offer_key(tools))[0])


ListingFormat = Literal["react", "llm_compiler", "coa"]
"""How a prompt that lists tools asks for calls: ReAct's ``Action:`` lines, LLMCompiler's
numbered plan, CoA's chain of placeholders."""


@dataclass(frozen=True)
class ListedTools:
    """Tools an agent lists in its prompt's text instead of offering them through the
    tool-calling API (ReAct, LLMCompiler's planner, CoA), as data: their specs
    (:func:`tool_specs`) and the ``format`` the prompt asks for calls in (``"react"``,
    ``"llm_compiler"``, ``"coa"``). An agent passes them as ``listed_tools=`` to a chat call;
    they ride on the :class:`~agentkit.llms.base.LLMRequest` for test doubles (which read the
    tools here, never from the prompt) and are never sent on the wire: the prompt says it."""

    format: ListingFormat
    specs: tuple[dict[str, Any], ...] = ()

    @classmethod
    def of(cls, format: ListingFormat, tools: Sequence[Any]) -> ListedTools:
        """The specs of ``tools`` (objects with ``.metadata``), listed in ``format``: one
        (frozen) object per class, format and tools described alike, shared as the specs are
        (agents list their tools on every call)."""
        key = tuple(map(_OFFER_KEY, map(_METADATA, tools)))  # _offer_key(tools), inline
        if cls is not ListedTools:  # a subclass's, built anew
            return cls(format, _offered(key)[0])
        return _listed(format, key)


@functools.lru_cache(maxsize=256)
def _listed(format: ListingFormat, key: tuple[tuple[str, str, str], ...]) -> ListedTools:
    return ListedTools(format, _offered(key)[0])


def tool_specs_tokens(tools: Sequence[Any]) -> int:
    """Tokens of ``tool_specs(tools)`` as JSON (the default tokenizer): what the usage
    estimate counts for the offered tools."""
    return _offered(_offer_key(tools))[1]


_METADATA = attrgetter("metadata")
_OFFER_KEY = attrgetter("name", "description", "fn_schema_str")


def _offer_key(tools: Sequence[Any]) -> tuple[tuple[str, str, str], ...]:
    # each tool's metadata read once (a property on every tool); maps, not comprehensions:
    # no frame of their own
    return tuple(map(_OFFER_KEY, map(_METADATA, tools)))


@functools.lru_cache(maxsize=256)
def _offered(key: tuple[tuple[str, str, str], ...]) -> tuple[tuple[dict[str, Any], ...], int]:
    specs = tuple({"name": name, "description": description, "parameters": json.loads(schema)}
                  for name, description, schema in key)
    return specs, count_tokens(json.dumps(list(specs)))


class ToolRunner:
    """Runs tool calls against one set of tools: the one way every agent calls tools.

    Tools are found by name (the first of a name wins); a call never raises: an unknown tool,
    bad arguments or a raising tool become ``is_error`` outputs the model can read, and every
    call emits one tool-call start/end event pair. :meth:`acall` is one call as a coroutine,
    for callers that schedule calls themselves (a DAG that starts each call when its inputs
    are ready); :meth:`arun` runs a batch, one after another or concurrently. ``call`` and
    ``run`` are the same on the virtual-time loop. ``agent`` names the agent whose calls these
    are (on the bus events); ``wording`` says how failures read to the model.
    """

    def __init__(self, tools: Sequence[Any] = (), *, agent: str | None = None,
                 wording: ToolErrorWording = _OBSERVATIONS) -> None:
        self.agent = agent
        self.wording = wording
        self._tools = list(tools)
        self._by_name: dict[str, Any] = {}
        for tool in self._tools:
            self._by_name.setdefault(tool.metadata.name, tool)

    @property
    def tools(self) -> list[Any]:
        """The tools, in the order given (what the model is offered)."""
        return list(self._tools)

    def offered(self) -> ToolRunner:
        """This runner, after telling the bus that its tools are offered to the model (a
        :class:`ToolsOfferedEvent`, whether the model sees them in a request or a prompt):
        what a trace's ``tools`` are built from. Agents call it once per step."""
        if dispatcher.wants(ToolsOfferedEvent):
            dispatcher.emit(ToolsOfferedEvent(tools=tool_specs(self._tools)))
        return self

    def get(self, tool_name: str) -> Any | None:
        """The tool named ``tool_name``, or ``None``."""
        return self._by_name.get(tool_name)

    def bind(self, tool_name: str, args: Sequence[Any]) -> dict[str, Any]:
        """Name positional arguments (``add(3, 2)`` in a plan) after the tool's parameters,
        in schema order. ``ValueError`` for an unknown tool or too many arguments: pass its
        text as the call's ``arguments_error`` so the model sees it."""
        tool = self.get(tool_name)
        if tool is None:
            raise ValueError(f"No such tool named `{tool_name}`.")
        names = list(tool.metadata.get_parameters_dict().get("properties", {}))
        if len(args) > len(names):
            raise ValueError(f"{tool_name}() takes {len(names)} argument(s) "
                             f"({', '.join(names) or 'none'}) but {len(args)} were given")
        return dict(zip(names, args, strict=False))

    async def acall(self, tool_name: str, arguments: dict[str, Any], *,
                    tool_id: str | None = None, arguments_error: str | None = None,
                    context: Any = None) -> ToolCallOutcome:
        """Call one tool. With ``arguments_error`` set the tool is not run: its output is
        ``Error: <arguments_error>`` (undecodable arguments, or an input that failed).
        ``context`` (a workflow ``Context``) goes to tools that take one."""
        tool = self._by_name.get(tool_name)  # self.get(tool_name), inline
        output = await acall_tool(tool, arguments, tool_name=tool_name, tool_id=tool_id,
                                  arguments_error=arguments_error, context=context,
                                  agent=self.agent, wording=self.wording)
        return ToolCallOutcome(output, bool(tool is not None and tool.metadata.return_direct
                                            and not output.is_error))

    def call(self, tool_name: str, arguments: dict[str, Any], **kwargs: Any) -> ToolCallOutcome:
        return run_sync(self.acall(tool_name, arguments, **kwargs))

    async def arun(self, calls: Sequence[ToolSelection], *,
                   parallel: bool = False) -> list[ToolCallOutcome]:
        """Run ``calls``; outcomes in call order. ``parallel`` overlaps them (simulated wall
        time = the slowest call, not the sum)."""
        if parallel and len(calls) > 1:
            import asyncio  # loaded with the running loop; not at import (agentkit.core.sim)

            def start(call: ToolSelection) -> Awaitable[ToolCallOutcome]:
                return self.acall(call.tool_name, call.tool_kwargs, tool_id=call.tool_id,
                                  arguments_error=call.arguments_error)

            return list(await asyncio.gather(*map(start, calls)))
        outcomes = []
        for call in calls:  # a loop: an async comprehension is a coroutine of its own
            outcomes.append(await self.acall(call.tool_name, call.tool_kwargs,
                                             tool_id=call.tool_id,
                                             arguments_error=call.arguments_error))
        return outcomes

    def run(self, calls: Sequence[ToolSelection], *,
            parallel: bool = False) -> list[ToolCallOutcome]:
        return run_sync(self.arun(calls, parallel=parallel))
