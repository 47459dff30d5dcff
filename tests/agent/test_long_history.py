"""A chat's cost depends on the memory window, not on the whole history: an agent with
10,000 messages of history does as much memory work per chat as one with 1,000.

Counted, never timed: the messages memory hands the agent, the messages it tokenises, and the
lines of the memory module a chat runs (a scan of the history is one line per message)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

import pytest

import agentkit.memory.chat_memory_buffer as buffer_module
from agentkit.agent import FunctionCallingAgent, ReActAgent
from agentkit.llms import ChatMessage
from agentkit.llms.mock import ScriptedLLM, tool_call
from agentkit.memory import ChatMemoryBuffer
from agentkit.tools import FunctionTool

SHORT, LONG = 1_000, 10_000  # both longer than the window (about 130 messages)
TOKEN_LIMIT = 400


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


class CountingMemory(ChatMemoryBuffer):
    """Counts the messages it hands out and the texts it tokenises."""

    def __init__(self, history: list[ChatMessage]) -> None:
        self.handed_out = 0
        self.tokenised = 0

        def tokenizer(text: str) -> list[str]:
            self.tokenised += 1
            return text.split()

        super().__init__(token_limit=TOKEN_LIMIT, tokenizer_fn=tokenizer, chat_history=history)

    def get(self, input: str | None = None, **kwargs: Any) -> list[ChatMessage]:
        window = super().get(input, **kwargs)
        self.handed_out += len(window)
        return window

    def get_all(self) -> list[ChatMessage]:
        history = super().get_all()
        self.handed_out += len(history)
        return history


def _history(messages: int) -> list[ChatMessage]:
    return [ChatMessage(role="user" if n % 2 == 0 else "assistant", content=f"message {n} here")
            for n in range(messages)]


def _react(memory: ChatMemoryBuffer, chats: int = 3) -> Any:
    script = ['Thought: add.\nAction: add\nAction Input: {"a": 2, "b": 3}',
              "Thought: done.\nAnswer: 5"] * chats
    return ReActAgent.from_tools([FunctionTool.from_defaults(add)], llm=ScriptedLLM(script),
                                 memory=memory)


def _function_calling(memory: ChatMemoryBuffer, chats: int = 3) -> Any:
    script = [tool_call("add", a=2, b=3), "5"] * chats
    return FunctionCallingAgent.from_tools([FunctionTool.from_defaults(add)],
                                           llm=ScriptedLLM(script), memory=memory)


AGENTS = pytest.mark.parametrize("build", [_react, _function_calling],
                                 ids=["react", "function_calling"])


def _third_chat(build: Callable[..., Any], history: int,
                measure: Callable[[CountingMemory, Callable[[], Any]], int]) -> int:
    """``measure`` of an agent's third chat (the first two fill the caches of a fresh run)."""
    memory = CountingMemory(_history(history))
    agent = build(memory)
    agent.chat("What is 2 + 3?")
    agent.chat("And again?")
    return measure(memory, lambda: agent.chat("Once more?"))


def _handed_out(memory: CountingMemory, chat: Callable[[], Any]) -> int:
    before = memory.handed_out
    chat()
    return memory.handed_out - before


def _tokenised(memory: CountingMemory, chat: Callable[[], Any]) -> int:
    before = memory.tokenised
    chat()
    return memory.tokenised - before


def _memory_lines(memory: CountingMemory, chat: Callable[[], Any]) -> int:
    """Lines of agentkit/memory/chat_memory_buffer.py the chat runs."""
    module = str(Path(buffer_module.__file__).resolve())
    lines = 0

    def local(frame: FrameType, event: str, arg: Any) -> Any:
        nonlocal lines
        lines += event == "line"
        return local

    def calls(frame: FrameType, event: str, arg: Any) -> Any:
        return local if event == "call" and frame.f_code.co_filename == module else None

    sys.settrace(calls)
    try:
        chat()
    finally:
        sys.settrace(None)
    return lines


@pytest.mark.slow  # long histories under every agent type
@AGENTS
def test_a_chat_takes_only_the_window_from_memory_however_long_the_history(build):
    assert _third_chat(build, LONG, _handed_out) == _third_chat(build, SHORT, _handed_out)


@pytest.mark.slow  # long histories under every agent type
@AGENTS
def test_a_chat_tokenises_as_many_messages_with_a_long_history_as_with_a_short_one(build):
    assert _third_chat(build, LONG, _tokenised) == _third_chat(build, SHORT, _tokenised)


@pytest.mark.slow  # long histories under every agent type
@AGENTS
def test_a_chat_runs_as_many_memory_steps_with_a_long_history_as_with_a_short_one(build):
    assert _third_chat(build, LONG, _memory_lines) == _third_chat(build, SHORT, _memory_lines)


@AGENTS
def test_the_full_history_is_kept_with_each_chats_messages_appended_in_order(build):
    memory = CountingMemory(_history(SHORT))
    agent = build(memory, chats=1)

    agent.chat("What is 2 + 3?")

    history = memory.get_all()
    assert history[:SHORT] == _history(SHORT)
    assert (history[SHORT].role.value, history[SHORT].content) == ("user", "What is 2 + 3?")
    assert history[-1].role.value == "assistant" and history[-1].content == "5"
