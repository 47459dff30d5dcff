"""A real, misbehaving HTTP server on 127.0.0.1 for reliability tests.

:class:`LoopbackServer` runs ``http.server`` in a thread and answers each request with the
next :class:`Reply` of its script: any status, headers and body, optionally trickled one byte
at a time, stalled, or cut off before the end. It records when each request arrived
(``time.monotonic()``), so a test can check that a client really waited between attempts.

Tests that use it must let loopback connections through the network guard
(``@pytest.mark.agentkit_allow_loopback``).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

__all__ = ["LoopbackServer", "Reply", "completion", "sse"]


@dataclass
class Reply:
    """One scripted answer.

    ``trickle`` sends the body one byte every that many seconds; ``stall`` waits that long after
    the headers; ``cut_after`` closes the connection after that many body bytes (with a
    ``Content-Length`` promising the whole body when ``promise_length`` is set).
    """

    status: int = 200
    body: bytes | str | dict[str, Any] = b""
    headers: dict[str, str] = field(default_factory=dict)
    trickle: float | None = None
    stall: float | None = None
    cut_after: int | None = None
    promise_length: bool = True

    def payload(self) -> bytes:
        if isinstance(self.body, dict):
            return json.dumps(self.body).encode()
        return self.body.encode() if isinstance(self.body, str) else self.body


@dataclass
class Request:
    """A request the server received: when (monotonic seconds), path, headers (lower-case
    names) and body, and how many bytes of the answer's body the server got to send."""

    at: float
    path: str
    headers: dict[str, str]
    body: bytes
    sent: int = 0


def completion(text: str = "ok", *, finish_reason: str = "stop") -> dict[str, Any]:
    """A chat.completions JSON body answering ``text``."""
    return {"id": "chatcmpl-loopback", "object": "chat.completion", "created": 0,
            "model": "gpt-4o-mini",
            "choices": [{"index": 0, "finish_reason": finish_reason,
                         "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}


def sse(pieces: Iterable[str], *, finish: bool = True, done: bool = True) -> str:
    """An SSE chat.completions stream of text ``pieces``; ``finish``/``done`` add the
    finish_reason chunk and the ``[DONE]`` terminator."""
    def event(delta: dict[str, Any], finish_reason: str | None = None) -> str:
        chunk = {"id": "chatcmpl-loopback", "object": "chat.completion.chunk", "created": 0,
                 "model": "gpt-4o-mini",
                 "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]}
        return f"data: {json.dumps(chunk)}\n\n"

    text = event({"role": "assistant", "content": ""})
    text += "".join(event({"content": piece}) for piece in pieces)
    if finish:
        text += event({}, "stop")
    if done:
        text += "data: [DONE]\n\n"
    return text


class LoopbackServer:
    """A threaded HTTP server on 127.0.0.1 serving a script of :class:`Reply` items; use it
    as a context manager. ``url`` is its OpenAI-style base URL (``.../v1``)."""

    def __init__(self, replies: Iterable[Reply]) -> None:
        self.replies = list(replies)
        self.requests: list[Request] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length)
                headers = {name.lower(): value for name, value in self.headers.items()}
                request = Request(time.monotonic(), self.path, headers, body)
                server._answer(self, server._next(request), request)

            def log_message(self, *args: Any) -> None:
                pass

        self._http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._http.daemon_threads = True
        self._http.block_on_close = False  # a stalled handler must not hold up the test
        self._thread = threading.Thread(target=self._http.serve_forever, args=(0.01,),
                                        daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._http.server_address[1]}/v1"

    def _next(self, request: Request) -> Reply:
        with self._lock:
            self.requests.append(request)
            if not self.replies:
                return Reply(500, {"error": {"message": "loopback script exhausted"}})
            return self.replies.pop(0)

    @staticmethod
    def _answer(handler: BaseHTTPRequestHandler, reply: Reply, request: Request) -> None:
        payload = reply.payload()
        try:
            handler.send_response(reply.status)
            headers = {"content-type": "application/json", **reply.headers}
            for name, value in headers.items():
                handler.send_header(name, value)
            if reply.promise_length:
                handler.send_header("content-length", str(len(payload)))
            handler.send_header("connection", "close")
            handler.end_headers()
            handler.wfile.flush()
            if reply.stall:
                time.sleep(reply.stall)
            body = payload if reply.cut_after is None else payload[:reply.cut_after]
            if reply.trickle is None:
                handler.wfile.write(body)
                request.sent = len(body)
            else:
                for index in range(len(body)):
                    handler.wfile.write(body[index:index + 1])
                    handler.wfile.flush()
                    request.sent = index + 1
                    time.sleep(reply.trickle)
            handler.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up: what some tests are about
        handler.close_connection = True

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._http.shutdown()
        self._http.server_close()
        self._thread.join()
