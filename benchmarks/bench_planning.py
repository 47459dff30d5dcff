"""Planning architectures on four independent tools: simulated speed-ups and real cost.

    python benchmarks/bench_planning.py [--quick] [--runs N] [--llamaindex PATH_TO_PYTHON]

ReAct, function calling, LLMCompiler and Chain-of-Abstraction answer the same question with
the same scripted model replies: four independent ``lookup_population`` calls of 0.1 s each,
once with LLM calls taking no time and once with 0.2 s per LLM call. Per row: the LLM and
tool calls, the serial time (every latency added up), the critical path (the longest chain
of calls that must wait for each other), the ideal ratio (ReAct's critical path over the
row's), then agentkit's simulated wall time and ratio (ReAct's wall time over the row's) and
the real time one run takes.

agentkit runs on virtual time (tools ``await agentkit.core.sim.asleep(0.1)``, the scripted LLM
has ``latency=``), so its wall time is exact and a run costs only the agent's own work.
``--llamaindex PY`` runs the same agents, scripts and tools on llama-index-core 0.12 with
``llama-index-agent-llm-compiler`` and ``llama-index-packs-agents-coa`` (see
setup_llamaindex.sh) with real sleeps (``asyncio.sleep``; LlamaIndex has no virtual time),
a few runs per row, and prints its wall times and ratios beside agentkit's.
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

from _conversation import (  # noqa: E402
    ARCHITECTURES,
    LLM_LATENCIES,
    LOOKUPS,
    TOOL_LATENCY,
    TOOL_NAME,
    planning_times,
)
from _harness import planning  # noqa: E402
from _measure import apply_counts, side_records, table  # noqa: E402

TARGET_REAL_MS = 50.0
QUICK = {"runs": 5, "warmup": 1, "llamaindex_runs": 1, "llamaindex_warmup": 0}
FULL = {"runs": 200, "warmup": 10, "llamaindex_runs": 5, "llamaindex_warmup": 1}
_LABELS = dict(ARCHITECTURES)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="few runs (CI smoke)")
    parser.add_argument("--runs", type=int, help="timed agentkit runs per row (median)")
    parser.add_argument("--warmup", type=int, help="untimed agentkit runs per row first")
    parser.add_argument("--llamaindex", metavar="PYTHON",
                        help="python of a venv with llama-index-core and the two packages")
    parser.add_argument("--llamaindex-runs", type=int,
                        help="timed LlamaIndex runs per row (real sleeps: keep it small)")
    parser.add_argument("--llamaindex-warmup", type=int, help="untimed LlamaIndex runs per row")
    args = parser.parse_args(argv)
    counts = QUICK if args.quick else FULL
    apply_counts(parser, args, {k: v for k, v in counts.items() if "warmup" not in k})
    return apply_counts(parser, args, {k: v for k, v in counts.items() if "warmup" in k},
                        at_least=0)


def _runs(count: int) -> str:
    return f"{count} run{'s' if count != 1 else ''}"


def _key(kind: str, llm_latency: float) -> tuple[str, float]:
    return kind, llm_latency


def run_agentkit(args: argparse.Namespace) -> dict[tuple[str, float], dict[str, Any]]:
    from _agentkit_side import build_planning_run
    from agentkit.core.sim import simulation

    results = {}
    for llm_latency in LLM_LATENCIES:
        for kind, _label in ARCHITECTURES:
            with simulation(seed=0):
                run = build_planning_run(kind, llm_latency)
                results[_key(kind, llm_latency)] = planning(
                    run, kind, llm_latency, runs=args.runs, warmup=args.warmup)
    return results


def run_llamaindex(args: argparse.Namespace) -> tuple[dict[tuple[str, float], dict[str, Any]],
                                                       dict[str, str]]:
    results, versions = {}, {}
    for record in side_records(args.llamaindex, _HERE / "_llamaindex_side.py",
                               ["planning", "--runs", str(args.llamaindex_runs),
                                "--warmup", str(args.llamaindex_warmup)]):
        if "versions" in record:
            versions = record["versions"]
        else:
            results[_key(record["kind"], record["llm_latency"])] = record
    return results, versions


def _ratio(rows: dict[tuple[str, float], dict[str, Any]], kind: str, llm_latency: float,
           field: str = "wall") -> float:
    return rows[_key("react", llm_latency)][field] / rows[_key(kind, llm_latency)][field]


def _same(a: float, b: float) -> bool:
    """Equal up to float rounding (simulated times are sums of 0.1 s and 0.2 s steps)."""
    return abs(a - b) < 1e-9


def main(argv: list[str] | None = None, out: TextIO = sys.stdout) -> dict[str, Any]:
    """Run, print the table to ``out`` and return the numbers."""
    args = parse_args(argv)
    ours = run_agentkit(args)
    theirs, versions = run_llamaindex(args) if args.llamaindex else ({}, {})
    ideal = {_key(kind, llm): planning_times(kind, llm)
             for llm in LLM_LATENCIES for kind, _ in ARCHITECTURES}

    print(f"planning benchmark: {len(LOOKUPS)} independent {TOOL_NAME} calls of "
          f"{TOOL_LATENCY:g} s each, LLM calls of {' and '.join(f'{x:g}' for x in LLM_LATENCIES)}"
          f" s; Python {platform.python_version()}, {os.cpu_count()} CPUs", file=out)
    print(f"agentkit: virtual time, median of {_runs(args.runs)} per row", file=out)
    if theirs:
        print(f"llama-index ({', '.join(f'{n} {v}' for n, v in versions.items())}): real "
              f"sleeps, median of {args.llamaindex_runs} runs per row", file=out)
    print("ratio = ReAct's wall time / the row's wall time; ideal = ReAct's critical path / "
          "the row's\n", file=out)

    headers = ["architecture", "LLM s", "LLM calls", "tool calls", "serial s",
               "critical path s", "ideal ratio", "agentkit wall s", "agentkit ratio",
               "agentkit ms/run"]
    if theirs:
        headers += ["llama-index wall s", "llama-index ratio"]
    rows = []
    for key, row in ours.items():
        kind, llm = key
        line = [_LABELS[kind], f"{llm:.1f}", str(ideal[key]["llm_calls"]),
                str(ideal[key]["tool_calls"]), f"{ideal[key]['serial']:.3f}",
                f"{ideal[key]['critical_path']:.3f}",
                f"{_ratio(ideal, kind, llm, 'critical_path'):.2f}x", f"{row['wall']:.3f}",
                f"{_ratio(ours, kind, llm):.2f}x", f"{row['real_ms']:.2f}"]
        if theirs:
            line += [f"{theirs[key]['wall']:.3f}", f"{_ratio(theirs, kind, llm):.2f}x"]
        rows.append(line)
    print(table(rows, headers), file=out)

    exact = all(_same(row["wall"], ideal[key]["critical_path"])
                and _same(row["serial"], ideal[key]["serial"]) for key, row in ours.items())
    slowest = max(row["real_ms"] for row in ours.values())
    print("\ntargets", file=out)
    print(f"  agentkit wall time = critical path (and ratio = ideal ratio) in every row: "
          f"{'met' if exact else 'MISSED'}", file=out)
    print(f"  agentkit real time per run < {TARGET_REAL_MS:g} ms in every row: "
          f"{'met' if slowest < TARGET_REAL_MS else 'MISSED'} (slowest row {slowest:.2f} ms)",
          file=out)
    return {"agentkit": ours, "llamaindex": theirs, "ideal": ideal, "versions": versions,
            "exact": exact, "slowest_ms": slowest}


def measured(figures: dict[str, Any]) -> list[Any]:
    """The run's figures for the targets table (``targets.py``)."""
    from _measure import Measured

    rows = len(figures["agentkit"])
    return [Measured("planning_critical_path", f"{'every' if figures['exact'] else 'not every'}"
                     f" row of {rows} exact", figures["exact"]),
            Measured("planning_real_ms", f"{figures['slowest_ms']:.2f} ms (slowest row)",
                     figures["slowest_ms"] < TARGET_REAL_MS)]


if __name__ == "__main__":
    figures = main()
    if "--quick" not in sys.argv[1:]:  # a smoke run's figures are not measurements
        from targets import publish

        publish(measured(figures))
