"""An MCP server (stdio, hand-written JSON-RPC, no SDK) that misbehaves on request, so the
harness's handling of bad servers can be tested: ``python -m mocks.mcp.misbehaving [options]``.

Tools: ``echo(text)`` answers the text; ``count()`` answers 1, 2, 3... (state across calls);
``slow(seconds)`` answers after really sleeping; ``crash()`` writes to stderr and exits in the
middle of the call; ``malformed()`` answers a result whose ``content`` is not a list;
``fail()`` answers an ``isError`` result; ``refuse()`` answers a JSON-RPC error;
``garbled()`` answers a line that is not JSON-RPC.

Options: ``--exit-at-start`` writes a line to stderr and exits before any handshake;
``--bad-schema`` lists a tool whose input schema is not an object schema; ``--pidfile PATH``
writes the server's process id there (tests check that no server outlives its run);
``--hang-on-close`` ignores the end of its stdin and SIGTERM (the harness must still stop it);
``--print-env NAME`` writes ``NAME=<its value>`` to stderr first (a server's diagnostics may
hold its credentials).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import time
from typing import Any

_TOOLS: list[dict[str, Any]] = [
    {"name": "echo", "description": "Answer the text given.",
     "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}},
                     "required": ["text"]}},
    {"name": "count", "description": "Count the calls so far.",
     "inputSchema": {"type": "object", "properties": {}}},
    {"name": "slow", "description": "Answer after some seconds.",
     "inputSchema": {"type": "object", "properties": {"seconds": {"type": "number"}},
                     "required": ["seconds"]}},
    {"name": "crash", "description": "Exit in the middle of the call.",
     "inputSchema": {"type": "object", "properties": {}}},
    {"name": "malformed", "description": "Answer something that is not an MCP result.",
     "inputSchema": {"type": "object", "properties": {}}},
    {"name": "fail", "description": "Answer an error result.",
     "inputSchema": {"type": "object", "properties": {}}},
    {"name": "refuse", "description": "Answer a JSON-RPC error.",
     "inputSchema": {"type": "object", "properties": {}}},
    {"name": "garbled", "description": "Answer a line that is not JSON-RPC.",
     "inputSchema": {"type": "object", "properties": {}}},
]


def _send(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def _text(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": False}


class _Server:
    """Answers one JSON-RPC request at a time; ``count()`` counts across calls."""

    def __init__(self, tools: list[dict[str, Any]]) -> None:
        self.tools = tools
        self.calls = 0

    def answer(self, message: dict[str, Any]) -> None:
        method, ident = message.get("method"), message.get("id")
        if ident is None:
            return  # a notification
        params = message.get("params") or {}
        if method == "initialize":
            _send({"jsonrpc": "2.0", "id": ident, "result": {
                "protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                "serverInfo": {"name": "misbehaving", "version": "1"}}})
        elif method == "tools/list":
            _send({"jsonrpc": "2.0", "id": ident, "result": {"tools": self.tools}})
        elif method == "tools/call":
            self.call(ident, params.get("name"), params.get("arguments") or {})
        elif method == "ping":
            _send({"jsonrpc": "2.0", "id": ident, "result": {}})
        else:
            _send({"jsonrpc": "2.0", "id": ident, "error": {
                "code": -32601, "message": f"Method not found: {method}"}})

    def call(self, ident: Any, name: Any, arguments: dict[str, Any]) -> None:
        if name == "echo":
            _send({"jsonrpc": "2.0", "id": ident, "result": _text(str(arguments["text"]))})
        elif name == "count":
            self.calls += 1
            _send({"jsonrpc": "2.0", "id": ident, "result": _text(str(self.calls))})
        elif name == "slow":
            time.sleep(float(arguments["seconds"]))
            _send({"jsonrpc": "2.0", "id": ident, "result": _text("done")})
        elif name == "crash":
            print("misbehaving: crashing in the middle of `crash`", file=sys.stderr, flush=True)
            os._exit(7)
        elif name == "malformed":
            _send({"jsonrpc": "2.0", "id": ident, "result": {"content": "not a list"}})
        elif name == "fail":
            _send({"jsonrpc": "2.0", "id": ident, "result": {
                "content": [{"type": "text", "text": "the tool failed"}], "isError": True}})
        elif name == "garbled":
            print("this is not JSON-RPC", flush=True)
        elif name == "refuse":
            _send({"jsonrpc": "2.0", "id": ident, "error": {
                "code": -32602, "message": "refused: this call is not allowed"}})
        else:
            _send({"jsonrpc": "2.0", "id": ident, "error": {
                "code": -32602, "message": f"Unknown tool: {name}"}})


def _options() -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("--exit-at-start", action="store_true")
    parser.add_argument("--bad-schema", action="store_true")
    parser.add_argument("--hang-on-close", action="store_true")
    parser.add_argument("--pidfile")
    parser.add_argument("--print-env")
    return parser.parse_args()


def main() -> None:
    options = _options()
    if options.print_env:
        print(f"{options.print_env}={os.environ.get(options.print_env, '')}", file=sys.stderr,
              flush=True)
    if options.pidfile:
        with open(options.pidfile, "w") as file:
            file.write(str(os.getpid()))
    if options.exit_at_start:
        print("misbehaving: refusing to start (--exit-at-start)", file=sys.stderr, flush=True)
        sys.exit(3)
    if options.hang_on_close:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    tools = [dict(tool) for tool in _TOOLS]
    if options.bad_schema:
        tools[0]["inputSchema"] = {"type": "string"}
    server = _Server(tools)
    print("misbehaving: ready", file=sys.stderr, flush=True)
    for line in sys.stdin:
        if line.strip():
            server.answer(json.loads(line))
    if options.hang_on_close:
        while True:
            time.sleep(1)


if __name__ == "__main__":
    main()
