"""One number format: seconds with two decimals and a unit, counts with separators."""

from __future__ import annotations

from agentkit.core.fmt import (
    fmt_count,
    fmt_percent,
    fmt_ratio,
    fmt_seconds,
    fmt_signed_count,
    fmt_signed_seconds,
)


def test_seconds_have_two_decimals_and_a_unit_whatever_the_value():
    assert [fmt_seconds(x) for x in (6.32919, 1, 0, 0.005)] == ["6.33s", "1.00s", "0.00s",
                                                                "0.01s"]


def test_a_positive_time_below_the_precision_is_not_shown_as_zero():
    assert fmt_seconds(0.001) == "<0.01s"


def test_counts_have_thousands_separators():
    assert fmt_count(1234567) == "1,234,567"


def test_changes_are_signed():
    assert (fmt_signed_count(829), fmt_signed_count(-2)) == ("+829", "-2")
    assert (fmt_signed_seconds(5), fmt_signed_seconds(-0.5)) == ("+5.00s", "-0.50s")
    assert (fmt_percent(0.69), fmt_percent(-0.05)) == ("+69%", "-5%")


def test_ratios_are_a_factor():
    assert fmt_ratio(2.5) == "2.50×"
