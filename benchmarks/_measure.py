"""Measuring helpers shared by the benchmark scripts (plain Python, no agentkit import)."""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TextIO

_IMPORT_TIMER = ("import time; t = time.process_time(); import {module}; "
                 "print((time.process_time() - t) * 1000)")


def cold_import_ms(python: str, module: str, runs: int) -> float:
    """Median CPU time (ms) of ``import module`` in ``runs`` fresh interpreters.

    Both sides import from bytecode caches, as an installed package does (pip writes them at
    install): one untimed import first writes any that are missing, even where
    ``PYTHONDONTWRITEBYTECODE`` is set (an editable install would otherwise compile its
    sources on every import). CPU time, like the chats: other load on the machine does not
    inflate it."""
    def run(env: dict[str, str]) -> str:
        done = subprocess.run([python, "-W", "ignore", "-c", _IMPORT_TIMER.format(module=module)],
                              capture_output=True, text=True, check=False, env=env)
        if done.returncode != 0:
            raise RuntimeError(f"`{python} -c 'import {module}'` failed:\n{done.stderr[-2000:]}")
        return done.stdout.strip().splitlines()[-1]

    run({k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"})
    return statistics.median(float(run(dict(os.environ))) for _ in range(runs))


def rss_kib() -> int:
    """This process's resident set size now (KiB); the peak where /proc is missing."""
    status = Path("/proc/self/status")
    if status.exists():
        for line in status.read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def median_rate(run_round: Callable[[], float], rounds: int, chats: int) -> float:
    """Chats per second of the median of ``rounds`` timed rounds of ``chats`` chats."""
    return chats / statistics.median(run_round() for _ in range(rounds))


def side_records(python: str, script: Path, args: list[str]) -> Iterator[dict[str, Any]]:
    """Run ``python script *args`` and yield the JSON object of each stdout line as it comes."""
    with tempfile.TemporaryFile("w+") as errors:
        process = subprocess.Popen([python, "-W", "ignore", str(script), *args],
                                   stdout=subprocess.PIPE, stderr=errors, text=True,
                                   env={**os.environ, "PYTHONUNBUFFERED": "1"})
        assert process.stdout is not None
        try:
            for line in process.stdout:
                if line.startswith("{"):
                    yield json.loads(line)
            process.wait()
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
        if process.returncode != 0:
            errors.seek(0)
            raise RuntimeError(f"{script.name} under {python} failed (exit "
                               f"{process.returncode}):\n{errors.read()[-3000:]}")


def emit(record: dict[str, Any], out: TextIO = sys.stdout) -> None:
    """One JSON record per line (the side scripts' protocol)."""
    out.write(json.dumps(record) + "\n")
    out.flush()


def table(rows: list[list[str]], headers: list[str]) -> str:
    """A plain fixed-width table (no dependency, identical on both interpreters)."""
    cells = [headers, *rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    lines = ["  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in
                       enumerate(zip(row, widths, strict=True))) for row in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def apply_counts(parser: argparse.ArgumentParser, args: argparse.Namespace,
                 defaults: dict[str, int], *, at_least: int = 1) -> argparse.Namespace:
    """Fill the counts not given on the command line from ``defaults``; each must be
    ``>= at_least``."""
    for name, value in defaults.items():
        if getattr(args, name) is None:
            setattr(args, name, value)
        if getattr(args, name) < at_least:
            parser.error(f"--{name.replace('_', '-')} must be at least {at_least}")
    return args
