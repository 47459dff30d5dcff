"""``agentkit diff``: the step-aligned diff of two trace files."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any, TextIO

from agentkit.cli._common import EXIT_FAILED, EXIT_OK, CLIError

__all__ = ["command"]


def command(args: argparse.Namespace, out: TextIO) -> int:
    from agentkit.core.textdiff import ANSI, PLAIN
    from agentkit.trace import diff_traces

    coloured = args.color == "always" or (args.color == "auto" and out.isatty()
                                          and not os.environ.get("NO_COLOR"))
    lines = diff_traces(_read_trace(args.old), _read_trace(args.new),
                        ANSI if coloured else PLAIN)
    if not lines:
        print("traces are identical", file=out)
        return EXIT_OK
    for line in lines:
        print(line, file=out)
    return EXIT_FAILED


def _read_trace(path: Path) -> dict[str, Any]:
    """A trace file, checked: every problem is a :class:`CLIError` with file, line and field."""
    from agentkit.core.textfiles import TextFileError, json_locations, parse_json, read_text
    from agentkit.trace import TraceError, check_trace

    try:
        text = read_text(path)
        data = parse_json(path, text)
        try:
            return check_trace(data, str(path))
        except TraceError:
            return check_trace(data, str(path), json_locations(text))  # again, with lines
    except OSError as exc:
        raise CLIError(f"{path}: cannot read trace: {exc.strerror or exc}") from None
    except (TextFileError, TraceError) as exc:
        raise CLIError(str(exc)) from None
