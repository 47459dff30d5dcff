"""Scenario items' snapshots: the snapshot session over syrupy's ``snapshot`` fixture (one
snapshot counted per item, ``--snapshot-update`` accepting a change), and the guard that keeps
syrupy from deleting a snapshot that only looks unused."""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest
from syrupy.assertion import DiffMode

from agentkit._pytest.options import shown_path
from agentkit.scenario.snapshot import TraceSnapshotExtension, Verbatim, stale_snapshot
from agentkit.trace import SampledTrace, Trace, compare_with_snapshot
from agentkit.verdict import Compared, SnapshotSession

__all__ = ["SyrupySnapshots", "SnapshotGuard", "SNAPSHOT_PROPERTY"]

#: ``item.user_properties`` entry of a scenario item whose snapshot was compared or kept
SNAPSHOT_PROPERTY = "agentkit_snapshot"


class SyrupySnapshots(SnapshotSession):
    """The scenario items' :class:`~agentkit.verdict.SnapshotSession`: syrupy's ``snapshot``
    fixture with the trace extension, so ``--snapshot-update`` accepts a change and syrupy
    counts every snapshot it compared or kept as used, once per item."""

    def __init__(self, snapshot: Any, root: Path, item: pytest.Item, *, create: bool) -> None:
        super().__init__("check")
        self.snapshot = snapshot
        self.root = root
        self.item = item
        self.create = create  # a recording run creates a missing snapshot from its trace

    def _handled(self, how: str) -> None:
        # read by the controller (also under xdist, where user_properties travel with reports)
        self.item.user_properties.append((SNAPSHOT_PROPERTY, how))

    def _compare(self, trace: Trace | SampledTrace, path: Path) -> Compared:
        self._handled("compared")
        trace_snapshot = self.snapshot.use_extension(TraceSnapshotExtension)
        trace_snapshot.update_new_snapshots_only = self.create
        if trace_snapshot == trace:
            return "same", [], None
        if trace_snapshot.get_assert_diff(diff_mode=DiffMode.DISABLED):  # only "does not exist"
            return "missing", [], None
        location = Path(trace_snapshot.extension.get_location(
            test_location=trace_snapshot.test_location, index=0))
        stale = stale_snapshot(location)
        if stale is not None:  # an upgrade changed what traces hold: its diff would be noise
            return "stale", [f"{shown_path(location, self.root)}: {stale}"], None
        return "changed", list(trace_snapshot.get_assert_diff()), None

    def _check(self, trace: Trace | SampledTrace, path: Path) -> Compared:
        """Compare without writing, through syrupy when the snapshot is there to compare
        with, so that its report counts a trace that differs as a failed snapshot (a kept one
        counts as passed); a missing or stale snapshot is kept as it is."""
        found = compare_with_snapshot(trace.to_dict(), path)
        if found[0] not in ("same", "changed"):
            return super()._check(trace, path)
        self.kept.append(path)  # never kept again: syrupy has counted it
        self._handled("compared")
        checked = self.snapshot.use_extension(TraceSnapshotExtension)
        checked.update_snapshots = False
        checked == trace  # noqa: B015  (registers the comparison: passed or failed)
        return found

    def _keep(self, path: Path) -> None:
        """Count the stored snapshot as used, comparing it with its own text: never written,
        never reported unused, never deleted by ``--snapshot-update``."""
        self._handled("kept")
        if not path.is_file():
            return
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return  # unreadable: the session's cleanup is off for it (see pytest_sessionfinish)
        kept = self.snapshot.use_extension(TraceSnapshotExtension)
        kept.update_snapshots = False
        kept == Verbatim(text)  # noqa: B015  (registers the snapshot; equal by construction)

    def update_hint(self) -> str:
        return "--snapshot-update"


def _is_scenario_node(nodeid: str) -> bool:
    return nodeid.split("::", 1)[0].endswith((".yaml", ".yml"))


class SnapshotGuard:
    """Keeps syrupy from deleting a scenario's snapshot that only looks unused: when a
    scenario file could not be collected, an item stopped before its snapshot could be
    checked (or kept), or the session was cut short (Ctrl-C, ``-x``), unused-snapshot
    detection is off for the session (as ``--snapshot-disable-unused``) and the terminal
    summary says why. Runs where the reports arrive (the controller, under xdist)."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.reasons: list[str] = []

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed and _is_scenario_node(report.nodeid):
            self.reasons.append(f"{report.nodeid} could not be collected")

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if (report.failed and report.when in ("setup", "call") and "::" in report.nodeid
                and _is_scenario_node(report.nodeid)
                and not any(name == SNAPSHOT_PROPERTY for name, _ in report.user_properties)):
            self.reasons.append(f"{report.nodeid} failed before its snapshot was checked")

    @pytest.hookimpl(wrapper=True)
    def pytest_sessionfinish(self, session: pytest.Session,
                             exitstatus: int) -> Generator[None, None, None]:
        # a wrapper: this runs before syrupy's own sessionfinish looks for unused snapshots
        if exitstatus == pytest.ExitCode.INTERRUPTED or session.shouldstop or session.shouldfail:
            self.reasons.append("the session was stopped before every test ran")
        if self.reasons and hasattr(self.config.option, "disable_unused_snapshots"):
            self.config.option.disable_unused_snapshots = True
        return (yield)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.reasons:
            more = f" and {len(self.reasons) - 1} more" if len(self.reasons) > 1 else ""
            terminalreporter.write_line(
                "agentkit: unused-snapshot cleanup is off for this session, so no snapshot is "
                f"deleted ({self.reasons[0]}{more})")
