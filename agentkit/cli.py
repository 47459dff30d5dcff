"""The ``agentkit`` command."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

__all__ = ["main", "build_parser"]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agentkit",
        description="LlamaIndex-shaped agents with a deterministic, offline test harness.")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    commands.add_parser("demo", help="run a ReAct and a function-calling agent on scripted "
                                     "LLMs (offline) and print their traces")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "demo":
        from agentkit.demo import run_demo

        return run_demo(sys.stdout)
    raise AssertionError(f"unhandled command {args.command}")  # argparse rejects unknown ones


if __name__ == "__main__":
    sys.exit(main())
