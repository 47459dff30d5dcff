"""The fake OpenAI endpoint itself (mocks/openai_server.py) and the SDK clients it stands for."""

import asyncio

import pytest

from agentkit.core.sim import run_sync
from agentkit.llms.mock import ScriptedResponse
from agentkit.llms.openai import OpenAI
from agentkit.llms.types import ChatMessage
from mocks.openai_server import FakeOpenAIServer

USER = [ChatMessage(content="hi")]


def test_the_context_manager_serves_and_records_request_bodies():
    with FakeOpenAIServer(["one", "two"]) as server:
        llm = server.llm()
        answers = [llm.chat(USER).message.content, llm.chat(USER).message.content]
    assert answers == ["one", "two"]
    assert [r["messages"] for r in server.requests] == [[{"role": "user", "content": "hi"}]] * 2


def test_leaving_script_items_unused_fails_on_exit():
    with (pytest.raises(AssertionError, match=r"left 1 scripted response\(s\) unused"),
          FakeOpenAIServer(["one", "two"]) as server):
        server.llm().chat(USER)


def test_a_non_strict_server_allows_unused_items():
    with FakeOpenAIServer(["one", "two"], strict=False) as server:
        server.llm().chat(USER)
    assert server.remaining == 1


def test_a_callable_item_sees_the_request_messages_and_tools():
    seen = []

    def answer(messages, tools):
        seen.append((messages, tools))
        return f"you said {messages[-1]['content']}"

    with FakeOpenAIServer([answer]) as server:
        assert server.llm().chat(USER).message.content == "you said hi"
    assert seen == [([{"role": "user", "content": "hi"}], None)]


def test_scripted_latency_is_server_time_on_the_virtual_clock(sim):
    with FakeOpenAIServer([ScriptedResponse("x", latency=1.5)]) as server:
        assert server.llm().chat(USER).message.content == "x"
    assert sim.clock.now() == 1.5


def test_a_server_latency_applies_to_every_answer_in_async_calls(sim):
    from agentkit.core.sim import run_sync

    with FakeOpenAIServer(["a", "b"], latency=0.5) as server:
        llm = server.llm()

        async def two_calls() -> list[str]:
            return [(await llm.achat(USER)).message.content for _ in range(2)]

        assert run_sync(two_calls()) == ["a", "b"]
    assert sim.clock.now() == 1.0


def test_the_sdk_client_runs_without_sdk_retries_at_the_given_url():
    llm = OpenAI("gpt-4o", api_key="sk-client-test-1", base_url="http://localhost:1234/v1",
                 timeout=12.5)
    client = llm._client()
    assert (client.max_retries, str(client.base_url), client.timeout) == (
        0, "http://localhost:1234/v1/", 12.5)


def test_the_async_client_is_reused_within_a_loop_and_not_shared_across_loops():
    llm = OpenAI("gpt-4o", api_key="sk-client-test-1")

    async def twice():
        return llm._aclient(), llm._aclient()

    first, again = run_sync(twice())
    other, _ = asyncio.run(twice())
    assert first is again and other is not first
