"""Subclasses that override public LLM methods (LlamaIndex-style test doubles): the async
twins and agents use the override, and every call is still recorded exactly once."""

import asyncio
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest

from agentkit.agent import ReActAgent
from agentkit.core.sim import run_sync
from agentkit.instrumentation import LLMCallEndEvent, LLMCallStartEvent, collect_events
from agentkit.llms import (
    LLM,
    ChatMessage,
    ChatResponse,
    CompletionResponse,
    CustomLLM,
    FunctionCallingLLM,
    MessageRole,
    ToolSelection,
)
from agentkit.llms.mock import MockLLM, ScriptedLLM
from agentkit.tools import FunctionTool

USER = [ChatMessage(role=MessageRole.USER, content="hi")]


def _reply(text: str, **kwargs: Any) -> ChatResponse:
    return ChatResponse(message=ChatMessage(role=MessageRole.ASSISTANT, content=text), **kwargs)


def _llm_events(events: list[Any]) -> list[str]:
    return [e.name for e in events if isinstance(e, (LLMCallStartEvent, LLMCallEndEvent))]


async def _drain(stream: Any) -> list[Any]:
    return [chunk async for chunk in await stream]


class ChatDouble(MockLLM):
    """Overrides only ``chat``."""

    def __init__(self) -> None:
        super().__init__()
        self.kwargs: list[dict[str, Any]] = []

    def chat(self, messages, **kwargs):
        self.kwargs.append(kwargs)
        return _reply(f"chat saw {messages[-1].content}")


class StreamChatDouble(MockLLM):
    """Overrides only ``stream_chat``."""

    def stream_chat(self, messages, **kwargs):
        def gen() -> Iterator[ChatResponse]:
            yield _reply("one", delta="one")
            yield _reply("one two", delta=" two")
        return gen()


class CompleteDouble(CustomLLM):
    """LlamaIndex's CustomLLM recipe: ``complete`` and ``stream_complete``."""

    def complete(self, prompt, formatted=False, **kwargs):
        return CompletionResponse(text=f"complete({formatted}) saw {prompt!r}")

    def stream_complete(self, prompt, formatted=False, **kwargs):
        yield CompletionResponse(text="a", delta="a")
        yield CompletionResponse(text="ab", delta="b")


# --------------------------------------------------------------------------- sync -> async
def test_achat_uses_an_overridden_chat():
    assert run_sync(ChatDouble().achat(USER)).message.content == "chat saw hi"


def test_astream_chat_uses_an_overridden_stream_chat():
    chunks = run_sync(_drain(StreamChatDouble().astream_chat(USER)))
    assert [(c.message.content, c.delta) for c in chunks] == [("one", "one"), ("one two", " two")]


def test_acomplete_uses_an_overridden_complete():
    response = run_sync(CompleteDouble().acomplete("p"))
    assert response.text == "complete(False) saw 'p'"


def test_astream_complete_uses_an_overridden_stream_complete():
    chunks = run_sync(_drain(CompleteDouble().astream_complete("p")))
    assert [(c.text, c.delta) for c in chunks] == [("a", "a"), ("ab", "b")]


def test_a_sync_chat_override_serves_chat_on_a_scripted_llm_too():
    class Scripted(ScriptedLLM):
        def chat(self, messages, **kwargs):
            return _reply("override")

    assert run_sync(Scripted([]).achat(USER)).message.content == "override"


def test_an_overridden_achat_is_not_used_by_chat_as_upstream():
    class AsyncDouble(MockLLM):
        async def achat(self, messages, **kwargs):
            return _reply("achat")

    llm = AsyncDouble()
    assert run_sync(llm.achat(USER)).message.content == "achat"
    assert llm.chat(USER).message.content == "user: hi\nassistant: "


# --------------------------------------------------------------------------- CustomLLM
def test_custom_llm_chat_is_its_complete_on_the_flattened_messages():
    response = run_sync(CompleteDouble().achat(USER))
    assert response.message.content == "complete(True) saw 'user: hi\\nassistant: '"


def test_custom_llm_stream_chat_is_its_stream_complete():
    chunks = run_sync(_drain(CompleteDouble().astream_chat(USER)))
    assert [(c.message.content, c.delta) for c in chunks] == [("a", "a"), ("ab", "b")]


def test_a_mock_llm_subclass_overriding_complete_serves_chat_as_upstream_mock_llm():
    class Completing(MockLLM):
        def complete(self, prompt, formatted=False, **kwargs):
            return CompletionResponse(text="completed")

    assert Completing().chat(USER).message.content == "completed"


def test_complete_on_a_plain_llm_does_not_serve_chat():
    class Completing(ScriptedLLM):
        def complete(self, prompt, formatted=False, **kwargs):
            return CompletionResponse(text="completed")

    assert Completing(["scripted"]).chat(USER).message.content == "scripted"


# --------------------------------------------------------------------------- events
@pytest.mark.parametrize("call", [
    lambda llm: llm.chat(USER),
    lambda llm: run_sync(llm.achat(USER)),
    lambda llm: list(llm.stream_chat(USER)),
    lambda llm: run_sync(_drain(llm.astream_chat(USER))),
    lambda llm: llm.complete("p"),
    lambda llm: run_sync(llm.acomplete("p")),
], ids=["chat", "achat", "stream_chat", "astream_chat", "complete", "acomplete"])
def test_a_call_served_by_an_override_is_recorded_once(call):
    with collect_events() as events:
        call(CompleteDouble())
    assert _llm_events(events) == ["LLMCallStartEvent", "LLMCallEndEvent"]


def test_the_recorded_call_holds_the_overrides_response():
    with collect_events() as events:
        run_sync(ChatDouble().achat(USER))
    [end] = [e for e in events if isinstance(e, LLMCallEndEvent)]
    assert end.response.message.content == "chat saw hi" and end.usage is not None


def test_an_override_calling_super_reaches_the_backend_with_one_recorded_call():
    class Shouting(MockLLM):
        def chat(self, messages, **kwargs):
            response = super().chat(messages, **kwargs)
            return _reply(response.message.content.upper())

    with collect_events() as events:
        response = run_sync(Shouting().achat(USER))
    assert response.message.content == "USER: HI\nASSISTANT: "
    assert _llm_events(events) == ["LLMCallStartEvent", "LLMCallEndEvent"]


def test_a_streaming_override_calling_super_is_recorded_once():
    class Tagged(MockLLM):
        def stream_chat(self, messages, **kwargs):
            for chunk in super().stream_chat(messages, **kwargs):
                yield chunk.model_copy(update={"delta": f"<{chunk.delta}>"})

    with collect_events() as events:
        chunks = run_sync(_drain(Tagged(max_tokens=2).astream_chat(USER)))
    assert [c.delta for c in chunks] == ["<text>", "< text>"]
    assert _llm_events(events) == ["LLMCallStartEvent", "LLMCallEndEvent"]


def test_an_override_returning_something_else_is_a_clear_error():
    class Wrong(MockLLM):
        def chat(self, messages, **kwargs):
            return "just text"

    with pytest.raises(TypeError, match=r"Wrong\.chat returned str; expected ChatResponse"):
        run_sync(Wrong().achat(USER))


def test_an_async_generator_override_of_astream_chat_is_used():
    class AsyncGen(MockLLM):
        async def astream_chat(self, messages, **kwargs) -> AsyncIterator[ChatResponse]:
            async def gen() -> AsyncIterator[ChatResponse]:
                yield _reply("x", delta="x")
            return gen()

    chunks = run_sync(_drain(AsyncGen().astream_chat(USER)))
    assert [c.delta for c in chunks] == ["x"]


# --------------------------------------------------------------------------- agents and tools
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def test_a_react_agent_uses_an_overridden_chat():
    class Reasoner(MockLLM):
        def chat(self, messages, **kwargs):
            if messages[-1].content.startswith("Observation:"):
                return _reply("Thought: done.\nAnswer: 5")
            return _reply('Thought: add.\nAction: add\nAction Input: {"a": 2, "b": 3}')

    agent = ReActAgent.from_tools([FunctionTool.from_defaults(add)], llm=Reasoner())
    with collect_events() as events:
        response = asyncio.run(agent.achat("2 + 3?"))
    assert str(response) == "5"
    assert _llm_events(events) == ["LLMCallStartEvent", "LLMCallEndEvent"] * 2


def test_a_react_agent_streams_through_an_overridden_stream_chat():
    class Streamer(MockLLM):
        def stream_chat(self, messages, **kwargs):
            yield _reply("Thought: easy.\nAnswer: ", delta="Thought: easy.\nAnswer: ")
            yield _reply("Thought: easy.\nAnswer: hi", delta="hi")

    agent = ReActAgent.from_tools([], llm=Streamer())
    response = agent.stream_chat("hello")
    assert "".join(response.response_gen) == "hi"


def test_chat_with_tools_passes_the_tools_to_an_overridden_chat():
    class Caller(FunctionCallingLLM):
        def chat(self, messages, **kwargs):
            self.seen = kwargs
            call = ToolSelection(tool_id="1", tool_name="add", tool_kwargs={"a": 1, "b": 2})
            return ChatResponse(message=ChatMessage(role=MessageRole.ASSISTANT, content="",
                                                    additional_kwargs={"tool_calls": [call]}))

    llm, tool = Caller(), FunctionTool.from_defaults(add)
    response = run_sync(llm.achat_with_tools([tool], "add 1 and 2"))
    assert llm.get_tool_calls_from_response(response)[0].tool_name == "add"
    assert llm.seen["tools"] == [tool] and llm.seen["tool_choice"] == "auto"


def test_a_plain_llm_with_no_hooks_and_no_overrides_says_what_to_implement():
    with pytest.raises(NotImplementedError, match="must implement `_achat` or `_chat`"):
        LLM().chat(USER)
