"""AgentWorkflow throughput, optionally against llama-index-core 0.14's AgentWorkflow.

    python benchmarks/bench_workflows.py [--quick] [--llamaindex PATH_TO_PYTHON]

Rows: runs per second of a one-agent ``AgentWorkflow`` whose (non-streaming) ``FunctionAgent``
makes 1 or 10 tool calls per run (one per model reply), on a zero-latency scripted LLM, each
run from empty memory. The workflow and its tool are built once; before every run the script
is rewound. Runs are timed in process CPU time (see ``_harness``).

``--llamaindex PY`` runs the same workflow, tool and script on llama-index-core 0.14 with the
interpreter ``PY`` of a venv that has it (see setup_llamaindex014.sh: 0.14 has
``AgentWorkflow``; the other benchmarks use 0.12's ``AgentRunner``, which 0.14 removed).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
from pathlib import Path
from typing import Any, TextIO

_HERE = Path(__file__).resolve().parent
if str(_HERE) not in sys.path:
    sys.path.insert(0, str(_HERE))

from _conversation import WORKFLOW_SCENARIOS, answer  # noqa: E402
from _harness import throughput  # noqa: E402
from _measure import apply_counts, side_records, table  # noqa: E402

TARGET_RATIO = 10.0
QUICK = {"runs": 50, "rounds": 3, "warmup": 3}
FULL = {"runs": 1000, "rounds": 5, "warmup": 20}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small counts (CI smoke)")
    parser.add_argument("--llamaindex", metavar="PY",
                        help="python of a venv with llama-index-core 0.14 to compare against")
    parser.add_argument("--runs", type=int, help="runs per timed round of the 1-call row (the "
                        "10-call row runs a tenth as many)")
    parser.add_argument("--rounds", type=int, help="timed rounds per row; the median counts")
    parser.add_argument("--warmup", type=int, help="untimed runs before the rounds")
    args = parser.parse_args(argv)
    return apply_counts(parser, args, QUICK if args.quick else FULL)


def run_agentkit(args: argparse.Namespace) -> dict[str, dict[str, Any]]:
    from _agentkit_side import build_tool, build_workflow_run
    from agentkit.core.sim import simulation

    results = {}
    with simulation(seed=0):
        tool = build_tool()
        for key, _label, calls in WORKFLOW_SCENARIOS:
            results[key] = throughput(build_workflow_run(calls, tool), lambda r: r,
                                      answer(calls), calls, chats=args.runs,
                                      rounds=args.rounds, warmup=args.warmup)
    return results


def run_llamaindex(args: argparse.Namespace) -> dict[str, dict[str, Any]]:
    records = side_records(args.llamaindex, _HERE / "_llamaindex_workflow_side.py",
                           ["--runs", str(args.runs), "--rounds", str(args.rounds),
                            "--warmup", str(args.warmup)])
    return {record.pop("key"): record for record in records}


def main(argv: list[str] | None = None, out: TextIO = sys.stdout) -> dict[str, Any]:
    """Run, print the table to ``out`` and return the numbers."""
    args = parse_args(argv)
    ours = run_agentkit(args)
    theirs = run_llamaindex(args) if args.llamaindex else {}
    print(f"agentkit workflow benchmarks: Python {platform.python_version()}, "
          f"{os.cpu_count()} CPUs, scripted LLM with zero latency, median of "
          f"{args.rounds} rounds (process CPU time)\n", file=out)
    headers = ["scenario", "runs/round", "agentkit runs/s", "us/run"]
    if theirs:
        headers += ["llama-index 0.14 runs/s", "agentkit/llama-index"]
    rows = []
    for key, label, _calls in WORKFLOW_SCENARIOS:
        rate = ours[key]["rate"]
        row = [label, str(ours[key]["chats"]), f"{rate:,.0f}", f"{1e6 / rate:,.0f}"]
        if theirs:
            row += [f"{theirs[key]['rate']:,.1f}", f"{rate / theirs[key]['rate']:.2f}x"]
        rows.append(row)
    print(table(rows, headers), file=out)
    if theirs:
        print("\ntargets", file=out)
        same = all(ours[key]["digest"] == theirs[key]["digest"] for key in ours)
        print(f"  same conversation on both sides (transcript digests): {'yes' if same else 'NO'}",
              file=out)
        for key, label, _calls in WORKFLOW_SCENARIOS:
            ratio = ours[key]["rate"] / theirs[key]["rate"]
            print(f"  {label}: runs/s >= {TARGET_RATIO:.0f}x llama-index: "
                  f"{'met' if ratio >= TARGET_RATIO else 'MISSED'} ({ratio:.2f}x)", file=out)
    return {"agentkit": ours, "llamaindex": theirs}


if __name__ == "__main__":
    main()
