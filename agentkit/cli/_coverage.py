"""``agentkit coverage``: what the suite's runs exercise -- every tool with its counts, per
agent type, and what no scenario touches, listed first; ``--fail-under`` gates on it."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any, TextIO

from agentkit.cli._common import (
    EXIT_FAILED,
    EXIT_OK,
    CLIError,
    check_agent_types,
    scenario_paths,
    writable_file,
)

__all__ = ["command", "print_coverage"]


def command(args: argparse.Namespace, out: TextIO) -> int:
    from agentkit.core.files import atomic_write_text
    from agentkit.quality import coverage_of

    check_agent_types(args.agents)
    if args.json is not None:
        writable_file(args.json, "--json")
    scenarios = _scenarios(args)
    coverage = coverage_of(scenarios, args.agents)
    if not coverage.agent_types and not coverage.not_run:
        raise CLIError(f"no scenario declares the agent type(s) {', '.join(args.agents or [])}")
    print_coverage(coverage, out, by_agent_type=args.by_agent_type)
    if args.json is not None:
        atomic_write_text(args.json, json.dumps(coverage.to_dict(), indent=2,
                                                ensure_ascii=False) + "\n")
        print(f"wrote {args.json}", file=out)
    if args.fail_under is not None and coverage.percent < args.fail_under:
        print(f"FAIL  behaviour coverage {coverage.percent:g}% is under --fail-under "
              f"{args.fail_under:g}%", file=out)
        return EXIT_FAILED
    return EXIT_OK


def _scenarios(args: argparse.Namespace) -> list[Any]:
    from agentkit.cli._common import load_scenario

    return [load_scenario(path) for path in scenario_paths(args)]


def print_coverage(coverage: Any, out: TextIO, by_agent_type: bool = False) -> None:
    """Untested things first, the totals, then a row per tool (``by_agent_type``: per tool
    and agent type), per agent type, and each hand-off, judge and rule with the runs that
    exercised it."""
    from tabulate import tabulate

    untested = coverage.untested()
    print(f"untested ({len(untested)}):" if untested else "untested: nothing", file=out)
    for line in untested:
        print(f"  {line}", file=out)
    covered, total = coverage.behaviours()
    called, tools = coverage.tools_called()
    print(f"\ntools called: {called} of {tools}; behaviours covered: {covered} of {total} "
          f"({coverage.percent:g}%)", file=out)
    if by_agent_type:
        headers = [*coverage.TABLE_HEADERS[:2], "agent type", *coverage.TABLE_HEADERS[3:]]
        print("\n" + tabulate(coverage.agent_table(), headers=headers, tablefmt="simple"),
              file=out)
    else:
        print("\n" + tabulate(coverage.table(), headers=list(coverage.TABLE_HEADERS),
                              tablefmt="simple"), file=out)
    rows = [[agent, coverage.agent_types[agent], f"{c}/{o}"]
            for agent, (c, o) in coverage.by_agent_type().items()]
    print("\n" + tabulate(rows, headers=["agent type", "runs", "tools called/offered"],
                          tablefmt="simple"), file=out)
    if coverage.others:
        print("\nhand-offs, judges and rules (runs that exercised each):", file=out)
        for item in coverage.others.values():
            failed = f", failed {item.failed}" if item.kind == "judge" else ""
            print(f"  {item.kind} {item.name}: {item.exercised}/{item.runs}{failed}", file=out)
    for name in coverage.not_run:
        print(f"could not run: {name} (`agentkit run` says why)", file=sys.stderr)
