"""ChatMemoryBuffer: a token-limited window over the chat history."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentkit.core.sim import run_sync
from agentkit.llms import ChatMessage, ImageBlock, TextBlock, ToolSelection
from agentkit.llms.mock import ScriptedLLM
from agentkit.memory import DEFAULT_TOKEN_LIMIT, ChatMemoryBuffer
from tests.fuzz import JSON, mutated

PNG = b"\x89PNG\r\n\x1a\n" + b"\x01" * 8


def words(n: int) -> str:
    """A text of ``n`` one-token words."""
    return " ".join(["w"] * n)


def user(n: int = 1) -> ChatMessage:
    return ChatMessage(role="user", content=words(n))


def assistant(n: int = 1) -> ChatMessage:
    return ChatMessage(role="assistant", content=words(n))


def call(tool_id: str) -> ChatMessage:
    """An assistant tool call with no text; it costs two tokens (``f {}``)."""
    return ChatMessage(role="assistant", content="",
                       additional_kwargs={"tool_calls": [ToolSelection(tool_id=tool_id, tool_name="f")]})


def result(tool_id: str, n: int = 1) -> ChatMessage:
    return ChatMessage(role="tool", content=words(n), additional_kwargs={"tool_call_id": tool_id})


def counting_tokenizer(calls: list[str]):
    def tokenize(text: str) -> list[str]:
        calls.append(text)
        return text.split()

    return tokenize


def memory(history, limit: int, **kwargs) -> ChatMemoryBuffer:
    return ChatMemoryBuffer.from_defaults(chat_history=history, token_limit=limit,
                                          tokenizer_fn=str.split, **kwargs)


# ---------------------------------------------------------------- construction


def test_token_limit_defaults_to_3000():
    assert ChatMemoryBuffer.from_defaults().token_limit == DEFAULT_TOKEN_LIMIT == 3000


def test_token_limit_defaults_to_three_quarters_of_the_llm_context_window():
    llm = ScriptedLLM([], context_window=10_000)
    assert ChatMemoryBuffer.from_defaults(llm=llm).token_limit == 7500


def test_an_explicit_token_limit_wins_over_the_llm():
    llm = ScriptedLLM([], context_window=10_000)
    assert ChatMemoryBuffer.from_defaults(llm=llm, token_limit=50).token_limit == 50


def test_unknown_kwargs_are_an_error():
    with pytest.raises(ValueError, match=r"Unexpected kwargs: \{'max_tokens': 5\}"):
        ChatMemoryBuffer.from_defaults(max_tokens=5)


@pytest.mark.parametrize("limit", [0, -5])
def test_a_token_limit_below_one_is_an_error(limit):
    with pytest.raises(ValueError, match=f"Token limit must be set and greater than 0, got {limit}."):
        ChatMemoryBuffer.from_defaults(token_limit=limit)


def test_chat_history_is_the_initial_history():
    history = [user(), assistant()]
    assert ChatMemoryBuffer.from_defaults(chat_history=history).get_all() == history


def test_the_default_tokenizer_needs_no_download():
    buffer = ChatMemoryBuffer.from_defaults(chat_history=[user(3)], token_limit=3)
    assert buffer.get() == [user(3)]


# ---------------------------------------------------------------- storage


def test_put_appends_a_message():
    buffer = memory([], 100)
    buffer.put(user())
    assert buffer.get_all() == [user()]


def test_aput_appends_a_message():
    buffer = memory([], 100)
    run_sync(buffer.aput(user()))
    assert buffer.get_all() == [user()]


def test_put_messages_appends_in_order():
    buffer = memory([user()], 100)
    buffer.put_messages([assistant(), user(2)])
    assert buffer.get_all() == [user(), assistant(), user(2)]


def test_set_replaces_the_history():
    buffer = memory([user(), assistant()], 100)
    buffer.set([user(5)])
    assert buffer.get_all() == [user(5)]


def test_reset_empties_the_history():
    buffer = memory([user(), assistant()], 100)
    buffer.reset()
    assert buffer.get_all() == []


def test_get_all_returns_a_copy():
    buffer = memory([user()], 100)
    buffer.get_all().append(assistant())
    assert buffer.get_all() == [user()]


def test_async_get_gives_the_same_window():
    buffer = memory([user(), assistant()], 100)
    assert run_sync(buffer.aget()) == buffer.get()


# ---------------------------------------------------------------- the window


def test_get_returns_everything_that_fits():
    history = [user(2), assistant(2), user(2)]
    assert memory(history, 6).get() == history


def test_get_returns_the_newest_messages_that_fit():
    history = [user(5), assistant(5), user(2), assistant(2)]
    assert memory(history, 8).get() == history[2:]


def test_get_returns_nothing_when_the_newest_message_alone_is_too_big():
    assert memory([user(1), user(9)], 8).get() == []


def test_initial_token_count_counts_against_the_limit():
    history = [user(3), assistant(3), user(3), assistant(3)]
    assert memory(history, 12).get(initial_token_count=6) == history[2:]


def test_initial_token_count_equal_to_the_limit_leaves_no_room():
    assert memory([user(1)], 5).get(initial_token_count=5) == []


def test_initial_token_count_over_the_limit_is_an_error_with_llamaindex_text():
    with pytest.raises(ValueError) as info:
        memory([user()], 10).get(initial_token_count=11)

    assert str(info.value) == "Initial token count exceeds token limit"


def test_initial_token_count_error_notes_both_numbers():
    with pytest.raises(ValueError) as info:
        memory([user()], 49).get(initial_token_count=50)

    assert info.value.__notes__ == ["initial_token_count=50, token_limit=49"]


def test_window_never_starts_with_an_assistant_message():
    history = [user(5), assistant(2), user(2)]
    assert memory(history, 4).get() == [user(2)]


def test_window_never_starts_with_a_tool_result():
    history = [user(5), call("c1"), result("c1", 2), user(2), assistant(1)]
    assert memory(history, 6).get() == [user(2), assistant(1)]


def test_window_never_splits_a_tool_call_from_its_results():
    history = [user(1), call("c1"), result("c1"), result("c1"), user(1)]
    assert memory(history, 3).get() == [history[-1]]


def test_window_keeps_a_tool_call_with_all_its_results_when_they_fit():
    history = [user(9), user(1), call("c1"), result("c1"), result("c1"), assistant(1)]
    assert memory(history, 8).get() == history[1:]


def test_tool_call_arguments_count_towards_the_tokens():
    heavy = ChatMessage(role="assistant", content="", additional_kwargs={"tool_calls": [
        ToolSelection(tool_id="c", tool_name="f", tool_kwargs={"text": words(20)})]})
    history = [user(1), heavy]
    assert memory(history, 10).get() == []


def test_a_system_message_may_start_the_window():
    history = [ChatMessage(role="system", content="rules"), user(1)]
    assert memory(history, 10).get() == history


def test_a_changed_message_is_recounted():
    message = user(1)
    buffer = memory([user(1), message], 3)
    buffer.get()
    message.content = words(3)
    assert buffer.get() == [message]


@given(st.lists(st.tuples(st.sampled_from(["user", "assistant", "tool"]), st.integers(0, 6)), max_size=12),
       st.integers(1, 30))
def test_window_is_the_newest_suffix_within_the_limit_and_never_starts_mid_turn(spec, limit):
    history = [ChatMessage(role=role, content=words(n)) for role, n in spec]
    window = memory(history, limit).get()
    assert window == history[len(history) - len(window):]
    assert sum(len(m.content.split()) for m in window) <= limit
    assert not window or window[0].role.value == "user"


# ---------------------------------------------------------------- linear trimming


def test_get_tokenizes_each_message_once_across_many_calls():
    calls: list[str] = []
    history = [user(1) if i % 2 == 0 else assistant(1) for i in range(2000)]
    buffer = ChatMemoryBuffer.from_defaults(chat_history=history, token_limit=3000,
                                            tokenizer_fn=counting_tokenizer(calls))
    for _ in range(50):
        buffer.get()
    assert len(calls) == 2000


def test_get_tokenizes_only_the_window_of_a_long_history():
    calls: list[str] = []
    history = [user(1) if i % 2 == 0 else assistant(1) for i in range(5000)]
    buffer = ChatMemoryBuffer.from_defaults(chat_history=history, token_limit=10,
                                            tokenizer_fn=counting_tokenizer(calls))
    buffer.get()
    assert len(calls) == 11


def test_put_after_get_tokenizes_only_the_new_message():
    calls: list[str] = []
    history = [user(1) for _ in range(100)]
    buffer = ChatMemoryBuffer.from_defaults(chat_history=history, token_limit=1000,
                                            tokenizer_fn=counting_tokenizer(calls))
    buffer.get()
    buffer.put(assistant(2))
    buffer.get()
    assert len(calls) == 101


# ---------------------------------------------------------------- serialisation


def _rich_history() -> list[ChatMessage]:
    return [
        ChatMessage(role="system", content="be nice"),
        ChatMessage(role="user", blocks=[TextBlock(text="what is this?"), ImageBlock(image=PNG)]),
        ChatMessage(role="assistant", content="", additional_kwargs={"tool_calls": [
            ToolSelection(tool_id="c1", tool_name="look", tool_kwargs={"zoom": 2})]}),
        ChatMessage(role="tool", content="a cat", additional_kwargs={"tool_call_id": "c1"}),
        ChatMessage(role="assistant", content="A cat."),
    ]


def test_to_dict_from_dict_round_trips_the_history_and_limit():
    buffer = ChatMemoryBuffer.from_defaults(chat_history=_rich_history(), token_limit=123)
    restored = ChatMemoryBuffer.from_dict(buffer.to_dict())
    assert (restored.get_all(), restored.token_limit) == (_rich_history(), 123)


def test_to_string_from_string_round_trips_the_history_and_limit():
    buffer = ChatMemoryBuffer.from_defaults(chat_history=_rich_history(), token_limit=123)
    restored = ChatMemoryBuffer.from_string(buffer.to_string())
    assert (restored.get_all(), restored.token_limit) == (_rich_history(), 123)


def test_round_trip_revives_tool_calls_as_tool_selections():
    buffer = ChatMemoryBuffer.from_defaults(chat_history=_rich_history())
    restored = ChatMemoryBuffer.from_string(buffer.to_string())
    assert restored.get_all()[2].tool_calls == [ToolSelection(tool_id="c1", tool_name="look",
                                                              tool_kwargs={"zoom": 2})]


def test_round_trip_keeps_image_bytes():
    buffer = ChatMemoryBuffer.from_defaults(chat_history=_rich_history())
    restored = ChatMemoryBuffer.from_string(buffer.to_string())
    assert restored.get_all()[1].blocks[1].image == PNG


def test_to_string_is_json():
    data = json.loads(ChatMemoryBuffer.from_defaults(chat_history=[user()]).to_string())
    assert (data["class_name"], data["token_limit"], len(data["chat_history"])) == (
        "ChatMemoryBuffer", 3000, 1)


def test_from_dict_of_another_class_is_an_error():
    with pytest.raises(ValueError, match="not a ChatMemoryBuffer dict: class_name='ChatSummaryMemoryBuffer'"):
        ChatMemoryBuffer.from_dict({"class_name": "ChatSummaryMemoryBuffer", "chat_history": []})


def test_from_string_of_invalid_json_is_an_error():
    with pytest.raises(ValueError, match=r"ChatMemoryBuffer\.from_string: not valid JSON"):
        ChatMemoryBuffer.from_string("{not json")


@pytest.mark.parametrize("text", ['[1, 2]', '"memory"', "null"])
def test_from_string_of_json_that_is_not_an_object_is_an_error(text):
    with pytest.raises(ValueError, match="ChatMemoryBuffer data must be a JSON object"):
        ChatMemoryBuffer.from_string(text)


def test_from_string_with_a_history_that_is_not_a_list_is_an_error():
    with pytest.raises(ValueError, match="`chat_history` must be a list of messages, got int"):
        ChatMemoryBuffer.from_string('{"chat_history": 5}')


def test_from_string_with_a_bad_message_names_its_index():
    text = json.dumps({"chat_history": [{"role": "user", "blocks": []}, {"role": "robot"}]})
    with pytest.raises(ValueError, match=r"chat_history\[1\] is not a valid message: .*role"):
        ChatMemoryBuffer.from_string(text)


_SAVED = ChatMemoryBuffer.from_defaults(chat_history=[
    user(), ChatMessage(role="assistant", content="", additional_kwargs={
        "tool_calls": [ToolSelection(tool_id="c1", tool_name="f", tool_kwargs={"a": 1})]}),
    ChatMessage(role="tool", content="2", additional_kwargs={"tool_call_id": "c1"})]).to_dict()


@pytest.mark.slow  # property test at full size
@settings(max_examples=200, deadline=None)
@given(mutated(_SAVED))
def test_any_mutated_saved_buffer_is_a_usable_buffer_or_a_value_error(data):
    try:
        buffer = ChatMemoryBuffer.from_string(json.dumps(data))
    except ValueError as exc:
        assert str(exc)
        return
    buffer.get()  # counts every message's tokens, tool calls included
    saved = buffer.to_string()  # JSON has no inf or NaN: they are saved as null
    assert ChatMemoryBuffer.from_string(saved).to_string() == saved


@pytest.mark.slow  # property test at full size
@given(st.dictionaries(st.sampled_from(["tool_calls", "tool_call_id"]), JSON | st.lists(JSON),
                       max_size=2))
def test_saved_additional_kwargs_load_with_tool_selections_as_tool_calls_or_are_a_value_error(
        kwargs):
    data = {"chat_history": [{"role": "assistant", "content": "", "additional_kwargs": kwargs}]}
    try:
        buffer = ChatMemoryBuffer.from_dict(data)
    except ValueError as exc:
        assert "chat_history[0]" in str(exc)
        return
    assert all(isinstance(call, ToolSelection) for call in buffer.get_all()[0].tool_calls)


def test_from_string_with_a_bad_token_limit_is_an_error():
    with pytest.raises(ValueError, match="Token limit must be set and greater than 0, got 'many'"):
        ChatMemoryBuffer.from_string('{"token_limit": "many", "chat_history": []}')


def test_set_with_the_old_history_as_prefix_tokenizes_only_the_new_messages():
    calls: list[str] = []

    def counting(text: str) -> list[str]:
        calls.append(text)
        return text.split()

    memory = ChatMemoryBuffer(token_limit=1000, tokenizer_fn=counting)
    memory.set([ChatMessage(role="user", content=f"old {i}") for i in range(5)])
    memory.get()
    calls.clear()

    memory.set([*memory.get_all(), ChatMessage(role="assistant", content="new one")])
    memory.get()

    assert calls == ["new one"]


def test_a_snapshot_restores_the_messages_after_puts_and_sets():
    # what AgentRunner.undo_step relies on; costs nothing however long the history
    memory = ChatMemoryBuffer.from_defaults(chat_history=[ChatMessage(role="user", content="a")])
    saved = memory.snapshot()
    memory.put(ChatMessage(role="assistant", content="b"))
    memory.set([ChatMessage(role="user", content="c")])
    memory.restore(saved)
    assert [m.content for m in memory.get_all()] == ["a"]


def test_put_messages_appends_them_all_as_put_does():
    memory = ChatMemoryBuffer.from_defaults(chat_history=[ChatMessage(content="a")])
    memory.get()  # counts cached
    memory.put_messages(iter([ChatMessage(content="b"), ChatMessage(content="c")]))

    assert [m.content for m in memory.get_all()] == ["a", "b", "c"]
    assert [m.content for m in memory.get()] == ["a", "b", "c"]


def test_put_messages_goes_through_a_subclass_s_put():
    class Logged(ChatMemoryBuffer):
        def __init__(self) -> None:
            super().__init__()
            self.put_ones: list[str | None] = []

        def put(self, message: ChatMessage) -> None:
            self.put_ones.append(message.content)
            super().put(message)

    memory = Logged()
    memory.put_messages([ChatMessage(content="a"), ChatMessage(content="b")])

    assert memory.put_ones == ["a", "b"] and len(memory.get_all()) == 2
