"""``agentkit mutate``: mutants of the system under test run against the suite, offline; the
survivors named first, each killed mutant with what killed it, and the mutation score per
scenario and agent type; ``--fail-under`` gates on the score."""

from __future__ import annotations

import argparse
import json
from typing import Any, TextIO

from agentkit.cli._common import (
    EXIT_FAILED,
    EXIT_OK,
    CLIError,
    check_agent_types,
    load_scenario,
    scenario_paths,
    writable_file,
)

__all__ = ["command"]


def command(args: argparse.Namespace, out: TextIO) -> int:
    from agentkit.core.files import atomic_write_text
    from agentkit.quality import mutate

    check_agent_types(args.agents)
    if args.json is not None:
        writable_file(args.json, "--json")
    scenarios = [load_scenario(path) for path in scenario_paths(args)]
    mutation = mutate(scenarios, args.agents, args.operators)
    if not mutation.baselines:
        raise CLIError(f"no scenario declares the agent type(s) {', '.join(args.agents or [])}")
    _print(mutation, out)
    data = mutation.to_dict()
    if args.judges:
        from agentkit.quality import judge_trials

        trials = judge_trials(scenarios, args.agents)
        _print_judges(trials, out)
        data["judges"] = [trial.to_dict() for trial in trials]
    if args.json is not None:
        atomic_write_text(args.json, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
        print(f"wrote {args.json}", file=out)
    if args.fail_under is not None and mutation.percent < args.fail_under:
        print(f"FAIL  mutation score {mutation.percent:g}% is under --fail-under "
              f"{args.fail_under:g}%", file=out)
        return EXIT_FAILED
    return EXIT_OK


def _print(mutation: Any, out: TextIO) -> None:
    from tabulate import tabulate

    ran = [base for base in mutation.baselines if base.why is None]
    print(f"{len(mutation.results)} mutants, run offline against {len(ran)} cases "
          "(prompt mutants need a live re-recording: none made)", file=out)
    survivors = mutation.survivors()
    print(f"\nsurvivors ({len(survivors)}):" if survivors else "\nsurvivors: none", file=out)
    for result in survivors:
        cases = len(result.cases)
        print(f"  {result.mutant.id}: {result.mutant.describe()}; no case notices it "
              f"({cases} case{'s' if cases != 1 else ''} ran it)", file=out)
    killed = [result for result in mutation.results if result.killed]
    print(f"\nkilled ({len(killed)}):", file=out)
    for result in killed:
        first = result.kills[0]
        more = len(result.kills) - 1
        print(f"  {result.mutant.id}: by {first.case}: {first.by}"
              + (f" (and {more} more case{'s' if more != 1 else ''})" if more else ""),
              file=out)
    count, total = mutation.score()
    print(f"\nmutation score: {count} of {total} mutants killed ({mutation.percent:g}%)",
          file=out)
    for title, scores in (("scenario", mutation.by_scenario()),
                          ("agent type", mutation.by_agent_type())):
        rows = [[name, a, b, f"{100 * a / b:.0f}%" if b else "-"]
                for name, (a, b) in scores.items()]
        print("\n" + tabulate(rows, headers=[title, "killed", "mutants", "score"],
                              tablefmt="simple"), file=out)
    if mutation.left_out:
        print("\nleft out:", file=out)
        for base in mutation.left_out:
            print(f"  {base.name}: {base.why}", file=out)


def _print_judges(trials: list[Any], out: TextIO) -> None:
    """Each judged expectation with its known-bad transcripts: those its judge passed named
    first, then its judge score; the judges not tried and why."""
    print(f"\njudges: {len(trials)} judged expectation{'s' if len(trials) != 1 else ''} given "
          "known-bad transcripts" if trials else "\njudges: no judged expectation", file=out)
    failed = judged = 0
    for trial in trials:
        name = f"{trial.case}: {trial.at} ({trial.rubric!r})"
        if trial.why is not None:
            print(f"  NOT TRIED  {name}: {trial.why}", file=out)
            continue
        count, total = trial.score()
        failed, judged = failed + count, judged + total
        passed = trial.passed()
        status = "PASSES KNOWN-BAD" if passed else "FAILS KNOWN-BAD" if total else "UNJUDGED"
        print(f"  {status}  {name}: failed {count} of {total} known-bad transcripts", file=out)
        for bad in passed:
            print(f"      passed {bad.label} ({bad.text!r}): {bad.reason}", file=out)
        for bad in trial.bad:
            if bad.verdict == "unjudged":
                print(f"      not judged offline: {bad.label}: {bad.reason}", file=out)
    if judged:
        print(f"judge score: {failed} of {judged} known-bad transcripts failed "
              f"({100 * failed / judged:.0f}%)", file=out)
