"""The bridge's endpoint through the openai SDK, in-process: completions (JSON and SSE, tool
calls, parallel calls, usage), models, and every error as an HTTP status with an OpenAI-style
body -- never a hang."""

from __future__ import annotations

import gc
import json
import threading
import weakref
from pathlib import Path

import httpx
import openai
import pytest

from agentkit.bridge import Bridge, BridgeTransport, openai_clients
from agentkit.core.bounded import BoundedStore
from agentkit.core.events import LLMCallEndEvent
from agentkit.core.sim import VirtualTimeLoop, now, run, simulation
from agentkit.instrumentation import collect_events
from agentkit.llms import errors, openai_wire
from agentkit.llms.cassette import CassetteLLM, RecordingLLM
from agentkit.llms.mock import ScriptedLLM, ScriptedResponse, tool_call
from tests.python_calls import noted_calls

from .conftest import ADD, ask, scripted_bridge, turn


def _raw(bridge: Bridge) -> httpx.Client:
    return httpx.Client(transport=BridgeTransport(bridge), base_url=bridge.base_url)


# ----------------------------------------------------------------- completions
def test_a_text_reply_comes_back_as_a_completion_with_its_usage():
    bridge, client, _ = scripted_bridge([ScriptedResponse(text="2 + 3 = 5", usage={
        "prompt_tokens": 11, "completion_tokens": 4})])
    with turn(bridge):
        completion = ask(client)

    assert completion.choices[0].message.content == "2 + 3 = 5"
    assert completion.choices[0].finish_reason == "stop"
    assert (completion.usage.prompt_tokens, completion.usage.completion_tokens,
            completion.usage.total_tokens) == (11, 4, 15)
    assert completion.model == "m"


def test_a_tool_call_reply_comes_back_as_sdk_tool_calls():
    call = tool_call("add", a=2, b=3)
    bridge, client, _ = scripted_bridge([call])
    with turn(bridge):
        message = ask(client, tools=[ADD]).choices[0]

    assert message.finish_reason == "tool_calls"
    (sent,) = message.message.tool_calls
    assert (sent.id, sent.function.name, json.loads(sent.function.arguments)) == (
        call.tool_id, "add", {"a": 2, "b": 3})


def test_parallel_tool_calls_come_back_in_one_reply():
    bridge, client, _ = scripted_bridge([[tool_call("add", a=1, b=2), tool_call("add", a=3, b=4)]])
    with turn(bridge):
        calls = ask(client, tools=[ADD]).choices[0].message.tool_calls

    assert [json.loads(c.function.arguments) for c in calls] == [{"a": 1, "b": 2},
                                                                 {"a": 3, "b": 4}]


def test_a_streamed_reply_arrives_in_its_chunks_with_the_usage_last():
    bridge, client, _ = scripted_bridge(["Two plus three is five."])
    with turn(bridge):
        chunks = list(ask(client, stream=True, stream_options={"include_usage": True}))

    text = [c.choices[0].delta.content for c in chunks if c.choices and c.choices[0].delta.content]
    assert text == ["Two ", "plus ", "three ", "is ", "five."]
    assert chunks[-1].choices == [] and chunks[-1].usage.completion_tokens > 0
    assert bridge.llm.requests[0].stream  # the model was asked for a stream too


def test_streamed_tool_call_arguments_reassemble_into_the_call():
    bridge, client, _ = scripted_bridge([tool_call("add", a=20, b=300)])
    with turn(bridge):
        deltas = [c.choices[0].delta for c in ask(client, tools=[ADD], stream=True) if c.choices]

    calls = [call for delta in deltas for call in delta.tool_calls or []]
    assert calls[0].function.name == "add"
    assert json.loads("".join(c.function.arguments or "" for c in calls)) == {"a": 20, "b": 300}


def test_the_async_client_is_answered_too():
    bridge, _, async_client = scripted_bridge(["5"])

    async def chat() -> str | None:
        completion = await async_client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "What is 2 + 3?"}])
        return completion.choices[0].message.content

    with turn(bridge):
        assert run(chat()) == "5"


def test_what_the_request_says_reaches_the_model():
    bridge, client, _ = scripted_bridge(["5"])
    with turn(bridge):
        ask(client, tools=[ADD], tool_choice="required", parallel_tool_calls=False,
            temperature=0.2, seed=1)

    (request,) = bridge.llm.requests
    assert [t.metadata.name for t in request.tools] == ["add"]
    assert (request.tool_choice, request.allow_parallel_tool_calls) == ("required", False)
    assert request.kwargs == {"temperature": 0.2, "seed": 1}


SUB = {"type": "function", "function": {"name": "sub", "description": "Subtract.",
                                        "parameters": {"type": "object", "properties": {}}}}


def test_a_tools_array_sent_again_is_read_once_and_offers_the_same_tools(
        monkeypatch: pytest.MonkeyPatch):
    read: list[str] = []
    checked = openai_wire.checked_tool

    def counted(at: str, name: object, *rest: object) -> openai_wire.WireTool:
        read.append(str(name))
        return checked(at, name, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(openai_wire, "checked_tool", counted)
    # not what earlier tests' bridges read
    monkeypatch.setattr(openai_wire, "_OFFERED", openai_wire._OFFERED.emptied())
    monkeypatch.setattr(openai_wire, "_PARSED", openai_wire._PARSED.emptied())
    bridge, client, _ = scripted_bridge(["5", "6", "7", "8"])
    with turn(bridge):
        for tools in ([ADD], [ADD], [ADD, SUB], [ADD]):
            ask(client, tools=tools)

    assert read == ["add", "add", "sub"]  # once per distinct tools array
    first, again, both, last = bridge.llm.requests
    assert first.tools[0] is again.tools[0] is last.tools[0]
    assert first.tools is not again.tools  # each request its own list
    assert [t.metadata.name for t in both.tools] == ["add", "sub"]
    assert first.tool_specs() == [{"name": "add", "description": "Add two integers.",
                                   "parameters": ADD["function"]["parameters"]}]


def _replayed_twice(monkeypatch: pytest.MonkeyPatch) -> tuple[list[str], Bridge, Bridge]:
    """The same conversation through two bridges, counting the messages read into objects."""
    read = noted_calls(monkeypatch, openai_wire, "_from_openai_message",
                       lambda data, where: where)
    monkeypatch.setattr(openai_wire, "_READ", openai_wire._READ.emptied())
    monkeypatch.setattr(openai_wire, "_OFFERED", openai_wire._OFFERED.emptied())
    monkeypatch.setattr(openai_wire, "_PARSED", openai_wire._PARSED.emptied())
    bridges = []
    for _ in range(2):
        bridge, client, _ = scripted_bridge(["5", "6"])
        with turn(bridge):
            ask(client, {"role": "user", "content": "What is 2 + 3?"}, tools=[ADD])
            ask(client, {"role": "user", "content": "What is 2 + 3?"},
                {"role": "assistant", "content": "5"},
                {"role": "user", "content": "And 3 + 3?"}, tools=[ADD])
        bridges.append(bridge)
    return read, bridges[0], bridges[1]


def test_a_message_any_conversation_sent_before_is_read_once_per_process(monkeypatch):
    read, first, again = _replayed_twice(monkeypatch)

    assert read == ["messages[0]", "messages[1]", "messages[2]"]  # the first bridge's only
    assert again.llm.requests[1].messages == first.llm.requests[1].messages
    assert all(mine is theirs for mine, theirs in zip(again.llm.requests[1].messages,
                                                      first.llm.requests[1].messages,
                                                      strict=True))
    assert again.llm.requests[0].tools[0] is first.llm.requests[0].tools[0]


def test_a_conversation_keeps_its_own_messages_when_the_shared_ones_are_dropped(monkeypatch):
    _replayed_twice(monkeypatch)
    bridge, client, _ = scripted_bridge(["5", "6"])
    with turn(bridge):
        ask(client, {"role": "user", "content": "What is 2 + 3?"})
        openai_wire._READ.clear()  # full: emptied
        ask(client, {"role": "user", "content": "What is 2 + 3?"},
            {"role": "assistant", "content": "5"})

    first, second = bridge.llm.requests
    assert second.messages[0] is first.messages[0]


def test_a_body_any_conversation_sent_before_is_not_read_again(monkeypatch):
    decoded: list[bytes] = []
    decode = openai_wire._decoded
    monkeypatch.setattr(openai_wire, "_decoded",
                        lambda text, what: decoded.append(text) or decode(text, what))
    _, first, again = _replayed_twice(monkeypatch)

    assert len(decoded) == 2  # the first bridge's two bodies; the second sent the same
    for mine, theirs in zip(again.llm.requests, first.llm.requests, strict=True):
        assert mine.messages == theirs.messages and mine.messages is not theirs.messages
        assert all(m is t for m, t in zip(mine.messages, theirs.messages, strict=True))
        assert mine.tools is not theirs.tools and mine.tools[0] is theirs.tools[0]


def test_a_body_read_again_gives_each_request_its_own_lists(monkeypatch):
    monkeypatch.setattr(openai_wire, "_PARSED", openai_wire._PARSED.emptied())
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}],
                       "tools": [ADD], "temperature": 0.5}).encode()
    first = openai_wire.parse_request(body, {}, {})
    first.messages.append(first.messages[0])
    first.tools.clear()
    first.options["temperature"] = 1.0

    again = openai_wire.parse_request(body, {}, {})

    assert [m.content for m in again.messages] == ["hi"]
    assert [t.metadata.name for t in again.tools] == ["add"]
    assert again.options == {"temperature": 0.5}


def test_a_changed_or_refused_body_is_read_every_time(monkeypatch):
    monkeypatch.setattr(openai_wire, "_PARSED", openai_wire._PARSED.emptied())
    decoded: list[bytes] = []
    decode = openai_wire._decoded
    monkeypatch.setattr(openai_wire, "_decoded",
                        lambda text, what: decoded.append(text) or decode(text, what))
    body = {"model": "m", "messages": [{"role": "user", "content": "What is 1 + 1?"}]}
    changed = {"model": "m", "messages": [{"role": "user", "content": "What is 1 + 1.0?"}]}
    refused = {"model": "m", "messages": [{"role": "user"}]}
    for sent in (body, changed, body, refused, refused):
        try:
            openai_wire.parse_request(json.dumps(sent).encode(), {}, {})
        except openai_wire.RequestError:
            assert sent is refused

    assert [json.loads(text)["messages"][0].get("content") for text in decoded] == [
        "What is 1 + 1?", "What is 1 + 1.0?", None, None]


def test_a_large_message_is_kept_by_its_conversation_only(monkeypatch):
    # messages up to 100 characters kept
    monkeypatch.setattr(openai_wire, "_READ", BoundedStore(4096, 16 * 100))
    monkeypatch.setattr(openai_wire, "_PARSED", openai_wire._PARSED.emptied())
    bridge, client, _ = scripted_bridge(["5", "6"])
    large = {"role": "user", "content": "x" * 200}
    with turn(bridge, "x" * 200):
        ask(client, {"role": "user", "content": "hi"}, large)
        ask(client, {"role": "user", "content": "hi"}, large)

    assert [json.loads(k.replace("'", '"'))["content"] for k in openai_wire._READ] == ["hi"]
    first, again = bridge.llm.requests
    assert again.messages[1] is first.messages[1]  # its conversation's own, still


def test_a_malformed_tools_array_is_refused_every_time_it_is_sent():
    bridge, client, _ = scripted_bridge(["5"])
    bad = {"type": "function", "function": {"name": "add", "parameters": "not a schema"}}
    with turn(bridge):
        for _ in range(2):
            with pytest.raises(openai.BadRequestError, match="parameters must be a JSON "
                                                             "schema object"):
                ask(client, tools=[bad])
        assert ask(client, tools=[ADD]).choices[0].message.content == "5"


def test_bridges_in_two_threads_never_answer_each_others_requests():
    answers: dict[str, list[str | None]] = {}

    def converse(name: str) -> None:
        bridge, client, _ = scripted_bridge([f"{name} {i}" for i in range(20)])
        with turn(bridge):
            answers[name] = [ask(client).choices[0].message.content for _ in range(20)]

    threads = [threading.Thread(target=converse, args=(name,)) for name in ("left", "right")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert answers == {name: [f"{name} {i}" for i in range(20)] for name in ("left", "right")}


# ----------------------------------------------------------------- models
def test_models_lists_the_bridges_model():
    _bridge, client, _ = scripted_bridge([])

    assert [m.id for m in client.models.list()] == ["script"]
    assert client.models.retrieve("script").owned_by == "agentkit"
    with pytest.raises(openai.NotFoundError, match="this bridge serves `script`"):
        client.models.retrieve("gpt-4o")


# ----------------------------------------------------------------- errors
def test_an_unknown_path_is_a_404_saying_what_is_served():
    bridge, _, _ = scripted_bridge([])
    answer = _raw(bridge).post("/completions", json={})

    assert answer.status_code == 404
    assert answer.json()["error"]["message"] == (
        "Unknown request URL: POST /v1/completions. The agentkit bridge serves POST "
        "/v1/chat/completions, POST /v1/responses, POST /v1/messages and GET /v1/models.")


def test_a_known_path_with_another_method_is_a_405():
    bridge, _, _ = scripted_bridge([])
    answer = _raw(bridge).get("/chat/completions")

    assert (answer.status_code, answer.headers["allow"]) == (405, "POST")
    assert answer.json()["error"]["code"] == "method_not_allowed"


def test_a_malformed_body_is_a_400_naming_the_field_and_costs_no_reply():
    bridge, _, _ = scripted_bridge(["never sent"], strict=False)
    with turn(bridge):
        answer = _raw(bridge).post("/chat/completions", json={
            "model": "m", "messages": [{"role": "robot", "content": "hi"}]})

    assert answer.status_code == 400
    assert answer.json()["error"]["param"] == "messages[0].role"
    assert bridge.llm.remaining == 1


def test_a_model_call_outside_a_turn_is_refused_not_left_waiting():
    _bridge, client, _ = scripted_bridge(["never sent"], strict=False)

    with pytest.raises(openai.ConflictError, match="no turn is running"):
        ask(client)


def test_a_request_after_the_script_ran_out_is_a_400_naming_scenario_and_turn():
    bridge, client, _ = scripted_bridge(["5"], scenario="adding")
    with turn(bridge, "What is 2 + 3?") as running:
        ask(client)
        with pytest.raises(openai.BadRequestError) as caught:
            ask(client)

    message = caught.value.body["message"]
    assert message.startswith("agentkit bridge: scenario `adding`, turn 1 (\"What is 2 + 3?\"): "
                              "ScriptExhaustedError: ScriptedLLM 'script' ran out of script: "
                              "call #2 has no scripted response")
    assert caught.value.body["code"] == "unanswerable_request"
    assert message.endswith(str(running.failure))  # the run fails with the same error


def test_a_request_the_cassette_lacks_is_a_400_naming_the_nearest_recorded_one(tmp_path: Path):
    recording = Bridge(RecordingLLM(ScriptedLLM(["5"]), tmp_path / "c.yaml", "once"))
    client, _ = openai_clients(recording)
    with turn(recording):
        ask(client)

    replay = Bridge(CassetteLLM(tmp_path / "c.yaml"), scenario="adding")
    client, _ = openai_clients(replay)
    with turn(replay, "What is 2 + 4?") as running, pytest.raises(openai.BadRequestError) as caught:
        ask(client, {"role": "user", "content": "What is 2 + 4?"})

    message = caught.value.body["message"]
    assert "scenario `adding`, turn 1 (\"What is 2 + 4?\"): CassetteMissError:" in message
    assert "nearest recorded: exchanges[0]" in message
    assert '"What is 2 + 3?" -> "What is 2 + 4?"' in message
    assert type(running.failure).__name__ == "CassetteMissError"


def test_a_scripted_rate_limit_is_a_429_the_agent_handles_and_does_not_fail_the_run():
    bridge, client, _ = scripted_bridge([errors.RateLimitError("slow down", retry_after=2.0),
                                         "5"])
    with turn(bridge) as running:
        with pytest.raises(openai.RateLimitError) as caught:
            ask(client)
        assert ask(client).choices[0].message.content == "5"

    assert caught.value.response.headers["retry-after"] == "2"
    assert caught.value.body["message"] == "slow down"
    assert running.failure is None


def test_a_scripted_timeout_times_the_client_out():
    bridge, client, _ = scripted_bridge([errors.APITimeoutError("too slow")])
    with turn(bridge), pytest.raises(openai.APITimeoutError):
        ask(client)


def test_a_failing_script_item_is_a_500_and_fails_the_run():
    def broken(messages, tools):
        raise KeyError("bug in the script")

    bridge, client, _ = scripted_bridge([broken], scenario="adding")
    with turn(bridge) as running, pytest.raises(openai.InternalServerError) as caught:
        ask(client)

    assert "agentkit bridge: scenario `adding`, turn 1" in caught.value.body["message"]
    assert caught.value.response.headers["x-should-retry"] == "false"
    assert isinstance(running.failure, KeyError)


def test_an_agent_in_another_process_waiting_for_a_turn_gets_a_503_not_a_hang(monkeypatch):
    monkeypatch.setattr("agentkit.bridge.wire_trace.TURN_WAIT", 0.01)
    _bridge, client, _ = scripted_bridge(["never sent"], strict=False, external=True)

    with pytest.raises(openai.InternalServerError) as caught:
        ask(client)

    assert caught.value.status_code == 503
    assert caught.value.body["message"] == "no turn of the scenario began within 0.01 s"


def test_a_stopped_bridge_answers_503():
    bridge, client, _ = scripted_bridge(["never sent"], strict=False, external=True)
    bridge.stop()

    with pytest.raises(openai.InternalServerError, match="is stopping"):
        ask(client)


# ----------------------------------------------------------------- replays
def _replayed(tmp_path: Path, latency: float) -> Bridge:
    """A bridge replaying a cassette of one question answered with ``latency`` seconds."""
    path = tmp_path / "c.yaml"
    recording = Bridge(RecordingLLM(ScriptedLLM(["5"], latency=latency), path, "once"))
    with turn(recording):
        ask(openai_clients(recording)[0])
    return Bridge(CassetteLLM(path))


def _loop_runs(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Every time a virtual-time event loop runs."""
    runs: list[object] = []
    real = VirtualTimeLoop.run_forever

    def counted(loop: VirtualTimeLoop) -> None:
        runs.append(loop)
        real(loop)

    monkeypatch.setattr(VirtualTimeLoop, "run_forever", counted)
    return runs


def test_a_sync_clients_replay_with_no_latency_takes_no_trip_through_the_event_loop(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    bridge = _replayed(tmp_path, latency=0.0)
    runs = _loop_runs(monkeypatch)
    with collect_events() as events, turn(bridge):
        assert ask(openai_clients(bridge)[0]).choices[0].message.content == "5"

    assert runs == []
    assert [type(e).__name__ for e in events] == [
        "AgentStepStartEvent", "LLMCallStartEvent", "LLMCallEndEvent", "AgentStepEndEvent"]


@pytest.mark.parametrize("client", ["sync", "async"])
def test_a_replayed_latency_is_waited_out_on_the_virtual_clock_from_either_client(
        tmp_path: Path, client: str):
    bridge = _replayed(tmp_path, latency=2.5)
    sync_client, async_client = openai_clients(bridge)

    async def ask_async() -> str | None:
        completion = await async_client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "What is 2 + 3?"}])
        return completion.choices[0].message.content

    with simulation(0), collect_events() as events, turn(bridge):
        answer = (ask(sync_client).choices[0].message.content if client == "sync"
                  else run(ask_async()))
        assert now() == 2.5

    assert answer == "5"
    (end,) = [e for e in events if isinstance(e, LLMCallEndEvent)]
    assert end.latency == 2.5


def test_the_events_of_a_run_do_not_hold_its_turn(tmp_path: Path):
    """A listener keeps the events; they do not keep the turn (whose context holds the
    listener): a finished run is freed as it goes, not left to the garbage collector."""
    bridge = _replayed(tmp_path, latency=0.0)
    gc.disable()
    try:
        with collect_events() as events, turn(bridge) as running:
            reply = _raw(bridge).post("/chat/completions", json={
                "model": "m", "messages": [{"role": "user", "content": "What is 2 + 3?"}]})
        kept = weakref.ref(running)
        del bridge, running

        assert reply.json()["choices"][0]["message"]["content"] == "5"
        assert len(events) == 4 and kept() is None
    finally:
        gc.enable()
