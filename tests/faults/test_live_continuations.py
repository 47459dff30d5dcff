"""The fault matrix of an agent type with a recording (issue 39: recorded once, replayed
forever): each variant replays the recorded run up to its faulted tool output and records only
its continuation, into the same cassette -- one shared prefix -- then replays offline. A fake
OpenAI endpoint that answers by what it reads stands in for the live model."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml

from agentkit.harness import (
    AgentContext,
    NoFaultsError,
    record_fault_continuations,
    record_scenario,
    register_agent_type,
    run_fault_matrix,
    run_scenario,
)
from agentkit.llms.errors import LLMError
from agentkit.llms.types import ChatMessage
from agentkit.recording import Cassette, CassetteError
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


def _cassette(path: Path) -> Path:
    return path.parent / "cassettes" / "order.function_calling.yaml"


def _exchanges(path: Path) -> list[dict[str, Any]]:
    return yaml.safe_load(_cassette(path).read_text("utf-8"))["exchanges"]


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
    tool_variants = [label for label in recording.recorded if label.startswith("lookup_order")]
    assert server.calls == sum(recording.recorded.values()) == len(tool_variants) - 1
    assert recording.recorded["lookup_order#1:latency"] == 0
    exchanges = Cassette.load(_cassette(recorded)).exchanges
    assert len(exchanges) == 2 + server.calls
    first = exchanges[0].request
    assert all(exchange.request != first for exchange in exchanges[1:])
    # the recorded run is untagged; each continuation is tagged with its variant, and answers
    # a request whose last message is that variant's faulted tool output
    assert [e.variant for e in exchanges[:2]] == [None, None]
    assert [e.variant for e in exchanges[2:]] == [label for label, count in
                                                  recording.recorded.items() if count]
    outputs = [e.request["messages"][-1] for e in exchanges[2:]]
    assert [m["role"] for m in outputs] == ["tool"] * server.calls
    # a malformed record and a truncated one are both its first half: the same request, yet
    # two variants, each with its own continuation
    assert len({json.dumps(m, sort_keys=True) for m in outputs}) == server.calls - 1
    assert not any("2026-11-05" in m["content"] and "shipped" in m["content"]
                   and "Parcelway" in m["content"] for m in outputs)


@pytest.mark.slow  # a recorded fault matrix replayed
def test_the_recorded_matrix_replays_offline_every_cell_classified(recorded: Path) -> None:
    assert record_fault_continuations(recorded, "function_calling",
                                      FakeOpenAIServer([_model] * 40, strict=False).llm(),
                                      kinds=KINDS, tools=["lookup_order"]).ok

    first = run_fault_matrix(recorded, kinds=KINDS, tools=["lookup_order"])  # no model at all
    again = run_fault_matrix(recorded, kinds=KINDS, tools=["lookup_order"])

    assert first.agent_types == ["function_calling"] and not first.left_out
    outcomes = {v.label: first.outcome(v, "function_calling") for v in first.variants}
    assert len(outcomes) >= 10
    assert set(outcomes.values()) <= {"recovered", "failed_safely", "fabricated"}
    assert outcomes["lookup_order#1:error"] == "failed_safely"
    # a late output is the real one: the run is the recorded one, and the other variants'
    # continuations in the shared cassette are not its own (tagged with theirs)
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


def _with_continuations(recorded: Path) -> Path:
    assert record_fault_continuations(recorded, "function_calling",
                                      FakeOpenAIServer([_model] * 40, strict=False).llm(),
                                      kinds=KINDS).ok
    return _cassette(recorded)


def test_a_plain_run_replays_the_scenarios_own_exchanges_not_the_variants(
        recorded: Path) -> None:
    _with_continuations(recorded)

    result = run_scenario(recorded, "function_calling")  # no fault: the recorded run alone

    assert result.passed, result.verdict.lines()
    assert result.llm.unused == 0


def test_a_variants_own_unreplayed_continuation_is_still_reported(recorded: Path) -> None:
    path = _with_continuations(recorded)
    cassette = Cassette.load(path)
    (own,) = [e for e in cassette.exchanges if e.variant == "lookup_order#1:error"]
    extra = replace(own, request={**own.request, "tool_choice": "none"}, request_hash="f" * 16)
    cassette.exchanges.append(extra)
    cassette.save()

    matrix = run_fault_matrix(recorded, kinds=KINDS, tools=["lookup_order"])

    failed = {label: cell.verdict.lines() for (label, _), cell in matrix.cells.items()
              if not cell.verdict.passed}
    assert failed == {"lookup_order#1:error": [
        "- the recording has 1 exchange(s) that were not replayed"]}


def test_an_old_untagged_matrix_cassette_still_loads_and_replays(recorded: Path) -> None:
    path = _with_continuations(recorded)
    tagged = run_fault_matrix(recorded, kinds=KINDS)
    data = yaml.safe_load(path.read_text("utf-8"))
    assert data["format"] == 5
    for exchange in data["exchanges"]:
        exchange.pop("variant", None)
    data["format"] = 3  # as the matrix wrote it before exchanges named their variant
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")

    old = run_fault_matrix(recorded, kinds=KINDS)

    assert all(e.variant is None for e in Cassette.load(path).exchanges)
    assert {label: old.outcome(v, "function_calling") for v in old.variants
            for label in [v.label]} == \
        {v.label: tagged.outcome(v, "function_calling") for v in tagged.variants}
    # what it cannot tell is whose a continuation is: a plain run finds them left over
    plain = run_scenario(recorded, "function_calling")
    assert plain.verdict.lines() == [
        f"- the recording has {len(data['exchanges']) - 2} exchange(s) that were not replayed"]


def test_a_variant_tag_needs_format_5(recorded: Path) -> None:
    path = _with_continuations(recorded)
    text = path.read_text("utf-8").replace("format: 5", "format: 3", 1)
    path.write_text(text, encoding="utf-8")

    with pytest.raises(CassetteError, match=r"\.yaml:\d+: exchanges\.2\.variant: an exchange's "
                                            r"`variant` \(the fault variant whose continuation "
                                            r"it is\) belongs to a cassette of `format: 5`, but "
                                            r"the file says `format: 3`"):
        Cassette.load(path)


MODEL_KINDS = ["rate_limit", "server", "timeout", "empty", "cut"]
ASKING = """\
format: 1
name: asking
tools:
  - ref: order_desk:lookup_order
turns:
  - user: Where is my order A-1001?
expect:
  answer: {contains: "2026-11-05"}
  on_fault: [recovered, failed_safely, fabricated]
agents:
  patient:
    recording: cassettes/asking.patient.yaml
    max_retries: 0
"""


class _Patient:
    """Asks its model; when the call fails, says so and asks once more."""

    def __init__(self, context: AgentContext) -> None:
        self.llm = context.llm
        self.chat_history: list[Any] = []

    def chat(self, message: str, **_: Any) -> str:
        messages = [ChatMessage(role="user", content=message)]
        try:
            return str(self.llm.chat(messages).message.content)
        except LLMError as exc:
            messages.append(ChatMessage(role="user", content=f"That failed ({type(exc).__name__})"
                                                             "; answer again."))
            return str(self.llm.chat(messages).message.content)

    def stream_chat(self, message: str, **_: Any) -> Any:
        raise NotImplementedError


def _answering(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
    if "failed" in str(messages[-1].get("content")):
        return "Sorry, I could not look your order up just now; please try again later."
    return "Your order A-1001 arrives on 2026-11-05."


def test_model_faults_record_their_continuation_from_the_prefix_and_replay_offline(
        support: Any) -> None:
    register_agent_type("patient", _Patient)
    path = support(ASKING)
    assert record_scenario(path, "patient", FakeOpenAIServer([_answering]).llm()).ok
    server = FakeOpenAIServer([_answering] * 10, strict=False)

    recording = record_fault_continuations(path, "patient", server.llm(), kinds=MODEL_KINDS)

    assert recording.ok, recording.problems
    # the prefix (the first call) replays, the fault takes its place, and only the question
    # asked again after it goes to the model -- an empty reply is an answer: nothing follows
    assert recording.recorded == {"model#1:rate_limit": 1, "model#1:server": 1,
                                  "model#1:timeout": 1, "model#1:empty": 0, "model#1:cut": 1}
    assert server.calls == 4
    exchanges = Cassette.load(path.parent / "cassettes" / "asking.patient.yaml").exchanges
    assert [e.variant for e in exchanges] == [None, "model#1:rate_limit", "model#1:server",
                                              "model#1:timeout", "model#1:cut"]
    assert [e.request["messages"][-1]["content"] for e in exchanges[1:]] == [
        f"That failed ({error}); answer again." for error in
        ("RateLimitError", "ServerError", "APITimeoutError", "APIConnectionError")]

    first = run_fault_matrix(path, kinds=MODEL_KINDS)  # offline: no model at all
    again = run_fault_matrix(path, kinds=MODEL_KINDS)

    outcomes = {v.label: first.outcome(v, "patient") for v in first.variants}
    assert outcomes == {"model#1:rate_limit": "failed_safely", "model#1:server": "failed_safely",
                        "model#1:timeout": "failed_safely", "model#1:empty": "fabricated",
                        "model#1:cut": "failed_safely"}
    assert first.passed
    assert [c.trace.to_json() for c in first.cells.values()] == \
        [c.trace.to_json() for c in again.cells.values()]
    assert run_scenario(path, "patient").passed  # the plain run: its own exchange only


def test_a_recorded_agent_types_model_faults_are_retried_by_the_backends_policy(
        support: Any) -> None:
    """Without ``max_retries: 0`` the faults a retry gets past never reach the agent: the
    attempt after a 429, a 500 or a cut reply asks the recorded prefix again, so nothing is
    recorded and the run recovers; a read timeout (not retried) still reaches it."""
    register_agent_type("patient", _Patient)
    path = support(ASKING.replace("    max_retries: 0\n", ""))
    assert record_scenario(path, "patient", FakeOpenAIServer([_answering]).llm()).ok
    server = FakeOpenAIServer([_answering] * 10, strict=False)

    recording = record_fault_continuations(path, "patient", server.llm(), kinds=MODEL_KINDS)
    matrix = run_fault_matrix(path, kinds=MODEL_KINDS)

    assert recording.ok, recording.problems
    assert recording.recorded == {"model#1:rate_limit": 0, "model#1:server": 0,
                                  "model#1:timeout": 1, "model#1:empty": 0, "model#1:cut": 0}
    assert {v.label: matrix.outcome(v, "patient") for v in matrix.variants} == {
        "model#1:rate_limit": "recovered", "model#1:server": "recovered",
        "model#1:timeout": "failed_safely", "model#1:empty": "fabricated",
        "model#1:cut": "recovered"}


JUDGED = SCENARIO.replace("agents:\n", """\
faults:
  judge:
    failed_safely: {{judge: "tells the customer the order could not be looked up"}}
    fabricated: {{judge: "gives the order's status as if it had been looked up"}}
judge: {{}}
agents:
""")
MADE_UP = "it promises a status it never saw"


def _model_and_judge(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
    """The agent's model as :func:`_model`, and a judge that finds every answer made up."""
    text = " ".join(str(m.get("content")) for m in messages)
    if "as if it had been looked up" in text:
        return json.dumps({"verdict": "pass", "reason": MADE_UP})
    if "could not be looked up" in text:
        return json.dumps({"verdict": "fail", "reason": "it does not say so"})
    return _model(messages, tools)


def test_the_judges_calls_of_the_classes_are_recorded_and_replay_offline(support: Any) -> None:
    path = support(JUDGED.format(question=QUESTION))
    assert record_scenario(path, "function_calling", FakeOpenAIServer([_model] * 2).llm()).ok
    kinds = ["error", "timeout", "truncate"]
    server = FakeOpenAIServer([_model_and_judge] * 20, strict=False)

    recording = record_fault_continuations(path, "function_calling", server.llm(), kinds=kinds,
                                           tools=["lookup_order"])

    assert recording.ok, recording.problems
    exchanges = Cassette.load(_cassette(path)).exchanges
    judged = [e for e in exchanges if e.role == "judge"]
    # each variant's verdicts went into its continuation, tagged with it; the unfaulted run
    # asked the judge nothing
    assert {e.variant for e in judged} == {f"lookup_order#1:{kind}" for kind in kinds}
    assert server.calls == len(exchanges) - 2
    asked = server.calls

    first = run_fault_matrix(path, kinds=kinds, tools=["lookup_order"])  # no model, no judge
    again = run_fault_matrix(path, kinds=kinds, tools=["lookup_order"])

    assert server.calls == asked
    # the agent told the user, in words `faults.safe` knows -- the judge's verdict decides
    for variant in first.variants:
        fault = first.cell(variant, "function_calling").verdict.fault
        assert fault is not None and fault.outcome == "fabricated", variant.label
        assert MADE_UP in fault.why
        assert first.cell(variant, "function_calling").passed
    assert [c.trace.to_json() for c in first.cells.values()] == \
        [c.trace.to_json() for c in again.cells.values()]
    assert run_scenario(path, "function_calling").passed  # the plain run asks no judge
