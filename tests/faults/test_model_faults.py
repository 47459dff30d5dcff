"""Faults of the agent's model: a 429, a 500, a timeout or an empty reply before the scripted
reply of a call, on the scripted model or the OpenAI backend -- both retrying by the one policy
of agentkit.llms.retries, as a deployment's client does."""

from __future__ import annotations

from typing import Any

import pytest

from agentkit.harness import (
    AgentContext,
    FaultVariant,
    load,
    register_agent_type,
    run_scenario,
    variant_scenario,
)
from agentkit.llms.errors import LLMError
from agentkit.llms.types import ChatMessage
from agentkit.scenario import ModelFault, Scenario, ScenarioError
from tests.faults.conftest import EXAMPLE

BUILT_IN = ["react", "function_calling", "llm_compiler", "coa", "react_multimodal",
            "function_agent", "react_agent"]

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


def test_a_rate_limit_the_scripted_model_retries_recovered_in_the_same_time(support: Any) -> None:
    path = support(SCENARIO.format(backend="", fault="{call: 1, kind: rate_limit, retry_after: 2}"))

    result = run_scenario(path, "function_calling")

    assert result.verdict.fault is not None
    assert (result.verdict.fault.outcome, result.verdict.fault.faults) == (
        "recovered", ("model#1:rate_limit",))
    assert result.trace.turns[0].wall_time == 3.5  # as the OpenAI backend's, above
    assert len(result.trace.llm_calls) == 2  # the retry is inside the call, as on the wire
    assert result.passed


def test_a_server_error_the_scripted_model_retries_recovered(support: Any) -> None:
    path = support(SCENARIO.format(backend="", fault="{call: 2, kind: server}"))

    result = run_scenario(path, "function_calling")

    assert result.verdict.fault is not None
    assert result.verdict.fault.outcome == "recovered"
    assert result.passed


@pytest.mark.parametrize("backend", ["", "backend: openai\n    "])
def test_a_server_error_outlasting_the_retries_crashed(support: Any, backend: str) -> None:
    path = support(SCENARIO.format(backend=backend, fault="{call: 2, kind: server, times: 4}"))

    result = run_scenario(path, "function_calling")

    assert result.verdict.fault is not None
    assert (result.verdict.fault.outcome, result.verdict.fault.faults) == (
        "crashed", ("model#2:server(times=4)",))
    assert "ServerError" in result.verdict.fault.why
    assert not result.passed


def test_max_retries_of_the_agent_type_bounds_the_retries(support: Any) -> None:
    text = SCENARIO.format(backend="", fault="{call: 1, kind: rate_limit, times: 2}")
    retried = run_scenario(support(text.replace("    faults:", "    max_retries: 2\n    faults:"),
                                   "two.yaml"), "function_calling")
    once = run_scenario(support(text.replace("    faults:", "    max_retries: 1\n    faults:"),
                                "one.yaml"), "function_calling")

    assert retried.verdict.fault is not None and once.verdict.fault is not None
    assert (retried.verdict.fault.outcome, once.verdict.fault.outcome) == ("recovered", "crashed")


def test_a_timeout_is_a_read_timeout_no_client_retries_crashed(support: Any) -> None:
    for backend in ("", "backend: openai\n    "):
        path = support(SCENARIO.format(backend=backend, fault="{call: 1, kind: timeout}"))

        result = run_scenario(path, "function_calling")

        assert result.verdict.fault is not None
        assert result.verdict.fault.outcome == "crashed", backend
        assert "APITimeoutError" in result.verdict.fault.why


def test_times_is_not_a_parameter_of_an_empty_reply(support: Any) -> None:
    path = support(SCENARIO.format(backend="", fault="{call: 1, kind: empty, times: 2}"))

    with pytest.raises(ScenarioError, match="`times` is not a parameter of an `empty` fault"):
        run_scenario(path, "function_calling")


def _example_under(fault: ModelFault) -> Scenario:
    """The bundled support desk (three tools, a trajectory) with ``fault`` on every agent
    type's model."""
    return variant_scenario(load(EXAMPLE / "scenarios" / "order_support.yaml"),
                            FaultVariant("model", fault.call, fault))


@pytest.mark.parametrize("agent_type", BUILT_IN)
def test_every_built_in_type_recovers_from_a_429_on_its_first_call(agent_type: str) -> None:
    result = run_scenario(_example_under(ModelFault(call=1, kind="rate_limit", retry_after=2)),
                          agent_type)

    assert result.verdict.fault is not None
    assert (result.verdict.fault.outcome, result.verdict.fault.faults) == (
        "recovered", ("model#1:rate_limit",))
    assert result.passed, result.problems


@pytest.mark.parametrize("agent_type", BUILT_IN)
def test_every_built_in_type_crashes_on_a_429_outlasting_the_retries(agent_type: str) -> None:
    result = run_scenario(_example_under(ModelFault(call=1, kind="rate_limit", times=4)),
                          agent_type)

    assert result.verdict.fault is not None
    assert result.verdict.fault.outcome == "crashed"
    assert "RateLimitError" in result.verdict.fault.why


class _Swallowing:
    """Asks its model once; when the call fails (its retries spent), answers all the same --
    with ``answer``."""

    answer = "Your order A-1001 is on its way."

    def __init__(self, context: AgentContext) -> None:
        self.llm = context.llm
        self.chat_history: list[Any] = []

    def chat(self, message: str, **_: Any) -> str:
        try:
            return self.llm.chat([ChatMessage(role="user", content=message)]).message.content or ""
        except LLMError:
            return self.answer

    def stream_chat(self, message: str, **_: Any) -> Any:
        raise NotImplementedError


class _Telling(_Swallowing):
    answer = "Sorry, I could not look your order up just now; please try again later."


SWALLOWING = SCENARIO.format(backend="", fault="{call: 1, kind: rate_limit, times: 4}").replace(
    "  function_calling:\n", "  swallowing:\n").replace(
    "      - tool_calls: [{name: lookup_order, args: {order_id: A-1001}}]\n", "")


def test_an_agent_answering_anyway_after_its_model_failed_fabricated(support: Any) -> None:
    register_agent_type("swallowing", _Swallowing)

    result = run_scenario(support(SWALLOWING), "swallowing")

    assert result.verdict.fault is not None
    assert (result.verdict.fault.outcome, result.verdict.fault.faults) == (
        "fabricated", ("model#1:rate_limit(times=4)",))
    assert result.verdict.fault.why.startswith(
        "it answered as if model#1:rate_limit(times=4) had worked")


def test_an_agent_telling_the_user_its_model_failed_failed_safely(support: Any) -> None:
    register_agent_type("swallowing", _Telling)

    result = run_scenario(support(SWALLOWING), "swallowing")

    assert result.verdict.fault is not None
    assert result.verdict.fault.outcome == "failed_safely"


def test_a_single_429_the_swallowing_agent_never_sees_recovered(support: Any) -> None:
    register_agent_type("swallowing", _Swallowing)

    result = run_scenario(support(SWALLOWING.replace(", times: 4", "")), "swallowing")

    assert result.verdict.fault is not None
    assert result.verdict.fault.outcome == "recovered"


def test_a_cut_stream_the_openai_backend_retries_recovered(support: Any) -> None:
    path = support(SCENARIO.format(backend="backend: openai\n    ",
                                   fault="{call: 2, kind: cut}"))

    result = run_scenario(path, "function_calling")

    assert result.verdict.fault is not None
    assert (result.verdict.fault.outcome, result.verdict.fault.faults) == (
        "recovered", ("model#2:cut",))
    assert result.passed


def test_a_cut_reply_the_scripted_model_retries_recovered(support: Any) -> None:
    path = support(SCENARIO.format(backend="", fault="{call: 2, kind: cut}"))

    result = run_scenario(path, "function_calling")

    assert result.verdict.fault is not None
    assert (result.verdict.fault.outcome, result.verdict.fault.faults) == (
        "recovered", ("model#2:cut",))
    assert result.passed


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
