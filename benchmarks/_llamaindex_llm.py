"""The scripted LLM of the LlamaIndex sides (llama-index-core 0.12 and 0.14 alike), run with
*that* venv's python: a ``FunctionCallingLLM`` in the style of LlamaIndex's ``MockLLM`` (its
calls go through ``llm_chat_callback`` like a real backend's) that answers from the same script
as agentkit's ``ScriptedLLM`` and is rewound before each chat.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from llama_index.core.base.llms.types import (
    ChatMessage,
    ChatResponse,
    CompletionResponse,
    LLMMetadata,
    MessageRole,
)
from llama_index.core.llms.callbacks import llm_chat_callback, llm_completion_callback
from llama_index.core.llms.function_calling import FunctionCallingLLM
from llama_index.core.llms.llm import ToolSelection

__all__ = ["ScriptedLLM", "ToolSelection"]


class ScriptedLLM(FunctionCallingLLM):
    """Answers call *n* of a chat with script item *n*: text, or a list of tool calls; each
    call first sleeps ``latency`` seconds for real (``asyncio.sleep`` when async: LlamaIndex
    has no virtual time)."""

    script: list[Any]
    function_calling: bool = True
    position: int = 0
    latency: float = 0.0

    @classmethod
    def class_name(cls) -> str:
        return "ScriptedLLM"

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(model_name="scripted", is_chat_model=True,
                           is_function_calling_model=self.function_calling)

    def reset(self) -> None:
        self.position = 0

    def _next(self) -> ChatMessage:
        if self.position >= len(self.script):
            raise RuntimeError(f"ScriptedLLM ran out of script at call #{self.position + 1}")
        item = self.script[self.position]
        self.position += 1
        if isinstance(item, str):
            return ChatMessage(role=MessageRole.ASSISTANT, content=item)
        return ChatMessage(role=MessageRole.ASSISTANT, content="",
                           additional_kwargs={"tool_calls": list(item)})

    @llm_chat_callback()
    def chat(self, messages: Any, **kwargs: Any) -> ChatResponse:
        if self.latency:
            time.sleep(self.latency)
        return ChatResponse(message=self._next())

    @llm_chat_callback()
    async def achat(self, messages: Any, **kwargs: Any) -> ChatResponse:
        if self.latency:
            await asyncio.sleep(self.latency)
        return ChatResponse(message=self._next())

    def stream_chat(self, messages: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("the benchmark does not stream")

    async def astream_chat(self, messages: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("the benchmark does not stream")

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        raise NotImplementedError("the benchmark only chats")

    async def acomplete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> Any:
        raise NotImplementedError("the benchmark only chats")

    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> Any:
        raise NotImplementedError("the benchmark does not stream")

    async def astream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> Any:
        raise NotImplementedError("the benchmark does not stream")

    def _prepare_chat_with_tools(self, tools: Any, user_msg: Any = None,
                                 chat_history: Any = None, verbose: bool = False,
                                 allow_parallel_tool_calls: bool = False,
                                 **kwargs: Any) -> dict[str, Any]:
        messages = list(chat_history or [])
        if user_msg is not None:
            messages.append(user_msg if isinstance(user_msg, ChatMessage)
                            else ChatMessage(role=MessageRole.USER, content=user_msg))
        return {"messages": messages, **kwargs}

    def get_tool_calls_from_response(self, response: ChatResponse,
                                     error_on_no_tool_call: bool = True,
                                     **kwargs: Any) -> list[ToolSelection]:
        calls = response.message.additional_kwargs.get("tool_calls", [])
        if not calls and error_on_no_tool_call:
            raise ValueError("the scripted reply has no tool call")
        return calls
