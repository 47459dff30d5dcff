"""Changed texts are shown around the change: unified hunks for lines, excerpts for one line."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from agentkit.core.textdiff import is_short, text_diff, value_diff


def test_short_values_are_shown_side_by_side():
    assert value_diff("add", "plus") == ['"add" -> "plus"']
    assert value_diff(3, None) == ["3 -> null"]


def test_a_multi_line_text_is_a_unified_diff_with_one_line_of_context():
    old = "\n".join(f"line {n}" for n in range(1, 21))

    assert text_diff(old, old.replace("line 13", "line thirteen")) == [
        "@@ -12,3 +12,3 @@", " line 12", "-line 13", "+line thirteen", " line 14"]


def test_a_long_unchanged_context_line_is_elided_in_the_middle():
    old = "x" * 1000 + "\nold"

    lines = text_diff(old, "x" * 1000 + "\nnew")

    assert lines[1].startswith(" xxx") and " … " in lines[1] and len(lines[1]) < 210


def test_one_long_line_shows_an_excerpt_around_each_change():
    old = "alpha " * 50 + "beta " + "gamma " * 50 + "delta " + "alpha " * 50

    lines = value_diff(old, old.replace("beta", "BETA").replace("delta", "DELTA"))

    assert len(lines) == 4
    assert lines[0].startswith("-…alpha") and "beta gamma" in lines[0]
    assert lines[1].startswith("+…alpha") and "BETA gamma" in lines[1]
    assert "DELTA" in lines[3] and all(len(line) < 120 for line in lines)


def test_nested_values_are_compared_as_indented_json():
    old = {"name": "add", "description": "x" * 100}

    assert value_diff(old, {**old, "name": "plus"}) == [
        "@@ -1,3 +1,3 @@", " {", '-  "name": "add",', '+  "name": "plus",',
        f'   "description": "{"x" * 100}"']


def test_a_value_with_a_newline_is_never_short():
    assert is_short("a\nb") is False
    assert is_short("a" * 70) is True


_lines = st.lists(st.sampled_from(["a", "b", "c", "", "long " * 30]), min_size=2, max_size=12)


@given(_lines, _lines)
def test_every_removed_line_is_old_and_every_added_line_is_new(old, new):
    lines = text_diff("\n".join(old), "\n".join(new))

    assert all(line[1:] in old for line in lines if line.startswith("-"))
    assert all(line[1:] in new for line in lines if line.startswith("+"))
    assert bool(lines) == (old != new)
