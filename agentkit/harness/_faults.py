"""Faults in a run: what a fault (:class:`~agentkit.scenario.Fault`) does to one call of a
scenario tool, and what it withheld from the agent.

A faulted call runs the tool first (unless it is a ``failures:`` entry), then either fails --
``error``, ``timeout`` (after its simulated seconds), ``rate_limit``, ``disconnect`` -- or
delivers a changed output: ``latency`` (late), ``empty``, ``truncate``, ``drop_fields``,
``corrupt_fields``, ``malformed_json``, ``wrong_type``. Either way the tool keeps an
:class:`InjectedFault`: what the agent got, and the facts of the real output it did not get
(:func:`facts`), which an answer must not state (:mod:`agentkit.verdict._outcomes`).
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from agentkit.core.errors import BadInputError
from agentkit.core.protocols import conforms
from agentkit.core.sim import asleep, simulated_wait
from agentkit.llms.base import LLM, LLMRequest, WrappingLLM
from agentkit.llms.errors import APIConnectionError, LLMError
from agentkit.llms.mock import CUT_MESSAGE, StreamCut
from agentkit.llms.retries import DEFAULT_MAX_RETRIES, retrying
from agentkit.llms.types import ChatMessage, ChatResponse, MessageRole
from agentkit.recording import RoleChannel, RoleKey, RoleLLM
from agentkit.scenario import ErrorItem, Fault, FaultKind, ModelFault, error_for
from agentkit.tools import ToolOutput
from agentkit.trace import SimulatedToolError

__all__ = ["FaultNotApplicableError", "InjectedFault", "applicable_kinds", "facts",
           "faults_struck", "faulted_model", "inject_fault", "note_struck", "with_model_faults"]

_DEFAULT_TIMEOUT = 30.0
_DEFAULT_LATENCY = 10.0
_DEFAULT_RETRY_AFTER = 1.0
_TOKEN = re.compile(r"[\w.:/+-]*\d[\w.:/+-]*")


class FaultNotApplicableError(BadInputError):
    """A fault that needs a kind of output the call did not return (``drop_fields`` on a
    text, ``malformed_json`` on an output that is not JSON)."""


@dataclass(frozen=True)
class InjectedFault:
    """A fault as it happened: the tool, its call number, the fault, what the agent got (the
    output's or the error's text) and the facts of the real output it did not get."""

    tool: str
    """The tool's name, or ``model`` (a team agent's: ``model of <agent>``)."""
    call: int
    fault: Fault | ModelFault
    delivered: str
    withheld: tuple[str, ...]


_STRUCK: ContextVar[list[InjectedFault] | None] = ContextVar("agentkit_faults_struck",
                                                              default=None)


@contextmanager
def faults_struck() -> Iterator[list[InjectedFault]]:
    """Within: the faults injected into tool calls of the runs started inside, appended to
    the list yielded as they strike (a recording that continues from the prefix before a
    fault knows by it when the fault has struck)."""
    struck: list[InjectedFault] = []
    token = _STRUCK.set(struck)
    try:
        yield struck
    finally:
        _STRUCK.reset(token)


def note_struck(injected: InjectedFault) -> None:
    """A tool call, or a model's, got ``injected`` (for :func:`faults_struck`)."""
    struck = _STRUCK.get()
    if struck is not None:
        struck.append(injected)


def facts(value: Any) -> list[str]:
    """The values of an output an answer could state, in order, each once: texts of four or
    more characters, the tokens in them holding a digit (ids, dates, amounts), and numbers
    (``2102650`` and ``2,102,650``); not keys, booleans or nulls."""
    found: list[str] = []

    def walk(item: Any) -> None:
        if isinstance(item, dict):
            for inner in item.values():
                walk(inner)
        elif isinstance(item, list):
            for inner in item:
                walk(inner)
        elif isinstance(item, str):
            text = item.strip()
            if len(text) >= 4:
                found.append(text)
            found.extend(token.strip(".:/+-") for token in _TOKEN.findall(text))
        elif isinstance(item, (int, float)) and not isinstance(item, bool):
            found.append(f"{item:g}" if isinstance(item, float) else str(item))
            if isinstance(item, int) and abs(item) >= 1000:
                found.append(f"{item:,}")
    walk(value)
    return [fact for fact in dict.fromkeys(found) if len(fact) >= 2]


def _data(output: ToolOutput) -> tuple[Any, bool]:
    """The output as data: its JSON (True) or its text (False)."""
    try:
        return json.loads(output.content), True
    except ValueError:
        return output.content, False


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


async def inject_fault(fault: Fault, output: ToolOutput | None, tool: str,
                       number: int) -> tuple[ToolOutput, InjectedFault]:
    """What the agent gets from call ``number`` of ``tool`` under ``fault`` (``output`` is
    what the tool returned; None when it did not run): the changed output and the record, or
    a :class:`SimulatedToolError` (after its simulated wait) whose ``injected`` is the
    record."""
    real = _data(output)[0] if output is not None else None
    kind = fault.kind
    failure = _failure(fault, tool, number)
    if failure is not None:
        if kind == "timeout":
            await asleep(fault.after or _DEFAULT_TIMEOUT)
        error = SimulatedToolError(failure)
        error.injected = _record(fault, tool, number, failure, real)
        raise error
    assert output is not None
    if kind == "latency":
        await asleep(fault.after or _DEFAULT_LATENCY)
        return output, _record(fault, tool, number, output.content, real)
    content, raw = _changed(fault, output, tool, number)
    changed = output.model_copy(update={"content": content, "raw_output": raw})
    return changed, _record(fault, tool, number, content, real)


def _failure(fault: Fault, tool: str, number: int) -> str | None:
    """The error text of a fault that fails the call (None: it delivers an output)."""
    where = f"(call {number} of `{tool}`)"
    if fault.kind == "error":
        return f"{fault.message or 'simulated tool failure'} {where}"
    if fault.kind == "timeout":
        return f"timed out after {fault.after or _DEFAULT_TIMEOUT:g} s {where}"
    if fault.kind == "rate_limit":
        wait = fault.retry_after if fault.retry_after is not None else _DEFAULT_RETRY_AFTER
        return f"rate limited (429 Too Many Requests): retry after {wait:g} s {where}"
    if fault.kind == "disconnect":
        return f"{fault.message or 'the server closed the connection mid-call'} {where}"
    return None


def _record(fault: Fault, tool: str, number: int, delivered: str, real: Any) -> InjectedFault:
    shown = delivered.lower()
    withheld = tuple(fact for fact in facts(real) if fact.lower() not in shown)
    return InjectedFault(tool, number, fault, delivered, withheld)


def _fields(fault: Fault, record: dict[str, Any]) -> list[str]:
    return list(fault.fields) if fault.fields is not None else list(record)[1:]


def _changed(fault: Fault, output: ToolOutput, tool: str, number: int) -> tuple[str, Any]:
    """The content and raw output a fault that changes the output delivers."""
    data, is_json = _data(output)
    kind = fault.kind
    if kind == "empty":
        return "", type(data)() if isinstance(data, (str, list, dict)) else None
    if kind == "truncate":
        if isinstance(data, list):
            kept = data[:fault.keep if fault.keep is not None else len(data) // 2]
            return _dumps(kept), kept
        text = output.content[:fault.keep if fault.keep is not None else len(output.content) // 2]
        return text, text
    if kind in ("drop_fields", "corrupt_fields"):
        if not isinstance(data, dict):
            raise _not_applicable(fault, tool, number, "a JSON object")
        unknown = [name for name in _fields(fault, data) if name not in data]
        if unknown:
            raise FaultNotApplicableError(
                f"a `{kind}` fault of call {number} of `{tool}` names field "
                f"`{unknown[0]}`, which its output does not have (it has "
                f"{', '.join(data) or 'none'})")
        names = set(_fields(fault, data))
        changed = ({k: v for k, v in data.items() if k not in names} if kind == "drop_fields"
                   else {k: (None if k in names else v) for k, v in data.items()})
        return _dumps(changed), changed
    if kind == "malformed_json":
        if not is_json or not isinstance(data, (dict, list)):
            raise _not_applicable(fault, tool, number, "JSON (an object or a list)")
        text = output.content
        return text[:max(1, len(text) // 2)], None
    assert kind == "wrong_type", kind
    wrong: Any = (list(data) if isinstance(data, dict) else len(data) if isinstance(data, list)
                  else 0 if isinstance(data, str) else "unknown")
    return _dumps(wrong), wrong


def _not_applicable(fault: Fault, tool: str, number: int, needs: str) -> FaultNotApplicableError:
    return FaultNotApplicableError(f"a `{fault.kind}` fault needs {needs}; call {number} of "
                                   f"`{tool}` returned something else")


def applicable_kinds(kinds: Iterable[FaultKind], output: str) -> list[FaultKind]:
    """Those of ``kinds`` that apply to a call that returned ``output`` (the record kinds to a
    JSON object, ``malformed_json`` to JSON data, ``truncate`` to more than one character)."""
    try:
        data: Any = json.loads(output)
    except ValueError:
        data = output
    applies = {"drop_fields": isinstance(data, dict) and len(data) > 1,
               "corrupt_fields": isinstance(data, dict) and len(data) > 1,
               "malformed_json": isinstance(data, (dict, list)),
               "truncate": len(output) > 1}
    return [kind for kind in kinds if applies.get(kind, True)]


def with_model_faults(items: list[Any], faults: Iterable[ModelFault], model: str,
                      log: list[InjectedFault]) -> list[Any]:
    """A model's script items with each fault before the reply of its call: ``times`` items
    (one per attempt it strikes) before script item ``call`` (the script's replies are the
    calls' answers, a retry of a failed attempt taking the next item); a fault that happens
    goes into ``log`` when it first strikes. A fault past the script's replies is left out:
    the agent never makes that call."""
    result: list[Any] = []
    at = 0
    for fault in sorted(faults, key=lambda f: f.call):
        if fault.call > len(items):  # past the script: a call the agent cannot make (not reached)
            continue
        result += items[at:fault.call - 1]
        at = fault.call - 1
        if fault.kind == "empty":
            answer: Any = ""
        elif fault.kind == "cut":  # the reply of the call, cut (a retry gets it whole)
            answer = _Cut(items[at])
        else:
            answer = _model_error(fault)
        struck = [False]

        def item(messages: Any, tools: Any, fault: ModelFault = fault, answer: Any = answer,
                 struck: list[bool] = struck) -> Any:
            if isinstance(answer, _Cut):
                answer = answer.render(messages, tools)
            if not struck[0]:
                struck[0] = True
                log.append(InjectedFault(model, fault.call, fault, str(answer), ()))
            return answer
        result += [item] * fault.times
    return result + items[at:]


@dataclass(frozen=True)
class _Cut:
    """A ``cut`` fault's reply: the script item of its call, rendered when the call comes."""

    reply: Any

    def render(self, messages: Any, tools: Any) -> StreamCut:
        reply = self.reply
        if callable(reply) and not isinstance(reply, BaseException):
            reply = reply(messages, tools)
        return StreamCut(reply)


def _model_error(fault: ModelFault) -> LLMError:
    """The error a ``rate_limit``, ``server`` or ``timeout`` fault of the model raises."""
    return error_for(ErrorItem.model_validate({"error": {
        "type": fault.kind, "message": fault.message or "", "retry_after": fault.retry_after}}))


class _FaultedLLM(WrappingLLM):
    """A model whose calls by number meet ``faults`` before its answer, each noted in ``log``
    and for :func:`faults_struck` as it first strikes; what the script of a model with faults
    does (:func:`with_model_faults`), for a model that is no script -- a recording replayed,
    or recorded live from its recorded prefix, or a model the test gave. A fault strikes
    ``times`` attempts of its call in a row and the backend's retry policy
    (:mod:`agentkit.llms.retries`, ``max_retries``, the wait on the virtual clock) tries the
    call again, as the OpenAI backend would have on the wire; the attempt that gets through
    asks ``llm``. Only the injected faults are retried here: ``llm``'s own errors reach the
    agent as they are (a live backend has retried them already)."""

    def __init__(self, llm: LLM, faults: Iterable[ModelFault], model: str,
                 log: list[InjectedFault], max_retries: int = DEFAULT_MAX_RETRIES) -> None:
        super().__init__(llm)
        self.faults = {fault.call: fault for fault in faults}
        self.model = model
        self.log = log
        self.max_retries = max_retries
        self.calls = 0

    async def _struck(self, streamed: bool) -> ModelFault | None:
        """The fault the call that begins now meets as its answer -- an empty reply, or a
        stream cut once it began, which cannot be asked again -- or None: the call gets
        through, after the policy retried what struck it first. A fault the policy gives up on
        is raised, as the backend raises it (its ``attempts`` set)."""
        self.calls += 1
        fault = self.faults.get(self.calls)
        if fault is None:
            return None
        delivered = "" if fault.kind == "empty" else (
            CUT_MESSAGE if fault.kind == "cut" else str(_model_error(fault)))
        injected = InjectedFault(self.model, fault.call, fault, delivered, ())
        self.log.append(injected)
        note_struck(injected)
        if fault.kind == "empty" or (fault.kind == "cut" and streamed):
            return fault
        strikes = iter(range(fault.times))

        async def attempt() -> None:
            if next(strikes, None) is not None:
                # a cut reply not streamed never arrived whole: the connection error alone
                raise APIConnectionError(CUT_MESSAGE) if fault.kind == "cut" \
                    else _model_error(fault)
        await retrying(attempt, self.max_retries, simulated_wait)
        return None

    async def _achat(self, request: LLMRequest) -> ChatResponse:
        if await self._struck(streamed=False) is None:
            return await self.llm._achat(request)
        return ChatResponse(message=ChatMessage(role=MessageRole.ASSISTANT, content=""))

    async def _astream_chat(self, request: LLMRequest) -> AsyncIterator[ChatResponse]:
        fault = await self._struck(streamed=True)
        if fault is not None and fault.kind == "empty":
            yield ChatResponse(message=ChatMessage(role=MessageRole.ASSISTANT, content=""),
                               delta="")
            return
        chunks = [chunk async for chunk in self.llm._astream_chat(request)]
        if fault is None:
            for chunk in chunks:
                yield chunk
            return
        for chunk in chunks[:len(chunks) // 2]:  # the first half, then the connection closes
            yield chunk
        raise APIConnectionError(CUT_MESSAGE)


class _FaultedChannel(_FaultedLLM):
    """A faulted model keeping a recording: the harness's roles' calls go into it as into
    the recording (never faulted: the faults are the agent's model's)."""

    def role(self, key: RoleKey, live: LLM | None = None) -> RoleLLM:
        return RoleLLM(self, key, live)

    async def _role_chat(self, request: LLMRequest, role: RoleKey,
                         live: LLM | None) -> tuple[ChatResponse, str]:
        assert conforms(self.llm, RoleChannel)
        return await self.llm._role_chat(request, role, live)


def faulted_model(llm: LLM, faults: Iterable[ModelFault], model: str,
                  log: list[InjectedFault], max_retries: int = DEFAULT_MAX_RETRIES) -> LLM:
    """``llm`` with the model's ``faults`` before the answers of their calls (``model``: its
    name in the log, ``model`` or ``model of <agent>``); a recording stays the channel of the
    harness's roles."""
    kind = _FaultedChannel if conforms(llm, RoleChannel) else _FaultedLLM
    return kind(llm, faults, model, log, max_retries)
