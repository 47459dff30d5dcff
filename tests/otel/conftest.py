"""The OpenTelemetry tests run commands in-process (:func:`agentkit.cli.main`) inside
``tmp_path``, with none of this machine's OTel settings: an export goes only where a test says.
No ``__init__.py`` here on purpose (tests/ directories are not packages)."""

from __future__ import annotations

import io
import json
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from agentkit.cli import main

REPO = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).parent / "fixtures"
EPOCH_NS = 1_767_225_600 * 10**9


@pytest.fixture(autouse=True)
def no_otel_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    for name in ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                 "OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
                 "OTEL_EXPORTER_OTLP_TIMEOUT", "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT",
                 "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    yield


class Outcome:
    def __init__(self, code: int, out: str, err: str) -> None:
        self.code, self.out, self.err = code, out, err


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., Outcome]:
    """``cli("run", ...)``: exit code, stdout and stderr of the command."""

    def run(*argv: str | Path) -> Outcome:
        capsys.readouterr()
        out = io.StringIO()
        code = main([str(arg) for arg in argv], out=out)
        captured = capsys.readouterr()
        return Outcome(code, out.getvalue() + captured.out, captured.err)

    return run


@pytest.fixture
def bundled(tmp_path: Path) -> Callable[..., Path]:
    """``bundled("single_tool_call")``: a copy of a bundled scenario (with its snapshots) in
    ``tmp_path/scenarios``, so commands that write beside it leave the repository alone."""

    def copy(*names: str) -> Path:
        target = tmp_path / "scenarios"
        target.mkdir(exist_ok=True)
        for name in names:
            shutil.copy(REPO / "scenarios" / f"{name}.yaml", target)
            snapshots = REPO / "scenarios" / "__snapshots__" / name
            if snapshots.is_dir():
                shutil.copytree(snapshots, target / "__snapshots__" / name, dirs_exist_ok=True)
        return target / f"{names[0]}.yaml"

    return copy


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


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    server = Receiver()
    yield server
    server.close()
