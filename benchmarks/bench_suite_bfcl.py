"""BFCL at scale: the whole single-turn set written, listed and replayed in one report, and
how the report's peak memory grows with its rows.

    python benchmarks/bench_suite_bfcl.py [--data DIR] [--agents a,b] [--limits 62,124,all]
                                          [--quick]

Runs ``agentkit suite bfcl`` (all five single-turn categories: 1,240 scenarios with
bfcl-eval's data) and ``agentkit list`` over them, then one ``agentkit report`` replaying
every scenario of a subset under each agent type (default: react, function_calling,
function_agent, react_agent) per ``--limits`` (the first N scenarios of each category, ``all``
the whole set: 310, 620 and 1,240 scenarios, 1,240 to 4,960 runs by default), each command in
a fresh process, and prints per command its wall time, CPU time and peak memory (the
process's maximum RSS), with the counts it printed. Then the line through the reports' peaks
(least squares): the fixed part and the memory per row, beside what a row itself takes in
memory (the largest report's report.json read back as agentkit reads a report, measured
with tracemalloc: the rows' models and the coverage's part per tool, which is the report's
data per row; report.json's text per row is printed beside it) -- the target
"peak memory grows with the rows only" is met when each row costs at most
:data:`ROW_FACTOR` times that. ``--quick`` uses the hand-written cases of
tests/suites/bfcl_data (CI smoke).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, TextIO

ROOT = Path(__file__).resolve().parents[1]
AGENTS = "react,function_calling,function_agent,react_agent"
QUICK_DATA = ROOT / "tests" / "suites" / "bfcl_data"
LIMITS = "62,124,all"
ROW_FACTOR = 3.0
"""The most a report's peak memory may grow per row, in multiples of a row's own size in
memory, for the target to be met (the renderers' texts and tables of the rows count too; a
run's trace, ~50 KB, does not fit in it)."""
_ROW_SIZE = """\
import gc, json, sys, tracemalloc
from pathlib import Path
from agentkit.report import Comparison
text = Path(sys.argv[1]).read_text(encoding="utf-8")
tracemalloc.start()
comparison = Comparison.from_dict(json.loads(text))
gc.collect()
print(len(comparison.rows), tracemalloc.get_traced_memory()[0])
"""


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--data", help="BFCL's data folder (default: bfcl-eval's, installed)")
    parser.add_argument("--agents", default=AGENTS, help=f"agent types (default {AGENTS})")
    parser.add_argument("--limits", default=LIMITS,
                        help="a report per limit: the first N scenarios of each category "
                             f"(all: every one; default {LIMITS})")
    parser.add_argument("--quick", action="store_true",
                        help="the hand-written cases of tests/suites/bfcl_data (CI smoke)")
    args = parser.parse_args(argv)
    if args.quick and args.limits == LIMITS:
        args.limits = "1,all"
    try:
        args.limits = [None if item == "all" else int(item) for item in args.limits.split(",")]
    except ValueError:
        parser.error(f"--limits {args.limits}: numbers of scenarios per category, or all")
    if any(limit is not None and limit < 1 for limit in args.limits):
        parser.error("--limits: each limit must be at least 1")
    return args


def measured(argv: list[str], cwd: Path) -> dict[str, Any]:
    """Run ``agentkit argv`` in a fresh interpreter: its exit code, output, wall and CPU
    seconds and peak RSS (MB)."""
    command = [sys.executable, "-c", "import sys; from agentkit.cli import main; "
               "sys.exit(main(sys.argv[1:]))", *argv]
    start = time.perf_counter()
    with subprocess.Popen(command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True) as process:
        output = process.stdout.read() if process.stdout else ""
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - start
    return {"code": process.returncode, "output": output, "wall": wall,
            "cpu": usage.ru_utime + usage.ru_stime, "rss_mb": usage.ru_maxrss / 1024}


def subset(suite: Path, limit: int | None, into: Path) -> Path:
    """The first ``limit`` scenario files of each category of ``suite`` (all of them: None),
    linked into ``into``."""
    if limit is None:
        return suite
    for category in sorted(p for p in suite.iterdir() if p.is_dir()):
        (into / category.name).mkdir(parents=True)
        for path in sorted(category.glob("*.yaml"))[:limit]:
            os.link(path, into / category.name / path.name)
    return into


def line_through(points: list[tuple[int, float]]) -> tuple[float, float]:
    """The least-squares line through ``(rows, MB)`` points: (fixed MB, MB per row)."""
    if len(points) < 2 or len({x for x, _ in points}) < 2:
        return (points[0][1] if points else 0.0), 0.0
    mean_x = sum(x for x, _ in points) / len(points)
    mean_y = sum(y for _, y in points) / len(points)
    slope = (sum((x - mean_x) * (y - mean_y) for x, y in points)
             / sum((x - mean_x) ** 2 for x, _ in points))
    return mean_y - slope * mean_x, slope


def _checked(result: dict[str, Any], step: list[str]) -> dict[str, Any]:
    if result["code"] not in (0, 1):  # 1: a report with failures is still a report
        raise SystemExit(f"agentkit {' '.join(step)} exited {result['code']}:\n"
                         f"{result['output']}")
    return result


def main(argv: list[str] | None = None, out: TextIO = sys.stdout) -> dict[str, Any]:
    args = parse_args(argv)
    data = str(QUICK_DATA) if args.quick else args.data
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="bench-bfcl-") as folder:
        work = Path(folder)
        write = ["suite", "bfcl", "--out", "bfcl", *(["--data", data] if data else [])]
        results["write"] = _checked(measured(write, work), write)
        results["list"] = _checked(measured(["list", "bfcl"], work), ["list", "bfcl"])
        written = re.search(r"wrote (\d+) scenarios", results["write"]["output"])
        results["write"]["count"] = int(written.group(1)) if written else 0
        results["list"]["count"] = len(re.findall(r"^\S.*\(bfcl/", results["list"]["output"],
                                                  flags=re.M))
        reports = []
        for limit in args.limits:
            name = "all" if limit is None else str(limit)
            paths = subset(work / "bfcl", limit, work / f"bfcl-{name}")
            step = ["report", "--snapshots", "off", "--agents", args.agents,
                    "--out", f"report-{name}", str(paths.relative_to(work))]
            result = _checked(measured(step, work), step)
            runs = re.search(r"(\d+) runs: (\d+) passed, (\d+) failed, (\d+) could not run",
                             result["output"])
            assert runs is not None, result["output"]
            result.update(count=int(runs.group(1)), passed=int(runs.group(2)),
                          failed=int(runs.group(3)) + int(runs.group(4)), limit=limit)
            reports.append(result)
        largest = max(reports, key=lambda r: r["count"])
        name = "all" if largest["limit"] is None else str(largest["limit"])
        sized = subprocess.run([sys.executable, "-c", _ROW_SIZE,
                                str(work / f"report-{name}" / "report.json")],
                               capture_output=True, text=True, check=True)
        rows, size = (int(x) for x in sized.stdout.split())
        text = (work / f"report-{name}" / "report.json").stat().st_size
    results["report"] = largest
    results["reports"] = reports
    fixed, per_row = line_through([(r["count"], r["rss_mb"]) for r in reports])
    results["fit"] = {"fixed_mb": fixed, "per_row_kb": per_row * 1024,
                      "row_kb": size / rows / 1024 if rows else 0.0,
                      "row_json_kb": text / rows / 1024 if rows else 0.0}
    print(f"{'command':<14} {'count':>6} {'wall s':>8} {'cpu s':>8} {'peak RSS MB':>12}",
          file=out)
    steps = [("write", results["write"]), ("list", results["list"]),
             *((f"report {r['count'] // max(len(args.agents.split(',')), 1)}", r)
               for r in reports)]
    for label, result in steps:
        print(f"{label:<14} {result['count']:>6} {result['wall']:>8.1f} {result['cpu']:>8.1f} "
              f"{result['rss_mb']:>12.0f}", file=out)
    print(f"report: {largest['passed']} of {largest['count']} runs passed ({args.agents})",
          file=out)
    fit = results["fit"]
    print(f"report peak RSS = {fit['fixed_mb']:.0f} MB + {fit['per_row_kb']:.1f} KB per row "
          f"(least squares over {len(reports)} sizes); a row in memory: {fit['row_kb']:.1f} KB "
          f"(report.json of {rows} rows read back; as text {fit['row_json_kb']:.1f} KB a row)",
          file=out)
    return results


def measured_target(results: dict[str, Any]) -> list[Any]:
    from _measure import Measured

    fit, largest = results["fit"], results["report"]
    met = fit["per_row_kb"] <= ROW_FACTOR * fit["row_kb"]
    figure = (f"{fit['fixed_mb']:.0f} MB + {fit['per_row_kb']:.1f} KB/row (a row: "
              f"{fit['row_kb']:.1f} KB); {largest['rss_mb']:.0f} MB at {largest['count']:,} runs")
    return [Measured("suite_bfcl_memory", figure, met)]


if __name__ == "__main__":
    figures = main()
    if "--quick" not in sys.argv[1:]:  # a smoke run's figures are not measurements
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from targets import publish

        publish(measured_target(figures))
