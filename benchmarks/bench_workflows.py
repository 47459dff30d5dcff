"""AgentWorkflow throughput, optionally against llama-index-core 0.14's AgentWorkflow.

    python benchmarks/bench_workflows.py [--quick] [--llamaindex PATH_TO_PYTHON]

Rows: runs per second of a one-agent ``AgentWorkflow`` whose (non-streaming) ``FunctionAgent``
makes 1 or 10 tool calls per run (one per model reply), on a zero-latency scripted LLM, each
run from empty memory. The workflow and its tool are built once; before every run the script
is rewound. Runs are timed in process CPU time (see ``_harness``).

``--llamaindex PY`` runs the same workflow, tool and script on llama-index-core 0.14 with the
interpreter ``PY`` of a venv that has it (see ``setup_llamaindex.sh 0.14``: 0.14 has
``AgentWorkflow``; the other benchmarks use 0.12's ``AgentRunner``, which 0.14 removed).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, TextIO

_HERE = Path(__file__).resolve().parent
if str(_HERE) not in sys.path:
    sys.path.insert(0, str(_HERE))

from _conversation import WORKFLOW_SCENARIOS, answer  # noqa: E402
from _harness import throughput  # noqa: E402
from _rates import (  # noqa: E402
    heading,
    parse_counts,
    rate_parser,
    rate_table,
    same_conversation,
    target_line,
    their_rates,
)

TARGET_RATIO = 10.0
QUICK = {"runs": 50, "rounds": 3, "warmup": 3}
FULL = {"runs": 1000, "rounds": 5, "warmup": 20}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    return parse_counts(rate_parser(__doc__ or "", "run", "python of a venv with "
                                    "llama-index-core 0.14 to compare against"),
                        argv, QUICK, FULL)


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


def main(argv: list[str] | None = None, out: TextIO = sys.stdout) -> dict[str, Any]:
    """Run, print the table to ``out`` and return the numbers."""
    args = parse_args(argv)
    ours = run_agentkit(args)
    theirs = (their_rates(args, _HERE / "_llamaindex_workflow_side.py", "run")
              if args.llamaindex else {})
    print(heading("workflow", args.rounds), file=out)
    rows = [(key, label) for key, label, _calls in WORKFLOW_SCENARIOS]
    print(rate_table(rows, ours, theirs, "run", "llama-index 0.14"), file=out)
    if theirs:
        print("\ntargets", file=out)
        print(same_conversation(ours, theirs), file=out)
        for key, label in rows:
            print(target_line(f"{label}: runs/s", ours[key]["rate"] / theirs[key]["rate"],
                              TARGET_RATIO), file=out)
    return {"agentkit": ours, "llamaindex": theirs}


def measured(figures: dict[str, Any]) -> list[Any]:
    """The run's figures for the targets table (``targets.py``): ratios, so none without the
    LlamaIndex side (``--llamaindex``)."""
    from _measure import Measured

    ours, theirs = figures["agentkit"], figures["llamaindex"]
    if not theirs:
        return []
    found = []
    for key, _label, calls in WORKFLOW_SCENARIOS:
        ratio = ours[key]["rate"] / theirs[key]["rate"]
        found.append(Measured(f"workflows_{calls}", f"{ratio:.2f}x", ratio >= TARGET_RATIO))
    return found


if __name__ == "__main__":
    figures = main()
    if "--quick" not in sys.argv[1:]:  # a smoke run's figures are not measurements
        from targets import publish

        publish(measured(figures))
