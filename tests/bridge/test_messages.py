"""Anthropic's Messages API on the bridge (``POST /v1/messages``), with the official
``anthropic`` SDK as the client -- in-process (an httpx2 transport calling the bridge) and over
127.0.0.1 -- : system, tool_use / tool_result blocks, tools, the stream of events, errors in
Anthropic's shape, and recording into (and replaying from) the same cassettes."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import yaml

from agentkit.bridge import Bridge, LoopbackServer, httpx2_clients
from agentkit.llms.mock import ScriptedLLM, ScriptedResponse, tool_call
from agentkit.recording import CassetteLLM, RecordingLLM

from .conftest import turn

if TYPE_CHECKING:
    import anthropic

# slow: importing the anthropic SDK costs 3.4 CPU-seconds in every xdist worker that collects
# this module, so the module imports it only when a test runs, and its tests run in the slow
# lane (xdist's loadgroup would keep them on one worker, but it cannot tag pytest 9's node ids)
pytestmark = [pytest.mark.agentkit_allow_loopback, pytest.mark.slow]


def sdk() -> Any:
    """The ``anthropic`` module, imported by the first test that needs it."""
    import anthropic
    return anthropic

ADD = {"name": "add", "description": "Add two integers.",
       "input_schema": {"type": "object", "properties": {"a": {"type": "integer"},
                                                         "b": {"type": "integer"}},
                        "required": ["a", "b"]}}
QUESTION = {"role": "user", "content": "What is 2 + 3?"}


def client_of(bridge: Bridge, **options: Any) -> anthropic.Anthropic:
    """An ``anthropic`` client whose requests the bridge answers in-process."""
    sync, _ = httpx2_clients(bridge)
    return sdk().Anthropic(base_url=bridge.base_url.removesuffix("/v1"), api_key="any",
                               max_retries=0, http_client=sync, **options)


def scripted(script: list[Any], **options: Any) -> tuple[Bridge, anthropic.Anthropic]:
    bridge = Bridge(ScriptedLLM(script, name="script", strict=False), **options)
    return bridge, client_of(bridge)


def _seen(bridge: Bridge, call: int = -1) -> list[tuple[str, str, Any]]:
    llm = bridge.llm
    assert isinstance(llm, ScriptedLLM)
    return [(m.role.value, m.content or "",
             [(c.tool_name, c.tool_kwargs) for c in m.tool_calls] if m.tool_calls
             else m.additional_kwargs.get("tool_call_id"))
            for m in llm.requests[call].messages]


def _answer_tool_use(client: anthropic.Anthropic, **options: Any) -> list[dict[str, Any]]:
    """The first request, and the tool's result sent back: the conversation so far."""
    reply = client.messages.create(model="m", max_tokens=100, messages=[QUESTION], tools=[ADD],
                                   **options)
    (use,) = [block for block in reply.content if block.type == "tool_use"]
    return [QUESTION, {"role": "assistant", "content": [b.model_dump(exclude_none=True)
                                                        for b in reply.content]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use.id,
                                          "content": "5"}]}]


# ----------------------------------------------------------------- answers
def test_a_text_reply_is_a_message_with_its_usage():
    bridge, client = scripted([ScriptedResponse(text="2 + 3 = 5", usage={
        "prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17})])
    with turn(bridge):
        message = client.messages.create(model="m", max_tokens=100, messages=[QUESTION])

    assert (message.type, message.role, message.stop_reason) == ("message", "assistant",
                                                                 "end_turn")
    assert [(b.type, b.text) for b in message.content] == [("text", "2 + 3 = 5")]
    assert (message.usage.input_tokens, message.usage.output_tokens) == (12, 5)


def test_system_tool_use_and_tool_result_blocks_reach_the_model_as_its_messages():
    bridge, client = scripted([tool_call("add", a=2, b=3), "2 + 3 = 5"])
    with turn(bridge):
        conversation = _answer_tool_use(client, system="Be brief.")
        final = client.messages.create(model="m", max_tokens=100, system=[
            {"type": "text", "text": "Be brief."}], messages=conversation, tools=[ADD])

    use = conversation[1]["content"][0]
    assert (use["type"], use["name"], use["input"]) == ("tool_use", "add", {"a": 2, "b": 3})
    assert final.content[0].text == "2 + 3 = 5"
    assert _seen(bridge) == [("system", "Be brief.", None), ("user", "What is 2 + 3?", None),
                             ("assistant", "", [("add", {"a": 2, "b": 3})]),
                             ("tool", "5", use["id"])]
    assert [t.metadata.name for t in bridge.llm.requests[0].tools] == ["add"]  # type: ignore[attr-defined]


def test_tool_choice_and_options_reach_the_model_in_its_terms():
    bridge, client = scripted(["5"])
    with turn(bridge):
        client.messages.create(model="m", max_tokens=64, messages=[QUESTION], tools=[ADD],
                               tool_choice={"type": "tool", "name": "add",
                                            "disable_parallel_tool_use": True},
                               stop_sequences=["END"], extra_body={"temperature": 0.0})

    request = bridge.llm.requests[0]  # type: ignore[attr-defined]
    assert request.tool_choice == {"type": "function", "function": {"name": "add"}}
    assert request.allow_parallel_tool_calls is False
    assert request.kwargs == {"max_tokens": 64, "temperature": 0.0, "stop": ["END"]}


def test_a_turn_of_tool_calls_is_traced_with_the_outputs_the_tool_results_carry():
    bridge, client = scripted([tool_call("add", a=2, b=3), "2 + 3 = 5"])
    with turn(bridge) as running:
        client.messages.create(model="m", max_tokens=100, messages=_answer_tool_use(client),
                               tools=[ADD])

    assert running.exchanges == 2 and running.answer() == "2 + 3 = 5"


# ----------------------------------------------------------------- streaming
def test_a_streamed_reply_sends_anthropics_events_in_order():
    bridge, client = scripted([ScriptedResponse(text="2 + 3 = 5", chunks=["2 + 3", " = 5"])])
    with turn(bridge):
        answer = client.with_raw_response.messages.create(
            model="m", max_tokens=100, messages=[QUESTION], stream=True)
        body = answer.http_response.read().decode()

    events = [(block.split("\n")[0].removeprefix("event: "),
               json.loads(block.split("\n")[1].removeprefix("data: ")))
              for block in body.strip().split("\n\n")]
    assert [name for name, _ in events] == [
        "message_start", "content_block_start", "content_block_delta", "content_block_delta",
        "content_block_stop", "message_delta", "message_stop"]
    assert all(data["type"] == name for name, data in events)
    assert [data["delta"]["text"] for name, data in events if name == "content_block_delta"] \
        == ["2 + 3", " = 5"]
    assert events[-2][1]["delta"]["stop_reason"] == "end_turn"


def test_a_streamed_tool_use_sends_input_json_deltas_the_sdk_reassembles():
    bridge, client = scripted([tool_call("add", a=2, b=3)])
    with turn(bridge), client.messages.stream(model="m", max_tokens=100, messages=[QUESTION],
                                              tools=[ADD]) as stream:
        kinds = [event.type for event in stream]
        final = stream.get_final_message()

    assert kinds.count("input_json") > 1  # the SDK's event per partial_json delta
    (use,) = final.content
    assert (use.type, use.name, use.input, final.stop_reason) == ("tool_use", "add",
                                                                  {"a": 2, "b": 3}, "tool_use")


# ----------------------------------------------------------------- malformed requests
@pytest.mark.parametrize(("body", "says"), [
    ({"model": "m", "messages": [QUESTION]}, "max_tokens: Field required"),
    ({"model": "m", "max_tokens": 0, "messages": [QUESTION]},
     "max_tokens: must be a positive integer, got 0"),
    ({"model": "m", "max_tokens": 10}, "messages: must be a non-empty array"),
    ({"max_tokens": 10, "messages": [QUESTION]}, "model: Field required"),
    ({"model": "m", "max_tokens": 10, "messages": [{"role": "system", "content": "x"}]},
     "messages.0.role: \"system\" is not one of user, assistant"),
    ({"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": [
        {"type": "tool_result", "content": "5"}]}]}, "messages.0.content.0.tool_use_id"),
    ({"model": "m", "max_tokens": 10, "messages": [{"role": "user", "content": [
        {"type": "tool_use", "id": "t", "name": "add", "input": {}}]}]},
     "messages.0.content.0: unsupported content block \"tool_use\""),
    ({"model": "m", "max_tokens": 10, "messages": [QUESTION], "tools": [{"name": "add"}]},
     "tools.0.input_schema: Field required"),
    ({"model": "m", "max_tokens": 10, "messages": [QUESTION],
      "tools": [{"type": "web_search_20250305", "name": "web_search"}]}, "client tools only"),
    ({"model": "m", "max_tokens": 10, "messages": [QUESTION], "tool_choice": {"type": "tool",
                                                                             "name": "mul"}},
     "tool_choice.name: \"mul\""),
    ({"model": "m", "max_tokens": 10, "messages": [QUESTION], "thinking": {}},
     "thinking: Extra inputs are not permitted"),
])
def test_a_malformed_request_is_a_400_in_anthropics_shape_saying_what_is_wrong(body, says):
    bridge, client = scripted(["never sent"])
    with turn(bridge), pytest.raises(sdk().BadRequestError) as caught:
        client.post("/v1/messages", cast_to=object, body=body)

    assert caught.value.status_code == 400
    assert caught.value.body["type"] == "error"
    assert caught.value.body["error"]["type"] == "invalid_request_error"
    assert says in caught.value.body["error"]["message"]
    assert bridge.llm.remaining == 1  # type: ignore[attr-defined]


def test_a_request_the_harness_cannot_answer_is_an_anthropic_error_naming_the_turn():
    bridge, client = scripted([], scenario="adding")
    with turn(bridge), pytest.raises(sdk().BadRequestError) as caught:
        client.messages.create(model="m", max_tokens=10, messages=[QUESTION])

    assert caught.value.body["error"]["type"] == "invalid_request_error"
    assert "scenario `adding`, turn 1" in caught.value.body["error"]["message"]


def test_the_async_client_streams_in_process_too():
    bridge, _ = scripted(["2 + 3 = 5"])
    _, async_http = httpx2_clients(bridge)
    client = sdk().AsyncAnthropic(base_url=bridge.base_url.removesuffix("/v1"),
                                      api_key="any", max_retries=0, http_client=async_http)

    async def ask() -> str:
        async with client.messages.stream(model="m", max_tokens=10,
                                          messages=[QUESTION]) as stream:
            return await stream.get_final_text()

    from agentkit.core.sim import run
    with turn(bridge):
        assert run(ask()) == "2 + 3 = 5"


# ----------------------------------------------------------------- over 127.0.0.1
@pytest.fixture
def served() -> Iterator[tuple[Bridge, LoopbackServer]]:
    """A bridge on a loopback port, as `agentkit serve` runs it, with its harness turn."""
    bridge = Bridge(ScriptedLLM([tool_call("add", a=2, b=3), "2 + 3 = 5"], name="script"),
                    external=True)
    with LoopbackServer() as server:
        server.attach(bridge)

        def harness() -> None:
            with bridge.wire.turn("What is 2 + 3?") as running:
                bridge.wire.wait_for_end(running)

        thread = threading.Thread(target=harness)
        thread.start()
        yield bridge, server
        bridge.stop()
        thread.join()


def test_an_anthropic_client_talks_to_the_bridge_on_a_loopback_port(served):
    bridge, server = served
    client = sdk().Anthropic(base_url=server.base_url.removesuffix("/v1"), api_key="any",
                                 max_retries=0)

    conversation = _answer_tool_use(client)
    with client.messages.stream(model="m", max_tokens=100, messages=conversation,
                                tools=[ADD]) as stream:
        answer = stream.get_final_text()

    assert answer == "2 + 3 = 5"
    assert bridge.wire.turns[0].exchanges == 2


# ----------------------------------------------------------------- cassettes
KEY = "-".join(("sk", "ant", "api03", "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2"))  # built: none tracked


@pytest.mark.parametrize("stream", [False, True])
def test_an_anthropic_agent_records_into_a_cassette_and_replays_without_its_key(tmp_path: Path,
                                                                               stream):
    cassette = tmp_path / "messages.yaml"
    live = ScriptedLLM([tool_call("add", a=2, b=3), "2 + 3 = 5"])
    answers = []
    for replay in (False, True):
        bridge = Bridge(CassetteLLM(cassette) if replay else RecordingLLM(live, cassette, "once"))
        client = client_of(bridge).with_options(api_key=KEY, default_headers={
            "authorization": f"Bearer {KEY}"})
        with turn(bridge):
            conversation = _answer_tool_use(client)
            if stream:
                with client.messages.stream(model="m", max_tokens=100, messages=conversation,
                                            tools=[ADD]) as events:
                    answers.append(events.get_final_text())
            else:
                answers.append(client.messages.create(model="m", max_tokens=100, tools=[ADD],
                                                      messages=conversation).content[0].text)

    assert answers == ["2 + 3 = 5", "2 + 3 = 5"]  # recorded, then replayed
    text = cassette.read_text()
    data = yaml.safe_load(text)
    assert data["format"] == 4
    assert [e["wire"] for e in data["exchanges"]] == ["anthropic_messages"] * 2
    assert [e["request"]["stream"] for e in data["exchanges"]] == [False, stream]
    assert KEY not in text and "x-api-key" not in text and "Bearer" not in text
