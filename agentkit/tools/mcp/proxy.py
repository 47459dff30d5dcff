"""A recording stdio proxy for an agent that starts its MCP servers itself (an agent of
another framework, tested through the bridge): it is started in the server's place
(``agentkit mcp-proxy --cassette C --name N -- <server command>``) and keeps the
``tools/list`` and ``tools/call`` exchanges in the cassette exactly as :class:`MCPSession`
does -- canonical requests without JSON-RPC ids, secrets redacted, request order -- and the
rest of what a server answers the same way (:data:`~agentkit.recording.MCP_METHODS`: its
resources, prompts, completions, the log level set; a list without its paging cursor). The
notifications the server sends while a request waits for its answer are kept with it, in
order: progress with the request that gave its progress token, anything else (a log message)
with the earliest request still waiting -- over stdio nothing else says whose it is.

Recording, it also keeps the server's answers to the handshake (``server/discover``,
``initialize``: the protocol version it negotiated, its capabilities and serverInfo). With
record mode ``none`` (the default) there is no server: the proxy answers the handshake as the
server did when it was recorded -- so the client speaks the same protocol version, stamping
its requests as it did then -- and every recorded request from the cassette, after the
notifications recorded with it: progress under the request's own progress token (none without
one), log messages from the level it asks for (a 2026 request's ``_meta`` logLevel, none if
it gives none; else the level the client last set; else all). A cassette without a
recorded handshake gets the proxy's own (``initialize`` in a version the client knows,
``server/discover`` refused so that clients fall back to it; ``ping``). Requests are matched
without what is per-session (the JSON-RPC id, ``params._meta``), as in
:mod:`agentkit.tools.mcp.session`. A request the cassette lacks is answered with a JSON-RPC
error carrying the miss message (nearest recorded call, first difference), written to stderr
too, and the proxy exits 1 when its input ends; so is a line that is not JSON.

With another mode it starts the server, relays every line both ways, answers from the cassette
what the mode replays, and writes the cassette (atomically) when its input ends and every
request is answered -- before it stops the server, whose own shutdown may outlast the client's
patience -- not after a failure: a result that is not MCP-shaped is relayed to the agent all
the same but named on stderr and never kept, and a server that ends before the agent is done
ends the proxy too, as the server itself would have (its stderr is the proxy's); both exit 1
with nothing written.

A cassette that is not there (mode ``none``) or not readable, and a server command that is not
there, are errors before anything is read or started.
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
from agentkit.core.textfiles import loads_json
from agentkit.recording import (
    MCP_METHODS,
    Cassette,
    CassetteMissError,
    Exchange,
    MCPExchangeData,
    RecordMode,
)
from agentkit.tools.mcp.server import MCPProtocolError, MCPServer
from agentkit.tools.mcp.session import (
    Handshake,
    MCPRecording,
    _check_result,
    _tools_of,
    canonical_mcp_request,
)

__all__ = ["run_proxy", "ProxyError", "REPLAY_PROTOCOL_VERSION"]

REPLAY_PROTOCOL_VERSION = "2025-06-18"
"""The protocol version a replaying proxy answers ``initialize`` with when the cassette has no
recorded handshake and the client asks for a version it does not know."""

MAX_MESSAGE = 1 << 24
"""The longest message (one JSON line, 16 MiB) the proxy relays either way."""
_HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
_LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
_LOG_LEVEL_META = "io.modelcontextprotocol/logLevel"
_VERSION_META = "io.modelcontextprotocol/protocolVersion"
_HANDSHAKES: tuple[Handshake, ...] = ("initialize", "server/discover")
_MISS_CODE = -32603
_PARSE_ERROR = -32700


class ProxyError(Exception):
    """The proxy cannot start: its cassette or its server's command is not there."""


class _Proxy:
    def __init__(self, server: MCPServer, cassette: Path, mode: RecordMode,
                 out: BinaryIO, err: Any) -> None:
        self.server = server
        self.mode = mode
        if mode == "none" and not cassette.exists():
            raise ProxyError(f"{cassette}: no such cassette; record it first: agentkit "
                             f"mcp-proxy --cassette {cassette} --name {server.name} --mode once "
                             "-- <the server's command>")
        self.executable = server.executable() if mode != "none" else None
        loaded = (Cassette.load(cassette) if cassette.exists() and mode != "rewrite"
                  else Cassette(path=cassette))
        self.recording = MCPRecording(loaded, mode)
        self.out = out
        self.err = err
        self.misses = 0
        self.broken = False
        """The server sent a result that is not MCP-shaped: the cassette is not written."""
        self.pending: dict[Any, tuple[int, dict[str, Any], float]] = {}
        self.progress_tokens: dict[Any, Any] = {}
        """The progress token of each pending request that gave one, by request id."""
        self.notes: dict[Any, list[dict[str, Any]]] = {}
        """The notifications the server sent while each pending request was answered."""
        self.log_level: str | None = None
        """The log level the client last set (``logging/setLevel``), replaying."""
        self.handshakes: dict[Any, Handshake] = {}
        """The handshake requests relayed to the server, by id, whose answers are kept."""
        self.unanswered: set[Any] = set()
        self.answered = asyncio.Event()
        self.process: asyncio.subprocess.Process | None = None

    # ------------------------------------------------------------------ output
    def send(self, message: dict[str, Any]) -> None:
        self.out.write((json.dumps(message, ensure_ascii=False) + "\n").encode("utf-8"))
        self.out.flush()

    def answer(self, ident: Any, result: Any = None, error: dict[str, Any] | None = None) -> None:
        self.send(_reply(ident, result, error))

    # ------------------------------------------------------------------ client -> server
    def canonical(self, method: str, params: Any) -> dict[str, Any]:
        if method.endswith("/list"):
            params = None  # a cursor is the SDK's paging, not part of what was asked
        redactor = Redactor(environ={}, secrets=self.server.secrets())
        return canonical_mcp_request(self.server.name, method,  # type: ignore[arg-type]
                                     params, redactor)

    def replay(self, line: bytes) -> list[dict[str, Any]]:
        """The answer to one message of the client's when no server runs, from the cassette:
        the notifications recorded while the server answered it, then the answer (nothing for
        a notification or a response: they need none)."""
        try:
            message = json.loads(line)
        except json.JSONDecodeError:
            text = line.decode("utf-8", "replace").strip()
            shown = text if len(text) <= 80 else text[:77] + "..."
            self.misses += 1
            print(f"agentkit mcp-proxy: a line that is not JSON-RPC: {shown}", file=self.err,
                  flush=True)
            return [_reply(None, error={"code": _PARSE_ERROR,
                                        "message": f"agentkit: not JSON: {shown}"})]
        method = message.get("method") if isinstance(message, dict) else None
        ident = message.get("id") if isinstance(message, dict) else None
        if ident is None or method is None:
            return []
        params = message.get("params")
        params = params if isinstance(params, dict) else {}
        if method not in MCP_METHODS:
            return [self.handshake(ident, method, params)]
        try:
            _, exchange = self.recording.take(self.canonical(method, params))
        except CassetteMissError as miss:
            self.misses += 1
            print(f"agentkit mcp-proxy: {miss}", file=self.err, flush=True)
            return [_reply(ident, error={"code": _MISS_CODE, "message": f"agentkit: {miss}"})]
        assert exchange is not None  # replaying only: a request is on the cassette or a miss
        return self.recorded_answer(ident, method, params, exchange)

    def recorded_answer(self, ident: Any, method: str, params: dict[str, Any],
                        exchange: Exchange) -> list[dict[str, Any]]:
        """What the client gets for a request the cassette answers: the notifications
        recorded while the server answered it (:meth:`notifications`), then the answer."""
        if method == "logging/setLevel" and exchange.error is None:
            self.log_level = str(params["level"])
        sent = self.notifications(exchange.notifications or [], params.get("_meta"))
        if exchange.error is not None:
            return [*sent, _reply(ident, error=dict(exchange.error))]
        return [*sent, _reply(ident, exchange.response)]

    def notifications(self, recorded: list[dict[str, Any]], meta: Any
                      ) -> list[dict[str, Any]]:
        """The recorded notifications as this request gets them: progress under its own
        progress token (none if it gave none), log messages from the level it asked for (a
        2026 request's ``_meta`` logLevel; none if a 2026 request asked for none), else the
        level the client set (else every one)."""
        meta = meta if isinstance(meta, dict) else {}
        level = meta.get(_LOG_LEVEL_META)
        if level is None and _VERSION_META not in meta:
            level = self.log_level or _LOG_LEVELS[0]
        least = _LOG_LEVELS.index(level) if level in _LOG_LEVELS else None
        sent: list[dict[str, Any]] = []
        for note in recorded:
            params = dict(note.get("params") or {})
            if note["method"] == "notifications/progress":
                if meta.get("progressToken") is None:
                    continue
                params["progressToken"] = meta["progressToken"]
            elif note["method"] == "notifications/message":
                said = params.get("level")
                if least is None or (said in _LOG_LEVELS and _LOG_LEVELS.index(said) < least):
                    continue
            sent.append({"jsonrpc": "2.0", "method": note["method"],
                         **({"params": params} if note.get("params") is not None else {})})
        return sent

    async def from_client(self, line: bytes) -> None:
        if self.process is None:
            for reply in self.replay(line):
                self.send(reply)
            return
        try:
            message = json.loads(line)
        except json.JSONDecodeError:
            await self.relay(line)  # the server answers what it makes of it
            return
        method = message.get("method") if isinstance(message, dict) else None
        ident = message.get("id") if isinstance(message, dict) else None
        if method in MCP_METHODS and ident is not None:
            params = message.get("params")
            canonical = self.canonical(method, params)
            try:
                number, exchange = self.recording.take(canonical)
            except CassetteMissError as miss:
                self.misses += 1
                print(f"agentkit mcp-proxy: {miss}", file=self.err, flush=True)
                self.answer(ident, error={"code": _MISS_CODE, "message": f"agentkit: {miss}"})
                return
            if exchange is not None:
                for reply in self.recorded_answer(
                        ident, method, params if isinstance(params, dict) else {}, exchange):
                    self.send(reply)
                return
            self.pending[ident] = (number, canonical, time.monotonic())
            meta = params.get("_meta") if isinstance(params, dict) else None
            if isinstance(meta, dict) and meta.get("progressToken") is not None:
                self.progress_tokens[ident] = meta["progressToken"]
            self.unanswered.add(ident)
            await self.relay(line)
            return
        if ident is not None and method is not None:
            self.unanswered.add(ident)
            if method in _HANDSHAKES and self.recording.record:
                self.handshakes[ident] = method
        await self.relay(line)

    def handshake(self, ident: Any, method: Any, params: dict[str, Any]) -> dict[str, Any]:
        """The answer to a request other than a tool request when no server runs: the
        recorded handshake, or the proxy's own."""
        recorded = (self.recording.handshake(self.server.name, method)
                    if method in _HANDSHAKES else None)
        if recorded is not None:
            return _reply(ident, recorded)
        if method == "initialize":
            asked = params.get("protocolVersion")
            version = asked if asked in _HANDSHAKE_VERSIONS else REPLAY_PROTOCOL_VERSION
            return _reply(ident, {"protocolVersion": version, "capabilities": {"tools": {}},
                                  "serverInfo": {"name": self.server.name,
                                                 "version": "agentkit replay"}})
        if method == "ping":
            return _reply(ident, {})
        return _reply(ident, error={"code": -32601, "message": f"Method not found: {method} "
                                                               "(agentkit records no such "
                                                               "request)"})

    async def relay(self, line: bytes) -> None:
        assert self.process is not None and self.process.stdin is not None
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # it ended: said at once
            self.process.stdin.write(line if line.endswith(b"\n") else line + b"\n")
            await self.process.stdin.drain()

    # ------------------------------------------------------------------ server -> client
    async def from_server(self) -> None:
        assert self.process is not None and self.process.stdout is not None
        try:
            async for line in self.process.stdout:
                self.from_server_line(line)
        except ValueError:  # asyncio's word for a line past the reader's limit
            self.broken = True
            print(f"agentkit mcp-proxy: MCP server `{self.server.name}` "
                  f"({self.server.describe()}) sent a message over {MAX_MESSAGE >> 20} MiB, "
                  "the most agentkit relays; nothing recorded", file=self.err, flush=True)

    def from_server_line(self, line: bytes) -> None:
        """Relay one message of the server's, keeping what the recording needs."""
        try:
            message = loads_json(line.decode("utf-8", errors="replace"))
        except ValueError:  # not JSON, or past agentkit's limits: relayed, never kept
            message = None
        ident = message.get("id") if isinstance(message, dict) else None
        if isinstance(message, dict) and "id" not in message and isinstance(
                message.get("method"), str):
            self.keep_notification(message)
        if isinstance(message, dict) and "method" not in message:
            self.unanswered.discard(ident)
            if not self.unanswered:
                self.answered.set()
            if ident in self.handshakes:
                self.keep_handshake(self.handshakes.pop(ident), message.get("result"))
        if (isinstance(message, dict) and "method" not in message
                and ident in self.pending):
            number, canonical, started = self.pending.pop(ident)
            self.progress_tokens.pop(ident, None)
            notes = self.notes.pop(ident, None)
            error = message.get("error")
            result = None if error else message.get("result")
            try:
                _checked(self.server, canonical, result)
            except MCPProtocolError as exc:
                # relayed all the same (the agent sees what its server sent), never kept
                self.broken = True
                print(f"agentkit mcp-proxy: {exc}; nothing recorded", file=self.err,
                      flush=True)
            else:
                self.recording.store(number, canonical, time.monotonic() - started,
                                     result, dict(error) if isinstance(error, dict) else None,
                                     notes)
        self.out.write(line)
        self.out.flush()

    def keep_notification(self, message: dict[str, Any]) -> None:
        """Keep a notification of the server's with the request it came during: a progress
        notification with the request that gave its progress token, any other (a log message)
        with the earliest request still waiting for its answer (over stdio nothing else says
        which); one that comes while none waits is relayed, not kept."""
        if not self.pending:
            return
        params = message.get("params")
        token = params.get("progressToken") if isinstance(params, dict) else None
        owner = next((ident for ident, given in self.progress_tokens.items()
                      if token is not None and given == token), None)
        if owner is None and message["method"] == "notifications/progress":
            return
        if owner is None:
            owner = min(self.pending, key=lambda ident: self.pending[ident][0])
        self.notes.setdefault(owner, []).append(
            {"method": message["method"],
             **({"params": params} if isinstance(params, dict) else {})})

    def keep_handshake(self, method: Handshake, result: Any) -> None:
        """Keep the server's answer to a handshake (an error is not kept: the client then
        tried another way, and the replay answers what it tried)."""
        if not isinstance(result, dict):
            return
        try:
            MCPExchangeData.model_validate({"request": {"server": self.server.name,
                                                        "method": method},
                                            "response": result})
        except ValueError as exc:
            self.broken = True
            reason = " ".join(str(exc).split())
            print(f"agentkit mcp-proxy: MCP server `{self.server.name}` "
                  f"({self.server.describe()}) answered `{method}` with a result that is not "
                  f"MCP-shaped ({reason}); nothing recorded", file=self.err, flush=True)
            return
        self.recording.keep_handshake(self.server.name, method, result)

    # ------------------------------------------------------------------ the run
    async def read_client(self, stdin: asyncio.StreamReader) -> None:
        try:
            async for line in stdin:
                if line.strip():
                    await self.from_client(line)
        except ValueError:  # a line past the reader's limit
            self.broken = True
            print(f"agentkit mcp-proxy: the agent sent a message over {MAX_MESSAGE >> 20} MiB, "
                  "the most agentkit relays; nothing recorded", file=self.err, flush=True)

    async def run(self, stdin: asyncio.StreamReader) -> int:
        relaying: asyncio.Task[None] | None = None
        if self.executable is not None:
            self.process = await asyncio.create_subprocess_exec(
                self.executable, *self.server.args, cwd=self.server.cwd,
                env={**_inherited(), **self.server.env}, stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE, limit=MAX_MESSAGE)
            relaying = asyncio.create_task(self.from_server())
        reading = asyncio.create_task(self.read_client(stdin))
        try:
            if relaying is not None:
                await asyncio.wait({reading, relaying}, return_when=asyncio.FIRST_COMPLETED)
                if relaying.done() and not reading.done():
                    return await self.server_ended()
            await reading
            if self.unanswered and relaying is not None and not relaying.done():
                # the agent stopped writing: its last requests still get their answers
                self.answered.clear()
                waiting = asyncio.create_task(self.answered.wait())
                await asyncio.wait({waiting, relaying}, timeout=self.server.timeout,
                                   return_when=asyncio.FIRST_COMPLETED)
                waiting.cancel()
            if self.unanswered and relaying is not None and relaying.done():
                return await self.server_ended()
            # the agent is done: its recording is kept now, not once the server has stopped
            # (an agent's MCP client stops the proxy a few seconds after closing its input)
            if self.broken:
                return 1
            if self.recording.recorded and not self.pending:
                self.recording.cassette.save(secrets=self.server.secrets())
            return 1 if self.misses else 0
        finally:
            if not reading.done():
                reading.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await reading
            if self.process is not None:
                await _stop(self.process)
            if relaying is not None:
                await relaying


    async def server_ended(self) -> int:
        """The server closed its output while the agent still talked to it or waited for an
        answer: it has ended (or is ending); say so and end as it did, recording nothing."""
        assert self.process is not None
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.process.wait(), 2.0)
        code = self.process.returncode
        how = f"exited with code {code}" if code is not None else "closed its output"
        print(f"agentkit mcp-proxy: MCP server `{self.server.name}` ({self.server.describe()}) "
              f"{how} before the agent was done; nothing recorded", file=self.err, flush=True)
        return 1


def _reply(ident: Any, result: Any = None, error: dict[str, Any] | None = None
           ) -> dict[str, Any]:
    reply: dict[str, Any] = {"jsonrpc": "2.0", "id": ident}
    if error is not None:
        reply["error"] = error
    else:
        reply["result"] = result
    return reply


def _checked(server: MCPServer, canonical: dict[str, Any], result: Any) -> None:
    """A result the server sent is MCP-shaped, as :class:`MCPSession` checks a tool's before
    keeping it and a cassette checks every recorded result when it is loaded (a JSON-RPC
    error has no result to check)."""
    if result is None:
        return
    method = canonical["method"]
    if method == "tools/list":
        _tools_of(server, result if isinstance(result, dict) else {"tools": None})
    elif method == "tools/call" and not (isinstance(result, dict)
                                         and result.get("resultType") == "input_required"):
        _check_result(server, str(canonical["params"]["name"]), result)
    else:
        try:
            MCPExchangeData.model_validate({"request": canonical, "response": result})
        except ValueError as exc:
            reason = " ".join(str(exc).split())
            raise MCPProtocolError(f"MCP server `{server.name}` ({server.describe()}) "
                                   f"answered `{method}` with a result that is not "
                                   f"MCP-shaped ({reason})") from None


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
    code: 0, or 1 when a request was not on the cassette, a line was not JSON (replaying) or
    the server ended before the agent was done. A :class:`ProxyError`, a
    :class:`~agentkit.recording.CassetteError` or an :class:`MCPServerError` before
    anything is read or started."""
    proxy = _Proxy(server, cassette, mode, sys.stdout.buffer, sys.stderr)

    async def main() -> int:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=MAX_MESSAGE)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        return await proxy.run(reader)

    return asyncio.run(main())
