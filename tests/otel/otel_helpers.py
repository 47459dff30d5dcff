"""Shared by the OpenTelemetry tests: reading OTLP-JSON files, and a receiver on loopback.
(A module of its own name: every test folder has a conftest.py, and `import conftest` would
get whichever was imported first.)"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).parent / "fixtures"
EPOCH_NS = 1_767_225_600 * 10**9


class Outcome:
    """What a command run returned: exit code, stdout, stderr."""

    def __init__(self, code: int, out: str, err: str) -> None:
        self.code, self.out, self.err = code, out, err


def spans_of(path: Path) -> list[dict[str, Any]]:
    """Every span of an OTLP-JSON file, in file order."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return [span for rs in data["resourceSpans"] for ss in rs["scopeSpans"] for span in ss["spans"]]


def attrs(span: dict[str, Any]) -> dict[str, Any]:
    """A span's (or event's) attributes as a plain mapping."""
    found: dict[str, Any] = {}
    for item in span.get("attributes", []):
        value = item["value"]
        kind, raw = next(iter(value.items()))
        found[item["key"]] = (int(raw) if kind == "intValue" else
                              [next(iter(v.values())) for v in raw["values"]]
                              if kind == "arrayValue" else raw)
    return found


def seconds(span: dict[str, Any], key: str) -> float:
    """A span's start or end time in seconds of virtual time."""
    return (int(span[key]) - EPOCH_NS) / 1e9


def tree(spans: list[dict[str, Any]]) -> list[str]:
    """The span names indented by depth, in file order (parents come before children)."""
    by_id = {s["spanId"]: s for s in spans}

    def depth(span: dict[str, Any]) -> int:
        count = 0
        while "parentSpanId" in span:
            span = by_id[span["parentSpanId"]]
            count += 1
        return count

    return ["  " * depth(s) + s["name"] for s in spans]


class Receiver:
    """An OTLP/HTTP traces endpoint on loopback that keeps what it is sent."""

    def __init__(self, status: int = 200) -> None:
        import http.server
        import threading

        self.requests: list[dict[str, Any]] = []
        self.status = status
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", 0))
                owner.requests.append({"path": self.path, "body": self.rfile.read(length),
                                       "headers": {k.lower(): v for k, v in self.headers.items()}})
                self.send_response(owner.status)
                self.send_header("content-type", "application/x-protobuf")
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1/traces"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def spans(self) -> list[Any]:
        """Every span of every request received (protobuf, decoded)."""
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
            ExportTraceServiceRequest,
        )

        found = []
        for request in self.requests:
            message = ExportTraceServiceRequest()
            message.ParseFromString(request["body"])
            found += [span for rs in message.resource_spans for ss in rs.scope_spans
                      for span in ss.spans]
        return found

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
