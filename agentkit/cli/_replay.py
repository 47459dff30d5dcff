"""``agentkit replay``: each recorded agent type of a scenario replayed from its cassette and
compared with its recorded trace."""

from __future__ import annotations

import argparse
from typing import Any, TextIO

from agentkit.cli._common import EXIT_FAILED, EXIT_OK, CLIError, load_scenario
from agentkit.cli._printing import (
    print_sample_disagreements,
    print_verdict,
    record_hint,
    result_line,
    sampled_line,
)

__all__ = ["command"]


def command(args: argparse.Namespace, out: TextIO) -> int:
    from agentkit.harness import Case, rerecord_command, run_case
    from agentkit.scenario._layout import legacy_recorded_trace, records, snapshot_path
    from agentkit.verdict import SnapshotFiles, cassette_miss

    scenario = load_scenario(args.scenario)
    names = ([args.agent] if args.agent
             else [n for n in scenario.agents if records(scenario, n)])
    if not names:
        raise CLIError(f"{args.scenario}: no agent type has a `recording` to replay")
    status = EXIT_OK
    for name in names:
        if name not in scenario.agents or not records(scenario, name):
            raise CLIError(f"{args.scenario}: agent type `{name}` has no recording")
        again = f"to re-record: {rerecord_command(scenario, name)}"
        recorded = snapshot_path(scenario, name)
        case = run_case(Case(scenario, name), SnapshotFiles("report", hint=again))
        if case.sampled:
            status = max(status, _replay_sampled(scenario, name, case, again, out))
            continue
        result, verdict = case.result, case.verdict
        print(result_line(f"{scenario.name}[{name}]", result, verdict), file=out)
        if result is None:
            if verdict.kind == "input":
                raise CLIError(f"{verdict.stopped_by}" + (
                    f"\n  {hint}" if (hint := record_hint(scenario, name, verdict)) else ""))
            print_verdict(verdict, out)
            status = EXIT_FAILED
            continue
        miss = cassette_miss(result)
        if miss is not None:
            status = EXIT_FAILED
            print("      cassette miss: " + miss.replace("\n", "\n        "), file=out)
            print(f"      {again}", file=out)
            continue
        if verdict.snapshot == "missing":
            legacy = legacy_recorded_trace(scenario, name)
            print(f"      (no recorded trace at {recorded}; nothing to compare)", file=out)
            if legacy is not None:
                print(f"      {legacy} is where agentkit < 0.2 kept it: move it to {recorded}",
                      file=out)
        elif verdict.snapshot == "changed":
            status = EXIT_FAILED
            print(f"      replay differs from the recorded trace {recorded}:", file=out)
            for line in verdict.snapshot_diff:
                print(f"      {line}", file=out)
            print(f"      {again}", file=out)
        elif verdict.snapshot == "not_checked":
            print(f"      not compared with the recorded trace {recorded}: the replay stopped "
                  "on an error", file=out)
        else:
            print(f"      replay reproduces the recorded trace ({recorded})", file=out)
        for line in (verdict.lines() if verdict.stopped_by else
                     [f"- {problem}" for problem in verdict.problems]):
            print(f"      {line}", file=out)
        if verdict.outcome != "pass":
            status = EXIT_FAILED
    return status


def _replay_sampled(scenario: Any, name: str, sampled: Any, again: str, out: TextIO) -> int:
    """``replay`` of a sampled recording: every sample against its recorded trace."""
    verdict = sampled.verdict
    print(sampled_line(f"{scenario.name}[{name}]", sampled), file=out)
    if verdict.outcome == "error" and verdict.kind == "input":
        raise CLIError(str(verdict.stopped_by))
    print_sample_disagreements(sampled, out)
    count = len(sampled.runs)
    misses = verdict.has("recording_mismatch")
    if verdict.snapshot == "same" and not misses:
        print(f"      replay reproduces the recorded traces of all {count} samples "
              f"({verdict.snapshot_at})", file=out)
    elif verdict.snapshot == "changed":
        print(f"      replay differs from the recorded traces {verdict.snapshot_at}:", file=out)
        for line in verdict.snapshot_diff:
            print(f"      {line}", file=out)
    for line in verdict.lines() if verdict.stopped_by else [f"- {p}" for p in verdict.problems]:
        print("      " + line.replace("\n", "\n      "), file=out)
    if misses or verdict.snapshot == "changed":
        print(f"      {again}", file=out)
    return EXIT_OK if verdict.passed and verdict.snapshot != "changed" else EXIT_FAILED
