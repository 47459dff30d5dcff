"""Build the message list a ReAct model sees."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentkit.agent.react.prompts import CONTEXT_REACT_CHAT_SYSTEM_HEADER, REACT_CHAT_SYSTEM_HEADER
from agentkit.agent.react.types import BaseReasoningStep, ObservationReasoningStep
from agentkit.llms.prompts import PromptTemplate
from agentkit.llms.types import ChatMessage, MessageRole

__all__ = ["ReActChatFormatter", "get_react_tool_descriptions"]


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
    """

    def __init__(self, system_header: str = REACT_CHAT_SYSTEM_HEADER, context: str = "",
                 observation_role: MessageRole = MessageRole.USER) -> None:
        self.system_header = system_header
        self.context = context
        self.observation_role = MessageRole(observation_role)

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
        values = {"tool_desc": "\n".join(get_react_tool_descriptions(tools)),
                  "tool_names": ", ".join(tool.metadata.name for tool in tools),
                  "context": self.context}
        header = PromptTemplate(self.system_header).format(**values)
        reasoning = [
            ChatMessage(role=self.observation_role if isinstance(step, ObservationReasoningStep)
                        else MessageRole.ASSISTANT, content=step.get_content())
            for step in current_reasoning or ()
        ]
        return [ChatMessage(role=MessageRole.SYSTEM, content=header), *chat_history, *reasoning]
