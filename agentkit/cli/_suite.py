"""``agentkit suite <name>``: a public suite's cases written as scenario files, by the suite's
adapter (:data:`agentkit.suites.SUITES`); its malformed or missing data is bad input (exit 2)."""

from __future__ import annotations

import argparse
from typing import TextIO

from agentkit.cli._common import CLIError

__all__ = ["command"]


def command(args: argparse.Namespace, out: TextIO) -> int:
    from agentkit.core.errors import BadInputError
    from agentkit.suites import adapter

    try:
        code: int = adapter(args.suite_name).command(args, out)
    except BadInputError as exc:
        raise CLIError(f"suite {args.suite_name}: {exc}") from None
    return code
