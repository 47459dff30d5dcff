"""The default tokenizer: deterministic, offline, BPE-like counts."""

from hypothesis import given
from hypothesis import strategies as st

from agentkit.core.tokens import count_tokens, default_tokenizer


def test_short_words_are_one_token_each():
    assert default_tokenizer("a bb ccc dddd") == ["a", "bb", "ccc", "dddd"]


def test_long_words_count_one_token_per_four_characters():
    assert default_tokenizer("internationalization") == ["inte", "rnat", "iona", "liza", "tion"]


def test_punctuation_marks_are_tokens_of_their_own():
    assert default_tokenizer("Hello, world!") == ["Hell", "o", ",", "worl", "d", "!"]


def test_numbers_split_at_the_decimal_point():
    assert default_tokenizer("3.14") == ["3", ".", "14"]


def test_whitespace_and_empty_text_have_no_tokens():
    assert (count_tokens(""), count_tokens("  \n\t ")) == (0, 0)


@given(st.text())
def test_count_tokens_is_the_length_of_the_tokenization(text):
    assert count_tokens(text) == len(default_tokenizer(text))


@given(st.text(), st.text())
def test_tokens_never_span_whitespace(left, right):
    assert default_tokenizer(f"{left} {right}") == default_tokenizer(left) + default_tokenizer(right)
