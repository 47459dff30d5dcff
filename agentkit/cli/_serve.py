"""``agentkit serve``: a scenario's model on a loopback URL for an agent in another process,
then the agent's run judged."""

from __future__ import annotations

import argparse
import contextlib
import signal
from pathlib import Path
from typing import Any, TextIO

from agentkit.cli._common import (
    EXIT_FAILED,
    EXIT_OK,
    CLIError,
    load_scenario,
    shown,
    writable_folder,
)
from agentkit.cli._printing import print_verdict, result_line

__all__ = ["command"]


def command(args: argparse.Namespace, out: TextIO) -> int:
    import threading

    from agentkit.bridge.serve import ServeSession
    from agentkit.core.errors import BadInputError
    from agentkit.core.files import atomic_write_text
    from agentkit.scenario._layout import trace_file

    scenario = load_scenario(args.scenario)
    trace_out = args.trace_out or trace_file(Path.cwd(), scenario, args.agent)
    if trace_out.is_dir():
        raise CLIError(f"--trace-out {trace_out}: is a folder; give the trace file's path")
    writable_folder(trace_out.parent, "--trace-out")
    live = None
    if args.mode != "none":
        from agentkit.cli._record import LiveModels

        live = LiveModels(args).model(args.model, args.base_url, args.seed)
    try:
        session = ServeSession(scenario, args.agent, port=args.port, live=live, mode=args.mode)
    except BadInputError as exc:
        raise CLIError(str(exc)) from None
    stop = threading.Event()
    previous: dict[signal.Signals, Any] = {}
    with contextlib.suppress(ValueError):  # not the main thread: the caller stops it otherwise
        for signum in (signal.SIGINT, signal.SIGTERM):
            previous[signum] = signal.signal(signum, lambda *_: stop.set())
    try:
        case = session.run(stop, lambda url: print(url, file=out, flush=True))
    finally:
        for stopped, handler in previous.items():
            signal.signal(stopped, handler)
        session.close()
    name, result, verdict = case.case.name, case.result, case.verdict
    recorded = session.recording_note()
    if result is None:
        if verdict.kind == "input":
            raise CLIError(str(verdict.stopped_by))
        print(result_line(name, None, verdict), file=out)
        print_verdict(verdict, out)
        if recorded is not None:
            print(recorded, file=out)
        return EXIT_FAILED
    atomic_write_text(trace_out, session.trace_text(result))
    print(result_line(name, result, verdict), file=out)
    print_verdict(verdict, out, _rerecord_hint(case))
    if recorded is not None:
        print(recorded, file=out)
    print(f"wrote {shown(trace_out.resolve())}", file=out)
    return EXIT_OK if verdict.passed else EXIT_FAILED


def _rerecord_hint(case: Any) -> str | None:
    """``to re-record: agentkit serve ... --mode rewrite ...`` for a replay that missed."""
    from agentkit.harness import rerecord_command
    from agentkit.verdict import cassette_miss

    if case.result is None or cassette_miss(case.result) is None:
        return None
    return f"to re-record: {rerecord_command(case.scenario, case.agent_type, command='serve')}"
