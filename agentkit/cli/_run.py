"""``agentkit run``: each scenario under each agent type, offline, judged once (a case of one
run or of the samples of its recording); a summary line and the exit code."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, TextIO

from agentkit.cli._common import (
    EXIT_FAILED,
    EXIT_OK,
    EXIT_USAGE,
    CLIError,
    check_agent_types,
    load_scenario,
    scenario_paths,
    shown,
    writable_folder,
)
from agentkit.cli._otel import otel_export
from agentkit.cli._printing import print_sampled, print_verdict, record_hint, result_line

__all__ = ["command"]


def command(args: argparse.Namespace, out: TextIO) -> int:
    with otel_export(args, out):
        return _run_scenarios(args, out)


def _run_scenarios(args: argparse.Namespace, out: TextIO) -> int:
    from agentkit.core.files import atomic_write_text
    from agentkit.eval import shard_of
    from agentkit.harness import Case, run_case
    from agentkit.scenario._layout import trace_file
    from agentkit.verdict import SnapshotFiles

    check_agent_types(args.agents)
    if args.trace_dir:
        writable_folder(args.trace_dir, "--trace-dir")
    snapshots = SnapshotFiles(args.snapshots, update=args.snapshot_update)
    counts = dict.fromkeys(("pass", "fail", "error", "input", "snapshot"), 0)
    total = 0
    junit: list[Any] = []
    for path in scenario_paths(args):
        scenario = _load_or_report(path, counts)
        if scenario is None:
            continue
        names = [n for n in (args.agents or scenario.agents) if n in scenario.agents]
        if args.shard is not None:
            names = [n for n in names
                     if shard_of(f"{scenario.name}[{n}]", args.shard[1]) == args.shard[0]]
        for name in names:
            case = run_case(Case(scenario, name), snapshots)
            total += 1
            verdict = case.verdict
            _print_case(case, out, args.verbose)
            if args.junit_xml:
                junit.append(_junit_case(case))
            counts[verdict.outcome] += 1
            counts["input"] += verdict.kind == "input"
            counts["snapshot"] += verdict.snapshot_differs
            trace = case.trace
            if trace is None:
                continue
            if args.trace_dir:
                atomic_write_text(trace_file(args.trace_dir, scenario, name), trace.to_json())
            if args.verbose and not case.sampled:
                print(trace.to_json(), file=out)
    if not total and not counts["input"] and args.shard is None:
        raise CLIError(f"no scenario declares the agent type(s) {', '.join(args.agents or [])}")
    if args.junit_xml:
        from agentkit.report import write_junit

        print(f"wrote {write_junit(args.junit_xml, junit)}", file=out)
    summary = f"{counts['pass']} passed, {counts['fail']} failed"
    if counts["error"]:
        summary += f", {counts['error']} could not run"
    if counts["snapshot"] and args.snapshots != "off":
        summary += f", {counts['snapshot']} differ from their snapshots"
    if snapshots.written:
        summary += (f", {len(snapshots.written)} snapshot"
                    f"{'s' if len(snapshots.written) != 1 else ''} written")
    print(summary, file=out)
    if counts["input"]:
        return EXIT_USAGE
    return EXIT_FAILED if counts["fail"] or counts["error"] else EXIT_OK


def _load_or_report(path: Path, counts: dict[str, int]) -> Any:
    """The scenario at ``path``, or None after printing why it cannot be loaded (bad input:
    the command goes on with the other files and exits 2)."""
    try:
        return load_scenario(path)
    except CLIError as exc:
        print(f"agentkit: error: {exc}", file=sys.stderr)
        counts["input"] += 1
        return None


def _print_case(case: Any, out: TextIO, verbose: bool = False) -> None:
    """What ``run`` prints of a case: its line (a sampled case's statistics), what its verdict
    says (bad input on stderr, as such; ``verbose``: with the user's tracebacks) and how to
    record or re-record it, and the snapshot file judging it wrote."""
    verdict, result = case.verdict, case.result
    if case.sampled:
        print_sampled(case.case.name, case, out)
    else:
        print(result_line(case.case.name, result, verdict), file=out)
        hint = record_hint(case.scenario, case.agent_type, verdict) or case.rerecord_hint()
        if verdict.kind == "input" and result is None:
            print(f"agentkit: error: {verdict.stopped_by}" + (f"\n  {hint}" if hint else ""),
                  file=sys.stderr)
        else:
            print_verdict(verdict, out, hint, verbose)
    if case.snapshot_written is not None:
        print(f"      wrote {shown(case.snapshot_written)}", file=out)


def _junit_case(case: Any) -> Any:
    """A JUnit test case for one ``run`` case (a sampled case's with its statistics as
    properties, as ``report`` writes them)."""
    from agentkit.report import JUnitCase, sample_properties

    verdict, result = case.verdict, case.result
    lines = verdict.lines()
    outcome = {"pass": "pass", "fail": "fail", "error": "error"}[verdict.outcome]
    properties: dict[str, str] = {}
    if case.sampled:
        from agentkit.report import row_from_samples

        properties = sample_properties(row_from_samples(case))
    elif result is not None:
        from agentkit.quality import calibration_of

        found = {j.at: calibration_of(j, case.scenario.path) for j in result.judgements}
        properties = ({"judges_uncalibrated": "; ".join(f"{at}: {c.why}" for at, c in
                                                        found.items() if not c.calibrated)}
                      if any(not c.calibrated for c in found.values()) else {})
    if verdict.cause is not None:
        properties.update(failure_cause=verdict.cause.cause,
                          failure_cause_why=verdict.cause.why)
    return JUnitCase(case.scenario.name, case.agent_type, outcome,
                     lines[0].removeprefix("- ") if lines else "", "\n".join(lines),
                     result.trace.totals().wall_time if result is not None else 0.0, properties)
