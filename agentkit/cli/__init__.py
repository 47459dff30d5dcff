"""The ``agentkit`` command: list, run, record, replay, diff, report and eval scenarios, run
them under faults,
serve one's model to an agent in another process, and import a trace as a scenario.

Exit codes: 0 success; 1 a scenario failed, a replay or diff differs, or a report has
failures/regressions (pass-rate regressions included); 2 bad usage or a malformed file (the
message says where); 3 an evaluation is incomplete (a spent budget, an unreachable model,
infrastructure errors: the partial report is written and the same command resumes).

* ``record`` (:func:`agentkit.scenario.record.record_scenario`, as the pytest plugin) writes
  the cassette and the agent type's snapshot (the live run's trace, secrets redacted: what
  every later offline run must reproduce; :mod:`agentkit.scenario._layout`) -- together, and
  only when the recording is good: the run met its expectations and the fresh cassette
  replays to the same trace. Otherwise it exits 1 and leaves both files as they were. The default mode is
  ``once`` (record what is missing); ``rewrite`` re-records from scratch. A team
  (``--agent agent_workflow``) records a cassette per team agent with a ``recording:``, all
  through ``--model``, and one trace for the team.
* ``replay`` exits 1 on a cassette miss (a request the recording does not have, e.g. after a
  user turn or a prompt changed): like a changed trace, it is a regression of the agent or
  scenario against its recording, not bad input. The miss is printed first, naming the nearest
  recorded request and where it differs; re-record if the change is intended.
* ``run --agents`` with an agent type that does not exist, or that no scenario declares, is a
  usage error (2): a typo must not pass as "nothing failed".

The package: this face (:func:`main`), the parser (``_parser``), what every command shares
(``_common``: :class:`CLIError`, paths, output folders; ``_printing``: a run's result lines;
``_otel``: the OpenTelemetry options), and one module per command, each a ``command(args,
out)`` over library calls that prints what they return.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TextIO

from agentkit._console import Terminated, stopped
from agentkit.cli import (
    _coverage,
    _diff,
    _eval,
    _faults,
    _import_trace,
    _list,
    _mcp_proxy,
    _mutate,
    _record,
    _replay,
    _report,
    _run,
    _serve,
    _suite,
)
from agentkit.cli._common import EXIT_FAILED, EXIT_INCOMPLETE, EXIT_OK, EXIT_USAGE, CLIError
from agentkit.cli._otel import otel_export, otel_options
from agentkit.cli._parser import build_parser

__all__ = ["main", "build_parser", "otel_options", "otel_export", "CLIError",
           "EXIT_OK", "EXIT_FAILED", "EXIT_USAGE", "EXIT_INCOMPLETE"]

_COMMANDS: dict[str, Callable[[argparse.Namespace, TextIO], int]] = {
    "list": _list.command, "run": _run.command, "record": _record.command,
    "replay": _replay.command, "diff": _diff.command, "report": _report.command,
    "eval": _eval.command, "faults": _faults.command, "serve": _serve.command,
    "import-trace": _import_trace.command, "mcp-proxy": _mcp_proxy.command,
    "coverage": _coverage.command, "mutate": _mutate.command, "suite": _suite.command}


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """Run the command line ``argv``, printing to ``out``; returns the exit code (also for
    ``--help`` and usage errors, whose message goes to stderr).

    The project is the nearest pyproject.toml from the current directory up: its root goes
    on the import path and its ``[tool.agentkit]`` table is read (scenario folders, agent
    types), as the pytest plugin does; both only for this call."""
    from agentkit.core.files import FileWriteError
    from agentkit.scenario.project import ProjectError, activated, find_project

    out = out or sys.stdout
    try:
        with contextlib.redirect_stdout(out):
            args = build_parser().parse_args(argv)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    try:
        args.project = find_project(Path.cwd())
        with activated(args.project):
            return _COMMANDS[args.command](args, out)
    except ProjectError as exc:
        print(f"agentkit: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except (CLIError, FileWriteError) as exc:  # a full disk: the one message of every writer
        print(f"agentkit: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:  # e.g. `agentkit list | head`: stop quietly
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_OK
    except (KeyboardInterrupt, Terminated) as exc:
        return stopped(exc)
