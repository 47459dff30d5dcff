"""Chat memory: :class:`BaseMemory` and the token-limited :class:`ChatMemoryBuffer`."""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import ValidationError

from agentkit.core.tokens import default_tokenizer
from agentkit.llms.types import ChatMessage, MessageRole

__all__ = ["BaseMemory", "ChatMemoryBuffer", "DEFAULT_TOKEN_LIMIT", "DEFAULT_TOKEN_LIMIT_RATIO"]

DEFAULT_TOKEN_LIMIT = 3000
DEFAULT_TOKEN_LIMIT_RATIO = 0.75

Tokenizer = Callable[[str], Sequence[Any]]


class BaseMemory(ABC):
    """Stores a chat history and returns the part of it an LLM should see."""

    @classmethod
    @abstractmethod
    def from_defaults(cls, **kwargs: Any) -> BaseMemory: ...

    @abstractmethod
    def get(self, input: str | None = None, **kwargs: Any) -> list[ChatMessage]: ...

    @abstractmethod
    def get_all(self) -> list[ChatMessage]: ...

    @abstractmethod
    def put(self, message: ChatMessage) -> None: ...

    @abstractmethod
    def set(self, messages: Sequence[ChatMessage]) -> None: ...

    @abstractmethod
    def reset(self) -> None: ...

    def put_messages(self, messages: Sequence[ChatMessage]) -> None:
        for message in messages:
            self.put(message)

    def snapshot(self) -> Any:
        """A token :meth:`restore` puts this memory's messages back to (``AgentRunner``
        keeps one per step for ``undo_step``). By default a copy of every message; a
        memory that can do it cheaper overrides both."""
        return self.get_all()

    def restore(self, snapshot: Any) -> None:
        """Put the messages back to what they were when ``snapshot()`` returned ``snapshot``."""
        self.set(snapshot)

    async def aget(self, input: str | None = None, **kwargs: Any) -> list[ChatMessage]:
        return self.get(input=input, **kwargs)

    async def aget_all(self) -> list[ChatMessage]:
        return self.get_all()

    async def aput(self, message: ChatMessage) -> None:
        self.put(message)

    async def aput_messages(self, messages: Sequence[ChatMessage]) -> None:
        self.put_messages(messages)

    async def aset(self, messages: Sequence[ChatMessage]) -> None:
        self.set(messages)

    async def areset(self) -> None:
        self.reset()


class ChatMemoryBuffer(BaseMemory):
    """The newest messages that fit in ``token_limit`` tokens.

    Each message's token count is computed once and cached, so :meth:`get` costs time in
    proportion to the window it returns, not to the history (LlamaIndex re-tokenises the
    whole remaining history for every message it drops). The window never starts with an
    assistant or tool message, so a tool call is never split from its results.
    """

    def __init__(self, token_limit: int = DEFAULT_TOKEN_LIMIT,
                 tokenizer_fn: Tokenizer | None = None,
                 chat_history: Sequence[ChatMessage] | None = None) -> None:
        if not isinstance(token_limit, int) or token_limit < 1:
            raise ValueError(f"Token limit must be set and greater than 0, got {token_limit!r}.")
        self.token_limit = token_limit
        self.tokenizer_fn: Tokenizer = tokenizer_fn or default_tokenizer
        self._history: list[ChatMessage] = []
        self._counts: list[tuple[ChatMessage, str | None, int] | None] = []
        if chat_history:  # empty already (every task makes one: no call for nothing)
            self.set(chat_history)

    @classmethod
    def from_defaults(cls, chat_history: Sequence[ChatMessage] | None = None, llm: Any = None,
                      token_limit: int | None = None, tokenizer_fn: Tokenizer | None = None,
                      **kwargs: Any) -> ChatMemoryBuffer:
        """``token_limit`` defaults to 75% of ``llm``'s context window, or 3000 without one."""
        if kwargs:
            raise ValueError(f"Unexpected kwargs: {kwargs}")
        if token_limit is None:
            token_limit = (int(llm.metadata.context_window * DEFAULT_TOKEN_LIMIT_RATIO)
                           if llm is not None else DEFAULT_TOKEN_LIMIT)
        return cls(token_limit=token_limit, tokenizer_fn=tokenizer_fn, chat_history=chat_history)

    # ------------------------------------------------------------------ storage
    def get_all(self) -> list[ChatMessage]:
        return list(self._history)

    def put(self, message: ChatMessage) -> None:
        self._history.append(message)
        self._counts.append(None)

    def put_messages(self, messages: Sequence[ChatMessage]) -> None:
        if type(self).put is not ChatMemoryBuffer.put:  # a subclass's put sees each message
            super().put_messages(messages)
            return
        self._history.extend(messages)  # what put does for each, in two calls
        self._counts.extend([None] * (len(self._history) - len(self._counts)))

    def set(self, messages: Sequence[ChatMessage]) -> None:
        """Replace the history. Cached token counts of an unchanged prefix are kept, so the
        usual ``set(get_all() + new_messages)`` costs only the new messages."""
        old = self._history
        history = list(messages)
        kept = 0
        for before, after in zip(old, history, strict=False):
            if before is not after:
                break
            kept += 1
        self._counts = self._counts[:kept] + [None] * (len(history) - kept)
        self._history = history

    def reset(self) -> None:
        self.set([])

    def snapshot(self) -> Any:
        """Costs nothing whatever the history's length: the history list is only ever
        appended to in place (``set`` and ``reset`` make a new one), so the list and its
        length say what it held."""
        return (self._history, len(self._history))

    def restore(self, snapshot: Any) -> None:
        history, length = snapshot
        self.set(history[:length])

    # ------------------------------------------------------------------ the window
    def _count(self, index: int) -> int:
        message = self._history[index]
        cached = self._counts[index]
        content = message.content
        if cached is not None and cached[0] is message and cached[1] == content:
            return cached[2]
        tokens = len(self.tokenizer_fn(content or ""))
        for call in message.tool_calls:
            tokens += len(self.tokenizer_fn(f"{call.tool_name} {json.dumps(call.tool_kwargs)}"))
        self._counts[index] = (message, content, tokens)
        return tokens

    def get(self, input: str | None = None, *, initial_token_count: int = 0,
            **kwargs: Any) -> list[ChatMessage]:
        """The newest messages that fit; ``initial_token_count`` counts against the limit."""
        if initial_token_count > self.token_limit:
            # The message is LlamaIndex's exact text (users' tests compare it); the numbers go
            # into a note, which tracebacks show.
            error = ValueError("Initial token count exceeds token limit")
            error.add_note(f"initial_token_count={initial_token_count}, "
                           f"token_limit={self.token_limit}")
            raise error
        budget = self.token_limit - initial_token_count
        start = len(self._history)
        used = 0
        while start > 0:
            cost = self._count(start - 1)
            if used + cost > budget:
                break
            used += cost
            start -= 1
        while start < len(self._history) and self._history[start].role in (
                MessageRole.ASSISTANT, MessageRole.TOOL):
            start += 1
        return self._history[start:]

    # ------------------------------------------------------------------ serialisation
    def to_dict(self) -> dict[str, Any]:
        return {"class_name": "ChatMemoryBuffer", "token_limit": self.token_limit,
                "chat_history": [m.model_dump(mode="json") for m in self._history]}

    @classmethod
    def from_dict(cls, data: dict[str, Any], tokenizer_fn: Tokenizer | None = None) -> ChatMemoryBuffer:
        if not isinstance(data, dict):
            raise ValueError(f"ChatMemoryBuffer data must be a JSON object, got {type(data).__name__}")
        if data.get("class_name", "ChatMemoryBuffer") != "ChatMemoryBuffer":
            raise ValueError(f"not a ChatMemoryBuffer dict: class_name={data.get('class_name')!r}")
        raw_history = data.get("chat_history", [])
        if not isinstance(raw_history, list):
            raise ValueError("ChatMemoryBuffer `chat_history` must be a list of messages, got "
                             f"{type(raw_history).__name__}")
        history = []
        for index, raw in enumerate(raw_history):
            try:
                history.append(ChatMessage.model_validate(raw))
            except ValidationError as exc:
                problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'message'}: {e['msg']}"
                                     for e in exc.errors())
                raise ValueError(f"ChatMemoryBuffer chat_history[{index}] is not a valid message: "
                                 f"{problems}") from None
        return cls(token_limit=data.get("token_limit", DEFAULT_TOKEN_LIMIT),
                   tokenizer_fn=tokenizer_fn, chat_history=history)

    def to_string(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False)

    @classmethod
    def from_string(cls, text: str, tokenizer_fn: Tokenizer | None = None) -> ChatMemoryBuffer:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"ChatMemoryBuffer.from_string: not valid JSON ({exc})") from None
        return cls.from_dict(data, tokenizer_fn=tokenizer_fn)

    def __repr__(self) -> str:
        return f"ChatMemoryBuffer(token_limit={self.token_limit}, messages={len(self._history)})"
