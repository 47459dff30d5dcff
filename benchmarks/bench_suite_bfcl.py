"""BFCL at scale: the whole single-turn set written, listed and replayed in one report.

    python benchmarks/bench_suite_bfcl.py [--data DIR] [--agents a,b] [--quick]

Runs ``agentkit suite bfcl`` (all five single-turn categories: 1,240 scenarios with
bfcl-eval's data), ``agentkit list`` over them and one ``agentkit report`` replaying every
scenario under each agent type (default: react, function_calling, function_agent,
react_agent: 4,960 runs), each command in a fresh process, and prints per command its wall
time, CPU time and peak memory (the process's maximum RSS), with the counts it printed.
``--quick`` uses the hand-written cases of tests/suites/bfcl_data (CI smoke).
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


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", help="BFCL's data folder (default: bfcl-eval's, installed)")
    parser.add_argument("--agents", default=AGENTS, help=f"agent types (default {AGENTS})")
    parser.add_argument("--quick", action="store_true",
                        help="the hand-written cases of tests/suites/bfcl_data (CI smoke)")
    return parser.parse_args(argv)


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


def main(argv: list[str] | None = None, out: TextIO = sys.stdout) -> dict[str, dict[str, Any]]:
    args = parse_args(argv)
    data = str(QUICK_DATA) if args.quick else args.data
    with tempfile.TemporaryDirectory(prefix="bench-bfcl-") as folder:
        work = Path(folder)
        write = ["suite", "bfcl", "--out", "bfcl", *(["--data", data] if data else [])]
        steps = {
            "write": write,
            "list": ["list", "bfcl"],
            "report": ["report", "--snapshots", "off", "--agents", args.agents,
                       "--out", "report", "bfcl"],
        }
        results: dict[str, dict[str, Any]] = {}
        for name, step in steps.items():
            result = measured(step, work)
            if result["code"] not in (0, 1):  # 1: a report with failures is still a report
                raise SystemExit(f"agentkit {' '.join(step)} exited {result['code']}:\n"
                                 f"{result['output']}")
            results[name] = result
        written = re.search(r"wrote (\d+) scenarios", results["write"]["output"])
        results["write"]["count"] = int(written.group(1)) if written else 0
        results["list"]["count"] = len(re.findall(r"^\S.*\(bfcl/", results["list"]["output"],
                                                  flags=re.M))
        runs = re.search(r"(\d+) runs: (\d+) passed, (\d+) failed, (\d+) could not run",
                         results["report"]["output"])
        assert runs is not None, results["report"]["output"]
        results["report"]["count"] = int(runs.group(1))
        results["report"]["passed"] = int(runs.group(2))
        results["report"]["failed"] = int(runs.group(3)) + int(runs.group(4))
    print(f"{'command':<8} {'count':>6} {'wall s':>8} {'cpu s':>8} {'peak RSS MB':>12}",
          file=out)
    for name, result in results.items():
        print(f"{name:<8} {result['count']:>6} {result['wall']:>8.1f} {result['cpu']:>8.1f} "
              f"{result['rss_mb']:>12.0f}", file=out)
    report = results["report"]
    print(f"report: {report['passed']} of {report['count']} runs passed "
          f"({args.agents})", file=out)
    return results


if __name__ == "__main__":
    main()
