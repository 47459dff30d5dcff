"""Changed texts are shown around the change with the changed words marked: unified hunks for
lines, excerpts for one line; plain markers, terminal colours or HTML elements."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from agentkit.core.textdiff import (
    ANSI,
    HTML,
    Line,
    Span,
    changes,
    edits,
    is_short,
    render,
    text_diff,
    value_diff,
)


def test_short_values_are_shown_side_by_side():
    assert render(value_diff("add", "plus")) == ['"add" -> "plus"']
    assert render(value_diff(3, None)) == ["3 -> null"]


def test_a_changed_word_in_a_multi_line_text_is_marked_in_its_line():
    old = "\n".join(f"line {n}" for n in range(1, 21))

    assert render(text_diff(old, old.replace("line 13", "line thirteen"))) == [
        "@@ -12,3 +12,3 @@", " line 12", "~line [-13-]{+thirteen+}", " line 14"]


def test_a_rewritten_line_is_shown_as_the_old_and_the_new_line():
    lines = text_diff("a\ncompletely different\nz", "a\nnothing alike here\nz")

    assert render(lines) == ["@@ -1,3 +1,3 @@", " a", "-completely different",
                             "+nothing alike here", " z"]


def test_a_changed_line_beside_an_added_one_is_still_marked_in_place():
    lines = text_diff("a\nthe cat sat on the mat\nz", "a\nthe cat sat on a mat\nnew line\nz")

    assert render(lines) == ["@@ -1,3 +1,4 @@", " a", "~the cat sat on [-the-]{+a+} mat",
                             "+new line", " z"]


def test_changes_separated_only_by_blanks_are_marked_as_one():
    old = "the big red fox jumps over the lazy dog"

    assert render(text_diff(old, old.replace("big red", "small blue"))) == [
        "~the [-big red-]{+small blue+} fox jumps over the lazy dog"]


def test_an_added_word_is_marked_with_the_blank_before_it():
    old = "the fox jumps over the lazy dog"

    assert render(text_diff(old, old.replace("the fox", "the red fox"))) == [
        "~the{+ red+} fox jumps over the lazy dog"]


def test_a_long_unchanged_context_line_is_elided_in_the_middle():
    old = "x" * 1000 + "\nold"

    lines = render(text_diff(old, "x" * 1000 + "\nnew"))

    assert lines[1].startswith(" xxx") and " … " in lines[1] and len(lines[1]) < 210


def test_one_word_changed_in_a_170_character_line_is_one_line_with_the_word_marked():
    old = ("Order A-1001: two items, paid by card on 2026-11-02, shipped from the Lyon "
           "warehouse; the refund request was approved by the support desk and will be credited "
           "in 5 days.")

    assert render(value_diff(old, old.replace("approved", "rejected"))) == [
        "~…Lyon warehouse; the refund request was [-approved-]{+rejected+} by the support desk "
        "and will be…"]


def test_one_long_line_shows_an_excerpt_around_each_change():
    old = "alpha " * 50 + "beta " + "gamma " * 50 + "delta " + "alpha " * 50

    lines = render(value_diff(old, old.replace("beta", "BETA").replace("delta", "DELTA")))

    assert lines == [
        "~…alpha alpha alpha alpha alpha alpha [-beta-]{+BETA+} gamma gamma gamma gamma gamma "
        "gamma…",
        "~…gamma gamma gamma gamma gamma gamma [-delta-]{+DELTA+} alpha alpha alpha alpha alpha "
        "alpha…"]


def test_one_long_line_rewritten_is_shown_as_old_and_new_excerpts():
    old, new = "one two three " * 10, "four five six " * 10

    lines = render(value_diff(old, new))

    assert [line[0] for line in lines] == ["-", "+"]
    assert lines[0].startswith("-one two") and lines[1].startswith("+four five")


def test_nested_values_are_compared_as_indented_json():
    old = {"name": "add", "description": "x" * 100}

    assert render(value_diff(old, {**old, "name": "plus"})) == [
        "@@ -1,3 +1,3 @@", " {", '~  "name": "[-add-]{+plus+}",',
        f'   "description": "{"x" * 100}"']


def test_a_value_with_a_newline_is_never_short():
    assert is_short("a\nb") is False
    assert is_short("a" * 70) is True


def test_a_terminal_shows_removed_words_red_and_added_words_green_without_markers():
    line = text_diff("x\nab cd\ny", "x\nab ce\ny")[2]

    assert line.render(ANSI) == "~ab \x1b[31;9mcd\x1b[0m\x1b[32;4mce\x1b[0m"


def test_html_escapes_the_text_and_wraps_marked_words_in_elements_with_a_class():
    line = text_diff("x\n<a> & b\ny", "x\n<a> & c\ny")[2]

    assert line.render(HTML) == ('~&lt;a&gt; &amp; <del class="diff-del">b</del>'
                                 '<ins class="diff-ins">c</ins>')


def test_the_sides_of_a_short_change_mark_the_changed_words_for_colour_only():
    line = value_diff("Observation: 5", "Observation: 6")[0]

    assert str(line) == '"Observation: 5" -> "Observation: 6"'
    assert line.render(HTML) == ('&quot;Observation: <span class="diff-old">5</span>&quot; -&gt; '
                                 '&quot;Observation: <span class="diff-new">6</span>&quot;')


def test_a_changed_number_is_marked_whole():
    assert value_diff(1.0, 1.5)[0].render(HTML) == (
        '<span class="diff-old">1.0</span> -&gt; <span class="diff-new">1.5</span>')


def test_a_line_is_joined_with_text_on_either_side():
    line = "  " + Line.of("x", "ins") + "!"

    assert line.spans == (Span("  "), Span("x", "ins"), Span("!"))
    assert str(line) == "  {+x+}!"


def test_the_same_edit_in_other_surroundings_is_the_same_edit():
    assert edits("refunded 12.5 on A-1", "refunded 13.0 on A-1") == edits(
        "Observation: refunded 12.5 on A-1", "Observation: refunded 13.0 on A-1")
    assert edits("a b", "a c") != edits("a b", "a d")


def test_a_path_names_a_list_item_by_its_name():
    old = {"tool_calls": [{"name": "lookup", "output": "1"}, {"name": "refund", "output": "2"}]}
    new = {"tool_calls": [{"name": "lookup", "output": "1"}, {"name": "refund", "output": "3"}]}

    assert [c.path for c in changes(old, new)] == ["tool_calls[1] (refund).output"]


def test_a_path_names_both_names_of_a_renamed_item_but_for_the_name_itself():
    old = {"tool_calls": [{"name": "add", "args": {"b": 1}}]}
    new = {"tool_calls": [{"name": "plus", "args": {"b": 2}}]}

    assert [c.path for c in changes(old, new)] == ["tool_calls[0] (add -> plus).args.b",
                                                  "tool_calls[0].name"]


_lines = st.lists(st.sampled_from(["a", "b", "c", "", "long " * 30, "a b c d", "a b x d"]),
                  min_size=2, max_size=12)


def _side(line: Line, drop: str) -> str:
    """A ``~`` line as it read before (``drop="ins"``) or after (``drop="del"``)."""
    return "".join(span.text for span in line.spans if span.mark != drop)[1:]


@given(_lines, _lines)
def test_every_line_shown_as_old_is_old_and_every_line_shown_as_new_is_new(old, new):
    lines = text_diff("\n".join(old), "\n".join(new))

    plain = render(lines)
    assert all(line[1:] in old for line in plain if line.startswith("-"))
    assert all(line[1:] in new for line in plain if line.startswith("+"))
    assert all(_side(line, "ins") in old and _side(line, "del") in new
               for line in lines if str(line).startswith("~"))
    assert bool(lines) == (old != new)
