"""Agent throughput and cold import time, optionally against llama-index-core.

    python benchmarks/bench_agents.py [--quick] [--llamaindex PATH_TO_PYTHON]

Rows: chats per second of a ReAct chat with 1 tool call, a ReAct chat with 10 sequential
tool calls and a function-calling chat with 1 tool call, on a zero-latency scripted LLM.
Each agent and its tool are built once; before every chat the script is rewound and the
agent reset (so each chat starts from empty memory: this measures a turn, not history).
Chats are timed in process CPU time (see ``_harness``). Then the median wall time of
``import agentkit.agent`` in fresh interpreters.

``--llamaindex PY`` runs the same conversation on llama-index-core (AgentRunner over
ReActAgentWorker / FunctionCallingAgentWorker) with the interpreter ``PY`` of a venv that
has it (see setup_llamaindex.sh) and prints agentkit's speed relative to it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, TextIO

_HERE = Path(__file__).resolve().parent
if str(_HERE) not in sys.path:
    sys.path.insert(0, str(_HERE))

from _conversation import SCENARIOS, answer  # noqa: E402
from _harness import throughput  # noqa: E402
from _measure import cold_import_ms, table  # noqa: E402
from _rates import (  # noqa: E402
    heading,
    parse_counts,
    rate_parser,
    rate_table,
    same_conversation,
    target_line,
    their_rates,
)

TARGET_RATIO = 5.0
TARGET_IMPORT_MS = 150.0
QUICK = {"chats": 50, "rounds": 3, "warmup": 3, "import_runs": 3}
FULL = {"chats": 1000, "rounds": 5, "warmup": 20, "import_runs": 7}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = rate_parser(__doc__ or "", "chat",
                         "python of a venv with llama-index-core: compare against it")
    parser.add_argument("--import-runs", type=int, help="fresh interpreters for import time")
    return parse_counts(parser, argv, QUICK, FULL)


def run_agentkit(args: argparse.Namespace) -> dict[str, dict[str, Any]]:
    from _agentkit_side import build_chat, build_tool, inspect
    from agentkit.core.sim import simulation

    results = {}
    with simulation(seed=0):
        tool = build_tool()
        for key, _label, kind, calls in SCENARIOS:
            results[key] = throughput(build_chat(kind, calls, tool), inspect, answer(calls), calls,
                                      chats=args.chats, rounds=args.rounds, warmup=args.warmup)
    return results


def main(argv: list[str] | None = None, out: TextIO = sys.stdout) -> dict[str, Any]:
    """Run, print the tables to ``out`` and return the numbers."""
    args = parse_args(argv)
    ours = run_agentkit(args)
    theirs = (their_rates(args, _HERE / "_llamaindex_side.py", "chat", "throughput")
              if args.llamaindex else {})
    import_ms = {"agentkit.agent": cold_import_ms(sys.executable, "agentkit.agent",
                                                  args.import_runs)}
    if args.llamaindex:
        import_ms["llama_index.core.agent"] = cold_import_ms(
            args.llamaindex, "llama_index.core.agent", args.import_runs)

    print(heading("agent", args.rounds), file=out)
    print(rate_table([(key, label) for key, label, _kind, _calls in SCENARIOS], ours, theirs,
                     "chat", "llama-index"), file=out)

    print(f"\ncold import (median of {args.import_runs} fresh interpreters)\n", file=out)
    ak_ms = import_ms["agentkit.agent"]
    print(table([[module, f"{ms:.1f}", f"{ms / ak_ms:.2f}x"] for module, ms in import_ms.items()],
                ["module", "ms", "vs agentkit"]), file=out)

    print("\ntargets", file=out)
    if theirs:
        print(same_conversation(ours, theirs), file=out)
        print(target_line("ReAct 1-call chats/s", ours["react_1"]["rate"]
                          / theirs["react_1"]["rate"], TARGET_RATIO), file=out)
    print(f"  import agentkit.agent < {TARGET_IMPORT_MS:.0f} ms: "
          f"{'met' if ak_ms < TARGET_IMPORT_MS else 'MISSED'} ({ak_ms:.1f} ms)", file=out)
    return {"agentkit": ours, "llamaindex": theirs, "import_ms": import_ms}


if __name__ == "__main__":
    main()
