"""The string-literal scanner shared by the LLMCompiler plan parser and the CoA chain parser, and
how the parsers read model text with Python's parser."""

import warnings
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from agentkit.agent._literals import string_literal_end
from agentkit.agent.coa.chain import parse_chain
from agentkit.agent.llm_compiler.plan import parse_plan
from agentkit.agent.react.output_parser import parse_action_input


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


@pytest.mark.slow  # property test at full size
@given(st.text(), st.text())
def test_the_end_of_any_python_string_literal_is_found(value, rest):
    literal = repr(value)
    # '' followed by its own quote is a triple quote in Python too: no longer this literal
    assume(not (value == "" and rest.startswith(literal[0])))

    assert string_literal_end(literal + rest, 0) == len(literal)


# Model text is read with Python's parser, which warns about some source (an invalid escape
# such as a regex's \d, `1if`); those warnings must neither reach the user's console nor turn
# into errors where warnings are errors (pytest's `filterwarnings = error`).
_TEXT_PYTHON_WARNS_ABOUT = {
    "react": (lambda: parse_action_input(r"{'pattern': '\d+'}"), {"pattern": "\\d+"}),
    "llm_compiler": (lambda: parse_plan("1. search('\\d+', 0x1for)\n2. join()").tasks[0].args,
                     None),
    "coa": (lambda: parse_chain(r"[FUNC search('\d+') = y1]").calls[0].args, ("\\d+",)),
}


def _outcome(parse: Callable[[], Any]) -> Any:
    try:
        return parse()
    except ValueError as exc:
        return f"ValueError: {exc}"


@pytest.mark.parametrize("parser", sorted(_TEXT_PYTHON_WARNS_ABOUT))
def test_model_text_python_warns_about_parses_the_same_where_warnings_are_errors(parser):
    parse, expected = _TEXT_PYTHON_WARNS_ABOUT[parser]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        quiet = _outcome(parse)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        strict = _outcome(parse)

    assert strict == quiet
    if expected is not None:
        assert quiet == expected


@pytest.mark.parametrize("parser", sorted(_TEXT_PYTHON_WARNS_ABOUT))
def test_model_text_python_warns_about_prints_no_warning(parser):
    parse, _ = _TEXT_PYTHON_WARNS_ABOUT[parser]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _outcome(parse)

    assert [str(w.message) for w in caught] == []
