"""The OpenTelemetry options of the commands that judge runs (``run``, ``report``, ``eval``)
and the export around their body."""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

from agentkit.cli._common import CLIError, writable_folder

__all__ = ["otel_options", "otel_export"]


def otel_options(sub: argparse.ArgumentParser) -> None:
    """Add ``--otel-out``, ``--otlp-endpoint`` and ``--otel-content`` to a command that judges
    runs (through :func:`agentkit.harness.run_case`); its body then runs inside
    ``with otel_export(args, out):``, which exports every run judged there."""
    group = sub.add_argument_group(
        "OpenTelemetry", "export each run as spans following the GenAI semantic conventions "
                         "(needs the extra: pip install 'agentkit[otel]')")
    group.add_argument("--otel-out", type=Path, metavar="PATH",
                       help="write the runs' spans to PATH as OTLP-JSON (virtual "
                            "durations, each run ending when it is exported; "
                            "AGENTKIT_OTEL_STABLE=1: byte-stable, from a fixed epoch)")
    group.add_argument("--otlp-endpoint", metavar="URL",
                       help="send the runs' spans to this OTLP/HTTP traces endpoint, e.g. "
                            "http://127.0.0.1:6006/v1/traces (default: "
                            "$OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, or "
                            "$OTEL_EXPORTER_OTLP_ENDPOINT plus /v1/traces; headers from "
                            "$OTEL_EXPORTER_OTLP_HEADERS). One warning if it cannot be reached; "
                            "the exit code does not change")
    group.add_argument("--otel-content", action="store_true",
                       help="also export message content (prompts, replies, the user's turns), "
                            "secrets redacted (default: "
                            "$OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT, else off)")


@contextlib.contextmanager
def otel_export(args: argparse.Namespace, out: TextIO) -> Iterator[None]:
    """Export the runs judged in the block as :func:`otel_options` asked (nothing when no
    target is set); after it, one line per target on ``out``, a warning on stderr if the
    endpoint could not take them. A bad ``--otel-out`` is a :class:`CLIError` before
    anything runs."""
    from agentkit.otel.settings import content_from_env, resolve_endpoint

    endpoint = resolve_endpoint(args.otlp_endpoint)
    if args.otel_out is None and endpoint is None:
        yield
        return
    from agentkit.otel import OtelMissingError, require_sdk

    try:
        require_sdk("--otel-out" if args.otel_out is not None else "--otlp-endpoint")
    except OtelMissingError as exc:
        raise CLIError(str(exc)) from None
    if args.otel_out is not None:
        if args.otel_out.is_dir():
            raise CLIError(f"--otel-out {args.otel_out}: is a folder; give a file name, e.g. "
                           f"{args.otel_out / 'spans.json'}")
        writable_folder(args.otel_out.parent, "--otel-out")
    from agentkit.otel.export import OtelExport

    def warn(message: str) -> None:
        print(f"agentkit: warning: {message}", file=sys.stderr)

    export = OtelExport(out=args.otel_out, endpoint=endpoint,
                        content=args.otel_content or content_from_env(), warn=warn)
    with export.observing():
        yield
    for line in export.close().lines:
        print(line, file=out)
