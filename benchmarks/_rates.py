"""The throughput comparison bench_agents.py and bench_workflows.py share: their command line
(counts, ``--quick``, ``--llamaindex``), the LlamaIndex side's records, the table of rates and
the target lines. ``unit`` names what is counted (``chat``, ``run``); plain Python only."""

from __future__ import annotations

import argparse
import os
import platform
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from _measure import apply_counts, side_records, table

Rates = dict[str, dict[str, Any]]


def rate_parser(doc: str, unit: str, llamaindex_help: str) -> argparse.ArgumentParser:
    """The options of a throughput benchmark: ``--quick``, ``--<unit>s``, ``--rounds``,
    ``--warmup`` and ``--llamaindex PYTHON`` (a script adds its own before parsing)."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small counts (CI smoke)")
    parser.add_argument(f"--{unit}s", type=int, help=f"{unit}s per timed round of a 1-call row "
                        f"(a 10-call row runs a tenth as many)")
    parser.add_argument("--rounds", type=int, help="timed rounds per row; the median counts")
    parser.add_argument("--warmup", type=int, help=f"untimed {unit}s before the rounds")
    parser.add_argument("--llamaindex", metavar="PYTHON", help=llamaindex_help)
    return parser


def parse_counts(parser: argparse.ArgumentParser, argv: list[str] | None,
                 quick: dict[str, int], full: dict[str, int]) -> argparse.Namespace:
    """The parsed arguments, each count not given taken from ``quick`` or ``full``."""
    args = parser.parse_args(argv)
    return apply_counts(parser, args, quick if args.quick else full)


def their_rates(args: argparse.Namespace, script: Path, unit: str, *command: str) -> Rates:
    """The LlamaIndex side's rows by key: ``script`` run by ``args.llamaindex`` with
    ``command`` and the counts."""
    records = side_records(args.llamaindex, script,
                           [*command, f"--{unit}s", str(getattr(args, f"{unit}s")),
                            "--rounds", str(args.rounds), "--warmup", str(args.warmup)])
    return {record.pop("key"): record for record in records}


def heading(what: str, rounds: int) -> str:
    """The first line of a report: what was measured, where and how."""
    return (f"agentkit {what} benchmarks: Python {platform.python_version()}, "
            f"{os.cpu_count()} CPUs, scripted LLM with zero latency, median of {rounds} rounds "
            "(process CPU time)\n")


def _rate(value: float) -> str:
    return f"{value:,.0f}" if value >= 100 else f"{value:,.1f}"


def rate_table(rows: Sequence[tuple[str, str]], ours: Rates, theirs: Rates, unit: str,
               their_name: str) -> str:
    """One row per ``(key, label)``: agentkit's rate, and LlamaIndex's beside it if measured."""
    headers = ["scenario", f"{unit}s/round", f"agentkit {unit}s/s", f"us/{unit}"]
    if theirs:
        headers += [f"{their_name} {unit}s/s", "agentkit/llama-index"]
    lines = []
    for key, label in rows:
        rate = ours[key]["rate"]
        line = [label, str(ours[key]["chats"]), _rate(rate), f"{1e6 / rate:,.0f}"]
        if theirs:
            line += [_rate(theirs[key]["rate"]), f"{rate / theirs[key]['rate']:.2f}x"]
        lines.append(line)
    return table(lines, headers)


def same_conversation(ours: Rates, theirs: Rates) -> str:
    """Whether both sides had the same conversation (their transcript digests agree)."""
    same = all(ours[key]["digest"] == theirs[key]["digest"] for key in ours)
    return f"  same conversation on both sides (transcript digests): {'yes' if same else 'NO'}"


def target_line(claim: str, ratio: float, target: float) -> str:
    """``claim >= target x llama-index: met (ratio)`` or ``MISSED``."""
    return (f"  {claim} >= {target:.0f}x llama-index: "
            f"{'met' if ratio >= target else 'MISSED'} ({ratio:.2f}x)")
