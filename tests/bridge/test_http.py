"""The loopback server speaks HTTP/1.1 correctly: chunked bodies, one Content-Length of digits,
a read timeout, an OpenAI-style JSON error for every status (garbled requests, HEAD, OPTIONS
included), no traceback when a client resets, and no answer to a request whose Host or Origin
is not loopback (a web page in the user's browser, DNS rebinding)."""

from __future__ import annotations

import json
import socket
import struct
from collections.abc import Iterator

import pytest

from agentkit.bridge import server as bridge_server
from agentkit.bridge.server import LoopbackServer

from .conftest import scripted_bridge, turn

pytestmark = pytest.mark.agentkit_allow_loopback

BODY = json.dumps({"model": "m", "messages": [{"role": "user", "content": "What is 2 + 3?"}]})


@pytest.fixture
def served() -> Iterator[LoopbackServer]:
    bridge, _, _ = scripted_bridge(["2 + 3 = 5", "again"], strict=False)
    with LoopbackServer(0) as server, turn(bridge):
        server.attach(bridge)
        yield server


def _exchange(server: LoopbackServer, raw: bytes) -> list[tuple[int, dict[str, str], bytes]]:
    """Every answer the server gives to ``raw`` before it closes the connection."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
        sock.sendall(raw)
        sock.shutdown(socket.SHUT_WR)
        data = b"".join(iter(lambda: sock.recv(65536), b""))
    answers = []
    while data:
        head, _, data = data.partition(b"\r\n\r\n")
        status_line, *lines = head.decode().split("\r\n")
        headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines)}
        size = int(headers.get("content-length", "0"))
        answers.append((int(status_line.split()[1]), headers, data[:size]))
        data = data[size:]
    return answers


def _post(body: bytes, *headers: str, host: str = "127.0.0.1") -> bytes:
    lines = ["POST /v1/chat/completions HTTP/1.1", f"Host: {host}", *headers]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def _chunked(body: str, size: int = 7) -> bytes:
    data = body.encode()
    pieces = [data[i:i + size] for i in range(0, len(data), size)]
    return b"".join(b"%x\r\n%s\r\n" % (len(p), p) for p in pieces) + b"0\r\n\r\n"


def test_a_chunked_request_body_is_read_whole_and_gets_one_answer(served):
    answers = _exchange(served, _post(_chunked(BODY), "Transfer-Encoding: chunked",
                                      "Connection: close"))

    assert [status for status, _, _ in answers] == [200]
    assert json.loads(answers[0][2])["choices"][0]["message"]["content"] == "2 + 3 = 5"


def test_a_chunked_body_then_a_second_request_on_the_same_connection_gets_two_answers(served):
    second = _post(BODY.encode(), f"Content-Length: {len(BODY)}", "Connection: close")

    answers = _exchange(served, _post(_chunked(BODY), "Transfer-Encoding: chunked") + second)

    assert [status for status, _, _ in answers] == [200, 200]


@pytest.mark.parametrize("headers", [
    ["Content-Length: +{n}"], ["Content-Length: {n}_0"],
    ["Content-Length: {n}", "Content-Length: 6"],
    ["Content-Length: {n}", "Transfer-Encoding: chunked"], ["Transfer-Encoding: gzip"]])
def test_ambiguous_framing_is_refused_unread_with_a_json_error(served, headers):
    framing = [h.format(n=len(BODY)) for h in headers]

    ((status, found, body),) = _exchange(served, _post(BODY.encode(), *framing,
                                                       "Connection: close"))

    assert status in (400, 501)
    assert found["content-type"] == "application/json"
    message = json.loads(body)["error"]["message"]
    assert "Content-Length" in message or "Transfer-Encoding" in message


@pytest.mark.parametrize("raw, status", [
    (b"HEAD /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 405),
    (b"OPTIONS /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 405),
    (b"BREW /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 501),
    (b"complete garbage\r\n\r\n", 400), (b"\x00\xff\xfe nonsense\r\n\r\n", 400),
    (b"GET /v1/models HTTP/9.9\r\nHost: 127.0.0.1\r\n\r\n", 505)])
def test_every_status_is_answered_with_an_openai_style_json_error(served, raw, status):
    ((found, headers, body),) = _exchange(served, raw)

    assert found == status
    assert headers["content-type"] == "application/json"
    if raw.startswith(b"HEAD"):
        assert body == b""
    else:
        assert set(json.loads(body)["error"]) == {"message", "type", "param", "code"}


@pytest.mark.parametrize("header", ["Host: evil.example", "Host: 127.0.0.1.evil.example:80",
                                    "Origin: http://evil.example", "Origin: null"])
def test_a_request_whose_host_or_origin_is_not_loopback_is_refused(served, header):
    host = header.split(": ")[1] if header.startswith("Host") else "127.0.0.1"
    extra = [header] if header.startswith("Origin") else []

    ((status, _, body),) = _exchange(served, _post(BODY.encode(), f"Content-Length: {len(BODY)}",
                                                   *extra, host=host))

    assert status == 403
    assert "error" in json.loads(body)


@pytest.mark.parametrize("host", ["localhost", "127.0.0.1:8080", "[::1]:80"])
def test_loopback_hosts_and_origins_are_answered(served, host):
    answers = _exchange(served, _post(BODY.encode(), f"Content-Length: {len(BODY)}",
                                      f"Origin: http://{host}", "Connection: close", host=host))

    assert [status for status, _, _ in answers] == [200]


def test_a_silent_connection_is_closed_after_the_read_timeout(monkeypatch):
    monkeypatch.setattr(bridge_server, "READ_TIMEOUT", 0.2)
    with LoopbackServer(0) as server, socket.create_connection(
            ("127.0.0.1", server.port), timeout=30) as sock:
        sock.sendall(b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                     b"Content-Length: 100\r\n\r\n{")  # and then nothing

        assert sock.recv(65536) == b""  # closed by the server, not by this test's timeout


def test_a_client_that_resets_its_connection_costs_no_traceback(served, capfd):
    for _ in range(5):
        sock = socket.create_connection(("127.0.0.1", served.port), timeout=30)
        sock.sendall(_post(b'{"model"', "Content-Length: 100"))
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.close()  # RST
    assert [s for s, _, _ in _exchange(served, b"GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1"
                                                b"\r\nConnection: close\r\n\r\n")] == [200]

    assert "Traceback" not in capfd.readouterr().err
