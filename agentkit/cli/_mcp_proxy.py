"""``agentkit mcp-proxy``: a stand-in for an MCP server started over stdio, recording its
exchanges or answering them from a cassette."""

from __future__ import annotations

import argparse
import contextlib
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from agentkit.cli._common import CLIError

if TYPE_CHECKING:
    from agentkit.tools.mcp import MCPServer

__all__ = ["command"]


def command(args: argparse.Namespace, out: TextIO) -> int:
    from agentkit.core.errors import BadInputError
    from agentkit.tools.mcp import MCPServer, MCPServerError
    from agentkit.tools.mcp.proxy import ProxyError, run_proxy

    argv = args.server[1:] if args.server[:1] == ["--"] else args.server
    if args.http is not None and args.mode != "none":
        raise CLIError(f"mcp-proxy --http serves a recording (--mode none), it does not record "
                       f"(--mode {args.mode}): record over stdio, then serve the cassette")
    if args.http is not None and not 0 <= args.http <= 65535:
        raise CLIError(f"mcp-proxy --http {args.http}: a port is 0 to 65535 (0: any free one)")
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
        if args.http is not None:
            return _serve_http(server, args.cassette, args.http, out)
        return run_proxy(server, args.cassette, args.mode)
    except (ProxyError, BadInputError, MCPServerError) as exc:  # before it read or started
        raise CLIError(f"mcp-proxy: {exc}") from None


def _serve_http(server: MCPServer, cassette: Path, port: int, out: TextIO) -> int:
    """Serve the cassette over streamable HTTP until SIGINT or SIGTERM; 1 when a request was
    not on the cassette."""
    import signal
    import threading

    from agentkit.tools.mcp.proxy_http import MCPReplayServer

    stop = threading.Event()
    previous: dict[signal.Signals, Any] = {}
    with contextlib.suppress(ValueError):  # not the main thread: the caller stops it otherwise
        for signum in (signal.SIGINT, signal.SIGTERM):
            previous[signum] = signal.signal(signum, lambda *_: stop.set())
    try:
        with MCPReplayServer(server, cassette, port) as replaying:
            print(replaying.url, file=out, flush=True)
            stop.wait()
        return 1 if replaying.misses else 0
    finally:
        for stopped, handler in previous.items():
            signal.signal(stopped, handler)
