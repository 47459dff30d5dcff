"""OTLP-JSON: spans written as the OTLP/JSON encoding of an ``ExportTraceServiceRequest``, and
read back from what tools export.

Writing follows the OTLP specification's JSON encoding: ``resourceSpans`` > ``scopeSpans``
> ``spans``, lowerCamelCase keys, trace and span ids as hex, enums as numbers, 64-bit
integers as strings. Reading takes that, the protobuf JSON mapping's variants of it
(snake_case keys, base64 ids, enum names), JSON Lines of such requests (the OpenTelemetry
Collector's file exporter), and Arize Phoenix's span export (``{"data": [span, ...]}``).
Reading needs no OpenTelemetry package.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentkit.core.errors import BadInputError
from agentkit.core.textfiles import JsonLimitError, TextFileError, loads_json, read_text

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import ReadableSpan

__all__ = ["encode", "dumps", "SpanData", "read_spans", "OtlpError"]

_KINDS = {"SPAN_KIND_UNSPECIFIED": 0, "SPAN_KIND_INTERNAL": 1, "SPAN_KIND_SERVER": 2,
          "SPAN_KIND_CLIENT": 3, "SPAN_KIND_PRODUCER": 4, "SPAN_KIND_CONSUMER": 5}
_STATUS = {"STATUS_CODE_UNSET": 0, "STATUS_CODE_OK": 1, "STATUS_CODE_ERROR": 2,
           "UNSET": 0, "OK": 1, "ERROR": 2}


class OtlpError(BadInputError):
    """A file is not an OTLP-JSON trace export; the message says what was expected."""


# ---------------------------------------------------------------------------- writing
def _value(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, (list, tuple)):
        return {"arrayValue": {"values": [_value(v) for v in value]}}
    return {"stringValue": str(value)}


def _attributes(attributes: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    return [{"key": key, "value": _value(value)} for key, value in (attributes or {}).items()]


def _span(span: ReadableSpan) -> dict[str, Any]:
    context = span.context
    assert context is not None
    data: dict[str, Any] = {"traceId": f"{context.trace_id:032x}",
                            "spanId": f"{context.span_id:016x}"}
    if span.parent is not None:
        data["parentSpanId"] = f"{span.parent.span_id:016x}"
    data.update({"name": span.name, "kind": span.kind.value + 1,
                 "startTimeUnixNano": str(span.start_time),
                 "endTimeUnixNano": str(span.end_time),
                 "attributes": _attributes(span.attributes)})
    if span.events:
        data["events"] = [{"timeUnixNano": str(event.timestamp), "name": event.name,
                           "attributes": _attributes(event.attributes)}
                          for event in span.events]
    status: dict[str, Any] = {"code": span.status.status_code.value}
    if span.status.description:
        status["message"] = span.status.description
    data["status"] = status
    return data


def encode(spans: Sequence[ReadableSpan]) -> dict[str, Any]:
    """An ``ExportTraceServiceRequest`` of ``spans`` (one resource and scope per distinct
    pair, in order of first appearance), as OTLP/JSON data."""
    groups: dict[tuple[int, int], tuple[ReadableSpan, list[dict[str, Any]]]] = {}
    for span in spans:
        key = (id(span.resource), id(span.instrumentation_scope))
        groups.setdefault(key, (span, []))[1].append(_span(span))
    resource_spans = []
    for first, encoded in groups.values():
        scope = first.instrumentation_scope
        scope_data: dict[str, Any] = {"name": scope.name if scope else ""}
        if scope is not None and scope.version:
            scope_data["version"] = scope.version
        resource_spans.append({
            "resource": {"attributes": _attributes(first.resource.attributes)},
            "scopeSpans": [{"scope": scope_data, "spans": encoded}]})
    return {"resourceSpans": resource_spans}


def dumps(request: Mapping[str, Any]) -> str:
    """The file text of an encoded request: indented, keys in the order written."""
    return json.dumps(request, indent=1, ensure_ascii=False) + "\n"


# ---------------------------------------------------------------------------- reading
@dataclass
class SpanData:
    """One span as read from a file, whatever its encoding: ids as hex, times in ns,
    attributes as a flat mapping (arrays as lists, key-value lists as dicts)."""

    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    kind: int
    start: int
    end: int
    attributes: dict[str, Any] = field(default_factory=dict)
    events: list[tuple[str, int, dict[str, Any]]] = field(default_factory=list)
    status_code: int = 0
    status_message: str = ""

    @property
    def duration(self) -> float:
        """Seconds."""
        return max(self.end - self.start, 0) / 1e9


def _get(data: Mapping[str, Any], camel: str, default: Any = None) -> Any:
    """A field by its lowerCamelCase name or its proto (snake_case) name."""
    if camel in data:
        return data[camel]
    snake = "".join(f"_{c.lower()}" if c.isupper() else c for c in camel)
    return data.get(snake, default)


def _read_value(value: Any) -> Any:
    if not isinstance(value, Mapping):
        return value
    for name in ("stringValue", "boolValue", "doubleValue"):
        found = _get(value, name)
        if found is not None:
            return found
    number = _get(value, "intValue")
    if number is not None:
        try:
            return int(number)
        except (TypeError, ValueError):
            return number
    array = _get(value, "arrayValue")
    if array is not None:
        return [_read_value(v) for v in _get(array, "values", []) or []]
    kvlist = _get(value, "kvlistValue")
    if kvlist is not None:
        return _read_attributes(_get(kvlist, "values", []))
    raw = _get(value, "bytesValue")
    return raw


def _read_attributes(items: Any) -> dict[str, Any]:
    if isinstance(items, Mapping):  # Phoenix writes some exports as a plain mapping
        return dict(items)
    result: dict[str, Any] = {}
    for item in items or ():
        if isinstance(item, Mapping) and isinstance(item.get("key"), str):
            result[item["key"]] = _read_value(item.get("value"))
    return result


def _hex_id(value: Any, size: int) -> str:
    """A trace (16 bytes) or span id (8) as hex: hex as the OTLP/JSON spec says, base64 as
    the protobuf JSON mapping writes bytes."""
    text = str(value or "")
    if len(text) == size * 2:
        try:
            int(text, 16)
            return text.lower()
        except ValueError:
            pass
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return text
    return raw.hex() if len(raw) == size else text


def _number(value: Any, table: Mapping[str, int]) -> int:
    if isinstance(value, int):
        return value
    return table.get(str(value), 0)


def _read_span(data: Mapping[str, Any]) -> SpanData:
    status = _get(data, "status") or {}
    parent = _get(data, "parentSpanId") or _get(data, "parentId")
    times = [_get(data, "startTimeUnixNano"), _get(data, "endTimeUnixNano")]
    start, end = (int(t) if t not in (None, "") else 0 for t in times)
    return SpanData(
        trace_id=_hex_id(_get(data, "traceId"), 16), span_id=_hex_id(_get(data, "spanId"), 8),
        parent_id=_hex_id(parent, 8) if parent else None, name=str(_get(data, "name", "")),
        kind=_number(_get(data, "kind", 0), _KINDS), start=start, end=end,
        attributes=_read_attributes(_get(data, "attributes")),
        events=[(str(e.get("name", "")), int(_get(e, "timeUnixNano", 0) or 0),
                 _read_attributes(_get(e, "attributes"))) for e in _get(data, "events") or ()
                if isinstance(e, Mapping)],
        status_code=_number(_get(status, "code", 0), _STATUS),
        status_message=str(_get(status, "message", "") or ""))


def _requests(path: Path, text: str) -> Iterator[tuple[int, Any]]:
    """The JSON documents of the file, with their line: one, or one per line."""
    try:
        yield 1, _bounded(path, 1, text)
        return
    except json.JSONDecodeError as exc:
        whole = exc
    lines = [(n, line) for n, line in enumerate(text.splitlines(), start=1) if line.strip()]
    if len(lines) < 2:
        raise OtlpError(f"{path}:{whole.lineno}: not an OTLP-JSON trace export: the file is "
                        f"not JSON ({whole.msg}); export spans as OTLP/JSON (agentkit run "
                        "--otel-out FILE, Phoenix's spans/otlpv1 endpoint, or the "
                        "Collector's file exporter)")
    for number, line in lines:
        try:
            yield number, _bounded(path, number, line)
        except json.JSONDecodeError as exc:
            raise OtlpError(f"{path}:{number}: not an OTLP-JSON trace export: line {number} is "
                            f"not JSON ({exc.msg})") from None


def _bounded(path: Path, line: int, text: str) -> Any:
    """JSON within agentkit's limits (nesting, integer length): past them, an error at its
    place, never a ``RecursionError`` or a bare ``ValueError``."""
    try:
        return loads_json(text)
    except JsonLimitError as exc:
        raise OtlpError(f"{path}:{line + exc.line - 1}:{exc.column}: {exc.problem}; "
                        f"{exc.fix}") from None


def _lists(value: Any) -> list[Any]:
    """A field that must hold a list: absent is empty, anything else is malformed."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise TypeError(f"expected a list, found a JSON {type(value).__name__}")
    return value


def _spans_of(document: Any) -> Iterable[Mapping[str, Any]] | None:
    if isinstance(document, Mapping):
        resource_spans = _get(document, "resourceSpans")
        if isinstance(resource_spans, list):
            return [span for rs in resource_spans if isinstance(rs, Mapping)
                    for ss in _lists(_get(rs, "scopeSpans")
                                     or _get(rs, "instrumentationLibrarySpans"))
                    if isinstance(ss, Mapping)
                    for span in _lists(_get(ss, "spans")) if isinstance(span, Mapping)]
        data = document.get("data")
        if isinstance(data, list) and all(isinstance(s, Mapping) for s in data):
            return data  # Phoenix's export: a page of spans
    return None


def read_spans(path: str | Path) -> list[SpanData]:
    """Every span of an OTLP-JSON file (:class:`OtlpError` for anything else)."""
    path = Path(path)
    try:
        text = read_text(path)
    except FileNotFoundError:
        raise OtlpError(f"{path}: no such file") from None
    except TextFileError as exc:
        raise OtlpError(str(exc)) from None
    except OSError as exc:
        raise OtlpError(f"{path}: cannot read it: {exc.strerror or exc}") from None
    spans: list[SpanData] = []
    for line, document in _requests(path, text):
        try:
            found = _spans_of(document)
        except TypeError as exc:  # a list of spans given as a number, a string, ...
            raise OtlpError(f"{path}:{line}: not an OTLP-JSON trace export: {exc}") from None
        if found is None:
            shape = (f"an object with {', '.join(sorted(map(str, document))[:5]) or 'no keys'}"
                     if isinstance(document, Mapping) else f"a JSON {type(document).__name__}")
            raise OtlpError(f"{path}:{line}: not an OTLP-JSON trace export: expected an object "
                            f"with `resourceSpans` (OTLP/JSON) or `data` (a Phoenix span "
                            f"export), found {shape}")
        try:
            spans += [_read_span(span) for span in found]
        except (TypeError, ValueError) as exc:
            raise OtlpError(f"{path}:{line}: a span is malformed: {exc}") from None
    if not spans:
        raise OtlpError(f"{path}: the export holds no spans")
    return spans
