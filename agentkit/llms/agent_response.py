"""What an agent chat returns: :class:`AgentChatResponse` and :class:`StreamingAgentChatResponse`.

They live in the LLM layer because :meth:`FunctionCallingLLM.predict_and_call` returns them
too; ``agentkit.agent`` re-exports both.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentkit.core.sim import run_sync

__all__ = ["AgentChatResponse", "StreamingAgentChatResponse"]


@dataclass
class AgentChatResponse:
    """A finished agent answer; ``str(response)`` is the answer text."""

    response: str = ""
    sources: list[Any] = field(default_factory=list)  # ToolOutput objects
    source_nodes: list[Any] = field(default_factory=list)
    metadata: dict[str, Any] | None = None

    def __str__(self) -> str:
        return self.response


OnEnd = Callable[[str], Any]


async def _replay(deltas: Sequence[str]) -> AsyncIterator[str]:
    for delta in deltas:
        if delta:
            yield delta


class StreamingAgentChatResponse:
    """An answer still being generated.

    Built from an async iterator of text deltas (or, without one, from the finished
    ``response`` as a single delta). Iterate ``response_gen`` (sync) or
    ``async_response_gen()`` (async) for text deltas;
    ``response`` holds the text so far and the whole answer once drained. Callbacks registered
    with :meth:`add_on_end` (memory writes, task finalization) run once, in order, when the
    stream ends. Deltas are buffered, so iterating again replays the whole answer.
    """

    def __init__(self, deltas: AsyncIterator[str] | None = None, *, response: str = "",
                 sources: list[Any] | None = None, source_nodes: list[Any] | None = None,
                 metadata: dict[str, Any] | None = None) -> None:
        self._source = deltas if deltas is not None else _replay([response])
        self._deltas: list[str] = []
        self.response = ""
        self.sources: list[Any] = sources if sources is not None else []
        self.source_nodes: list[Any] = source_nodes if source_nodes is not None else []
        self.metadata = metadata
        self._on_end: list[OnEnd] = []
        self.is_done = False

    @classmethod
    def from_answer(cls, answer: AgentChatResponse,
                    deltas: Sequence[str] | None = None) -> StreamingAgentChatResponse:
        """A finished answer as a stream: replays ``deltas`` (the chunks the model streamed)
        when they join to the answer text, else hands the answer out as one delta."""
        chunks = deltas if deltas is not None and "".join(deltas) == answer.response else [
            answer.response]
        return cls(_replay(chunks), sources=answer.sources, source_nodes=answer.source_nodes,
                   metadata=answer.metadata)

    def add_on_end(self, callback: OnEnd) -> None:
        """Run ``callback(full_text)`` (sync or async) when the stream ends."""
        self._on_end.append(callback)

    async def _pull(self) -> bool:
        """Fetch the next delta into the buffer; False once the stream has ended."""
        if self.is_done:
            return False
        try:
            delta = await self._source.__anext__()
        except StopAsyncIteration:
            self.is_done = True
            for callback in self._on_end:
                result = callback(self.response)
                if inspect.isawaitable(result):
                    await result
            return False
        self._deltas.append(delta)
        self.response += delta
        return True

    async def async_response_gen(self) -> AsyncIterator[str]:
        index = 0
        while index < len(self._deltas) or await self._pull():
            yield self._deltas[index]
            index += 1

    @property
    def response_gen(self) -> Iterator[str]:
        index = 0
        while index < len(self._deltas) or run_sync(self._pull()):
            yield self._deltas[index]
            index += 1

    def get_response(self) -> AgentChatResponse:
        """Drain the stream and return the finished answer."""
        for _ in self.response_gen:
            pass
        return AgentChatResponse(self.response, self.sources, self.source_nodes, self.metadata)

    async def aget_response(self) -> AgentChatResponse:
        async for _ in self.async_response_gen():
            pass
        return AgentChatResponse(self.response, self.sources, self.source_nodes, self.metadata)

    def print_response_stream(self) -> None:
        for delta in self.response_gen:
            print(delta, end="", flush=True)
        print()

    async def aprint_response_stream(self) -> None:
        async for delta in self.async_response_gen():
            print(delta, end="", flush=True)
        print()

    def __str__(self) -> str:
        return self.response

    def __repr__(self) -> str:
        state = "done" if self.is_done else "streaming"
        return f"StreamingAgentChatResponse({state}, response={self.response!r})"
