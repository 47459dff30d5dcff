"""Build the message list a ReAct model sees."""

from __future__ import annotations

from collections.abc import Sequence
from operator import attrgetter
from typing import Any

from agentkit.agent.react.prompts import CONTEXT_REACT_CHAT_SYSTEM_HEADER, REACT_CHAT_SYSTEM_HEADER
from agentkit.agent.react.types import BaseReasoningStep, ObservationReasoningStep
from agentkit.llms.prompts import PromptTemplate
from agentkit.llms.types import ChatMessage, MessageRole, TextBlock, text_message

__all__ = ["ReActChatFormatter", "get_react_tool_descriptions"]

_METADATA = attrgetter("metadata")
_METADATA_KEY = attrgetter("name", "description", "fn_schema_str")
"""What of a tool's metadata the header is rendered from (the memo's key)."""


def get_react_tool_descriptions(tools: Sequence[Any]) -> list[str]:
    """One ``> Tool Name: / Tool Description: / Tool Args:`` block per tool."""
    return [
        f"> Tool Name: {tool.metadata.name}\n"
        f"Tool Description: {tool.metadata.description}\n"
        f"Tool Args: {tool.metadata.fn_schema_str}\n"
        for tool in tools
    ]


class ReActChatFormatter:
    """``[system header (tools, optional context), *chat history, *reasoning]``.

    Earlier reasoning is replayed as assistant messages and observations in
    ``observation_role`` (user by default).

    Each step of a task sends the same header and the reasoning so far plus one or two new
    steps, so both are memoised: the header message is built once per (template, context,
    tool descriptions), and the messages of the previous call's reasoning are reused when
    that reasoning is still the start of the reasoning passed in. Like the chat history's
    messages, they are the same objects on every call. Reasoning steps are records: change
    one by replacing it in the list, not by assigning to its fields.
    """

    # memos (class-level defaults keep a subclass that skips ``__init__`` working)
    _header: tuple[tuple[Any, ...], str, ChatMessage] | None = None
    _reasoning: tuple[MessageRole | None, list[BaseReasoningStep], list[ChatMessage]] = (
        None, [], [])

    def __init__(self, system_header: str = REACT_CHAT_SYSTEM_HEADER, context: str = "",
                 observation_role: MessageRole = MessageRole.USER) -> None:
        self.system_header = system_header
        self.header_vars: dict[str, Any] = {}
        self.context = context
        self.observation_role = MessageRole(observation_role)

    @property
    def header_template(self) -> PromptTemplate:
        """The header as a template, with the values ``set_header`` kept for its variables."""
        return PromptTemplate(self.system_header, **getattr(self, "header_vars", {}))

    def set_header(self, header: str | PromptTemplate) -> None:
        """Use ``header`` as the system header. A template's partial values
        (``PromptTemplate(...).partial_format(x=...)``) are kept and filled in on every call
        (LlamaIndex 0.12 dropped them and failed; later releases keep them, as here)."""
        if isinstance(header, PromptTemplate):
            self.system_header = header.get_template()
            self.header_vars = dict(header.partial)
        else:
            self.system_header = str(header)
            self.header_vars = {}

    @classmethod
    def from_defaults(cls, system_header: str | None = None, context: str | None = None,
                      observation_role: MessageRole = MessageRole.USER) -> ReActChatFormatter:
        """Fix: returns an instance of the class it is called on (LlamaIndex always built the
        base class, dropping a subclass's overrides)."""
        if system_header is None:
            system_header = CONTEXT_REACT_CHAT_SYSTEM_HEADER if context else REACT_CHAT_SYSTEM_HEADER
        return cls(system_header=system_header, context=context or "",
                   observation_role=observation_role)

    @classmethod
    def from_context(cls, context: str) -> ReActChatFormatter:
        """Deprecated alias of ``from_defaults(context=...)``, kept because LlamaIndex code
        calls it; it always uses the header with a context block. Like LlamaIndex it does not
        warn at run time (a warning would fail users' tests run with ``-W error``)."""
        return cls.from_defaults(system_header=CONTEXT_REACT_CHAT_SYSTEM_HEADER, context=context)

    def format(self, tools: Sequence[Any], chat_history: Sequence[ChatMessage],
               current_reasoning: Sequence[BaseReasoningStep] | None = None) -> list[ChatMessage]:
        return [self._system_message(tools), *chat_history,
                *self._reasoning_messages(current_reasoning or ())]

    def _system_message(self, tools: Sequence[Any]) -> ChatMessage:
        """The header message, rendered again only when its inputs changed (and rebuilt if
        someone changed the message returned last time). The inputs are compared as they
        are, not rendered: the same strings on every step, so the check is by identity."""
        metadata = list(map(_METADATA, tools))  # map, not comprehensions: a frame less each
        key = (self.system_header, self.context, getattr(self, "header_vars", {}),
               list(map(_METADATA_KEY, metadata)))
        if self._header is None or self._header[0] != key:
            header = PromptTemplate(self.system_header, **key[2]).format(
                tool_desc="\n".join(get_react_tool_descriptions(tools)),
                tool_names=", ".join(m.name for m in metadata), context=self.context)
            self._header = (key, header, ChatMessage(role=MessageRole.SYSTEM, content=header))
        _, header, message = self._header
        blocks = message.blocks  # its one text block read directly (``content`` is a property)
        if not (message.role is MessageRole.SYSTEM and len(blocks) == 1
                and type(blocks[0]) is TextBlock and blocks[0].text is header
                and not message.additional_kwargs):
            message = ChatMessage(role=MessageRole.SYSTEM, content=header)
            self._header = (key, header, message)
        return message

    def _reasoning_messages(self, steps: Sequence[BaseReasoningStep]) -> list[ChatMessage]:
        """One message per step. A step is usually added to the reasoning of the last call, so
        the messages of that call's steps are reused when they are still its prefix (compared
        by identity first: the check costs next to nothing per step)."""
        role, known_steps, known_messages = self._reasoning
        steps = list(steps)
        seen = len(known_steps)
        if role is self.observation_role and steps[:seen] == known_steps:
            messages = known_messages + list(map(self._step_message, steps[seen:]))
        else:
            messages = list(map(self._step_message, steps))
        self._reasoning = (self.observation_role, steps, messages)
        return messages

    def _step_message(self, step: BaseReasoningStep) -> ChatMessage:
        role = (self.observation_role if isinstance(step, ObservationReasoningStep)
                else MessageRole.ASSISTANT)
        return text_message(role, step.get_content())
