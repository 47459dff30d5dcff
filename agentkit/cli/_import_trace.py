"""``agentkit import-trace``: an OTLP-JSON trace turned into a scenario that replays."""

from __future__ import annotations

import argparse
from typing import TextIO

from agentkit.cli._common import (
    EXIT_FAILED,
    EXIT_OK,
    CLIError,
    check_agent_types,
    shown,
    writable_folder,
)

__all__ = ["command"]


def command(args: argparse.Namespace, out: TextIO) -> int:
    from agentkit.core.errors import BadInputError
    from agentkit.otel.importer import import_trace

    check_agent_types([args.agent] if args.agent else None)
    writable_folder(args.out.parent, "--out")
    try:
        result = import_trace(args.file, args.out, agent_type=args.agent, trace_id=args.trace,
                              force=args.force)
    except BadInputError as exc:
        raise CLIError(str(exc)) from None
    run = result.run
    llm_calls = sum(len(t.exchanges) for t in run.turns)
    tool_calls = sum(len(t.tools) for t in run.turns)
    print(f"imported {args.file} (trace {run.trace_id}: {run.name}; {len(run.turns)} "
          f"turn{'s' if len(run.turns) != 1 else ''}, {llm_calls} LLM calls, {tool_calls} tool "
          f"calls) under agent type {result.agent_type}", file=out)
    files = [str(shown(path.absolute())) for path in result.written]
    print(f"wrote {', '.join(files)}", file=out)
    if not result.ok:
        print(f"FAIL  the run does not replay under agent type {result.agent_type}, so no "
              "cassette was written:", file=out)
        for problem in result.problems:
            print("      - " + problem.replace("\n", "\n        "), file=out)
        print("      the trace's agent may speak another format: try --agent react or "
              "--agent function_calling (--force to replace the files), or edit the scenario "
              "and its tools module", file=out)
        return EXIT_FAILED
    print(f"the replay reproduces the traced tool calls and answer: agentkit run {files[0]}",
          file=out)
    return EXIT_OK
