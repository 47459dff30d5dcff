"""OpenTelemetry in and out: agentkit runs as GenAI spans, and traces turned into scenarios.

* **Out** (:mod:`agentkit.otel.export`, needs the ``otel`` extra): every run a command judges
  becomes one OTel trace following the GenAI semantic conventions
  (:data:`agentkit.otel.genai.SEMCONV_VERSION`), written to an OTLP-JSON file and/or sent to
  an OTLP/HTTP endpoint with the official ``opentelemetry-sdk`` and OTLP exporter.
* **In** (:mod:`agentkit.otel.importer`, no extra needed): an OTLP-JSON export (agentkit's,
  Phoenix's, a framework's own instrumentation) becomes a scenario, its tool world and its
  cassette.

Nothing here is imported by the layers below: the harness does not know it is observed.
"""

from __future__ import annotations

from agentkit.core.errors import BadInputError

__all__ = ["OtelMissingError", "require_sdk", "EXTRA_HINT"]

EXTRA_HINT = "pip install 'agentkit[otel]'"


class OtelMissingError(BadInputError):
    """Exporting spans was asked for, and the OpenTelemetry SDK is not installed."""


def require_sdk(option: str) -> None:
    """Raise :class:`OtelMissingError` naming ``option`` unless the SDK and the OTLP/HTTP
    exporter can be imported."""
    try:
        import opentelemetry.exporter.otlp.proto.http.trace_exporter
        import opentelemetry.sdk.trace  # noqa: F401
    except ImportError as exc:
        raise OtelMissingError(f"{option}: exporting spans needs the OpenTelemetry SDK and "
                               f"OTLP exporter ({exc.name} is not installed): "
                               f"{EXTRA_HINT}") from None
