"""Each test's reports, kept on its item for the fixtures' teardown checks: a check that only
applies to a test that passed (an unused script, an unused cassette exchange, a swallowed
blocked connection) asks :func:`call_passed`."""

from __future__ import annotations

import pytest

__all__ = ["keep_report", "call_passed"]

_REPORTS = pytest.StashKey[dict[str, pytest.TestReport]]()


def keep_report(item: pytest.Item, report: pytest.TestReport) -> None:
    """Keep ``report`` (its phase's: setup, call, teardown) on ``item``."""
    item.stash.setdefault(_REPORTS, {})[report.when] = report


def call_passed(item: pytest.Item) -> bool:
    """Whether the test body ran and passed (not failed, skipped or xfailed)."""
    report = item.stash.get(_REPORTS, {}).get("call")
    return report is not None and report.passed and not hasattr(report, "wasxfail")
