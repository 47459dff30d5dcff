"""Messages, blocks, tool selections, responses and usage."""

import base64

import pytest
from pydantic import ValidationError

from agentkit.llms.types import (
    ChatMessage,
    ChatResponse,
    CompletionResponse,
    ImageBlock,
    LLMMetadata,
    MessageRole,
    TextBlock,
    ToolOutput,
    ToolSelection,
    Usage,
    text_message,
)

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 8


# ---------------------------------------------------------------- ChatMessage


def test_message_content_becomes_one_text_block():
    message = ChatMessage(role="user", content="hi")
    assert message.blocks == [TextBlock(text="hi")]


def test_message_role_defaults_to_user():
    assert ChatMessage(content="hi").role is MessageRole.USER


@pytest.mark.parametrize("role", ["system", "user", "assistant", "tool"])
def test_message_accepts_each_role_by_name(role):
    assert ChatMessage(role=role, content="x").role == MessageRole(role)


def test_unknown_role_is_a_validation_error():
    with pytest.raises(ValidationError) as info:
        ChatMessage(role="robot", content="x")

    assert [error["loc"] for error in info.value.errors()] == [("role",)]


def test_role_prints_as_its_value():
    assert str(MessageRole.ASSISTANT) == "assistant"


def test_message_without_content_has_none_content_and_no_blocks():
    message = ChatMessage(role="assistant")
    assert (message.content, message.blocks) == (None, [])


def test_non_string_content_is_stored_as_text():
    assert ChatMessage(content=42).content == "42"


def test_content_is_the_text_of_the_text_blocks_joined_by_newlines():
    message = ChatMessage(blocks=[TextBlock(text="one"), ImageBlock(image=PNG), TextBlock(text="two")])
    assert message.content == "one\ntwo"


def test_message_with_only_an_image_has_none_content():
    assert ChatMessage(blocks=[ImageBlock(url="https://x/cat.png")]).content is None


def test_setting_content_replaces_text_and_keeps_images():
    image = ImageBlock(url="https://x/cat.png")
    message = ChatMessage(blocks=[TextBlock(text="old"), image])
    message.content = "new"
    assert message.blocks == [TextBlock(text="new"), image]


def test_content_and_different_blocks_together_are_an_error():
    with pytest.raises(ValidationError, match="give a ChatMessage either `content` or `blocks`, not both"):
        ChatMessage(content="a", blocks=[TextBlock(text="b")])


def test_content_matching_block_objects_is_accepted():
    image = ImageBlock(url="https://x/cat.png")
    message = ChatMessage(content="look", blocks=[TextBlock(text="look"), image])
    assert message.blocks == [TextBlock(text="look"), image]


def test_content_matching_block_dicts_is_accepted():
    blocks = [{"block_type": "text", "text": "look"}, {"block_type": "image", "url": "https://x/a.png"}]
    assert ChatMessage(content="look", blocks=blocks).content == "look"


def test_from_str_builds_a_message_of_the_given_role():
    message = ChatMessage.from_str("done", role="assistant")
    assert (message.role, message.content) == (MessageRole.ASSISTANT, "done")


def test_message_prints_as_role_and_content():
    assert str(ChatMessage(role="assistant", content="hi")) == "assistant: hi"


def test_tool_calls_live_in_additional_kwargs():
    call = ToolSelection(tool_id="c1", tool_name="add", tool_kwargs={"a": 1})
    message = ChatMessage(role="assistant", content="", additional_kwargs={"tool_calls": [call]})
    assert message.tool_calls == [call]


def test_tool_call_dicts_are_revived_as_tool_selections():
    message = ChatMessage(role="assistant", additional_kwargs={
        "tool_calls": [{"tool_id": "c1", "tool_name": "add", "tool_kwargs": {"a": 1}}]})
    assert message.tool_calls == [ToolSelection(tool_id="c1", tool_name="add", tool_kwargs={"a": 1})]


@pytest.mark.parametrize("calls", [3.5, True, "add", {"tool_id": "c1"}, [1], ["add"]])
def test_tool_calls_that_are_not_a_list_of_tool_calls_are_a_validation_error(calls):
    with pytest.raises(ValueError, match=r"additional_kwargs.tool_calls(\[0\])? must be"):
        ChatMessage(role="assistant", additional_kwargs={"tool_calls": calls})


def test_a_message_without_tool_calls_has_an_empty_tool_call_list():
    assert ChatMessage(content="hi").tool_calls == []


def test_a_tool_result_message_carries_the_tool_call_id():
    message = ChatMessage(role="tool", content="3", additional_kwargs={"tool_call_id": "c1"})
    assert message.additional_kwargs["tool_call_id"] == "c1"


def test_to_dict_of_a_text_message_has_role_and_content_only():
    assert ChatMessage(role="user", content="hi").to_dict() == {"role": "user", "content": "hi"}


def test_to_dict_keeps_tool_calls_as_plain_dicts():
    call = ToolSelection(tool_id="c1", tool_name="add", tool_kwargs={"a": 1})
    data = ChatMessage(role="assistant", additional_kwargs={"tool_calls": [call]}).to_dict()
    assert data["additional_kwargs"]["tool_calls"] == [
        {"tool_id": "c1", "tool_name": "add", "tool_kwargs": {"a": 1}, "arguments_error": None}]


def test_to_dict_of_an_image_message_keeps_its_blocks_with_base64_bytes():
    data = ChatMessage(blocks=[TextBlock(text="see"), ImageBlock(image=PNG)]).to_dict()
    assert data["blocks"][1]["image"] == base64.b64encode(PNG).decode()


def test_to_dict_round_trips_through_the_constructor():
    call = ToolSelection(tool_id="c1", tool_name="add", tool_kwargs={"a": 1})
    original = ChatMessage(role="assistant", blocks=[TextBlock(text="see"), ImageBlock(image=PNG)],
                           additional_kwargs={"tool_calls": [call]})
    assert ChatMessage(**original.to_dict()) == original


def test_json_dump_round_trips_through_model_validate():
    original = ChatMessage(role="tool", content="3", additional_kwargs={"tool_call_id": "c1"})
    assert ChatMessage.model_validate(original.model_dump(mode="json")) == original


# ---------------------------------------------------------------- ImageBlock


def test_image_block_needs_a_source():
    with pytest.raises(ValidationError,
                       match=r"an ImageBlock needs one of `image` \(bytes\), `path` or `url`"):
        ImageBlock()


def test_image_mimetype_is_guessed_from_the_bytes():
    assert ImageBlock(image=PNG).image_mimetype == "image/png"


def test_image_mimetype_is_guessed_from_the_url():
    assert ImageBlock(url="https://x/photo.jpg").image_mimetype == "image/jpeg"


def test_explicit_image_mimetype_is_kept():
    assert ImageBlock(image=PNG, image_mimetype="image/x-custom").image_mimetype == "image/x-custom"


def test_base64_string_image_is_decoded_to_bytes():
    assert ImageBlock(image=base64.b64encode(PNG).decode()).image == PNG


def test_invalid_base64_image_is_a_validation_error():
    with pytest.raises(ValidationError) as info:
        ImageBlock(image="not base64!!")

    assert [error["loc"] for error in info.value.errors()] == [("image",)]


def test_resolve_image_reads_a_path(tmp_path):
    path = tmp_path / "pic.png"
    path.write_bytes(PNG)
    block = ImageBlock(path=path)
    assert (block.resolve_image(), block.image_mimetype) == (PNG, "image/png")


def test_resolve_image_of_a_url_is_an_error_naming_it():
    with pytest.raises(ValueError, match=r"'https://x/a\.png' is a URL; agentkit does not download images"):
        ImageBlock(url="https://x/a.png").resolve_image()


def test_as_url_of_a_url_image_is_the_url():
    assert ImageBlock(url="https://x/a.png").as_url() == "https://x/a.png"


def test_as_url_of_image_bytes_is_a_base64_data_url():
    assert ImageBlock(image=PNG).as_url() == "data:image/png;base64," + base64.b64encode(PNG).decode()


# ---------------------------------------------------------------- the rest


def test_tool_selection_defaults_to_no_kwargs_and_no_arguments_error():
    call = ToolSelection(tool_id="c1", tool_name="f")
    assert (call.tool_kwargs, call.arguments_error) == ({}, None)


def test_usage_total_defaults_to_prompt_plus_completion():
    assert Usage(prompt_tokens=3, completion_tokens=4).total_tokens == 7


def test_usage_explicit_total_is_kept():
    assert Usage(prompt_tokens=3, completion_tokens=4, total_tokens=10).total_tokens == 10


def test_usages_add_field_by_field():
    total = Usage(prompt_tokens=1, completion_tokens=2) + Usage(prompt_tokens=10, completion_tokens=20)
    assert total == Usage(prompt_tokens=11, completion_tokens=22, total_tokens=33)


def test_chat_response_prints_as_its_message():
    assert str(ChatResponse(message=ChatMessage(role="assistant", content="hi"))) == "assistant: hi"


def test_chat_response_delta_and_usage_default_to_none():
    response = ChatResponse(message=ChatMessage(role="assistant", content="hi"))
    assert (response.delta, response.raw, response.usage) == (None, None, None)


def test_completion_response_prints_as_its_text():
    assert str(CompletionResponse(text="hello", delta="lo")) == "hello"


def test_llm_metadata_defaults():
    metadata = LLMMetadata()
    assert (metadata.context_window, metadata.is_chat_model, metadata.is_function_calling_model,
            metadata.model_name) == (3900, False, False, "unknown")


def test_tool_output_prints_as_its_content():
    assert str(ToolOutput(content="3", tool_name="add", raw_output=3)) == "3"


def test_tool_output_is_not_an_error_by_default():
    assert ToolOutput(content="3", tool_name="add").is_error is False


def _built_alike(made: ChatMessage, expected: ChatMessage) -> bool:
    """The same fields, in the same order, set alike (``model_dump(exclude_unset=True)``
    reads which), down to the text block."""
    return (list(made.__dict__.items()) == list(expected.__dict__.items())
            and made.model_fields_set == expected.model_fields_set
            and [b.model_fields_set for b in made.blocks]
            == [b.model_fields_set for b in expected.blocks]
            and made.model_dump(exclude_unset=True) == expected.model_dump(exclude_unset=True))


@pytest.mark.parametrize("role", list(MessageRole))
@pytest.mark.parametrize("additional_kwargs", [None, {"name": "n", "tool_call_id": "t"},
                                               {"tool_calls": [ToolSelection(
                                                   tool_id="c", tool_name="f")]}])
def test_text_message_is_the_message_content_makes(role, additional_kwargs):
    given = {} if additional_kwargs is None else {"additional_kwargs": additional_kwargs}

    assert _built_alike(text_message(role, "some text", additional_kwargs),
                        ChatMessage(role=role, content="some text", **given))
