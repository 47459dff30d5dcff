"""Recording cost: a recording saves its cassette after every exchange (atomically: nothing
completed is lost to a crash), so the cost of a save must not grow with the exchanges before it.

    python benchmarks/bench_recording.py [--quick] [--exchanges N ...] [--no-calibration]

Records a conversation whose every request resends the history (as an agent's does) through
``RecordingLLM`` with a scripted model, at each ``--exchanges`` count, into a fresh cassette,
and prints the CPU time per exchange: flat across the counts means recording is linear. Then
it re-records the bundled judge calibration (``judges/refund_amount.labels.yaml``, 20 items x
3 rubrics x 3 samples = 180 judge calls, ``--mode rewrite`` through the keyword judge of
tests/quality) and prints its CPU and wall time.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, TextIO

ROOT = Path(__file__).resolve().parents[1]


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small counts (CI smoke)")
    parser.add_argument("--exchanges", type=int, nargs="+",
                        help="conversation lengths to record (default 50 100 200; quick 3 6)")
    parser.add_argument("--no-calibration", action="store_true",
                        help="leave out the judge calibration re-record")
    args = parser.parse_args(argv)
    args.exchanges = args.exchanges or ([3, 6] if args.quick else [50, 100, 200])
    if min(args.exchanges) < 1:
        parser.error("--exchanges must be at least 1")
    return args


def record_conversation(path: Path, exchanges: int) -> dict[str, Any]:
    """CPU and wall seconds to record ``exchanges`` exchanges, saving after each."""
    from agentkit.llms.cassette import RecordingLLM
    from agentkit.llms.mock import ScriptedLLM
    from agentkit.llms.types import ChatMessage

    recorder = RecordingLLM(ScriptedLLM([f"answer {i}: " + "words " * 40
                                         for i in range(exchanges)]), path, "once")
    history = [ChatMessage(role="system", content="You are terse.")]
    cpu, wall = time.process_time(), time.perf_counter()
    for number in range(exchanges):
        history.append(ChatMessage(role="user", content=f"question {number}"))
        history.append(recorder.chat(list(history)).message)
    return {"exchanges": exchanges, "cpu_s": time.process_time() - cpu,
            "wall_s": time.perf_counter() - wall, "bytes": path.stat().st_size}


def calibration(folder: Path) -> dict[str, Any]:
    """CPU and wall seconds of the bundled judge calibration re-recorded (mode rewrite)."""
    sys.path.insert(0, str(ROOT / "tests" / "quality"))
    from keyword_judge import keyword_judge  # type: ignore[import-not-found]

    from agentkit.quality import calibrate
    from agentkit.recording import Cassette

    for name in ("refund_amount.labels.yaml", "refund_amount.cassette.yaml"):
        shutil.copy(ROOT / "judges" / name, folder / name)
    cpu, wall = time.process_time(), time.perf_counter()
    calibrate(folder / "refund_amount.labels.yaml", live=keyword_judge(), mode="rewrite")
    cassette = Cassette.load(folder / "refund_amount.cassette.yaml")
    return {"cpu_s": time.process_time() - cpu, "wall_s": time.perf_counter() - wall,
            "calls": len(cassette.exchanges)}


def main(argv: list[str] | None = None, out: TextIO = sys.stdout) -> dict[str, Any]:
    args = parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for count in args.exchanges:
            row = record_conversation(Path(folder) / f"c{count}.yaml", count)
            rows.append(row)
            print(f"{count:5d} exchanges: {row['cpu_s'] * 1000 / count:7.2f} ms of CPU per "
                  f"exchange ({row['cpu_s']:.2f} s CPU, {row['wall_s']:.2f} s wall, "
                  f"{row['bytes']:,} bytes)", file=out)
        calibrated = None if args.no_calibration else calibration(Path(folder))
    growth = (rows[-1]["cpu_s"] / rows[-1]["exchanges"]) / (rows[0]["cpu_s"] /
                                                            rows[0]["exchanges"])
    print(f"CPU per exchange at {rows[-1]['exchanges']} / at {rows[0]['exchanges']}: "
          f"{growth:.2f}x (linear recording: about 1)", file=out)
    if calibrated is not None:
        print(f"judge calibration re-recorded ({calibrated['calls']} judge calls): "
              f"{calibrated['cpu_s']:.2f} s CPU, {calibrated['wall_s']:.2f} s wall", file=out)
    return {"rows": rows, "growth": growth, "calibration": calibrated}


if __name__ == "__main__":
    main()
