"""What a server on the loopback interface checks of a request before it reads the body: the
bridge (``agentkit serve``) and the replaying MCP server (``agentkit mcp-proxy --http``) serve
programs on this machine only, so a Host or Origin that is not loopback (a web page, DNS
rebinding) is refused, and so is any framing that two readers could read differently
(request smuggling)."""

from __future__ import annotations

import re
import sys
from http.server import ThreadingHTTPServer
from typing import Any

__all__ = ["HOST", "MAX_BODY", "BadRequest", "LoopbackHTTPServer", "is_loopback", "read_body"]

HOST = "127.0.0.1"
MAX_BODY = 64 * 1024 * 1024
"""The largest request body read (64 MiB): a bigger one is answered 413 unread."""

_LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")
_DIGITS = re.compile(r"[0-9]{1,20}")
_CHUNK_SIZE = re.compile(rb"([0-9A-Fa-f]{1,16})[ \t]*(?:;[^\r\n]*)?\r?\n")


class BadRequest(Exception):
    """A request refused before its body is read: ``status`` and why."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def is_loopback(authority: str) -> bool:
    """Whether ``host[:port]`` names the loopback interface (a DNS-rebound name does not)."""
    host, _, port = authority.rpartition(":") if not authority.endswith("]") else (
        authority, "", "")
    if not host or (port and not port.isdigit()):
        host = authority
    return host.lower() in _LOOPBACK_HOSTS


def read_body(headers: Any, stream: Any, who: str) -> bytes:
    """The body of a request that passes the checks (``headers`` as ``http.server`` parses
    them, read from ``stream``); a :class:`BadRequest` naming ``who`` refuses it."""
    size = _body_size(headers, who)
    if size is None:
        return _read_chunked(stream)
    return bytes(stream.read(size)) if size else b""


def _body_size(headers: Any, who: str) -> int | None:
    """The body length of a request that may be read (``None``: chunked)."""
    hosts = headers.get_all("host") or []
    if len(hosts) != 1 or not is_loopback(hosts[0].strip()):
        raise BadRequest(403 if hosts else 400, f"{who} answers requests to 127.0.0.1 "
                         f"or localhost only (Host: {', '.join(hosts) or 'none'})")
    origins = headers.get_all("origin") or []
    for origin in origins:
        scheme, _, authority = origin.strip().partition("://")
        if scheme not in ("http", "https") or not is_loopback(authority.rstrip("/")):
            raise BadRequest(403, f"{who} answers no web page of another origin "
                             f"(Origin: {origin})")
    encodings = headers.get_all("transfer-encoding") or []
    lengths = headers.get_all("content-length") or []
    if encodings:
        if lengths:
            raise BadRequest(400, "a request has Transfer-Encoding or Content-Length, "
                             "not both")
        if [e.strip().lower() for e in ",".join(encodings).split(",")] != ["chunked"]:
            raise BadRequest(501, f"Transfer-Encoding {', '.join(encodings)} is not "
                             "supported (only chunked)")
        return None
    values = {value.strip() for value in lengths}
    if len(values) > 1:
        raise BadRequest(400, "the request's Content-Length headers differ")
    length = values.pop() if values else "0"
    if not _DIGITS.fullmatch(length):
        raise BadRequest(400, "the request's Content-Length is not a number")
    if int(length) > MAX_BODY:
        raise BadRequest(413, f"the request's Content-Length exceeds {MAX_BODY} bytes")
    return int(length)


def _read_chunked(stream: Any) -> bytes:
    """A chunked body (its trailers skipped), at most :data:`MAX_BODY` bytes."""
    parts: list[bytes] = []
    size = 0
    while True:
        line = stream.readline(1024)
        match = _CHUNK_SIZE.fullmatch(line)
        if match is None:
            raise BadRequest(400, "the request's chunked body is malformed (a chunk size "
                             "line)")
        chunk = int(match.group(1), 16)
        if chunk == 0:
            break
        size += chunk
        if size > MAX_BODY:
            raise BadRequest(413, f"the request's chunked body exceeds {MAX_BODY} bytes")
        data = stream.read(chunk)
        if len(data) < chunk or stream.readline(3) not in (b"\r\n", b"\n"):
            raise BadRequest(400, "the request's chunked body is malformed (a chunk's data)")
        parts.append(data)
    for _ in range(100):  # trailers, up to the empty line
        if stream.readline(8192) in (b"\r\n", b"\n", b""):
            return b"".join(parts)
    raise BadRequest(400, "the request's chunked body has too many trailers")


class LoopbackHTTPServer(ThreadingHTTPServer):
    """The HTTP server of both: a connection left open never keeps the process alive, and a
    client that resets, times out or hangs up costs its connection, not a traceback; anything
    else is a bug, reported as one line on stderr under ``who`` (``agentkit bridge``)."""

    daemon_threads = True
    who = "agentkit"

    def handle_error(self, request: Any, client_address: Any) -> None:
        error = sys.exc_info()[1]
        if not isinstance(error, (ConnectionError, TimeoutError, OSError)):
            print(f"{self.who}: {type(error).__name__}: {error}", file=sys.stderr)
