"""Long recordings: does a trace grow with the turns (not their square), and does every
recording replay within a memory budget?

    python benchmarks/bench_trace_size.py [--turns 1000 10000] [--answer-mb 50]

For each count of ``--turns``: a ReAct scenario of that many questions, each answered directly
by a scripted "live" model, is recorded (``record_scenario``: the live run, its replay, the
cassette and the trace written together), then replayed against the recorded trace, as
``agentkit replay`` does. Then a one-turn scenario whose answer is ``--answer-mb`` MB of text
is recorded and replayed the same way. Each recording and each replay runs in a fresh
interpreter, so its peak memory (the interpreter and agentkit included) is its own: on Linux
the process's ``VmHWM``, not ``ru_maxrss``, which Linux carries over ``exec`` from the process
that started it (run by a big pytest worker, it reported the worker's peak); ``ru_maxrss``
where there is no /proc. Prints the trace and cassette bytes, the real time of each phase
(agentkit already imported) and the peak memory, then whether traces grew linearly and every
phase stayed within
``--budget-mib``. Times are wall clock on whatever else the machine is doing.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from itertools import pairwise
from pathlib import Path
from typing import Any, TextIO

_HERE = Path(__file__).resolve().parent
if str(_HERE) not in sys.path:
    sys.path.insert(0, str(_HERE))

from _measure import table  # noqa: E402

#: Linear: the trace of k times the turns is at most this much more than k times the bytes.
LINEAR_TOLERANCE = 1.1


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--turns", type=int, nargs="+", default=[1000, 10000],
                        help="turn counts of the long scenarios (default: 1000 10000)")
    parser.add_argument("--answer-mb", type=float, default=50.0,
                        help="size of the long answer in MB (default 50; 0 skips it)")
    parser.add_argument("--budget-mib", type=float, default=1024.0,
                        help="the peak memory each phase must stay within (default 1024)")
    parser.add_argument("--phase", choices=["record", "replay"], help=argparse.SUPPRESS)
    parser.add_argument("--scenario", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if any(n < 1 for n in args.turns) or args.answer_mb < 0:
        parser.error("--turns must be at least 1 and --answer-mb at least 0")
    return args


def _answer(number: int) -> str:
    return (f"Thought: I can answer without using any more tools.\nAnswer: {number} + {number} "
            f"= {2 * number}, the sum you asked about in question {number}.")


def _long_answer(megabytes: float) -> str:
    words = "The sum of two numbers does not change when they swap places. "
    body = words * max(1, int(megabytes * 1_000_000) // len(words))
    return f"Thought: I can answer without using any more tools.\nAnswer: {body}"


def _write_scenario(folder: Path, name: str, questions: list[str]) -> Path:
    """A ReAct scenario recorded into ``cassettes/<name>.react.yaml`` (JSON is YAML)."""
    path = folder / f"{name}.yaml"
    path.write_text(json.dumps({
        "format": 1, "name": name, "description": "a long recording",
        "tools": [{"ref": "mocks.tools:add"}],
        "turns": [{"user": question} for question in questions],
        "agents": {"react": {"recording": f"cassettes/{name}.react.yaml"}}}), encoding="utf-8")
    return path


def _phase(phase: str, scenario: Path) -> dict[str, Any]:
    """Record or replay ``scenario`` in this process (a fresh interpreter): what it found."""
    from agentkit.harness import record_scenario
    from agentkit.llms.mock import ScriptedLLM
    from agentkit.scenario import run_scenario
    from agentkit.scenario.judge import SnapshotFiles

    turns = len(json.loads(scenario.read_text("utf-8"))["turns"])
    meta = json.loads((scenario.parent / "answer.json").read_text("utf-8"))
    answers = ([_long_answer(meta["megabytes"])] if meta["megabytes"]
               else [_answer(number) for number in range(turns)])
    started = time.perf_counter()
    if phase == "record":
        recording = record_scenario(scenario, "react", ScriptedLLM(answers), "rewrite")
        ok, problems = recording.ok and recording.written, recording.problems
    else:
        result = run_scenario(scenario, "react", snapshots=SnapshotFiles("check"))
        assert result.verdict is not None
        ok = result.passed and result.verdict.snapshot == "same"
        problems = result.verdict.lines()
    return {"seconds": time.perf_counter() - started, "ok": ok, "problems": problems[:3],
            "peak_mib": _peak_mib()}


def _peak_mib() -> float:
    """This process's own peak resident memory, in MiB (see the module docstring)."""
    try:
        status = Path("/proc/self/status").read_text("utf-8")
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    kib = next((line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:")),
               None)
    return (int(kib) if kib else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) / 1024


def _run_phase(phase: str, scenario: Path) -> dict[str, Any]:
    done = subprocess.run([sys.executable, __file__, "--phase", phase, "--scenario",
                           str(scenario)], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"the {phase} of {scenario.name} failed:\n{done.stderr[-3000:]}")
    found: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


def _measure(folder: Path, name: str, questions: list[str], megabytes: float,
             out: TextIO) -> dict[str, Any]:
    folder.mkdir(parents=True)
    (folder / "answer.json").write_text(json.dumps({"megabytes": megabytes}), "utf-8")
    scenario = _write_scenario(folder, name, questions)
    record = _run_phase("record", scenario)
    trace = folder / "__snapshots__" / name / "react.json"
    cassette = folder / "cassettes" / f"{name}.react.yaml"
    row = {"name": name, "turns": len(questions), "record": record,
           "trace_bytes": trace.stat().st_size if trace.exists() else 0,
           "cassette_bytes": cassette.stat().st_size if cassette.exists() else 0}
    row["replay"] = _run_phase("replay", scenario) if record["ok"] else None
    print(f"  {name}: recorded in {record['seconds']:.1f} s"
          + (f", replayed in {row['replay']['seconds']:.1f} s" if row["replay"] else
             f" -- not written: {record['problems']}"), file=out, flush=True)
    return row


def _cells(row: dict[str, Any]) -> list[str]:
    record, replay = row["record"], row["replay"]
    return [row["name"], f"{row['turns']:,}", f"{row['trace_bytes'] / 1e6:,.2f}",
            f"{row['cassette_bytes'] / 1e6:,.2f}", f"{record['seconds']:.1f}",
            f"{record['peak_mib']:,.0f}",
            f"{replay['seconds']:.1f}" if replay else "-",
            f"{replay['peak_mib']:,.0f}" if replay else "-",
            "yes" if replay and replay["ok"] else "NO"]


def main(argv: list[str] | None = None, out: TextIO = sys.stdout) -> list[dict[str, Any]]:
    """Measure, print the table and the target to ``out``, and return the rows."""
    args = parse_args(argv)
    if args.phase is not None:
        print(json.dumps(_phase(args.phase, Path(args.scenario))), file=out)
        return []
    print(f"long recordings: ReAct scenarios of {', '.join(f'{n:,}' for n in args.turns)} turns"
          + (f" and one {args.answer_mb:g} MB answer" if args.answer_mb else ""), file=out,
          flush=True)
    rows = []
    with tempfile.TemporaryDirectory(prefix="agentkit-bench-trace-") as tmp:
        for turns in args.turns:
            questions = [f"Question {i}: what is {i} + {i}? Please answer briefly and say the sum."
                         for i in range(turns)]
            rows.append(_measure(Path(tmp) / f"turns{turns}", f"long{turns}", questions, 0, out))
        if args.answer_mb:
            rows.append(_measure(Path(tmp) / "answer", "long_answer",
                                 ["Why does the order of two numbers not change their sum?"],
                                 args.answer_mb, out))
    print("\n" + table([_cells(row) for row in rows],
                       ["scenario", "turns", "trace MB", "cassette MB", "record s",
                        "record peak MiB", "replay s", "replay peak MiB", "replays"]), file=out)
    long = sorted((r for r in rows if r["name"] != "long_answer"), key=lambda r: r["turns"])
    linear = all(b["trace_bytes"] <= LINEAR_TOLERANCE * a["trace_bytes"] * b["turns"] / a["turns"]
                 for a, b in pairwise(long))
    within = all(r["replay"] and r["replay"]["ok"] and max(
        r["record"]["peak_mib"], r["replay"]["peak_mib"]) <= args.budget_mib for r in rows)
    print(f"\ntarget: trace bytes linear in the turns (k times the turns, at most "
          f"{LINEAR_TOLERANCE}x k times the bytes): {'met' if linear else 'MISSED'}; every "
          f"recording written, replayed to its trace, each phase within {args.budget_mib:g} MiB: "
          f"{'met' if within else 'MISSED'}", file=out)
    return rows


def measured(rows: list[dict[str, Any]]) -> list[Any]:
    """The run's figure for the targets table (``targets.py``): the bytes per turn of the
    shortest and the longest recording (none for a run of one length)."""
    from _measure import Measured

    long = sorted((r for r in rows if r["name"] != "long_answer"), key=lambda r: r["turns"])
    if len(long) < 2:
        return []
    first, last = long[0], long[-1]
    linear = all(b["trace_bytes"] <= LINEAR_TOLERANCE * a["trace_bytes"] * b["turns"] / a["turns"]
                 for a, b in pairwise(long))
    return [Measured("trace_size_linear",
                     f"{first['trace_bytes'] / first['turns']:,.0f} -> "
                     f"{last['trace_bytes'] / last['turns']:,.0f} trace bytes/turn "
                     f"({first['turns']:,} -> {last['turns']:,} turns)", linear)]


if __name__ == "__main__":
    found = main()
    if found:  # not a --phase run in a child process
        from targets import publish

        publish(measured(found))
