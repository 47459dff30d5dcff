"""Tool retrieval: ObjectRetriever and the keyword retriever shipped for tests."""

import pytest

from agentkit.core.sim import run_sync
from agentkit.tools import FunctionTool, KeywordObjectRetriever, ObjectRetriever


def _tool(name: str, description: str) -> FunctionTool:
    return FunctionTool.from_defaults(lambda: name, name=name, description=description)


WEATHER = _tool("get_weather", "Current weather for a city.")
STOCKS = _tool("stock_price", "Latest stock price for a ticker symbol.")
CALC = _tool("calculator", "Evaluate an arithmetic expression like a price times a quantity.")
TOOLS = [WEATHER, STOCKS, CALC]


def test_retrieve_returns_tools_sharing_a_word_with_the_query():
    assert KeywordObjectRetriever(TOOLS).retrieve("what is the weather in Paris") == [WEATHER]


def test_tool_names_count_as_words_with_underscores_as_spaces():
    assert KeywordObjectRetriever(TOOLS).retrieve("get me something") == [WEATHER]


def test_retrieve_ranks_by_the_number_of_distinct_matching_words():
    retriever = KeywordObjectRetriever(TOOLS, top_k=3)
    assert retriever.retrieve("stock price times quantity") == [CALC, STOCKS]


def test_ties_keep_the_given_order():
    retriever = KeywordObjectRetriever(TOOLS, top_k=3)
    assert retriever.retrieve("price") == [STOCKS, CALC]


def test_matching_ignores_case_and_punctuation():
    assert KeywordObjectRetriever(TOOLS).retrieve("WEATHER?!") == [WEATHER]


def test_retrieve_returns_at_most_top_k():
    assert len(KeywordObjectRetriever(TOOLS, top_k=1).retrieve("price weather")) == 1


def test_a_query_sharing_no_word_retrieves_nothing():
    assert KeywordObjectRetriever(TOOLS).retrieve("zebra") == []


def test_top_k_below_one_is_an_error():
    with pytest.raises(ValueError, match="top_k must be at least 1, got 0"):
        KeywordObjectRetriever(TOOLS, top_k=0)


def test_aretrieve_gives_the_same_tools():
    retriever = KeywordObjectRetriever(TOOLS)
    assert run_sync(retriever.aretrieve("weather")) == retriever.retrieve("weather")


def test_any_objects_can_be_retrieved_with_a_text_function():
    retriever = KeywordObjectRetriever(["apple pie", "banana bread"], text_fn=str)
    assert retriever.retrieve("banana") == ["banana bread"]


def test_objects_without_metadata_are_matched_on_their_string():
    assert KeywordObjectRetriever(["red car", "blue boat"]).retrieve("boat") == ["blue boat"]


def test_a_subclass_implements_retrieve_and_gets_aretrieve():
    class Everything(ObjectRetriever[str]):
        def retrieve(self, query: str) -> list[str]:
            return [query, query]

    assert run_sync(Everything().aretrieve("q")) == ["q", "q"]


def test_the_base_retriever_has_no_retrieve():
    with pytest.raises(NotImplementedError):
        ObjectRetriever().retrieve("q")
