"""``agentkit suite NAME``: write a public suite's cases as scenario files, through the suite's
adapter (:data:`agentkit.suites.SUITES`); its malformed or missing data is bad input (exit 2)."""

from __future__ import annotations

import argparse
from typing import TextIO

from agentkit.cli._common import CLIError
from agentkit.core.errors import BadInputError
from agentkit.suites import adapter

__all__ = ["command"]


def command(args: argparse.Namespace, out: TextIO) -> int:
    try:
        code: int = adapter(args.suite).command(args, out)
    except BadInputError as exc:
        raise CLIError(str(exc)) from None
    return code
