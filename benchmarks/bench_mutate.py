"""Mutation testing speed: ``agentkit mutate`` on the bundled scenarios.

    python benchmarks/bench_mutate.py [PATHS ...]

Runs every bundled scenario × agent type unmutated, then every offline mutant of their tool
worlds against every case it changes (what ``agentkit mutate`` does), and prints how many
mutants ran, how many survived, and the time it took: process CPU time (the work is
single-threaded and CPU-bound; load from other jobs on a shared machine does not inflate it)
and wall time. Target: at least 50 mutants in under a minute on 2 cores.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any, TextIO

ROOT = Path(__file__).resolve().parents[1]
TARGET_MUTANTS = 50
TARGET_SECONDS = 60.0


def main(argv: list[str] | None = None, out: TextIO | None = None) -> dict[str, Any]:
    import sys

    from agentkit.harness import activated, load
    from agentkit.quality import mutate
    from agentkit.scenario import discover_scenarios
    from agentkit.scenario.project import find_project

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*", type=Path, default=[ROOT / "scenarios"],
                        help="scenario files or folders (default: the bundled scenarios/)")
    args = parser.parse_args(argv)
    out = out or sys.stdout
    with activated(find_project(ROOT)):
        scenarios = [load(path) for given in args.paths for path in discover_scenarios(given)]
        cpu, wall = time.process_time(), time.perf_counter()
        mutation = mutate(scenarios)
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    killed, total = mutation.score()
    cases = sum(base.why is None for base in mutation.baselines)
    print(f"{total} mutants against {cases} cases: {killed} killed, {total - killed} survived "
          f"(score {mutation.percent:g}%)", file=out)
    print(f"CPU {cpu:.1f} s, wall {wall:.1f} s (target: >= {TARGET_MUTANTS} mutants in under "
          f"{TARGET_SECONDS:g} s)", file=out)
    return {"mutants": total, "killed": killed, "cases": cases, "cpu": cpu, "wall": wall}


def measured(figures: dict[str, Any]) -> list[Any]:
    """The run's figure for the targets table (``targets.py``)."""
    from _measure import Measured

    return [Measured("mutate", f"{figures['mutants']} mutants in {figures['wall']:.1f} s wall "
                     f"({figures['cpu']:.1f} s CPU)", figures["mutants"] >= TARGET_MUTANTS
                     and figures["wall"] < TARGET_SECONDS)]


if __name__ == "__main__":
    import sys

    figures = main()
    if not sys.argv[1:]:  # the target is about the bundled scenarios
        from targets import publish

        publish(measured(figures))
