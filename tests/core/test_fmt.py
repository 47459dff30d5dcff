"""One number format everywhere (:mod:`agentkit.core.fmt`)."""

from __future__ import annotations

import pytest

from agentkit.core import fmt


@pytest.mark.parametrize("value, shown", [(1, "1.00s"), (6.32919, "6.33s"), (0, "0.00s"),
                                          (90.5, "90.50s")])
def test_seconds_always_have_two_decimals(value: float, shown: str) -> None:
    assert fmt.seconds(value) == shown


def test_ratio_has_two_decimals_and_a_times_sign() -> None:
    assert fmt.ratio(2.5) == "2.50×"


def test_count_groups_thousands() -> None:
    assert fmt.count(12345) == "12,345"


def test_changes_are_signed() -> None:
    assert (fmt.signed_count(829), fmt.signed_count(-2), fmt.signed_count(1500)) == (
        "+829", "-2", "+1,500")
    assert (fmt.signed_seconds(5), fmt.signed_seconds(-0.5)) == ("+5.00s", "-0.50s")
    assert (fmt.percent(0.69), fmt.percent(-0.05)) == ("+69%", "-5%")
