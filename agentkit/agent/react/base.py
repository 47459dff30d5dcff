"""``ReActAgent``: an :class:`AgentRunner` over a :class:`ReActAgentWorker`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentkit.agent.react.formatter import ReActChatFormatter
from agentkit.agent.react.output_parser import ReActOutputParser
from agentkit.agent.react.step import FailureHandler, ReActAgentWorker
from agentkit.agent.runner.base import AgentRunner
from agentkit.instrumentation import CallbackManager
from agentkit.llms.base import LLM
from agentkit.llms.types import ChatMessage
from agentkit.memory import BaseMemory, ChatMemoryBuffer
from agentkit.tools import BaseTool, ObjectRetriever

__all__ = ["ReActAgent"]


class ReActAgent(AgentRunner):
    """A ReAct agent (the runner/worker stack's, not the workflow one)."""

    def __init__(self, tools: Sequence[BaseTool], llm: LLM, memory: BaseMemory,
                 max_iterations: int = 10,
                 react_chat_formatter: ReActChatFormatter | None = None,
                 output_parser: ReActOutputParser | None = None,
                 callback_manager: CallbackManager | None = None, verbose: bool = False,
                 tool_retriever: ObjectRetriever[BaseTool] | None = None,
                 context: str | None = None,
                 handle_reasoning_failure_fn: FailureHandler | None = None) -> None:
        if context and react_chat_formatter:
            raise ValueError("Cannot provide both context and react_chat_formatter")
        if context:
            react_chat_formatter = ReActChatFormatter.from_defaults(context=context)
        worker = ReActAgentWorker.from_tools(
            tools=tools, tool_retriever=tool_retriever, llm=llm, max_iterations=max_iterations,
            react_chat_formatter=react_chat_formatter, output_parser=output_parser,
            callback_manager=callback_manager, verbose=verbose,
            handle_reasoning_failure_fn=handle_reasoning_failure_fn)
        super().__init__(worker, memory=memory, llm=llm, callback_manager=callback_manager,
                         verbose=verbose)

    @classmethod
    def from_tools(cls, tools: Sequence[BaseTool] | None = None,
                   tool_retriever: ObjectRetriever[BaseTool] | None = None,
                   llm: LLM | None = None, chat_history: list[ChatMessage] | None = None,
                   memory: BaseMemory | None = None,
                   memory_cls: type[BaseMemory] = ChatMemoryBuffer, max_iterations: int = 10,
                   react_chat_formatter: ReActChatFormatter | None = None,
                   output_parser: ReActOutputParser | None = None,
                   callback_manager: CallbackManager | None = None, verbose: bool = False,
                   context: str | None = None,
                   handle_reasoning_failure_fn: FailureHandler | None = None,
                   **kwargs: Any) -> ReActAgent:
        if kwargs:
            raise TypeError(f"ReActAgent.from_tools got unexpected arguments: {sorted(kwargs)}")
        if llm is None:
            raise ValueError("ReActAgent.from_tools needs an `llm`")
        memory = memory or memory_cls.from_defaults(chat_history=chat_history or [], llm=llm)
        return cls(tools=list(tools or []), llm=llm, memory=memory,
                   max_iterations=max_iterations, react_chat_formatter=react_chat_formatter,
                   output_parser=output_parser, callback_manager=callback_manager,
                   verbose=verbose, tool_retriever=tool_retriever, context=context,
                   handle_reasoning_failure_fn=handle_reasoning_failure_fn)
