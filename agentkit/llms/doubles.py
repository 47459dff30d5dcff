"""What every test double of a model answers, whatever its class: the protocol the harness
asks after a run (:class:`ModelDouble`), and the typed request a model function is handed
(:class:`RequestInfo`, :data:`ModelFunction`).

A double answers from something written beforehand -- a script, a recording, a fake
endpoint's script -- or computes its answers (a function, a schema). After a run the harness
asks each double what of it no call used (:meth:`ModelDouble.leftovers`: the agent now asks
less than was written) and, when the run stopped or never started, excuses it
(:meth:`ModelDouble.excuse`: replies after the failure could not be used). It asks the
protocol, never the class, so a double of your own is checked like the built-in ones.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeAlias, runtime_checkable

from agentkit.core.protocols import conforms
from agentkit.llms.tool_calling import ListedTools
from agentkit.llms.types import ChatMessage, ChatResponse, ToolSelection

if TYPE_CHECKING:
    from agentkit.llms.base import LLMRequest
    from agentkit.llms.mock import ScriptedResponse

__all__ = ["ModelDouble", "Excusable", "excuse_all", "RequestInfo", "ModelAnswer",
           "ModelFunction"]


@runtime_checkable
class ModelDouble(Protocol):
    """A test double of a model (or of a model's server): what of its script or recording a
    run left unused, and whether that is excused."""

    @property
    def excused(self) -> str | None:
        """Why what is left unused is no fault of the run (None: it would be one)."""
        ...

    def leftovers(self) -> list[str]:
        """What no call used, one sentence each (``the script has 1 unused reply (the agent
        made 2 LLM calls)``); empty when everything was used or nothing was written."""
        ...

    def excuse(self, reason: str) -> None:
        """The run could not use the rest (it stopped, or never started); ``reason`` says
        why. An excused double's own completeness check passes."""
        ...


class Excusable:
    """The excuse half of :class:`ModelDouble`, for a double to inherit; a double with
    nothing written beforehand (it computes its answers) leaves nothing unused."""

    excused: str | None = None

    def excuse(self, reason: str) -> None:
        self.excused = reason

    def leftovers(self) -> list[str]:
        return []


def excuse_all(doubles: Iterable[object], reason: str) -> None:
    """Excuse each of ``doubles`` that is a :class:`ModelDouble` (others are skipped)."""
    for double in doubles:
        if conforms(double, ModelDouble):
            double.excuse(reason)


@dataclass(frozen=True)
class RequestInfo:
    """What a model function is told about a call besides its messages (as pydantic-ai hands
    its ``FunctionModel`` an ``AgentInfo``): ``tools``, the specs of the tools offered through
    the tool-calling API (empty: none; ``offered`` tells an empty offer from none);
    ``listed_tools``, those the prompt lists in its text (ReAct, LLMCompiler, CoA), with the
    format it asks for calls in; the call's ``kind``, ``stream``, ``tool_choice``,
    ``allow_parallel_tool_calls`` and other keywords (``kwargs``: ``stop``, ``temperature``...)."""

    kind: Literal["chat", "complete"] = "chat"
    stream: bool = False
    tools: tuple[dict[str, Any], ...] = ()
    offered: bool = False
    listed_tools: ListedTools | None = None
    tool_choice: str | dict[str, Any] | None = None
    allow_parallel_tool_calls: bool = False
    kwargs: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, request: LLMRequest) -> RequestInfo:
        return cls(kind=request.kind, stream=request.stream,
                   tools=tuple(request.tool_specs() or ()), offered=request.tools is not None,
                   listed_tools=request.listed_tools, tool_choice=request.tool_choice,
                   allow_parallel_tool_calls=request.allow_parallel_tool_calls,
                   kwargs=MappingProxyType(dict(request.kwargs)))


ModelAnswer: TypeAlias = ("str | ChatMessage | ChatResponse | ScriptedResponse | ToolSelection "
                          "| list[ToolSelection] | BaseException")
"""What a model function (or a script item) answers a call with: assistant text, a message,
a response, a :class:`~agentkit.llms.mock.ScriptedResponse` (tool calls, usage, latency,
chunks), tool calls, or an exception (raised by that call)."""

ModelFunction: TypeAlias = Callable[[list[ChatMessage], RequestInfo],
                                    "ModelAnswer | Awaitable[ModelAnswer]"]
"""``function(messages, info) -> answer`` (sync or async): the function
``FunctionLLM(function=...)`` answers each call with."""
