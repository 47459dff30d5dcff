"""The string-literal scanner shared by the LLMCompiler plan parser and the CoA chain parser."""

from hypothesis import assume, given
from hypothesis import strategies as st

from agentkit.agent._literals import string_literal_end


def test_a_quoted_string_ends_just_past_its_closing_quote():
    assert string_literal_end('"a, b") rest', 0) == 6


def test_a_single_quoted_string_ends_at_its_own_quote_kind():
    assert string_literal_end("'say \"hi\"', 2", 0) == 10


def test_an_escaped_quote_does_not_close_the_string():
    assert string_literal_end(r'"a \" b" tail', 0) == 8


def test_a_triple_quoted_string_may_span_lines():
    assert string_literal_end('"""one\ntwo""")', 0) == 13


def test_an_unclosed_string_has_no_end():
    assert string_literal_end('"never closed', 0) is None


def test_a_one_quote_string_cannot_span_a_line_break():
    assert string_literal_end('"first\nsecond"', 0) is None


@given(st.text(), st.text())
def test_the_end_of_any_python_string_literal_is_found(value, rest):
    literal = repr(value)
    # '' followed by its own quote is a triple quote in Python too: no longer this literal
    assume(not (value == "" and rest.startswith(literal[0])))

    assert string_literal_end(literal + rest, 0) == len(literal)
