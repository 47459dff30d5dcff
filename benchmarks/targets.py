"""The table of every benchmark target with its last three measured figures, in the README.

    python benchmarks/targets.py                  # rewrite the table in benchmarks/README.md
    python benchmarks/targets.py --add ID FIGURE met|missed   # a figure measured by hand

A benchmark run from the command line (not ``--quick``) appends its figures to
``benchmarks/results.jsonl`` (``_measure.record``: one JSON line per target, with the time
and the load average) and rewrites the table (:func:`publish`); this script reads that file
and rewrites the table between the README's two marker lines in place, the rest of the README
untouched. Figures measured another way (the test suite's time, a
side-by-side run by hand) go in with ``--add``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, TextIO

_HERE = Path(__file__).resolve().parent
if str(_HERE) not in sys.path:
    sys.path.insert(0, str(_HERE))

from _measure import RESULTS, Measured, record  # noqa: E402

README = _HERE / "README.md"
BEGIN = "<!-- targets table: begin (python benchmarks/targets.py rewrites it) -->"
END = "<!-- targets table: end -->"
SHOWN = 3
"""How many of a target's last figures the table shows, newest first."""

TARGETS: dict[str, tuple[str, str]] = {
    "agents_react_1": ("bench_agents.py", "ReAct chat, 1 tool call: chats/s >= 10x "
                       "llama-index-core 0.12's"),
    "agents_react_10": ("bench_agents.py", "ReAct chat, 10 tool calls: chats/s >= 10x "
                        "llama-index-core 0.12's"),
    "agents_fc_1": ("bench_agents.py", "function-calling chat, 1 tool call: chats/s >= 10x "
                    "llama-index-core 0.12's"),
    "agents_per_step": ("bench_agents.py", "ReAct cost per step does not grow from 1 to 15 "
                        "tool calls (+10% at most)"),
    "agents_import": ("bench_agents.py", "`import agentkit.agent` <= 1/10 of "
                      "`llama_index.core.agent`'s"),
    "long_conversation_flat": ("bench_long_conversation.py", "time per chat flat across "
                               "1,000 chats"),
    "scenarios_replay": ("bench_scenarios.py", "a scenario replay < 2 ms of CPU (1,000 "
                         "replays < 2 s; issue 36)"),
    "scenarios_60s": ("bench_scenarios.py", "a 60 s simulated-latency scenario replays in "
                      "< 50 ms"),
    "planning_critical_path": ("bench_planning.py", "simulated wall-time ratios = the "
                               "critical-path ratios exactly"),
    "planning_real_ms": ("bench_planning.py", "real time of a simulated-latency run < 50 ms"),
    "workflows_1": ("bench_workflows.py", "`AgentWorkflow` + `FunctionAgent`, 1 tool call: "
                    "runs/s >= 10x llama-index-core 0.14's"),
    "workflows_10": ("bench_workflows.py", "`AgentWorkflow` + `FunctionAgent`, 10 tool "
                     "calls: runs/s >= 10x llama-index-core 0.14's"),
    "bridge_sdk_1": ("bench_bridge.py", "openai-SDK agent, 1 tool call, through the bridge: "
                     "runs/s >= 2x vcrpy's at its defaults (bound by the SDK's own cost: the "
                     "figure in brackets is a bridge costing nothing)"),
    "bridge_sdk_10": ("bench_bridge.py", "openai-SDK agent, 10 tool calls, through the "
                      "bridge: runs/s >= 2x vcrpy's at its defaults (bound by the SDK's own "
                      "cost: the figure in brackets is a bridge costing nothing)"),
    "bridge_wire_1": ("bench_bridge.py", "raw httpx client (no SDK), 1 tool call, through the "
                      "bridge: runs/s >= 2x vcrpy's at its defaults"),
    "bridge_wire_10": ("bench_bridge.py", "raw httpx client (no SDK), 10 tool calls, through "
                       "the bridge: runs/s >= 2x vcrpy's at its defaults"),
    "trace_size_linear": ("bench_trace_size.py", "trace and cassette bytes grow linearly "
                          "with turns"),
    "rate_limit_goodput": ("bench_rate_limit.py", "live evaluation holds >= 98% of a rate "
                           "limit"),
    "mutate": ("bench_mutate.py", ">= 50 offline mutants in under a minute on 2 cores"),
    "suite_bfcl_memory": ("bench_suite_bfcl.py", "one `agentkit report` of BFCL's 1,240 "
                          "single-turn scenarios under 4 agent types: peak memory grows with "
                          "the rows only (fit over 310, 620, 1,240 scenarios: per row <= 3x "
                          "a row's own size)"),
    "test_suite": ("(by hand, --add)", "the default test run <= 2 minutes wall on an idle "
                   "2-core machine"),
}
"""Every target: its id (what results.jsonl names) -> the script measuring it, the claim."""


class TargetsError(Exception):
    """A results file or README the table cannot be made from; the message says where."""


def read_results(path: Path) -> dict[str, list[dict[str, Any]]]:
    """The figures of ``path`` by target, in the order they were recorded."""
    found: dict[str, list[dict[str, Any]]] = {target: [] for target in TARGETS}
    if not path.exists():
        return found
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except json.JSONDecodeError as exc:
            raise TargetsError(f"{path}:{number}: not a JSON line: {exc.msg}") from None
        if not isinstance(entry, dict) or not {"target", "figure", "met", "at"} <= set(entry):
            raise TargetsError(f"{path}:{number}: a result needs target, figure, met and at")
        if entry["target"] not in TARGETS:
            raise TargetsError(f"{path}:{number}: unknown target {entry['target']!r} (known: "
                               f"{', '.join(TARGETS)})")
        found[entry["target"]].append(entry)
    return found


def _cell(entry: dict[str, Any]) -> str:
    load = entry.get("load")
    return (f"{entry['figure']} {'met' if entry['met'] else '**missed**'} "
            f"({entry['at']} UTC, load {'?' if load is None else load})")


def render(results: dict[str, list[dict[str, Any]]]) -> str:
    """The Markdown table: one row per target, its last :data:`SHOWN` figures newest first."""
    lines = ["| target | script | last | before | before that |", "| --- | --- | --- | --- | --- |"]
    for target, (script, claim) in TARGETS.items():
        last = [_cell(entry) for entry in reversed(results[target][-SHOWN:])]
        last += ["-"] * (SHOWN - len(last))
        lines.append(f"| {claim} | `{script}` | {' | '.join(last)} |")
    return "\n".join(lines)


def rewrite(readme: Path, table: str) -> bool:
    """Put ``table`` between the README's markers (written atomically); False if unchanged."""
    text = readme.read_text(encoding="utf-8")
    if text.count(BEGIN) != 1 or text.count(END) != 1 or text.index(BEGIN) > text.index(END):
        raise TargetsError(f"{readme}: needs one line `{BEGIN}` and, after it, one line "
                           f"`{END}`")
    head, rest = text.split(BEGIN, 1)
    tail = rest.split(END, 1)[1]
    new = f"{head}{BEGIN}\n{table}\n{END}{tail}"
    if new == text:
        return False
    temporary = readme.with_name(f".{readme.name}.tmp")
    temporary.write_text(new, encoding="utf-8")
    temporary.replace(readme)
    return True


def publish(measured: list[Measured], results: Path = RESULTS, readme: Path = README) -> None:
    """What a benchmark run from the command line does with its figures: append them to
    ``results`` and rewrite the table in ``readme``, so the two never disagree."""
    record(measured, results)
    rewrite(readme, render(read_results(results)))


def main(argv: list[str] | None = None, out: TextIO = sys.stdout) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--results", type=Path, default=RESULTS, help="the results file")
    parser.add_argument("--readme", type=Path, default=README, help="the README to rewrite")
    parser.add_argument("--add", nargs=3, metavar=("TARGET", "FIGURE", "MET"),
                        help="record a figure measured by hand first (MET: met or missed)")
    args = parser.parse_args(argv)
    try:
        if args.add:
            target, figure, met = args.add
            if target not in TARGETS or met not in ("met", "missed"):
                parser.error(f"--add {target} {figure} {met}: give a known target ("
                             f"{', '.join(TARGETS)}) and met or missed")
            record([Measured(target, figure, met == "met")], args.results)
        changed = rewrite(args.readme, render(read_results(args.results)))
    except TargetsError as exc:
        print(f"targets.py: {exc}", file=sys.stderr)
        return 1
    print(f"{args.readme}: targets table {'rewritten' if changed else 'already up to date'}",
          file=out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
