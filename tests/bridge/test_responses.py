"""The OpenAI Responses API on the bridge (``POST /v1/responses``), with the ``openai`` SDK's
``client.responses`` as the client: input items, instructions, function tools and their
function_call / function_call_output items, ``previous_response_id`` chains kept by the bridge,
the official stream of events, 400s naming what is wrong, and recording into (and replaying
from) the same cassettes as chat completions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
import yaml

from agentkit.bridge import Bridge, BridgeTransport, openai_clients
from agentkit.llms.mock import ScriptedLLM, ScriptedResponse, tool_call
from agentkit.llms.types import MessageRole
from agentkit.recording import CassetteLLM, RecordingLLM

from .conftest import scripted_bridge, turn

ADD = {"type": "function", "name": "add", "description": "Add two integers.",
       "parameters": {"type": "object", "properties": {"a": {"type": "integer"},
                                                       "b": {"type": "integer"}},
                      "required": ["a", "b"]}}
QUESTION = "What is 2 + 3?"


def _raw(bridge: Bridge) -> httpx.Client:
    return httpx.Client(transport=BridgeTransport(bridge), base_url=bridge.base_url)


def _seen(bridge: Bridge, call: int = -1) -> list[tuple[str, str, Any]]:
    """What the model behind the bridge received in a call: (role, text, tool calls or id)."""
    llm = bridge.llm
    assert isinstance(llm, ScriptedLLM)
    return [(m.role.value, m.content or "",
             [(c.tool_name, c.tool_kwargs) for c in m.tool_calls] if m.tool_calls
             else m.additional_kwargs.get("tool_call_id"))
            for m in llm.requests[call].messages]


# ----------------------------------------------------------------- answers
def test_a_text_reply_is_a_response_with_a_message_item_and_its_usage():
    bridge, client, _ = scripted_bridge([ScriptedResponse(text="2 + 3 = 5", usage={
        "prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17})])
    with turn(bridge):
        response = client.responses.create(model="m", input=QUESTION)

    assert response.object == "response" and response.status == "completed"
    assert response.output_text == "2 + 3 = 5"
    assert [item.type for item in response.output] == ["message"]
    assert (response.usage.input_tokens, response.usage.output_tokens,
            response.usage.total_tokens) == (12, 5, 17)


def test_instructions_and_input_items_reach_the_model_as_its_messages():
    bridge, client, _ = scripted_bridge(["5"])
    with turn(bridge):
        client.responses.create(model="m", instructions="Be brief.", input=[
            {"role": "developer", "content": "Numbers only."},
            {"type": "message", "role": "user",
             "content": [{"type": "input_text", "text": QUESTION}]}])

    assert _seen(bridge) == [("system", "Be brief.", None), ("system", "Numbers only.", None),
                             ("user", QUESTION, None)]


def test_function_tools_come_back_as_function_call_items_and_their_outputs_reach_the_model():
    bridge, client, _ = scripted_bridge([[tool_call("add", a=2, b=3), tool_call("add", a=1,
                                                                                b=1)],
                                         "2 + 3 = 5"])
    with turn(bridge):
        first = client.responses.create(model="m", input=QUESTION, tools=[ADD])
        calls = [item for item in first.output if item.type == "function_call"]
        second = client.responses.create(model="m", tools=[ADD], input=[
            {"role": "user", "content": QUESTION},
            *[item.model_dump() for item in first.output],
            *[{"type": "function_call_output", "call_id": call.call_id, "output": out}
              for call, out in zip(calls, ["5", "2"], strict=True)]])

    assert [(c.name, json.loads(c.arguments)) for c in calls] == [
        ("add", {"a": 2, "b": 3}), ("add", {"a": 1, "b": 1})]
    assert second.output_text == "2 + 3 = 5"
    request = bridge.llm.requests[0]  # type: ignore[attr-defined]
    assert [t.metadata.name for t in request.tools] == ["add"]
    assert _seen(bridge) == [
        ("user", QUESTION, None),
        ("assistant", "", [("add", {"a": 2, "b": 3}), ("add", {"a": 1, "b": 1})]),
        ("tool", "5", calls[0].call_id), ("tool", "2", calls[1].call_id)]


def test_previous_response_id_continues_the_conversation_the_bridge_kept():
    bridge, client, _ = scripted_bridge([tool_call("add", a=2, b=3), "2 + 3 = 5", "Bye"])
    with turn(bridge):
        first = client.responses.create(model="m", instructions="Be brief.", input=QUESTION,
                                        tools=[ADD])
        (call,) = first.output
        second = client.responses.create(
            model="m", instructions="Be kind.", previous_response_id=first.id, tools=[ADD],
            input=[{"type": "function_call_output", "call_id": call.call_id, "output": "5"}])
        client.responses.create(model="m", previous_response_id=second.id, input="Thanks")

    assert second.previous_response_id == first.id
    # this request's instructions, not the first one's (OpenAI's rule), then the whole chain
    assert _seen(bridge, 1) == [("system", "Be kind.", None), ("user", QUESTION, None),
                                ("assistant", "", [("add", {"a": 2, "b": 3})]),
                                ("tool", "5", call.call_id)]
    assert _seen(bridge, 2)[2:] == [("tool", "5", call.call_id),
                                    ("assistant", "2 + 3 = 5", None), ("user", "Thanks", None)]


def test_an_unknown_previous_response_id_is_a_400_naming_it():
    bridge, client, _ = scripted_bridge(["never sent"], strict=False)
    with turn(bridge), pytest.raises(openai.BadRequestError) as caught:
        client.responses.create(model="m", previous_response_id="resp_404", input="hi")

    assert caught.value.body["param"] == "previous_response_id"
    assert "resp_404" in caught.value.body["message"]
    assert bridge.llm.remaining == 1  # type: ignore[attr-defined]


def test_the_trace_files_each_call_with_the_output_a_later_input_carries():
    bridge, client, _ = scripted_bridge([tool_call("add", a=2, b=3), "2 + 3 = 5"])
    with turn(bridge) as running:
        first = client.responses.create(model="m", input=QUESTION, tools=[ADD])
        client.responses.create(model="m", previous_response_id=first.id, tools=[ADD], input=[
            {"type": "function_call_output", "call_id": first.output[0].call_id,
             "output": "5"}])

    assert running.exchanges == 2 and running.answer() == "2 + 3 = 5"
    assert [m.role for m in running.memory] == [MessageRole.USER, MessageRole.ASSISTANT,
                                                MessageRole.TOOL, MessageRole.ASSISTANT]


# ----------------------------------------------------------------- streaming
def _events(bridge: Bridge, **body: Any) -> list[tuple[str, dict[str, Any]]]:
    """The SSE events of a streamed request, as (event: line, data)."""
    answer = _raw(bridge).post("/responses", json={"model": "m", "stream": True, **body})
    assert answer.headers["content-type"] == "text/event-stream"
    events = []
    for block in answer.text.strip().split("\n\n"):
        name, data = block.split("\n")
        events.append((name.removeprefix("event: "), json.loads(data.removeprefix("data: "))))
    return events


def test_a_streamed_text_reply_follows_the_official_event_sequence():
    bridge, _, _ = scripted_bridge([ScriptedResponse(text="2 + 3 = 5", chunks=["2 + 3", " = 5"])])
    with turn(bridge):
        events = _events(bridge, input=QUESTION)

    assert [name for name, _ in events] == [
        "response.created", "response.in_progress", "response.output_item.added",
        "response.content_part.added", "response.output_text.delta",
        "response.output_text.delta", "response.output_text.done",
        "response.content_part.done", "response.output_item.done", "response.completed"]
    assert all(data["type"] == name for name, data in events)
    assert [data["sequence_number"] for _, data in events] == list(range(len(events)))
    assert [data["delta"] for name, data in events if name.endswith("text.delta")] == [
        "2 + 3", " = 5"]
    assert events[0][1]["response"]["status"] == "in_progress"
    assert events[-1][1]["response"]["output"][0]["content"][0]["text"] == "2 + 3 = 5"


@pytest.mark.slow  # an SDK client through the bridge
def test_a_streamed_tool_call_sends_argument_deltas_the_sdk_reassembles():
    bridge, client, _ = scripted_bridge([tool_call("add", a=2, b=3)])
    with turn(bridge), client.responses.stream(model="m", input=QUESTION, tools=[ADD]) as stream:
        names = [event.type for event in stream]
        final = stream.get_final_response()

    assert names[2] == "response.output_item.added"
    assert names.count("response.function_call_arguments.delta") > 1
    assert names[-3:] == ["response.function_call_arguments.done", "response.output_item.done",
                          "response.completed"]
    (call,) = final.output
    assert (call.type, call.name, json.loads(call.arguments)) == ("function_call", "add",
                                                                   {"a": 2, "b": 3})


def test_the_async_client_streams_with_create_stream_true():
    bridge, _, async_client = scripted_bridge(["2 + 3 = 5"])

    async def ask() -> str:
        stream = await async_client.responses.create(model="m", input=QUESTION, stream=True)
        return "".join([e.delta async for e in stream if e.type == "response.output_text.delta"])

    from agentkit.core.sim import run
    with turn(bridge):
        assert run(ask()) == "2 + 3 = 5"


# ----------------------------------------------------------------- malformed requests
@pytest.mark.parametrize(("body", "param", "says"), [
    ({"input": "hi"}, "model", "model parameter"),
    ({"model": "m"}, "input", "input: missing"),
    ({"model": "m", "input": 5}, "input", "a string or an array"),
    ({"model": "m", "input": [{"type": "web_search_call"}]}, "input[0].type",
     "unsupported input item type \"web_search_call\""),
    ({"model": "m", "input": [{"role": "robot", "content": "hi"}]}, "input[0].role", "robot"),
    ({"model": "m", "input": [{"type": "function_call_output", "output": "5"}]},
     "input[0].call_id", "which call"),
    ({"model": "m", "input": [{"type": "function_call", "name": "add"}]}, "input[0]",
     "`call_id`, `name` and `arguments`"),
    ({"model": "m", "input": "hi", "tools": [{"type": "web_search"}]}, "tools[0]",
     "function tools only"),
    ({"model": "m", "input": "hi", "tools": [ADD], "tool_choice": {"type": "function",
                                                                  "name": "mul"}},
     "tool_choice", "'mul'"),
    ({"model": "m", "input": "hi", "stream": "yes"}, "stream", "true or false"),
    ({"model": "m", "input": "hi", "conversation": "conv_1"}, "conversation", "previous_response_id"),
    ({"model": "m", "input": "hi", "frobnicate": 1}, "frobnicate", "Unrecognized"),
])
def test_a_malformed_request_is_a_400_saying_what_is_wrong_and_costs_no_reply(body, param, says):
    bridge, _, _ = scripted_bridge(["never sent"], strict=False)
    with turn(bridge):
        answer = _raw(bridge).post("/responses", json=body)

    assert answer.status_code == 400
    error = answer.json()["error"]
    assert error["param"] == param and says in error["message"]
    assert bridge.llm.remaining == 1  # type: ignore[attr-defined]


def test_a_body_that_is_not_json_is_a_400():
    bridge, _, _ = scripted_bridge([], strict=False)
    with turn(bridge):
        answer = _raw(bridge).post("/responses", content=b"{not json")

    assert answer.status_code == 400 and "not valid JSON" in answer.json()["error"]["message"]


# ----------------------------------------------------------------- cassettes
KEY = "-".join(("sk", "live", "9f8e7d6c5b4a39281706f5e4"))  # built: no key-shaped text tracked


def _record_and_replay(tmp_path: Path, stream: bool) -> tuple[str, list[str]]:
    cassette = tmp_path / "responses.yaml"
    live = ScriptedLLM([tool_call("add", a=2, b=3), "2 + 3 = 5"])
    answers = []
    for replay in (False, True):
        bridge = Bridge(CassetteLLM(cassette) if replay else RecordingLLM(live, cassette, "once"))
        client, _ = openai_clients(bridge, api_key=KEY, default_headers={
            "x-api-key": KEY, "authorization": f"Bearer {KEY}"})
        with turn(bridge):
            first = client.responses.create(model="m", input=QUESTION, tools=[ADD],
                                            stream=False)
            options: dict[str, Any] = {"previous_response_id": first.id, "tools": [ADD],
                                       "input": [{"type": "function_call_output",
                                                  "call_id": first.output[0].call_id,
                                                  "output": "5"}]}
            if stream:
                with client.responses.stream(model="m", **options) as events:
                    answers.append(events.get_final_response().output_text)
            else:
                answers.append(client.responses.create(model="m", **options).output_text)
    return cassette.read_text(), answers


@pytest.mark.parametrize("stream", [False, True])
def test_a_responses_agent_records_into_a_cassette_and_replays_from_it(tmp_path, stream):
    text, answers = _record_and_replay(tmp_path, stream)

    assert answers == ["2 + 3 = 5", "2 + 3 = 5"]  # recorded, then replayed
    data = yaml.safe_load(text)
    assert data["format"] == 4
    assert [e["wire"] for e in data["exchanges"]] == ["openai_responses"] * 2
    assert [e["request"]["stream"] for e in data["exchanges"]] == [False, stream]


def test_the_agents_api_key_and_auth_headers_never_reach_the_cassette(tmp_path):
    text, _ = _record_and_replay(tmp_path, True)

    assert KEY not in text and "Bearer" not in text and "authorization" not in text.lower()
