"""A recording stdio proxy for an agent that starts its MCP servers itself (an agent of
another framework, tested through the bridge): it is started in the server's place
(``agentkit mcp-proxy --cassette C --name N -- <server command>``) and keeps the
``tools/list`` and ``tools/call`` exchanges in the cassette exactly as :class:`MCPSession`
does -- canonical requests without JSON-RPC ids, secrets redacted, request order.

With record mode ``none`` (the default) there is no server: the proxy answers the MCP
handshake itself (``initialize``; ``ping``; ``server/discover`` is refused, so clients fall
back to the handshake) and every tool request from the cassette; a request the cassette lacks
is answered with a JSON-RPC error carrying the miss message (nearest recorded call, first
difference), written to stderr too, and the proxy exits 1 when its input ends. With another
mode it starts the server, relays every line both ways, answers from the cassette what the
mode replays, and writes the cassette (atomically) when its input ends -- not after a failure.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import time
from pathlib import Path
from typing import Any, BinaryIO

from agentkit.core.secrets import Redactor
from agentkit.llms.cassette import Cassette, CassetteMissError, RecordMode
from agentkit.tools.mcp.server import MCPServer
from agentkit.tools.mcp.session import MCPRecording, canonical_mcp_request

__all__ = ["run_proxy", "REPLAY_PROTOCOL_VERSION"]

REPLAY_PROTOCOL_VERSION = "2025-06-18"
"""The protocol version a replaying proxy answers ``initialize`` with when the client asks for
one it does not know."""

_HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
_TOOL_METHODS = ("tools/list", "tools/call")
_MISS_CODE = -32603


class _Proxy:
    def __init__(self, server: MCPServer, cassette: Path, mode: RecordMode,
                 out: BinaryIO, err: Any) -> None:
        self.server = server
        self.mode = mode
        loaded = (Cassette.load(cassette) if cassette.exists() and mode != "rewrite"
                  else Cassette(path=cassette))
        self.recording = MCPRecording(loaded, mode)
        self.out = out
        self.err = err
        self.misses = 0
        self.pending: dict[Any, tuple[int, dict[str, Any], float]] = {}
        self.unanswered: set[Any] = set()
        self.answered = asyncio.Event()
        self.process: asyncio.subprocess.Process | None = None

    # ------------------------------------------------------------------ output
    def send(self, message: dict[str, Any]) -> None:
        self.out.write((json.dumps(message, ensure_ascii=False) + "\n").encode("utf-8"))
        self.out.flush()

    def answer(self, ident: Any, result: Any = None, error: dict[str, Any] | None = None) -> None:
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": ident}
        if error is not None:
            reply["error"] = error
        else:
            reply["result"] = result
        self.send(reply)

    # ------------------------------------------------------------------ client -> server
    async def from_client(self, line: bytes) -> None:
        try:
            message = json.loads(line)
        except json.JSONDecodeError:
            await self.relay(line)
            return
        method = message.get("method") if isinstance(message, dict) else None
        ident = message.get("id") if isinstance(message, dict) else None
        if method in _TOOL_METHODS and ident is not None:
            params = message.get("params")
            if method == "tools/list":
                params = None  # a cursor is the SDK's paging, not part of what was asked
            redactor = Redactor(environ={}, secrets=self.server.secrets())
            canonical = canonical_mcp_request(self.server.name, method, params, redactor)
            try:
                number, exchange = self.recording.take(canonical)
            except CassetteMissError as miss:
                self.misses += 1
                print(f"agentkit mcp-proxy: {miss}", file=self.err, flush=True)
                self.answer(ident, error={"code": _MISS_CODE, "message": f"agentkit: {miss}"})
                return
            if exchange is not None:
                if exchange.error is not None:
                    self.answer(ident, error=dict(exchange.error))
                else:
                    self.answer(ident, result=exchange.response)
                return
            self.pending[ident] = (number, canonical, time.monotonic())
            self.unanswered.add(ident)
            await self.relay(line)
            return
        if self.process is not None:
            if ident is not None and method is not None:
                self.unanswered.add(ident)
            await self.relay(line)
        elif ident is not None:  # replaying: the handshake is the proxy's own
            self.handshake(ident, method, message.get("params") or {})

    def handshake(self, ident: Any, method: Any, params: dict[str, Any]) -> None:
        if method == "initialize":
            asked = params.get("protocolVersion")
            version = asked if asked in _HANDSHAKE_VERSIONS else REPLAY_PROTOCOL_VERSION
            self.answer(ident, {"protocolVersion": version, "capabilities": {"tools": {}},
                                "serverInfo": {"name": self.server.name,
                                               "version": "agentkit replay"}})
        elif method == "ping":
            self.answer(ident, {})
        else:
            self.answer(ident, error={"code": -32601, "message": f"Method not found: {method} "
                                                                 "(agentkit replays tools only)"})

    async def relay(self, line: bytes) -> None:
        assert self.process is not None and self.process.stdin is not None
        self.process.stdin.write(line if line.endswith(b"\n") else line + b"\n")
        await self.process.stdin.drain()

    # ------------------------------------------------------------------ server -> client
    async def from_server(self) -> None:
        assert self.process is not None and self.process.stdout is not None
        async for line in self.process.stdout:
            try:
                message = json.loads(line)
            except json.JSONDecodeError:
                message = None
            ident = message.get("id") if isinstance(message, dict) else None
            if isinstance(message, dict) and "method" not in message:
                self.unanswered.discard(ident)
                if not self.unanswered:
                    self.answered.set()
            if (isinstance(message, dict) and "method" not in message
                    and ident in self.pending):
                number, canonical, started = self.pending.pop(ident)
                error = message.get("error")
                self.recording.store(number, canonical, time.monotonic() - started,
                                     None if error else message.get("result"),
                                     dict(error) if isinstance(error, dict) else None)
            self.out.write(line)
            self.out.flush()

    # ------------------------------------------------------------------ the run
    async def run(self, stdin: asyncio.StreamReader) -> int:
        relaying: asyncio.Task[None] | None = None
        if self.mode != "none":
            assert self.server.command is not None
            self.process = await asyncio.create_subprocess_exec(
                self.server.executable(), *self.server.args, cwd=self.server.cwd,
                env={**_inherited(), **self.server.env}, stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE)
            relaying = asyncio.create_task(self.from_server())
        try:
            async for line in stdin:
                if line.strip():
                    await self.from_client(line)
            if self.unanswered and relaying is not None:
                # the agent stopped writing: its last requests still get their answers
                self.answered.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.answered.wait(), self.server.timeout)
        finally:
            if self.process is not None:
                await _stop(self.process)
            if relaying is not None:
                await relaying
        if self.recording.recorded and not self.pending:
            self.recording.cassette.save(secrets=self.server.secrets())
        return 1 if self.misses else 0


def _inherited() -> dict[str, str]:
    import os

    return {key: value for key, value in os.environ.items()
            if key in ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER")}


async def _stop(process: asyncio.subprocess.Process) -> None:
    """Close the server's input, then terminate it if it does not end, then kill it."""
    if process.stdin is not None:
        process.stdin.close()
    for stop in (None, process.terminate, process.kill):
        if stop is not None:
            try:
                stop()
            except ProcessLookupError:
                return
        try:
            await asyncio.wait_for(process.wait(), 2.0)
            return
        except TimeoutError:
            continue


def run_proxy(server: MCPServer, cassette: Path, mode: RecordMode = "none") -> int:
    """Proxy this process's stdin/stdout to ``server`` (see the module docstring); the exit
    code: 0, or 1 when a request was not on the cassette."""
    proxy = _Proxy(server, cassette, mode, sys.stdout.buffer, sys.stderr)

    async def main() -> int:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=1 << 24)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        return await proxy.run(reader)

    return asyncio.run(main())
