"""OpenAI backend: model metadata from the table of known models, and overrides."""

import pytest

from agentkit.agent import FunctionCallingAgentWorker
from agentkit.llms.openai import (
    DEFAULT_CONTEXT_WINDOW,
    DEFAULT_FUNCTION_CALLING,
    KNOWN_MODELS,
    OpenAI,
    lookup_model,
)
from agentkit.memory import ChatMemoryBuffer
from tests.fake_keys import fake_key

KEY = fake_key("metadata-test-key")


@pytest.mark.parametrize(("model", "context_window"), [
    ("gpt-4o", 128_000), ("gpt-4o-mini", 128_000), ("gpt-4.1", 1_047_576),
    ("gpt-4.1-nano", 1_047_576), ("gpt-4-turbo", 128_000), ("gpt-4", 8_192),
    ("gpt-3.5-turbo", 16_385), ("o1", 200_000), ("o3-mini", 200_000), ("o4-mini", 200_000),
])
def test_known_models_report_their_context_window(model, context_window):
    assert OpenAI(model, api_key=KEY).metadata.context_window == context_window


def test_metadata_names_the_model_and_is_a_chat_model():
    metadata = OpenAI("gpt-4o", api_key=KEY).metadata
    assert (metadata.model_name, metadata.is_chat_model) == ("gpt-4o", True)


@pytest.mark.parametrize(("model", "expected"), [
    ("gpt-4o-2024-08-06", "gpt-4o"), ("gpt-4o-mini-2024-07-18", "gpt-4o-mini"),
    ("gpt-4.1-mini-2025-04-14", "gpt-4.1-mini"), ("o3-mini-2025-01-31", "o3-mini"),
    ("gpt-4-0613", "gpt-4"), ("ft:gpt-4o-mini-2024-07-18:acme::abc123", "gpt-4o-mini"),
    ("openai/gpt-4o", "gpt-4o"), ("GPT-4o", "gpt-4o"),
])
def test_snapshots_fine_tunes_and_prefixed_names_find_their_base_model(model, expected):
    assert lookup_model(model) is KNOWN_MODELS[expected]


def test_function_calling_models_are_marked_so():
    assert OpenAI("gpt-4o-mini", api_key=KEY).metadata.is_function_calling_model is True


def test_models_without_tool_support_are_marked_so():
    assert OpenAI("o1-mini", api_key=KEY).metadata.is_function_calling_model is False


def test_an_unknown_model_gets_the_defaults():
    metadata = OpenAI("my-local-llama", api_key=KEY).metadata
    assert lookup_model("my-local-llama") is None
    assert (metadata.context_window, metadata.is_function_calling_model) == (
        DEFAULT_CONTEXT_WINDOW, DEFAULT_FUNCTION_CALLING)


def test_context_window_can_be_overridden():
    assert OpenAI("gpt-4o", api_key=KEY, context_window=32_000).metadata.context_window == 32_000


def test_function_calling_can_be_switched_off_for_a_model():
    llm = OpenAI("gpt-4o", api_key=KEY, is_function_calling_model=False)
    assert llm.metadata.is_function_calling_model is False


def test_an_agent_refuses_a_model_marked_without_function_calling():
    llm = OpenAI("local", base_url="http://localhost:1/v1", is_function_calling_model=False)
    with pytest.raises(ValueError, match="does not support function calling API"):
        FunctionCallingAgentWorker.from_tools([], llm=llm)


def test_num_output_is_max_tokens():
    assert OpenAI("gpt-4o", api_key=KEY, max_tokens=300).metadata.num_output == 300


def test_memory_sizes_itself_from_the_context_window():
    memory = ChatMemoryBuffer.from_defaults(llm=OpenAI("gpt-4", api_key=KEY))
    assert memory.token_limit == int(8_192 * 0.75)
