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
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

_IMPORT_TIMER = ("import time; t = time.process_time(); import {module}; "
                 "print((time.process_time() - t) * 1000)")


def cold_imports(imports: list[tuple[str, str]], runs: int) -> dict[str, float]:
    """Median CPU time (ms) of each ``(python, module)``'s ``import module`` in ``runs`` fresh
    interpreters, the imports taking turns run by run (load from other jobs falls on all
    alike); by module name.

    Every side imports from bytecode caches, as an installed package does (pip writes them
    at install): one untimed import first writes any that are missing, even where
    ``PYTHONDONTWRITEBYTECODE`` is set (an editable install would otherwise compile its
    sources on every import). CPU time, like the chats: other load on the machine does not
    inflate it."""
    def run(python: str, module: str, env: dict[str, str]) -> float:
        done = subprocess.run([python, "-W", "ignore", "-c", _IMPORT_TIMER.format(module=module)],
                              capture_output=True, text=True, check=False, env=env)
        if done.returncode != 0:
            raise RuntimeError(f"`{python} -c 'import {module}'` failed:\n{done.stderr[-2000:]}")
        return float(done.stdout.strip().splitlines()[-1])

    writing = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    times: dict[str, list[float]] = {}
    for python, module in imports:
        run(python, module, writing)
        times[module] = []
    for _ in range(runs):
        for python, module in imports:
            times[module].append(run(python, module, dict(os.environ)))
    return {module: statistics.median(values) for module, values in times.items()}


def rss_kib() -> int:
    """This process's resident set size now (KiB); the peak where /proc is missing."""
    status = Path("/proc/self/status")
    if status.exists():
        for line in status.read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


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


@contextmanager
def side_session(python: str, script: Path,
                 args: list[str]) -> Iterator[Callable[[dict[str, Any]], dict[str, Any]]]:
    """Keep ``python script *args`` running and talk to it: ``ask(request)`` writes the
    request as one JSON line to its stdin and returns the JSON line it answers with. Lets the
    two stacks take turns round by round (see ``_harness.Throughput``)."""
    with tempfile.TemporaryFile("w+") as errors:
        process = subprocess.Popen([python, "-W", "ignore", str(script), *args],
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errors,
                                   text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})
        assert process.stdin is not None and process.stdout is not None

        def failed() -> RuntimeError:
            process.kill()
            process.wait()
            errors.seek(0)
            return RuntimeError(f"{script.name} under {python} failed (exit "
                                f"{process.returncode}):\n{errors.read()[-3000:]}")

        def ask(request: dict[str, Any]) -> dict[str, Any]:
            try:
                process.stdin.write(json.dumps(request) + "\n")  # type: ignore[union-attr]
                process.stdin.flush()  # type: ignore[union-attr]
            except BrokenPipeError:
                raise failed() from None
            for line in process.stdout:  # type: ignore[union-attr]
                if line.startswith("{"):
                    answer: dict[str, Any] = json.loads(line)
                    return answer
            raise failed()

        try:
            yield ask
        finally:
            process.stdin.close()
            if process.wait(timeout=60) != 0:
                raise failed()


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


RESULTS = Path(__file__).resolve().parent / "results.jsonl"
"""Every target's measured figures, one JSON line per target per run (``targets.py`` makes
the README's table of them)."""


@dataclass(frozen=True)
class Measured:
    """One run's figure for a target of ``targets.TARGETS``: as the script printed it."""

    target: str
    figure: str
    met: bool


def record(measured: Sequence[Measured], path: Path = RESULTS) -> None:
    """Append the run's figures to ``path`` with the time (UTC) and the load average: one
    ``write`` of whole lines on a file opened for appending, so runs finishing together
    never interleave or cut each other's lines. A script calls it when run from the command
    line only (the smoke tests call ``main``, which records nothing)."""
    if not measured:
        return
    try:
        load: float | None = round(os.getloadavg()[0], 1)
    except OSError:
        load = None
    stamp = time.strftime("%Y-%m-%d %H:%M", time.gmtime())
    text = "".join(json.dumps({"target": m.target, "figure": m.figure, "met": m.met,
                               "at": stamp, "load": load}) + "\n" for m in measured)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, text.encode("utf-8"))
    finally:
        os.close(fd)
