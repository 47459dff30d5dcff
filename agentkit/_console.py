"""The ``agentkit`` console script (and ``python -m agentkit``): Ctrl-C and SIGTERM end it with
one line and exit 130 and 143 in every state, from before the command's modules are imported
until Python has finished. This module imports nothing slow: the handlers are in place before
:mod:`agentkit.cli` (and through it the harness) is imported."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from types import FrameType

__all__ = ["run", "Terminated", "stopped", "EXIT_INTERRUPTED", "EXIT_TERMINATED"]

EXIT_INTERRUPTED, EXIT_TERMINATED = 130, 143


class Terminated(BaseException):
    """SIGTERM, raised where the command is so that it unwinds like Ctrl-C."""


def _terminate(signum: int, frame: FrameType | None) -> None:
    raise Terminated


def stopped(signal_raised: KeyboardInterrupt | Terminated) -> int:
    """Say in one line that the command was stopped; its exit code."""
    word, code = (("terminated", EXIT_TERMINATED) if isinstance(signal_raised, Terminated)
                  else ("interrupted", EXIT_INTERRUPTED))
    # files are written atomically: what was there stays
    print(f"agentkit: {word} (files written before are intact)", file=sys.stderr)
    return code


def _exit_at_once(signum: int, frame: FrameType | None) -> None:
    """After the command, while Python finishes (joining threads a tool left running): nothing
    is left to unwind, so the process ends now, with the signal's exit code."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(EXIT_TERMINATED if signum == signal.SIGTERM else EXIT_INTERRUPTED)


def run() -> None:
    """Run the command line in ``sys.argv`` (:func:`agentkit.cli.main`) and exit with its code."""
    with contextlib.suppress(ValueError):  # not the main thread: leave signals alone
        signal.signal(signal.SIGTERM, _terminate)
    try:
        try:
            from agentkit.cli import main

            code = main()
        finally:
            _finishing()
    except (KeyboardInterrupt, Terminated) as exc:  # before or after main() could catch it
        code = stopped(exc)
    sys.exit(code)


def _finishing() -> None:
    """From here on a signal ends the process at once (Ctrl-C only where it was not ignored:
    a shell's background job starts with it ignored)."""
    with contextlib.suppress(ValueError):
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            signal.signal(signal.SIGINT, _exit_at_once)
        signal.signal(signal.SIGTERM, _exit_at_once)
