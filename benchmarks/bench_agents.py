"""Agent throughput and cold import time, optionally against llama-index-core.

    python benchmarks/bench_agents.py [--quick] [--llamaindex PATH_TO_PYTHON]

Rows: chats per second of a ReAct chat with 1 tool call, a ReAct chat with 10 sequential
tool calls and a function-calling chat with 1 tool call, on a zero-latency scripted LLM.
Each agent and its tool are built once; before every chat the script is rewound and the
agent reset (so each chat starts from empty memory: this measures a turn, not history).
Chats are timed in process CPU time (see ``_harness``). Then the cost of a step in a ReAct
chat with 16 tool calls, timed from inside the chat: the CPU time from the tool call after
which k calls have been made to the next call (k = 1..15), median over the chats. It stays
flat when a step costs no more for the steps taken before it. Then the median CPU time of
``import agentkit.agent`` in fresh interpreters, and of ``import agentkit.agent, asyncio``:
agentkit imports asyncio with its first event loop (the first chat), llama-index with the
package, so the second figure is the one to set beside it for import plus first chat.

``--llamaindex PY`` runs the same conversation on llama-index-core (AgentRunner over
ReActAgentWorker / FunctionCallingAgentWorker) with the interpreter ``PY`` of a venv that
has it (see setup_llamaindex.sh) and prints agentkit's speed relative to it.
"""

from __future__ import annotations

import argparse
import sys
from contextlib import nullcontext
from pathlib import Path
from typing import Any, TextIO

_HERE = Path(__file__).resolve().parent
if str(_HERE) not in sys.path:
    sys.path.insert(0, str(_HERE))

from _conversation import SCENARIOS, SWEEP, answer  # noqa: E402
from _harness import Throughput  # noqa: E402
from _measure import cold_imports, side_session, table  # noqa: E402
from _rates import heading, parse_counts, rate_parser, rate_table, same_conversation  # noqa: E402

TARGET_RATIO = 10.0  # agentkit's chats/s over llama-index-core's, every row
TARGET_FLAT = 0.10  # no step of the sweep over 10% dearer than the step after the first call
TARGET_IMPORT_RATIO = 10.0  # llama_index.core.agent's import time over agentkit.agent's
TARGET_IMPORT_MS = 150.0  # without --llamaindex to compare with
# agentkit imports asyncio (with ssl, socket, concurrent.futures) with its first event loop,
# at the first chat, where llama-index imports it with the package: also timed, and shown
WITH_LOOP = "agentkit.agent, asyncio"
QUICK = {"chats": 50, "rounds": 3, "warmup": 3, "import_runs": 3}
FULL = {"chats": 1000, "rounds": 5, "warmup": 20, "import_runs": 7}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = rate_parser(__doc__ or "", "chat",
                         "python of a venv with llama-index-core: compare against it")
    parser.add_argument("--import-runs", type=int, help="fresh interpreters for import time")
    return parse_counts(parser, argv, QUICK, FULL)


def measure(args: argparse.Namespace) -> tuple[dict[str, Any], dict[str, Any]]:
    """Every scenario on agentkit and, with ``--llamaindex``, on llama-index-core, the two
    taking turns round by round (the first to go alternates): load from other jobs on a
    shared machine falls on both alike. Returns (ours, theirs)."""
    from _agentkit_side import build_chat, build_tool, inspect
    from agentkit.core.sim import simulation

    scenarios = (*SCENARIOS, SWEEP)
    with simulation(seed=0), (side_session(args.llamaindex, _HERE / "_llamaindex_side.py",
                                           ["throughput", "--chats", str(args.chats),
                                            "--warmup", str(args.warmup)])
                              if args.llamaindex else nullcontext()) as ask:
        tool = build_tool()
        ours = {key: Throughput(build_chat(kind, calls, tool), inspect, answer(calls), calls,
                                chats=args.chats, warmup=args.warmup)
                for key, _label, kind, calls in scenarios}
        for key, *_ in scenarios:
            request = "steps" if key == SWEEP[0] else "round"
            for number in range(args.rounds):
                if ask is not None and number % 2:
                    ask({request: key})
                getattr(ours[key], request)()
                if ask is not None and not number % 2:
                    ask({request: key})
        return ({key: measured.result() for key, measured in ours.items()},
                {key: ask({"result": key}) for key, *_ in scenarios} if ask else {})


def main(argv: list[str] | None = None, out: TextIO = sys.stdout) -> dict[str, Any]:
    """Run, print the tables to ``out`` and return the numbers."""
    args = parse_args(argv)
    ours, theirs = measure(args)
    import_ms = cold_imports([(sys.executable, "agentkit.agent"), (sys.executable, WITH_LOOP)] + (
        [(args.llamaindex, "llama_index.core.agent")] if args.llamaindex else []),
        args.import_runs)

    print(heading("agent", args.rounds), file=out)
    print(rate_table([(key, label) for key, label, _kind, _calls in SCENARIOS], ours, theirs,
                     "chat", "llama-index"), file=out)

    sides = {"agentkit": ours, **({"llama-index": theirs} if theirs else {})}
    steps = {side: step_us(numbers) for side, numbers in sides.items()}
    print(f"\ncost per step: {SWEEP[1]} (median CPU time from a tool call to the next, "
          "the garbage collector's pauses left out: see _conversation.CallTimes)\n",
          file=out)
    headers = ["tool calls before the step"]
    for side in sides:
        headers += [f"{side} us/step", "vs after 1"]
    rows = []
    for before in steps["agentkit"]:
        row = [str(before)]
        for side in sides:
            cost = steps[side][before]
            row += [f"{cost:,.1f}", f"{cost / steps[side][1] - 1:+.1%}"]
        rows.append(row)
    print(table(rows, headers), file=out)

    print(f"\ncold import (median CPU time of {args.import_runs} fresh interpreters)\n",
          file=out)
    ak_ms = import_ms["agentkit.agent"]
    print(table([[module, f"{ms:.1f}", f"{ms / ak_ms:.2f}x"] for module, ms in import_ms.items()],
                ["module", "ms", "vs agentkit"]), file=out)
    print(f"({WITH_LOOP}: the import and the event loop agentkit loads at the first chat)",
          file=out)

    print("\ntargets", file=out)
    first, *_, last = steps["agentkit"]
    growth = {side: max(cost / costs[first] - 1 for before, cost in costs.items() if before > first)
              for side, costs in steps.items()}
    if theirs:
        print(same_conversation(ours, theirs), file=out)
        for key, label, _kind, _calls in SCENARIOS:
            ratio = ours[key]["rate"] / theirs[key]["rate"]
            print(f"  {label}: chats/s >= {TARGET_RATIO:.0f}x llama-index: "
                  f"{_verdict(ratio >= TARGET_RATIO)} ({ratio:.2f}x)", file=out)
    print(f"  cost per step does not grow with the steps taken: no step after {first + 1} to "
          f"{last} tool calls costs over {TARGET_FLAT:.0%} more than the step after {first}: "
          f"{_verdict(growth['agentkit'] <= TARGET_FLAT)} (largest growth "
          + ", ".join(f"{side} {value:+.1%}" for side, value in growth.items()) + ")", file=out)
    if theirs:
        li_ms = import_ms["llama_index.core.agent"]
        print(f"  import agentkit.agent <= 1/{TARGET_IMPORT_RATIO:.0f} of llama_index.core.agent: "
              f"{_verdict(li_ms / ak_ms >= TARGET_IMPORT_RATIO)} ({ak_ms:.1f} ms vs "
              f"{li_ms:.1f} ms: 1/{li_ms / ak_ms:.1f}; with asyncio "
              f"1/{li_ms / import_ms[WITH_LOOP]:.1f})", file=out)
    else:
        print(f"  import agentkit.agent < {TARGET_IMPORT_MS:.0f} ms: "
              f"{_verdict(ak_ms < TARGET_IMPORT_MS)} ({ak_ms:.1f} ms)", file=out)
    return {"agentkit": ours, "llamaindex": theirs, "import_ms": import_ms}


def measured(figures: dict[str, Any]) -> list[Any]:
    """The run's figures for the targets table (``targets.py``): with ``--llamaindex`` only,
    every target being a comparison with it."""
    from _measure import Measured

    ours, theirs, import_ms = figures["agentkit"], figures["llamaindex"], figures["import_ms"]
    if not theirs:
        return []
    found = []
    for key, target in (("react_1", "agents_react_1"), ("react_10", "agents_react_10"),
                        ("fc_1", "agents_fc_1")):
        ratio = ours[key]["rate"] / theirs[key]["rate"]
        found.append(Measured(target, f"{ratio:.2f}x", ratio >= TARGET_RATIO))
    steps = {"agentkit": step_us(ours), "llama-index": step_us(theirs)}
    growth = {side: max(cost / costs[1] - 1 for before, cost in costs.items() if before > 1)
              for side, costs in steps.items()}
    found.append(Measured("agents_per_step", f"{growth['agentkit']:+.1%} (llama-index "
                          f"{growth['llama-index']:+.1%})", growth["agentkit"] <= TARGET_FLAT))
    share = import_ms["llama_index.core.agent"] / import_ms["agentkit.agent"]
    found.append(Measured("agents_import", f"1/{share:.1f}", share >= TARGET_IMPORT_RATIO))
    return found


def step_us(numbers: dict[str, Any]) -> dict[int, float]:
    """Microseconds of CPU time of the sweep chat's step after k tool calls, by k (a side's
    record has come through JSON, so its keys may be strings)."""
    return {int(before): seconds * 1e6
            for before, seconds in numbers[SWEEP[0]]["steps"].items()}


def _verdict(met: bool) -> str:
    return "met" if met else "MISSED"


if __name__ == "__main__":
    figures = main()
    if "--quick" not in sys.argv[1:]:  # a smoke run's figures are not measurements
        from targets import publish

        publish(measured(figures))
