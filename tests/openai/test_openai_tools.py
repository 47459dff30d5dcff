"""OpenAI backend: tools, tool calls, tool messages and images on the wire."""

import pytest

from agentkit.core.sim import run_sync, simulation
from agentkit.llms.mock import ScriptedResponse, tool_call
from agentkit.llms.types import ChatMessage, ImageBlock, MessageRole, TextBlock, ToolSelection
from agentkit.tools import FunctionTool
from mocks.openai_server import FakeOpenAIServer, RawToolCall


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


TOOLS = [FunctionTool.from_defaults(add), FunctionTool.from_defaults(multiply)]


# ----------------------------------------------------------------- tools in the request
def test_tools_are_sent_in_openai_format(fake_openai):
    server = fake_openai(["no tools needed"])
    server.llm().chat_with_tools(TOOLS, user_msg="hi")
    assert server.requests[0]["tools"] == [t.metadata.to_openai_tool() for t in TOOLS]


@pytest.mark.parametrize("choice", ["auto", "none", "required"])
def test_string_tool_choices_are_sent_as_is(fake_openai, choice):
    server = fake_openai(["ok"])
    server.llm().chat_with_tools(TOOLS, user_msg="hi", tool_choice=choice)
    assert server.requests[0]["tool_choice"] == choice


def test_a_tool_name_as_tool_choice_forces_that_function(fake_openai):
    server = fake_openai([tool_call("multiply", a=2, b=3)])
    server.llm().chat_with_tools(TOOLS, user_msg="hi", tool_choice="multiply")
    assert server.requests[0]["tool_choice"] == {"type": "function",
                                                 "function": {"name": "multiply"}}


def test_a_tool_choice_naming_an_unoffered_tool_is_an_error_before_any_request(fake_openai):
    server = fake_openai([])
    with pytest.raises(ValueError, match="tool_choice names the tool 'divide', which is not "
                                         "among the offered tools: add, multiply"):
        server.llm().chat_with_tools(TOOLS, user_msg="hi", tool_choice="divide")
    assert server.calls == 0


@pytest.mark.parametrize("allow", [True, False])
def test_parallel_tool_calls_follows_allow_parallel_tool_calls(fake_openai, allow):
    server = fake_openai(["ok"])
    server.llm().chat_with_tools(TOOLS, user_msg="hi", allow_parallel_tool_calls=allow)
    assert server.requests[0]["parallel_tool_calls"] is allow


def test_without_tools_no_tool_fields_are_sent(fake_openai):
    server = fake_openai(["ok"])
    server.llm().chat([ChatMessage(content="hi")], tool_choice="auto")
    assert not {"tools", "tool_choice", "parallel_tool_calls"} & set(server.requests[0])


def test_an_empty_tool_list_sends_no_tool_fields(fake_openai):
    server = fake_openai(["ok"])
    server.llm().chat_with_tools([], user_msg="hi")
    assert not {"tools", "tool_choice", "parallel_tool_calls"} & set(server.requests[0])


# ----------------------------------------------------------------- tool calls in the response
def test_a_tool_call_comes_back_as_a_tool_selection(fake_openai):
    call = tool_call("add", a=2, b=3)
    server = fake_openai([call])
    response = server.llm().chat_with_tools(TOOLS, user_msg="2+3?")
    assert response.message.tool_calls == [call]
    assert response.additional_kwargs["finish_reason"] == "tool_calls"


def test_a_tool_call_reply_with_null_content_has_empty_text(fake_openai):
    server = fake_openai([tool_call("add", a=2, b=3)])
    response = server.llm().chat_with_tools(TOOLS, user_msg="2+3?")
    assert response.message.content == ""


@pytest.mark.slow  # the openai SDK end to end
def test_parallel_tool_calls_all_come_back_when_allowed(fake_openai):
    calls = [tool_call("add", a=1, b=2), tool_call("multiply", a=3, b=4)]
    server = fake_openai([calls])
    response = run_sync(server.llm().achat_with_tools(TOOLS, user_msg="both",
                                                      allow_parallel_tool_calls=True))
    assert response.message.tool_calls == calls


def test_only_the_first_of_parallel_calls_is_kept_when_not_allowed(fake_openai):
    calls = [tool_call("add", a=1, b=2), tool_call("multiply", a=3, b=4)]
    server = fake_openai([calls])
    response = server.llm().chat_with_tools(TOOLS, user_msg="both")
    assert response.message.tool_calls == calls[:1]


def test_text_and_tool_calls_come_back_together(fake_openai):
    call = tool_call("add", a=1, b=1)
    server = fake_openai([ScriptedResponse("Let me add.", tool_calls=[call])])
    message = server.llm().chat_with_tools(TOOLS, user_msg="1+1").message
    assert (message.content, message.tool_calls) == ("Let me add.", [call])


def test_get_tool_calls_from_response_returns_the_calls(fake_openai):
    call = tool_call("add", a=2, b=3)
    server = fake_openai([call])
    llm = server.llm()
    assert llm.get_tool_calls_from_response(llm.chat_with_tools(TOOLS, user_msg="x")) == [call]


def test_get_tool_calls_from_response_without_calls_is_an_error(fake_openai):
    server = fake_openai(["just text"])
    llm = server.llm()
    with pytest.raises(ValueError, match="Expected at least one tool call"):
        llm.get_tool_calls_from_response(llm.chat_with_tools(TOOLS, user_msg="x"))


def test_invalid_json_arguments_become_an_arguments_error_not_a_crash(fake_openai):
    server = fake_openai([RawToolCall("add", '{"a": 1, "b": ', id="call_bad")])
    [call] = server.llm().chat_with_tools(TOOLS, user_msg="x").message.tool_calls
    assert (call.tool_id, call.tool_name, call.tool_kwargs) == ("call_bad", "add", {})
    assert "not valid JSON" in call.arguments_error
    assert '{"a": 1, "b": ' in call.arguments_error


def test_arguments_that_are_not_a_json_object_become_an_arguments_error(fake_openai):
    server = fake_openai([RawToolCall("add", "[1, 2]")])
    [call] = server.llm().chat_with_tools(TOOLS, user_msg="x").message.tool_calls
    assert call.tool_kwargs == {}
    assert "a JSON list, not an object" in call.arguments_error


def test_empty_arguments_mean_no_arguments(fake_openai):
    server = fake_openai([RawToolCall("add", "")])
    [call] = server.llm().chat_with_tools(TOOLS, user_msg="x").message.tool_calls
    assert (call.tool_kwargs, call.arguments_error) == ({}, None)


def test_a_tool_call_without_an_id_gets_one_from_the_seeded_id_source():
    def generated_id() -> str:
        with simulation(seed=0), FakeOpenAIServer([RawToolCall("add", "{}", id="")]) as server:
            [call] = server.llm().chat_with_tools(TOOLS, user_msg="x").message.tool_calls
        return call.tool_id

    first, second = generated_id(), generated_id()
    assert first.startswith("call_") and first == second


def test_predict_and_call_runs_the_chosen_tool(fake_openai):
    server = fake_openai([tool_call("multiply", a=6, b=7)])
    assert str(server.llm().predict_and_call(TOOLS, user_msg="6*7")) == "42"


# ----------------------------------------------------------------- history on the wire
def _history_with_tool_call() -> list[ChatMessage]:
    call = ToolSelection(tool_id="call_1", tool_name="add", tool_kwargs={"a": 1, "b": 2})
    return [ChatMessage(role=MessageRole.USER, content="1+2?"),
            ChatMessage(role=MessageRole.ASSISTANT, content=None,
                        additional_kwargs={"tool_calls": [call]}),
            ChatMessage(role=MessageRole.TOOL, content="3",
                        additional_kwargs={"tool_call_id": "call_1", "name": "add"})]


def test_an_assistant_tool_call_message_is_sent_with_empty_string_content(fake_openai):
    server = fake_openai(["3"])
    server.llm().chat(_history_with_tool_call())
    assistant = server.requests[0]["messages"][1]
    assert assistant["content"] == ""
    assert assistant["tool_calls"] == [{"id": "call_1", "type": "function", "function": {
        "name": "add", "arguments": '{"a": 1, "b": 2}'}}]


def test_an_assistant_message_without_content_is_never_sent_as_null(fake_openai):
    server = fake_openai(["ok"])
    server.llm().chat([ChatMessage(role=MessageRole.USER, content="hi"),
                       ChatMessage(role=MessageRole.ASSISTANT, content=None),
                       ChatMessage(role=MessageRole.USER, content="again")])
    assert server.requests[0]["messages"][1] == {"role": "assistant", "content": ""}


def test_a_tool_result_is_sent_as_a_tool_message_with_its_call_id(fake_openai):
    server = fake_openai(["3"])
    server.llm().chat(_history_with_tool_call())
    assert server.requests[0]["messages"][2] == {"role": "tool", "tool_call_id": "call_1",
                                                 "content": "3"}


def test_a_tool_message_without_tool_call_id_is_an_error_naming_the_message(fake_openai):
    server = fake_openai([])
    history = _history_with_tool_call()
    history[2] = ChatMessage(role=MessageRole.TOOL, content="3")
    with pytest.raises(ValueError, match=r"message #2 \(role tool\) has no additional_kwargs"
                                         r"\['tool_call_id'\]"):
        server.llm().chat(history)
    assert server.calls == 0


def test_a_tool_call_with_unreadable_arguments_is_replayed_with_empty_arguments(fake_openai):
    server = fake_openai(["ok"])
    bad = ToolSelection(tool_id="call_9", tool_name="add", arguments_error="not JSON")
    server.llm().chat([ChatMessage(content="x"),
                       ChatMessage(role=MessageRole.ASSISTANT, content="",
                                   additional_kwargs={"tool_calls": [bad]})])
    assert server.requests[0]["messages"][1]["tool_calls"][0]["function"]["arguments"] == "{}"


# ----------------------------------------------------------------- images
def test_image_blocks_are_sent_as_image_url_parts_in_block_order(fake_openai):
    server = fake_openai(["a cat"])
    image = ImageBlock(image=b"\x89PNG\r\n fake", detail="low")
    server.llm().chat([ChatMessage(role=MessageRole.USER, blocks=[
        TextBlock(text="What is this?"), image,
        ImageBlock(url="https://example.com/cat.jpg")])])
    assert server.requests[0]["messages"][0]["content"] == [
        {"type": "text", "text": "What is this?"},
        {"type": "image_url", "image_url": {"url": image.as_url(), "detail": "low"}},
        {"type": "image_url", "image_url": {"url": "https://example.com/cat.jpg"}}]


def test_image_bytes_are_sent_as_a_base64_data_url(fake_openai):
    server = fake_openai(["ok"])
    server.llm().chat([ChatMessage(blocks=[ImageBlock(image=b"\x89PNG\r\n fake")])])
    [part] = server.requests[0]["messages"][0]["content"]
    assert part["image_url"]["url"].startswith("data:image/png;base64,")


def test_an_image_outside_a_user_message_is_an_error(fake_openai):
    server = fake_openai([])
    with pytest.raises(ValueError, match=r"message #0 \(system\) has an image block"):
        server.llm().chat([ChatMessage(role=MessageRole.SYSTEM, blocks=[
            ImageBlock(url="https://example.com/x.png")])])


# ----------------------------------------------------------------- the body as written
@pytest.mark.parametrize("stream", [False, True], ids=["chat", "stream"])
def test_messages_and_tools_reach_the_wire_as_the_sdks_own_transform_writes_them(fake_openai,
                                                                                  monkeypatch,
                                                                                  stream):
    """The backend hands the SDK its messages and tools as ``extra_body`` (the SDK's
    request transform walks each against its TypedDict unions and changes nothing in plain
    JSON data): the body's bytes are the ones ``create`` writes from the same keywords."""
    from agentkit.llms import openai as backend

    history = [ChatMessage(role=MessageRole.SYSTEM, content="Be brief."),
               ChatMessage(role=MessageRole.USER, blocks=[
                   TextBlock(text="What is 2 + 3?"),
                   ImageBlock(image=b"\x89PNG fake", image_mimetype="image/png")]),
               ChatMessage(role=MessageRole.ASSISTANT, content="", additional_kwargs={
                   "tool_calls": [ToolSelection(tool_id="call_1", tool_name="add",
                                                tool_kwargs={"a": 2, "b": 3})]}),
               ChatMessage(role=MessageRole.TOOL, content="5",
                           additional_kwargs={"tool_call_id": "call_1", "name": "add"})]

    def bodies(as_written: object) -> list[bytes]:
        monkeypatch.setattr(backend, "_as_written", as_written)
        server = fake_openai(["2 + 3 = 5"])
        llm = server.llm()
        if stream:
            for _ in llm.stream_chat_with_tools(TOOLS, chat_history=history, tool_choice="auto"):
                pass
        else:
            llm.chat_with_tools(TOOLS, chat_history=history, tool_choice="auto")
        return [request.content for request in server.http_requests]

    written = bodies(backend._as_written)
    assert written == bodies(lambda kwargs: kwargs)  # the SDK walking them itself
    assert b'"messages":[{"role":"system"' in written[0].replace(b" ", b"")
