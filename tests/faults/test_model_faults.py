"""Faults of the agent's model: a 429, a 500, a timeout or an empty reply before the scripted
reply of a call, on the scripted model or the OpenAI backend (which retries)."""

from __future__ import annotations

from typing import Any

import pytest

from agentkit.harness import run_scenario

SCENARIO = """\
format: 1
name: order
tools:
  - ref: order_desk:lookup_order
turns:
  - user: Where is my order A-1001?
expect:
  answer: {{contains: "2026-11-05"}}
  on_fault: [recovered, failed_safely]
agents:
  function_calling:
    {backend}latency: 0.5
    faults: [{fault}]
    script:
      - tool_calls: [{{name: lookup_order, args: {{order_id: A-1001}}}}]
      - Your order A-1001 arrives on 2026-11-05.
"""


def test_a_rate_limit_the_openai_backend_retries_recovered(support: Any) -> None:
    path = support(SCENARIO.format(backend="backend: openai\n    ",
                                   fault="{call: 1, kind: rate_limit, retry_after: 2}"))

    result = run_scenario(path, "function_calling")

    assert result.verdict.fault is not None
    assert (result.verdict.fault.outcome, result.verdict.fault.faults) == (
        "recovered", ("model#1:rate_limit",))
    assert result.trace.turns[0].wall_time == 3.5  # 0.5 s (429) + 2 s + 2 x 0.5 s
    assert result.passed


def test_a_server_error_the_scripted_model_raises_crashed(support: Any) -> None:
    path = support(SCENARIO.format(backend="", fault="{call: 2, kind: server}"))

    result = run_scenario(path, "function_calling")

    assert result.verdict.fault is not None
    assert result.verdict.fault.outcome == "crashed"
    assert "ServerError" in result.verdict.fault.why
    assert not result.passed


def test_a_cut_stream_the_openai_backend_retries_recovered(support: Any) -> None:
    path = support(SCENARIO.format(backend="backend: openai\n    ",
                                   fault="{call: 2, kind: cut}"))

    result = run_scenario(path, "function_calling")

    assert result.verdict.fault is not None
    assert (result.verdict.fault.outcome, result.verdict.fault.faults) == (
        "recovered", ("model#2:cut",))
    assert result.passed


def test_a_cut_stream_the_scripted_model_raises_crashed(support: Any) -> None:
    path = support(SCENARIO.format(backend="", fault="{call: 2, kind: cut}"))

    result = run_scenario(path, "function_calling")

    assert result.verdict.fault is not None
    assert result.verdict.fault.outcome == "crashed"
    assert "the connection closed mid-answer (a stream cut)" in result.verdict.fault.why


def test_a_cut_stream_delivers_half_the_reply_then_the_connection_error() -> None:
    from agentkit.core.sim import simulation
    from agentkit.llms.errors import APIConnectionError
    from agentkit.llms.mock import ScriptedLLM, StreamCut
    from agentkit.llms.types import ChatMessage

    llm = ScriptedLLM([StreamCut("one two three four")])
    got: list[str] = []
    with simulation(), pytest.raises(APIConnectionError, match="mid-answer"):
        for chunk in llm.stream_chat([ChatMessage(role="user", content="hi")]):
            got.append(chunk.delta or "")
    assert got == ["one ", "two "]


def test_a_cut_stream_on_the_openai_wire_ends_without_its_finish() -> None:
    from agentkit.core.sim import simulation
    from agentkit.llms.errors import LLMError
    from agentkit.llms.mock import StreamCut
    from agentkit.llms.types import ChatMessage
    from agentkit.recording import FakeOpenAIServer

    server = FakeOpenAIServer([StreamCut("one two three four"), "whole"], strict=False)
    llm = server.llm(max_retries=0)
    got: list[str] = []
    with simulation(), pytest.raises(LLMError):
        for chunk in llm.stream_chat([ChatMessage(role="user", content="hi")]):
            got.append(chunk.delta or "")
    assert "".join(got) and "".join(got) != "one two three four"
