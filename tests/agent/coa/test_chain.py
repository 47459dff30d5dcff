"""Reading Chain-of-Abstraction chains (agentkit.agent.coa.chain): calls, arguments,
placeholders, levels, problems, and filling outputs back into the text."""

import pytest

from agentkit.agent.coa import (
    ChainParseError,
    Ref,
    format_call,
    parse_chain,
    replace_placeholders,
)


def only_call(text: str):
    chain = parse_chain(text).check()
    (call,) = chain.calls
    return call


# ================================================================ calls and arguments
def test_a_call_has_its_name_arguments_and_output_placeholder():
    call = only_call("Sally has [FUNC add(3, 2) = y1] apples.")

    assert (call.index, call.name, call.args, call.output) == (1, "add", (3, 2), "y1")


def test_calls_are_numbered_in_text_order():
    chain = parse_chain("[FUNC a(1) = y1] then [FUNC b(2) = y2] then [FUNC c(3) = y3]")

    assert [(c.index, c.name) for c in chain.calls] == [(1, "a"), (2, "b"), (3, "c")]


def test_text_without_a_func_marker_has_no_calls():
    assert parse_chain("Paris is the capital of France.").calls == ()


def test_func_not_followed_by_whitespace_is_prose():
    assert parse_chain("[FUNCTION add(1, 2) = y1] and [FUNC] and [FUNC(1) = y2]").calls == ()


def test_a_comma_inside_a_string_argument_is_kept():
    assert only_call('[FUNC search("Paris, France", 3) = y1]').args == ("Paris, France", 3)


def test_a_list_argument_keeps_its_commas():
    assert only_call("[FUNC total([1, 2, 3], 4) = y1]").args == ([1, 2, 3], 4)


def test_an_object_argument_is_read_as_a_dict():
    assert only_call('[FUNC book({"city": "Rome", "nights": 2}) = y1]').args == (
        {"city": "Rome", "nights": 2},)


def test_json_words_true_false_null_are_literals():
    assert only_call("[FUNC f(true, false, null, True, None) = y1]").args == (
        True, False, None, True, None)


def test_negative_and_float_numbers_are_literals():
    assert only_call("[FUNC f(-3, 2.5, +1, 1e3) = y1]").args == (-3, 2.5, 1, 1000.0)


def test_keyword_arguments_are_read_by_name():
    call = only_call('[FUNC weather(city="Paris", days=3) = y1]')

    assert (call.args, dict(call.kwargs)) == ((), {"city": "Paris", "days": 3})


def test_an_empty_argument_list_is_no_arguments():
    assert only_call("[FUNC now() = y1]").args == ()


def test_whitespace_around_the_parts_of_a_call_is_allowed():
    call = only_call("[FUNC  add (1,\n 2)  =  y1 ]")

    assert (call.name, call.args, call.output) == ("add", (1, 2), "y1")


def test_a_call_spans_its_text_and_knows_its_line_and_column():
    text = "First line.\nThen [FUNC add(1, 2) = y1] here."
    call = only_call(text)

    assert (call.source, call.line, call.column) == ("[FUNC add(1, 2) = y1]", 2, 6)
    assert text[call.start:call.end] == call.source


def test_lines_and_columns_count_every_kind_of_line_break():
    chain = parse_chain("a\r\n[FUNC f(1) = y1]\rb [FUNC g(y1) = y2]\n\n  [FUNC h(y2) = y3]")

    assert [(c.line, c.column) for c in chain.calls] == [(2, 1), (3, 3), (5, 3)]


class _CountingPattern:
    """A compiled pattern that counts the characters its searches are given to scan."""

    def __init__(self, pattern):
        self.pattern, self.scanned = pattern, 0

    def _count(self, text, pos=0, endpos=None):
        self.scanned += min(len(text) if endpos is None else endpos, len(text)) - pos

    def finditer(self, text, *span):
        self._count(text, *span)
        return self.pattern.finditer(text, *span)

    def findall(self, text, *span):
        self._count(text, *span)
        return self.pattern.findall(text, *span)

    def search(self, text, *span):
        self._count(text, *span)
        return self.pattern.search(text, *span)


def test_line_breaks_are_scanned_once_per_chain_not_once_per_call(monkeypatch):
    from agentkit.agent.coa import chain as chain_module

    newline = _CountingPattern(chain_module._NEWLINE)
    monkeypatch.setattr(chain_module, "_NEWLINE", newline)
    text = "[FUNC f(1) = y1] " * 2000  # a probe found 10,000 calls taking 8 s (quadratic)

    parse_chain(text)

    assert newline.scanned <= 2 * len(text)


def test_a_closing_bracket_inside_a_string_does_not_end_the_call():
    assert only_call('[FUNC echo("a ] b) c") = y1]').args == ("a ] b) c",)


# ================================================================ placeholders
def test_a_bare_placeholder_is_a_reference_to_the_call_defining_it():
    chain = parse_chain("[FUNC add(3, 2) = y1] [FUNC multiply(y1, 3) = y2]").check()

    assert chain.call(2).args == (Ref("y1"), 3)
    assert chain.call(2).inputs == ("y1",)


def test_a_quoted_placeholder_is_a_reference_too():
    chain = parse_chain("[FUNC add(3, 2) = y1] [FUNC multiply(\"y1\", 'y1') = y2]").check()

    assert chain.call(2).args == (Ref("y1"), Ref("y1"))
    assert chain.call(2).inputs == ("y1",)


@pytest.mark.parametrize("written", ['"y1" ""', "'y' '1'", '"""y1"""', r'"y\x31"'])
def test_a_string_that_is_not_a_placeholder_quoted_as_written_is_text_not_a_reference(written):
    # Found by the chain property test: "y1""""""" (implicit concatenation) was read as the
    # reference y1, spanning the whole concatenation.
    chain = parse_chain(f"[FUNC add(1, 2) = y1] then [FUNC show({written}) = y2]")

    assert chain.call(2).args == ("y1",)
    assert chain.call(2).inputs == () and chain.call(2).ref_spans == ()


def test_placeholders_inside_lists_and_objects_are_references():
    chain = parse_chain('[FUNC a(1) = y1] [FUNC b(2) = y2] '
                        '[FUNC total([y1, "y2", 7], {"k": y1}) = y3]').check()

    assert chain.call(3).args == ([Ref("y1"), Ref("y2"), 7], {"k": Ref("y1")})
    assert chain.call(3).inputs == ("y1", "y2")


def test_a_placeholder_inside_a_longer_string_is_text():
    chain = parse_chain('[FUNC capital("France") = y1] [FUNC search("weather in y1") = y2]')

    assert chain.check().call(2).args == ("weather in y1",)
    assert chain.call(2).inputs == ()


def test_y1_is_not_mistaken_for_y10():
    chain = parse_chain(" ".join(f"[FUNC f({n}) = y{n}]" for n in range(1, 11))
                        + ' [FUNC g(y1, "y10") = y11]').check()

    assert chain.call(11).args == (Ref("y1"), Ref("y10"))


def test_an_output_may_be_used_before_the_call_defining_it_in_the_text():
    chain = parse_chain("[FUNC double(y2) = y1] [FUNC seed(3) = y2]").check()

    assert chain.levels == ((2,), (1,))


def test_arguments_with_placeholders_get_the_values():
    call = parse_chain('[FUNC a(1) = y1] [FUNC f(y1, [y1, 2], k={"v": "y1"}) = y2]').call(2)

    assert call.arguments({"y1": 5}) == ([5, [5, 2]], {"k": {"v": 5}})


# ================================================================ levels
def test_independent_calls_share_the_first_level():
    chain = parse_chain(" ".join(f'[FUNC lookup("{c}") = y{n}]'
                                 for n, c in enumerate("abcd", 1))).check()

    assert chain.levels == ((1, 2, 3, 4),)


def test_a_call_runs_one_level_after_the_highest_level_it_reads_from():
    chain = parse_chain("[FUNC a(1) = y1] [FUNC b(2) = y2] [FUNC c(y1) = y3] "
                        "[FUNC d(y3, y2) = y4]").check()

    assert chain.levels == ((1, 2), (3,), (4,))


def test_the_chain_summary_lists_calls_and_levels_by_placeholder():
    summary = parse_chain("[FUNC add(3, 2) = y1] and [FUNC multiply(y1, 3) = y2]").to_dict()

    assert summary == {
        "calls": [{"func": 1, "source": "[FUNC add(3, 2) = y1]", "output": "y1", "inputs": [],
                   "level": 0},
                  {"func": 2, "source": "[FUNC multiply(y1, 3) = y2]", "output": "y2",
                   "inputs": ["y1"], "level": 1}],
        "levels": [["y1"], ["y2"]]}


# ================================================================ problems
def problem_of(text: str, index: int = 1) -> str:
    error = parse_chain(text).call(index).error
    assert error is not None
    return error


def test_a_repeated_placeholder_is_a_problem_of_the_second_definition():
    chain = parse_chain("[FUNC a(1) = y1] [FUNC b(2) = y1] [FUNC c(y1) = y2]")

    assert chain.call(1).error is None
    assert chain.call(2).error == ("FUNC #2 at line 1, column 18 (`[FUNC b(2) = y1]`): "
                                   "placeholder y1 is already defined by FUNC #1")
    assert chain.call(3).error is None and chain.defining("y1") is chain.call(1)


def test_an_undefined_placeholder_is_named():
    assert problem_of("[FUNC a(1) = y1] [FUNC b(y1, y3) = y2]", 2) == (
        "FUNC #2 at line 1, column 18 (`[FUNC b(y1, y3) = y2]`): input y3 is not defined by "
        "any FUNC")


def test_a_quoted_undefined_placeholder_is_a_problem_too():
    assert problem_of('[FUNC b("y7") = y2]').endswith("input y7 is not defined by any FUNC")


def test_a_bare_word_that_is_no_placeholder_asks_for_quotes():
    assert problem_of("[FUNC capital(France) = y1]").endswith(
        '`France` is neither a literal nor a placeholder defined by a FUNC (quote strings: '
        '"France")')


def test_a_cycle_names_its_path_on_every_call_in_it():
    chain = parse_chain("[FUNC f(y2) = y1] [FUNC g(y1) = y2] [FUNC h(y2) = y3]")

    assert chain.call(1).error == ("FUNC #1 at line 1, column 1 (`[FUNC f(y2) = y1]`) is part "
                                   "of a dependency cycle: y1 -> y2 -> y1 (each needs the next)")
    assert chain.call(2).error is not None and "y2 -> y1 -> y2" in chain.call(2).error
    assert chain.call(3).error is None  # it only reads from the cycle: it fails at run time


def test_calls_in_or_behind_a_cycle_form_the_last_level():
    chain = parse_chain("[FUNC f(y2) = y1] [FUNC g(y1) = y2] [FUNC h(y2) = y3] [FUNC k(1) = y4]")

    assert chain.levels == ((4,), (1, 2, 3))


def test_a_call_reading_its_own_output_is_a_cycle():
    assert problem_of("[FUNC add(y1, 1) = y1]").endswith(
        "is part of a dependency cycle: y1 -> y1 (each needs the next)")


def test_an_unparseable_argument_list_is_named():
    assert problem_of("[FUNC add(1,, 2) = y1]") == (
        "FUNC #1 at line 1, column 1 (`[FUNC add(1,, 2) = y1]`): cannot parse the arguments: "
        "invalid syntax")


def test_an_expression_argument_is_not_a_literal():
    assert problem_of("[FUNC add(1 + 2, 3) = y1]").endswith(
        "argument 1 `1 + 2` is not a literal (write the value, or a placeholder defined by "
        "another FUNC)")


def test_a_call_as_an_argument_is_not_a_literal():
    assert "argument `x` `g(1)` is not a literal" in problem_of("[FUNC f(x=g(1)) = y1]")


def test_an_unclosed_string_is_named_with_its_column():
    assert problem_of("[FUNC search(Sally's apples) = y1]").endswith(
        "the string opened at column 19 is not closed")


def test_an_unclosed_argument_list_is_named():
    assert problem_of("Start [FUNC add(1, 2 and more\nnext line").endswith(
        "the argument list is not closed (no matching `)`)")


def test_a_missing_function_name_is_named():
    assert problem_of("[FUNC (1, 2) = y1]").endswith("expected a function name after `[FUNC`")


def test_a_missing_parenthesis_is_named():
    assert problem_of("[FUNC add 1, 2 = y1]").endswith(
        "expected `(` after the function name `add`")


def test_a_missing_output_placeholder_is_named():
    assert problem_of("[FUNC add(1, 2)] more").endswith(
        "expected `= <placeholder>]` after the argument list")


def test_a_number_as_output_placeholder_is_named():
    assert problem_of("[FUNC add(1, 2) = 3]").endswith(
        "expected the output placeholder (a name like y1) after `=`")


def test_a_missing_closing_bracket_is_named():
    assert problem_of("[FUNC add(1, 2) = y1 and so on").endswith(
        "expected `]` after the output placeholder `y1`")


def test_a_mismatched_bracket_is_named():
    assert problem_of("[FUNC f([1, 2) = y1]").endswith(
        "`)` at column 14 does not close the bracket before it (expected `]`)")


def test_brackets_nested_too_deep_are_a_problem_not_a_crash():
    assert problem_of("[FUNC f(" + "[" * 60 + "]" * 60 + ") = y1]").endswith(
        "the arguments nest brackets more than 50 deep")


def test_star_arguments_are_not_literals():
    assert "is not a literal" in problem_of("[FUNC f(*xs) = y1]")
    assert problem_of("[FUNC f(**kw) = y1]").endswith("`**` arguments are not literals")


def test_a_bytes_literal_is_named_as_the_wrong_kind():
    assert problem_of("[FUNC f(b'x') = y1]").endswith(
        "argument 1 is a bytes literal; use a string, number, boolean, null, list or object")


def test_an_unreadable_call_that_still_says_its_placeholder_defines_it():
    chain = parse_chain("[FUNC add(1,, 2) = y1] and [FUNC multiply(y1, 3) = y2]")

    assert chain.call(1).output == "y1"
    assert chain.call(2).error is None and chain.call(2).inputs == ("y1",)


def test_an_unreadable_call_ends_at_the_end_of_its_line_and_the_next_call_is_read():
    chain = parse_chain("[FUNC add(1, 2\n[FUNC ok(1) = y1]")

    assert chain.call(1).source == "[FUNC add(1, 2"
    assert chain.call(2).error is None and chain.call(2).args == (1,)


def test_check_raises_a_value_error_listing_every_problem():
    chain = parse_chain("[FUNC a(1,,) = y1] [FUNC b(y9) = y2]")

    with pytest.raises(ChainParseError) as info:
        chain.check()

    assert isinstance(info.value, ValueError)
    assert info.value.problems == chain.problems and len(chain.problems) == 2
    assert str(info.value).startswith("FUNC #1 at line 1, column 1") and (
        "(and 1 more problem: FUNC #2 at line 1, column 20" in str(info.value))


# ================================================================ filling in outputs
def test_fill_writes_each_output_in_quotes_where_its_placeholder_stands():
    chain = parse_chain('Sally has [FUNC add(3, 2) = y1] apples, then [FUNC multiply("y1", 3) '
                        "= y2] apples: y2 in all.")

    assert chain.fill({1: "5", 2: "15"}) == (
        'Sally has [FUNC add(3, 2) = "5"] apples, then [FUNC multiply("5", 3) = "15"] apples: '
        '"15" in all.')


def test_fill_never_touches_a_longer_placeholder():
    text = " ".join(f"[FUNC f({n}) = y{n}]" for n in range(1, 13)) + " y1 y10 y11 y12"
    outputs = {n: f"v{n}" for n in range(1, 13)}

    filled = parse_chain(text).fill(outputs)

    assert filled.endswith('"v1" "v10" "v11" "v12"')
    assert '[FUNC f(1) = "v1"] ' in filled and '[FUNC f(10) = "v10"]' in filled


def test_fill_leaves_a_placeholder_inside_a_string_argument_alone():
    chain = parse_chain('[FUNC a(1) = y1] [FUNC s("about y1") = y2]')

    assert chain.fill({1: "A", 2: "B"}) == '[FUNC a(1) = "A"] [FUNC s("about y1") = "B"]'


def test_fill_appends_the_output_of_a_call_without_a_placeholder():
    chain = parse_chain("[FUNC add(1, 2)] done")

    assert chain.fill({1: "Error: x"}) == '[FUNC add(1, 2)] = "Error: x" done'


def test_fill_uses_the_first_definition_of_a_repeated_placeholder_in_prose():
    chain = parse_chain("[FUNC a(1) = y1] [FUNC b(2) = y1] so y1")

    assert chain.fill({1: "one", 2: "Error: repeated"}) == (
        '[FUNC a(1) = "one"] [FUNC b(2) = "Error: repeated"] so "one"')


def test_replace_placeholders_matches_whole_tokens_bare_or_quoted():
    values = {"y1": "5"}

    assert replace_placeholders("y1 \"y1\" 'y1' y10 xy1 y1_ y1.", values) == (
        '"5" "5" "5" y10 xy1 y1_ "5".')


def test_replace_placeholders_with_no_values_returns_the_text():
    assert replace_placeholders("y1", {}) == "y1"


# ================================================================ writing calls
def test_format_call_writes_what_parse_reads_back():
    text = format_call("f", [1, "a, b", [Ref("y1"), None], {"k": True}], "y2", {"n": -2.5})

    assert text == '[FUNC f(1, "a, b", [y1, None], {"k": True}, n=-2.5) = y2]'
    call = parse_chain("[FUNC a(0) = y1] " + text).check().call(2)
    assert (call.args, dict(call.kwargs)) == ((1, "a, b", [Ref("y1"), None], {"k": True}),
                                              {"n": -2.5})


def test_format_call_refuses_a_value_it_cannot_write():
    with pytest.raises(TypeError, match="cannot write set"):
        format_call("f", [{1}])
