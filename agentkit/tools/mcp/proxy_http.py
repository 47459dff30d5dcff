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
from agentkit.recording import MCP_METHODS
from agentkit.tools.mcp.proxy import _VERSION_META, ProxyError, _Proxy
from agentkit.tools.mcp.server import MCPServer

__all__ = ["MCPReplayServer", "PATH"]

PATH = "/mcp"
"""Where the server answers (any other path is 404)."""
_WHO = "the replaying MCP server"
_CAPABILITIES_META = "io.modelcontextprotocol/clientCapabilities"
_REMOVED = ("initialize", "ping", "logging/setLevel", "resources/subscribe",
            "resources/unsubscribe")
"""The methods the stateless protocol (2026-07-28) has no more."""
_MISSING_CAPABILITY = -32021
"""The error of a request that needs a capability its client did not declare: HTTP 400."""


class MCPReplayServer:
    """A cassette's MCP exchanges for ``server`` served on ``127.0.0.1:port`` (``0``: any free
    port) over streamable HTTP; :attr:`misses` counts the requests it could not answer."""

    def __init__(self, server: MCPServer, cassette: Path, port: int = 0, *,
                 err: Any = None) -> None:
        self._proxy = _Proxy(server, cassette, "none", sys.stdout.buffer, err or sys.stderr)
        self._proxy.recording.repeat = True
        discover = self._proxy.recording.handshake(server.name, "server/discover") or {}
        versions = discover.get("supportedVersions")
        self._stateless: tuple[str, ...] = tuple(versions) if isinstance(versions, list) else ()
        """The stateless protocol versions the recorded server supports (its recorded
        ``server/discover``; none: it was recorded over ``initialize``)."""
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

    def answer(self, body: bytes, version: str | None = None
               ) -> tuple[int, dict[str, str], bytes]:
        """The HTTP answer to a POSTed body (``version``: its ``MCP-Protocol-Version``
        header): status, headers, body -- ``application/json``, or ``text/event-stream`` when
        the answer comes after recorded notifications."""
        try:
            message = json.loads(body)
        except ValueError:
            return 400, {}, self._json(self._proxy.replay(body)[0])
        refused = self.refusal(message, version)
        if refused is not None:
            status, error = refused
            return status, {}, self._json({"jsonrpc": "2.0", "id": message["id"],
                                           "error": error})
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
        if isinstance(message, list):
            return 200, headers, self._json(replies)
        code = (replies[0].get("error") or {}).get("code")
        return (400 if code == _MISSING_CAPABILITY else 200), headers, self._json(replies[0])

    def refusal(self, message: Any, version: str | None
                ) -> tuple[int, dict[str, Any]] | None:
        """The HTTP status and JSON-RPC error a stateless (2026-07-28) server answers a
        request it refuses: one without the ``_meta`` the protocol requires (400, -32602), a
        header that says another version than its ``_meta`` (400, -32020), a version the
        recorded server does not support (400, -32022, with the ones it does), a method the
        protocol has no more or does not know (404, -32601). A request is held to the
        stateless protocol when the recorded server spoke it (its ``server/discover`` is
        recorded) and the request says it is of it (its header or ``_meta`` names a version);
        None: nothing to refuse."""
        if not self._stateless or not isinstance(message, dict) or "id" not in message:
            return None
        method, params = message.get("method"), message.get("params")
        meta = params.get("_meta") if isinstance(params, dict) else None
        meta = meta if isinstance(meta, dict) else {}
        if not isinstance(method, str) or (version not in self._stateless
                                           and _VERSION_META not in meta):
            return None
        if _VERSION_META not in meta or _CAPABILITIES_META not in meta:
            return 400, {"code": -32602, "message": f"agentkit: Invalid params: a {method} "
                         f"request of protocol {'/'.join(self._stateless)} carries `_meta` "
                         f"with `{_VERSION_META}` and `{_CAPABILITIES_META}`"}
        asked = meta[_VERSION_META]
        if version is not None and version != asked:
            return 400, {"code": -32020, "message": f"agentkit: Header mismatch: "
                         f"MCP-Protocol-Version says {version}, `_meta` says {asked}"}
        if asked not in self._stateless:
            return 400, {"code": -32022, "message": f"agentkit: Unsupported protocol version "
                         f"{asked}", "data": {"supported": list(self._stateless),
                                              "requested": asked}}
        if method in _REMOVED or (method not in MCP_METHODS and method != "server/discover"):
            return 404, {"code": -32601, "message": f"agentkit: Method not found: {method}"}
        return None

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
            status, headers, answer = owner.answer(body, self.headers.get(
                "mcp-protocol-version"))
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
