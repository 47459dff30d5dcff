"""The fault matrix of an agent type with a recording (issue 39: recorded once, replayed
forever): each variant replays the recorded run up to its faulted tool output and records only
its continuation, into the same cassette -- one shared prefix -- then replays offline. A fake
OpenAI endpoint that answers by what it reads stands in for the live model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from agentkit.harness import (
    NoFaultsError,
    record_fault_continuations,
    record_scenario,
    run_fault_matrix,
)
from mocks.openai_server import FakeOpenAIServer

KINDS = ["error", "timeout", "empty", "truncate", "drop_fields", "corrupt_fields",
         "malformed_json", "wrong_type", "rate_limit", "latency"]

SCENARIO = """\
format: 1
name: order
tools:
  - ref: order_desk:lookup_order
turns:
  - user: {question}
expect:
  answer: {{contains: "2026-11-05"}}
  on_fault: [recovered, failed_safely, fabricated]
agents:
  function_calling:
    params: {{max_function_calls: 1}}
    recording: cassettes/order.function_calling.yaml
"""
QUESTION = "Where is my order A-1001?"


def _model(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
    """A model that looks the order up, then answers from what the tool said."""
    from agentkit.llms.mock import tool_call

    last = messages[-1]
    if last["role"] == "user":
        return tool_call("lookup_order", order_id="A-1001")
    text = str(last.get("content") or "")
    if "2026-11-05" in text:
        return "Your order A-1001 arrives on 2026-11-05."
    return "Sorry, I could not look up your order right now."


@pytest.fixture
def recorded(support: Any) -> Path:
    """The scenario with its unfaulted run recorded (the prefix)."""
    path = support(SCENARIO.format(question=QUESTION))
    server = FakeOpenAIServer([_model] * 2)
    recording = record_scenario(path, "function_calling", server.llm())
    assert recording.ok, recording.problems
    return path


def _exchanges(path: Path) -> list[dict[str, Any]]:
    cassette = path.parent / "cassettes" / "order.function_calling.yaml"
    return yaml.safe_load(cassette.read_text("utf-8"))["exchanges"]


def test_each_variant_records_only_its_continuation_after_one_shared_prefix(
        recorded: Path) -> None:
    server = FakeOpenAIServer([_model] * 40, strict=False)

    recording = record_fault_continuations(recorded, "function_calling", server.llm(),
                                           kinds=KINDS)

    assert recording.ok, recording.problems
    variants = len(recording.recorded)
    assert variants >= 10
    assert recording.prefix == 2  # the lookup, then the answer
    # the first request of every variant was the recorded one: replayed, never asked again;
    # only what follows a faulted tool output is asked, and a continuation the cassette holds
    # already (a late answer is the unfaulted output: the whole run is the prefix) is not
    assert server.calls == sum(recording.recorded.values()) >= variants - 2
    assert recording.recorded["lookup_order#1:latency"] == 0
    exchanges = _exchanges(recorded)
    assert len(exchanges) == 2 + server.calls
    first = exchanges[0]["request"]
    assert all(exchange["request"] != first for exchange in exchanges[1:])
    # each continuation answers a request whose last message is a faulted tool output
    outputs = [e["request"]["messages"][-1] for e in exchanges[2:]]
    assert [m["role"] for m in outputs] == ["tool"] * server.calls
    assert len({json.dumps(m, sort_keys=True) for m in outputs}) == server.calls
    assert not any("2026-11-05" in m["content"] and "shipped" in m["content"]
                   and "Parcelway" in m["content"] for m in outputs)


@pytest.mark.slow  # a recorded fault matrix replayed
def test_the_recorded_matrix_replays_offline_every_cell_classified(recorded: Path) -> None:
    assert record_fault_continuations(recorded, "function_calling",
                                      FakeOpenAIServer([_model] * 40, strict=False).llm(),
                                      kinds=KINDS).ok

    first = run_fault_matrix(recorded, kinds=KINDS)  # offline: no model at all
    again = run_fault_matrix(recorded, kinds=KINDS)

    assert first.agent_types == ["function_calling"] and not first.left_out
    outcomes = {v.label: first.outcome(v, "function_calling") for v in first.variants}
    assert len(outcomes) >= 10
    assert set(outcomes.values()) <= {"recovered", "failed_safely", "fabricated"}
    assert outcomes["lookup_order#1:error"] == "failed_safely"
    # a late output is the real one: the run is the recorded one, and the other variants'
    # continuations it leaves unreplayed in the shared cassette are no fault of it
    assert outcomes["lookup_order#1:latency"] == "recovered"
    assert [c.trace.to_json() for c in first.cells.values()] == \
        [c.trace.to_json() for c in again.cells.values()]


def test_recording_again_asks_the_model_nothing(recorded: Path) -> None:
    assert record_fault_continuations(recorded, "function_calling",
                                      FakeOpenAIServer([_model] * 40, strict=False).llm(),
                                      kinds=KINDS).ok
    before = _exchanges(recorded)
    server = FakeOpenAIServer([], strict=False)

    again = record_fault_continuations(recorded, "function_calling", server.llm(), kinds=KINDS)

    assert again.ok and set(again.recorded.values()) == {0}
    assert server.calls == 0 and _exchanges(recorded) == before


def test_a_variant_not_recorded_yet_is_a_cassette_miss_offline(recorded: Path) -> None:
    matrix = run_fault_matrix(recorded, kinds=["error"])

    (variant,) = matrix.variants
    assert matrix.outcome(variant, "function_calling") == "error"
    stopped = matrix.cell(variant, "function_calling").verdict.stopped_by or ""
    assert stopped.startswith("the continuation of lookup_order#1:error is not recorded "
                              "(agentkit faults ")
    assert "--agents function_calling --base-url URL records it)" in stopped
    assert "no recorded exchange matches this request" in stopped


def test_a_prefix_that_no_longer_matches_stops_the_recording_saying_so(
        recorded: Path) -> None:
    before = _exchanges(recorded)
    text = recorded.read_text("utf-8").replace(QUESTION, "Where is my order A-1001, please?")
    recorded.write_text(text, encoding="utf-8")
    server = FakeOpenAIServer([_model] * 40, strict=False)

    with pytest.raises(NoFaultsError, match=r"agents.function_calling: the recorded prefix no "
                                            r"longer matches: the run of `order` under "
                                            r"function_calling does not replay its recording"):
        record_fault_continuations(recorded, "function_calling", server.llm(), kinds=KINDS)

    assert server.calls == 0 and _exchanges(recorded) == before


def test_continuations_need_the_recorded_run_first(support: Any) -> None:
    path = support(SCENARIO.format(question=QUESTION))

    with pytest.raises(NoFaultsError, match=r"no recording of the unfaulted run to continue "
                                            r"from; record it first \(agentkit record "):
        record_fault_continuations(path, "function_calling",
                                   FakeOpenAIServer([]).llm(), kinds=KINDS)
