"""The bridge on a real socket: an HTTP server on 127.0.0.1, for an agent in another process
or language (``agentkit serve``).

:class:`LoopbackServer` binds the loopback interface only (never a public one) when it is
created, so a port in use is an error before anything runs (:class:`PortInUseError`). It
serves from a thread of its own, one thread per connection, each request answered by the
bridge attached to it (:meth:`LoopbackServer.attach`; 503 before one is). Requests are never
logged (their headers may carry a key). A scripted timeout or connection failure closes the
connection without an answer. :meth:`LoopbackServer.close` stops serving and frees the port.
"""

from __future__ import annotations

import errno
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

from agentkit.bridge.endpoint import Bridge, HTTPAnswer
from agentkit.core.errors import BadInputError
from agentkit.llms.openai_wire import error_body

__all__ = ["LoopbackServer", "PortInUseError", "HOST", "MAX_BODY"]

HOST = "127.0.0.1"
MAX_BODY = 64 * 1024 * 1024
"""The largest request body read (64 MiB): a bigger one is answered 413 unread."""


class PortInUseError(BadInputError):
    """The port asked for is taken; the message says which and what to do."""


class LoopbackServer:
    """An HTTP server on ``127.0.0.1:port`` (``0``: any free port) answering with a bridge."""

    def __init__(self, port: int = 0) -> None:
        self.bridge: Bridge | None = None
        try:
            self._server = _Server((HOST, port), _handler(self))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise PortInUseError(f"port {port} on {HOST} is in use; choose another --port "
                                     "(or --port 0 for any free one)") from None
            raise PortInUseError(f"cannot listen on {HOST}:{port}: {exc.strerror or exc}"
                                 ) from None
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``: what an OpenAI client takes as its base URL."""
        return f"http://{HOST}:{self.port}/v1"

    def attach(self, bridge: Bridge) -> None:
        """Answer requests with ``bridge`` from now on."""
        self.bridge = bridge

    def start(self) -> Self:
        """Serve from a daemon thread (it never keeps the process alive)."""
        self._thread = threading.Thread(target=self._server.serve_forever,
                                        kwargs={"poll_interval": 0.1},
                                        name="agentkit-bridge-server", daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving and free the port (requests still running are answered 503)."""
        if self.bridge is not None:
            self.bridge.stop()
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join()
            self._thread = None
        self._server.server_close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Server(ThreadingHTTPServer):
    daemon_threads = True  # a connection left open never keeps the process alive


def _handler(owner: LoopbackServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "agentkit-bridge"
        sys_version = ""

        def do_GET(self) -> None:
            self._answer()

        def do_POST(self) -> None:
            self._answer()

        do_PUT = do_DELETE = do_PATCH = do_POST

        def log_message(self, format: str, *args: Any) -> None:
            """Nothing is logged: a request's headers may carry an API key."""

        def _answer(self) -> None:
            length = self.headers.get("content-length")
            try:
                size = int(length) if length is not None else 0
            except ValueError:
                size = -1
            if size < 0 or size > MAX_BODY:
                what = "is not a number" if size < 0 else f"exceeds {MAX_BODY} bytes"
                self._send(HTTPAnswer.json(413 if size > 0 else 400, error_body(
                    f"the request's Content-Length {what}")), close=True)
                return
            body = self.rfile.read(size) if size else b""
            bridge = owner.bridge
            if bridge is None:
                answer = HTTPAnswer.json(503, error_body(
                    "the agentkit bridge is starting; try again", type="server_error"))
            else:
                answer = bridge.handle(self.command, self.path.split("?", 1)[0], body)
            if answer.failure is not None:  # a scripted timeout or connection failure
                self.close_connection = True
                return
            self._send(answer)

        def _send(self, answer: HTTPAnswer, *, close: bool = False) -> None:
            self.send_response_only(answer.status)  # no wall-clock Date: the bridge's is virtual
            self.send_header("server", self.server_version)
            for name, value in answer.headers.items():
                self.send_header(name, value)
            self.send_header("content-length", str(len(answer.body)))
            if close:
                self.send_header("connection", "close")
                self.close_connection = True
            self.end_headers()
            self.wfile.write(answer.body)

    return Handler
