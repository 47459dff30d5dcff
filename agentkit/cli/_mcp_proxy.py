"""``agentkit mcp-proxy``: a stand-in for an MCP server started over stdio, recording its
exchanges or answering them from a cassette."""

from __future__ import annotations

import argparse
import os
from typing import TextIO

from agentkit.cli._common import CLIError

__all__ = ["command"]


def command(args: argparse.Namespace, out: TextIO) -> int:
    from agentkit.core.errors import BadInputError
    from agentkit.tools.mcp import MCPServer, MCPServerError
    from agentkit.tools.mcp.proxy import ProxyError, run_proxy

    argv = args.server[1:] if args.server[:1] == ["--"] else args.server
    if args.mode != "none" and not argv:
        raise CLIError(f"mcp-proxy --mode {args.mode}: give the server's command after `--` "
                       "(it is started to record)")
    env = {}
    for pair in args.env:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise CLIError(f"mcp-proxy --env {pair!r}: write KEY=VALUE")
        env[key] = value
    try:
        server = MCPServer(name=args.name, command=argv[0] if argv else "-",
                           args=tuple(argv[1:]), env=env, cwd=os.getcwd())
    except ValueError as exc:
        raise CLIError(f"mcp-proxy: {exc}") from None
    try:
        return run_proxy(server, args.cassette, args.mode)
    except (ProxyError, BadInputError, MCPServerError) as exc:  # before it read or started
        raise CLIError(f"mcp-proxy: {exc}") from None
