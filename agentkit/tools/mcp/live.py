"""A live MCP server, driven by the official ``mcp`` SDK on a thread of its own.

The SDK's client is bound to the event loop it was opened on, while agentkit calls tools from
many loops (each thread's virtual-time loop, the helper threads of ``run_sync``). So the
client lives on one real asyncio loop in a background thread for as long as the server lives,
and callers hand it requests. A caller on a virtual-time loop waits for the answer on a
socket, which that loop treats as real I/O: the virtual clock moves by the real time the call
took (as for a live model), so concurrent calls overlap as they did for real and a replay of
the recorded latencies lands on the same clock values.

The server's stderr goes to a temporary file; its last lines, secrets redacted, are in every
error about it.
:meth:`LiveConnection.close` stops the server on every exit path (the SDK closes its stdin,
then terminates its process group); a failed start leaves no process behind.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import importlib.util
import logging
import os
import socket
import tempfile
import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

from agentkit.core.secrets import Redactor
from agentkit.tools.mcp.server import MCPProtocolError, MCPServer, MCPServerError

__all__ = ["LiveConnection", "await_future", "STDERR_LINES", "START_TIMEOUT"]

T = TypeVar("T")

STDERR_LINES = 12
"""How many of the server's last stderr lines an error shows."""
STDERR_LINE_CHARS = 500
"""How much of each stderr line an error shows."""
_STDERR_TAIL_BYTES = 64 * 1024  # read from the end of the server's stderr, however large

# the SDK logs a traceback for a line it cannot read; agentkit reports it as the call's error
logging.getLogger("mcp.client.stdio").addHandler(logging.NullHandler())

_CLOSE_TIMEOUT = 15.0  # the SDK's own shutdown is bounded (stdin close, SIGTERM, SIGKILL)

START_TIMEOUT = 60.0
"""Real seconds a server has to start and complete the MCP handshake (at least its
``timeout``, which bounds each request): an interpreter starting on a busy machine is slow."""


async def await_future(future: concurrent.futures.Future[T]) -> T:
    """The result of ``future`` (completed on another thread), awaited as real I/O: a
    virtual-time loop waits for it on the wall clock instead of jumping over it."""
    loop = asyncio.get_running_loop()
    reader, writer = socket.socketpair()
    reader.setblocking(False)

    def wake(_: concurrent.futures.Future[T]) -> None:
        with contextlib.suppress(OSError):  # the waiter has gone (cancelled): nothing to wake
            writer.send(b"\0")

    future.add_done_callback(wake)
    try:
        await loop.sock_recv(reader, 1)
    except BaseException:
        future.cancel()
        raise
    finally:
        reader.close()
        writer.close()
    return future.result()


class LiveConnection:
    """One live MCP server and the SDK client talking to it (see the module docstring)."""

    def __init__(self, server: MCPServer) -> None:
        self.server = server
        self._loop: asyncio.AbstractEventLoop | None = None
        self._client: Any = None
        self._stop: asyncio.Event | None = None
        self._ready = threading.Event()
        self._failure: BaseException | None = None
        self._thread: threading.Thread | None = None
        self._closed = False
        self._invalid: asyncio.Event | None = None
        self._invalid_message: BaseException | None = None
        fd, name = tempfile.mkstemp(prefix="agentkit-mcp-", suffix=".stderr")
        os.close(fd)
        self._stderr_path = Path(name)

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> None:
        """Start the server and complete the MCP handshake (blocking); an
        :class:`MCPServerError` naming the command and its stderr if it does not come up."""
        if self._thread is not None:
            return
        if importlib.util.find_spec("mcp") is None:
            raise MCPServerError(f"MCP server `{self.server.name}` ({self.server.describe()}) "
                                 "cannot be started: the MCP SDK is not installed; pip install "
                                 "'agentkit[mcp]' (replaying a cassette needs no SDK)")
        executable = self.server.executable() if self.server.command is not None else None
        # imported here, not on the server's thread: the time to start is the server's own,
        # not the SDK's import (seconds on a busy machine)
        importlib.import_module("mcp.client")
        self._thread = threading.Thread(target=self._thread_main, args=(executable,),
                                        name=f"agentkit-mcp-{self.server.name}", daemon=True)
        self._thread.start()
        started = max(self.server.timeout, START_TIMEOUT)
        if not self._ready.wait(started):
            error = self.error(f"did not complete the MCP handshake within {started:g} s")
            self.close()
            raise error
        if self._failure is not None:
            self._thread.join(_CLOSE_TIMEOUT)  # its loop has ended; its stderr is complete
            error = self.error(f"did not start: {_reason(self._failure)}")
            self.close()
            raise error

    def close(self) -> None:
        """Stop the server (idempotent; blocking until the SDK has shut it down)."""
        if self._closed:
            return
        self._closed = True
        loop, stop, thread = self._loop, self._stop, self._thread
        if loop is not None and stop is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):  # the loop ended on its own (it failed)
                loop.call_soon_threadsafe(stop.set)
        if thread is not None:
            thread.join(_CLOSE_TIMEOUT)
        with contextlib.suppress(OSError):
            self._stderr_path.unlink()

    @property
    def ended(self) -> bool:
        """Whether it was started and is not running any more (stopped, failed or dead)."""
        return self._thread is not None and not self.alive

    @property
    def alive(self) -> bool:
        return (self._thread is not None and self._thread.is_alive() and not self._closed
                and self._failure is None)

    def _thread_main(self, executable: str | None) -> None:
        try:
            asyncio.run(self._serve(executable))
        except BaseException as exc:  # noqa: BLE001 (reported to the caller, never lost)
            self._failure = self._failure or exc
        finally:
            self._ready.set()

    async def _serve(self, executable: str | None) -> None:
        from contextlib import AsyncExitStack

        from mcp.client import Client

        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        self._invalid = asyncio.Event()
        with self._stderr_path.open("a", encoding="utf-8", errors="replace") as errlog:
            async with AsyncExitStack() as stack:
                transport = self._transport(executable, errlog, stack)
                client = Client(await transport, cache=None, message_handler=self._on_message)
                self._client = await stack.enter_async_context(client)
                self._ready.set()
                await self._stop.wait()

    async def _transport(self, executable: str | None, errlog: Any, stack: Any) -> Any:
        server = self.server
        if executable is not None:
            from mcp.client.stdio import StdioServerParameters, stdio_client

            params = StdioServerParameters(command=executable, args=list(server.args),
                                           env=dict(server.env) or None, cwd=server.cwd)
            return stdio_client(params, errlog=errlog)
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        assert server.url is not None
        http = await stack.enter_async_context(httpx2.AsyncClient(
            headers=dict(server.headers), timeout=server.timeout))
        return streamable_http_client(server.url, http_client=http)

    async def _on_message(self, message: Any) -> None:
        """What the SDK could not read from the server (not JSON-RPC) ends the calls waiting
        on it at once, named as such (before: they waited out the timeout, "did not answer")."""
        if isinstance(message, Exception) and self._invalid is not None:
            self._invalid_message = message
            self._invalid.set()

    # ------------------------------------------------------------------ requests
    def submit(self, request: Callable[[Any], Awaitable[T]]) -> concurrent.futures.Future[T]:
        """Run ``request(client)`` on the server's loop, bounded by the server's timeout and
        ended by a message from the server that is not JSON-RPC."""
        if not self.alive or self._loop is None:
            raise self.error("is not running" if self._closed else "has stopped")

        async def bounded() -> T:
            call = asyncio.ensure_future(request(self._client))
            invalid = asyncio.ensure_future(self._invalid.wait()) if self._invalid else None
            try:
                await asyncio.wait({call, *([invalid] if invalid else [])},
                                   timeout=self.server.timeout,
                                   return_when=asyncio.FIRST_COMPLETED)
            finally:
                if invalid is not None:
                    invalid.cancel()
            if call.done():
                return call.result()
            call.cancel()
            if invalid is not None and self._invalid_message is not None:
                raise self.error(f"sent a message that is not valid JSON-RPC "
                                 f"({_reason(self._invalid_message)[:300]})",
                                 cls=MCPProtocolError)
            raise TimeoutError

        return asyncio.run_coroutine_threadsafe(bounded(), self._loop)

    # ------------------------------------------------------------------ errors
    def stderr_tail(self, lines: int = STDERR_LINES) -> list[str]:
        """The last ``lines`` lines the server wrote to stderr, each cut to
        :data:`STDERR_LINE_CHARS`: only the end of the file is read, however much it wrote."""
        try:
            with self._stderr_path.open("rb") as file:
                size = file.seek(0, 2)
                file.seek(max(size - _STDERR_TAIL_BYTES, 0))
                data = file.read(_STDERR_TAIL_BYTES)
        except OSError:
            return []
        text = data.decode("utf-8", errors="replace")
        if size > _STDERR_TAIL_BYTES:
            text = text.partition("\n")[2]  # the first line read is cut at its start
        return [line if len(line) <= STDERR_LINE_CHARS
                else f"{line[:STDERR_LINE_CHARS]}... ({len(line):,} characters)"
                for line in text.splitlines()[-lines:]]

    def error(self, what: str, tool: str | None = None,
              cls: type[MCPServerError] = MCPServerError) -> MCPServerError:
        """An error about this server: ``MCP server `x` (`command`) <what>``, then stderr."""
        about = f" calling `{tool}`" if tool is not None else ""
        text = f"MCP server `{self.server.name}` ({self.server.describe()}){about} {what}"
        # a server may print its own credentials (its env values, headers) in a diagnostic
        redactor = Redactor(secrets=self.server.secrets())
        tail = [redactor.text(line) for line in self.stderr_tail()]
        if tail:
            text += "\n  its last stderr lines:\n" + "\n".join(f"    {line}" for line in tail)
        else:
            text += "\n  (it wrote nothing to stderr)"
        return cls(text)


def _reason(error: BaseException) -> str:
    """The innermost cause of a failed start (task groups wrap it in exception groups)."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    text = str(error) or type(error).__name__
    return f"{type(error).__name__}: {text}" if str(error) else text
