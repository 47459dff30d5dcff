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
from http.server import BaseHTTPRequestHandler
from typing import Any, Self

from agentkit.bridge.endpoint import Bridge, HTTPAnswer
from agentkit.core.errors import BadInputError
from agentkit.core.loopback import HOST, MAX_BODY, BadRequest, LoopbackHTTPServer, read_body
from agentkit.llms.openai_wire import error_body

__all__ = ["LoopbackServer", "PortInUseError", "HOST", "MAX_BODY", "READ_TIMEOUT"]

READ_TIMEOUT = 30.0
"""Seconds a connection may stay silent (between requests, or in the middle of one) before
it is closed: a client that stalls holds no thread for long."""


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


class _Server(LoopbackHTTPServer):
    who = "agentkit bridge"


def _handler(owner: LoopbackServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "agentkit-bridge"
        sys_version = ""
        timeout = READ_TIMEOUT  # a connection silent this long is closed (each read)

        def do_GET(self) -> None:
            self._answer()

        def do_POST(self) -> None:
            self._answer()

        do_PUT = do_DELETE = do_PATCH = do_POST

        def do_HEAD(self) -> None:
            self.send_error(405, "the bridge answers GET and POST")

        do_OPTIONS = do_TRACE = do_CONNECT = do_HEAD

        def log_message(self, format: str, *args: Any) -> None:
            """Nothing is logged: a request's headers may carry an API key."""

        def send_error(self, code: int, message: str | None = None,
                       explain: str | None = None) -> None:
            """Every error the HTTP layer answers (a garbled request line, a header too long,
            a method not served) is an OpenAI-style JSON error, never an HTML page."""
            if self.request_version == "HTTP/0.9":  # no such agent: answer as HTTP/1.1
                self.request_version = "HTTP/1.1"
            reason = message or self.responses.get(code, ("error",))[0]
            answer = HTTPAnswer.json(code, error_body(
                f"{reason}", type="invalid_request_error" if code < 500 else "server_error"))
            if code == 405:
                answer.headers["allow"] = "GET, POST"
            self._send(answer, close=True)

        def _answer(self) -> None:
            try:
                body = read_body(self.headers, self.rfile, "the bridge")
            except BadRequest as exc:
                self.send_error(exc.status, str(exc))
                return
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
            if self.command != "HEAD":
                self.wfile.write(answer.body)

    return Handler
