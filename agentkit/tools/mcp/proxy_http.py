"""A recorded MCP server served over streamable HTTP (``agentkit mcp-proxy --http PORT``): the
replaying side of :mod:`agentkit.tools.mcp.proxy` for an agent (or a test suite) that reaches
its MCP servers by URL rather than by command.

It listens on ``http://127.0.0.1:PORT/mcp`` (loopback only; a Host or Origin that is not
loopback is refused 403, as the bridge refuses it: DNS rebinding) and answers each JSON-RPC
request POSTed there as the stdio proxy answers it when replaying: the recorded handshake
(``initialize``, ``server/discover``) or the proxy's own, ``ping``, and every recorded request
(:data:`~agentkit.recording.MCP_METHODS`: tools, resources, prompts, completions, the log
level) from the cassette -- as often as it is asked, since a server answers many clients --
and a request the cassette lacks with a JSON-RPC error naming the nearest recorded one.
Answers are ``application/json``, or a ``text/event-stream`` of the notifications recorded
during the request (progress, log messages) and then the answer; notifications and responses
are accepted (202). The
session of an ``initialize`` gets an ``Mcp-Session-Id``; it keeps no state, so any session id,
or none, is served alike (2026-07-28 clients have none). A GET (a stream the server would
push on) and a DELETE are answered 405: a replay has nothing to push.
"""

from __future__ import annotations

import errno
import itertools
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any, Self

from agentkit.core.loopback import HOST, BadRequest, LoopbackHTTPServer, read_body
from agentkit.tools.mcp.proxy import ProxyError, _Proxy
from agentkit.tools.mcp.server import MCPServer

__all__ = ["MCPReplayServer", "PATH"]

PATH = "/mcp"
"""Where the server answers (any other path is 404)."""
_WHO = "the replaying MCP server"


class MCPReplayServer:
    """A cassette's MCP exchanges for ``server`` served on ``127.0.0.1:port`` (``0``: any free
    port) over streamable HTTP; :attr:`misses` counts the requests it could not answer."""

    def __init__(self, server: MCPServer, cassette: Path, port: int = 0, *,
                 err: Any = None) -> None:
        self._proxy = _Proxy(server, cassette, "none", sys.stdout.buffer, err or sys.stderr)
        self._proxy.recording.repeat = True
        self._lock = threading.Lock()
        self._sessions = itertools.count(1)
        try:
            self._http = _Server((HOST, port), _handler(self))
        except OSError as exc:
            reason = ("is in use; choose another port (or 0 for any free one)"
                      if exc.errno == errno.EADDRINUSE else f"cannot be listened on: {exc}")
            raise ProxyError(f"port {port} on {HOST} {reason}") from None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self._http.server_address[1]}{PATH}"

    @property
    def misses(self) -> int:
        return self._proxy.misses

    def answer(self, body: bytes) -> tuple[int, dict[str, str], bytes]:
        """The HTTP answer to a POSTed body: status, headers, body -- ``application/json``,
        or ``text/event-stream`` when the answer comes after recorded notifications."""
        try:
            message = json.loads(body)
        except ValueError:
            return 400, {}, self._json(self._proxy.replay(body)[0])
        batch = message if isinstance(message, list) else [message]
        sent: list[dict[str, Any]] = []
        replies: list[dict[str, Any]] = []
        headers: dict[str, str] = {}
        with self._lock:
            for item in batch:
                for reply in self._proxy.replay(json.dumps(item).encode("utf-8")):
                    sent.append(reply)
                    if "method" in reply:
                        continue
                    if (isinstance(item, dict) and item.get("method") == "initialize"
                            and "result" in reply):
                        headers["mcp-session-id"] = f"agentkit-replay-{next(self._sessions)}"
                    replies.append(reply)
        if not replies:
            return 202, headers, b""
        if len(sent) > len(replies):
            headers["content-type"] = "text/event-stream"
            headers["cache-control"] = "no-cache"
            return 200, headers, b"".join(b"event: message\ndata: " + self._json(each)
                                          + b"\n\n" for each in sent)
        return 200, headers, self._json(replies if isinstance(message, list) else replies[0])

    @staticmethod
    def _json(value: Any) -> bytes:
        return json.dumps(value, ensure_ascii=False).encode("utf-8")

    def start(self) -> Self:
        """Serve from a daemon thread."""
        self._thread = threading.Thread(target=self._http.serve_forever,
                                        kwargs={"poll_interval": 0.1},
                                        name="agentkit-mcp-replay", daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving and free the port."""
        if self._thread is not None:
            self._http.shutdown()
            self._thread.join()
            self._thread = None
        self._http.server_close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Server(LoopbackHTTPServer):
    who = "agentkit mcp-proxy"


def _handler(owner: MCPReplayServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "agentkit-mcp-replay"
        sys_version = ""
        timeout = 30.0

        def do_POST(self) -> None:
            try:
                body = read_body(self.headers, self.rfile, _WHO)
            except BadRequest as exc:
                self._send(exc.status, {}, _error(str(exc)), close=True)
                return
            if self.path.split("?", 1)[0] != PATH:
                self._send(404, {}, _error(f"{_WHO} answers at {PATH}"))
                return
            status, headers, answer = owner.answer(body)
            self._send(status, headers, answer)

        def do_GET(self) -> None:
            try:
                read_body(self.headers, self.rfile, _WHO)
            except BadRequest as exc:
                self._send(exc.status, {}, _error(str(exc)), close=True)
                return
            self._send(405, {"allow": "POST"},
                       _error(f"{_WHO} pushes nothing: POST requests to {PATH}"))

        do_DELETE = do_PUT = do_PATCH = do_GET

        def log_message(self, format: str, *args: Any) -> None:
            """Nothing is logged: a request's headers may carry a token."""

        def _send(self, status: int, headers: dict[str, str], body: bytes, *,
                  close: bool = False) -> None:
            self.send_response_only(status)
            self.send_header("server", self.server_version)
            if body and "content-type" not in headers:
                self.send_header("content-type", "application/json")
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("content-length", str(len(body)))
            if close:
                self.send_header("connection", "close")
                self.close_connection = True
            self.end_headers()
            self.wfile.write(body)

    return Handler


def _error(message: str) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": None,
                       "error": {"code": -32600, "message": f"agentkit: {message}"}}).encode()
