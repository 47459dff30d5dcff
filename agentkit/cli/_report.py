"""``agentkit report``: a comparison of agent types on scenarios (or the merge of shards'
reports), its files and a summary."""

from __future__ import annotations

import argparse
import contextlib
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from agentkit.cli._common import (
    EXIT_FAILED,
    EXIT_OK,
    EXIT_USAGE,
    CLIError,
    scenario_paths,
    writable_folder,
)
from agentkit.cli._otel import otel_export
from agentkit.cli._printing import junit_report, print_disagreements, print_summaries

__all__ = ["command"]


def command(args: argparse.Namespace, out: TextIO) -> int:
    from agentkit.core.files import FolderRefused, replaceable_folder
    from agentkit.report import (
        REPORT_MARKER,
        ReportError,
        compare_to_baseline,
        load_comparison,
        merge_shards,
        run_comparison,
        undecided_text,
        write_report,
    )
    from agentkit.scenario._loader import ScenarioError
    from agentkit.verdict import SnapshotFiles

    writable_folder(args.out, "--out")
    try:  # a folder that is not a report, or holds the current one, is refused before running
        replaceable_folder(args.out, REPORT_MARKER)
    except FolderRefused as exc:
        raise CLIError(f"--out {args.out}: {exc}") from None
    if args.merge and (args.paths or args.agents or args.shard):
        raise CLIError("--merge joins report folders: give no scenario paths, --agents or "
                       "--shard with it")
    counter = _Counter(sys.stderr)
    try:
        with otel_export(args, out), _runs_folder(args.out) as runs_folder:
            baseline = load_comparison(args.baseline) if args.baseline else None
            if args.merge:
                comparison = merge_shards(
                    [load_comparison(_report_json(d)) for d in args.merge],
                    [str(d) for d in args.merge])
            else:
                comparison = run_comparison(scenario_paths(args), args.agents,
                                            progress=counter if counter.on else None,
                                            snapshots=SnapshotFiles(args.snapshots),
                                            shard=args.shard, runs_folder=runs_folder)
            written = write_report(comparison, args.out, baseline=baseline)
    except (ReportError, ScenarioError) as exc:
        raise CLIError(str(exc)) from None
    finally:
        counter.close()
    print_summaries(comparison, out)
    for row in comparison.failures:
        print(f"{row.status.upper()}  {row.key}", file=out)
        for problem in row.problems:
            print("      - " + problem.replace("\n", "\n        "), file=out)
    for row in comparison.rows:
        if row.disagreements:
            print(f"DISAGREE  {row.key}", file=out)
            print_disagreements(row.disagreements, out)
        if row.result == "undecided":
            print(f"UNDECIDED  {row.key}: {undecided_text(row)}", file=out)
        if row.gate_warning is not None:
            print(f"WARNING  {row.key}: {row.gate_warning}", file=out)
    regressions = compare_to_baseline(comparison, baseline).regressions if baseline else []
    junit_report(args, comparison, regressions, out)
    for delta in regressions:
        for reason in delta.reasons:
            print(f"REGRESSION  {delta.key}: {reason}", file=out)
    rows = comparison.rows
    failed = sum(row.status == "fail" for row in rows)
    errors = sum(row.status == "error" for row in rows)
    differ = sum(row.snapshot in ("changed", "missing") for row in rows)
    undecided = sum(row.result == "undecided" for row in rows)
    totals = (f"{len(rows)} runs: {len(rows) - failed - errors - undecided} passed, "
              f"{failed} failed, {errors} could not run"
              + (f", {undecided} undecided" if undecided else "")
              + f", {len(regressions)} regressed")
    if args.snapshots != "off":
        totals += f", {differ} differ from their snapshots"
        if differ and args.snapshots == "report":
            totals += " (--snapshots report: not failing)"
    print(totals, file=out)
    for path in written.values():
        print(f"wrote {path}", file=out)
    if any(row.kind == "input" for row in rows):  # as `agentkit run` exits on bad input
        return EXIT_USAGE
    return EXIT_FAILED if (not comparison.passed or regressions) else EXIT_OK


@contextlib.contextmanager
def _runs_folder(out: Path) -> Iterator[Path]:
    """A hidden folder beside ``--out`` for the runs' traces while the report is made (so the
    report's memory grows with its rows only; on the same file system, its files become the
    report's without a copy), removed afterwards."""
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f".{out.name}.runs-", dir=out.parent) as folder:
        yield Path(folder)


def _report_json(folder: Path) -> Path:
    """The report.json of a report folder given to ``--merge`` (or the file itself)."""
    path = folder / "report.json" if folder.is_dir() else folder
    if not path.is_file():
        raise CLIError(f"--merge {folder}: no report.json there (give the --out folder of "
                       "each shard)")
    return path


class _Counter:
    """``agentkit report``'s progress on a terminal: one line on stderr, rewritten after each
    run (``[ 3/12] slow_tools[react] pass``) and cleared at the end. Off when stderr is not
    a terminal (CI logs, pipes): nothing is written there."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.on = stream.isatty()
        self.shown = False

    def __call__(self, done: int, total: int, row: Any) -> None:
        width = len(str(total))
        line = f"[{done:>{width}}/{total}] {row.scenario}[{row.agent_type}] {row.status}"
        columns = shutil.get_terminal_size().columns - 1
        self.stream.write(f"\r\x1b[K{line[:columns]}")
        self.stream.flush()
        self.shown = True

    def close(self) -> None:
        if self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
