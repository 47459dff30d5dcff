"""Where spans go and what they hold, from options and the standard environment variables
(no OpenTelemetry package needed: a command reads these before it knows it will export)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from urllib.parse import urlsplit, urlunsplit

__all__ = ["CONTENT_ENV", "STABLE_ENV", "content_from_env", "stable_from_env", "resolve_endpoint"]

CONTENT_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
"""The environment variable GenAI instrumentations read to capture message content."""


STABLE_ENV = "AGENTKIT_OTEL_STABLE"
"""The environment variable that asks for byte-stable exports: spans on a fixed epoch, ids
derived from the runs' names (for snapshots of an export; a backend's default time window
does not show them)."""


def _flag(name: str, environ: Mapping[str, str] | None) -> bool:
    value = (os.environ if environ is None else environ).get(name, "")
    return value.strip().lower() in ("1", "true", "yes", "on")


def content_from_env(environ: Mapping[str, str] | None = None) -> bool:
    """Whether the environment asks for message content (``CONTENT_ENV=true``)."""
    return _flag(CONTENT_ENV, environ)


def stable_from_env(environ: Mapping[str, str] | None = None) -> bool:
    """Whether the environment asks for byte-stable exports (``STABLE_ENV=1``)."""
    return _flag(STABLE_ENV, environ)


def resolve_endpoint(option: str | None, environ: Mapping[str, str] | None = None) -> str | None:
    """The traces URL to send to: ``option``, else the standard variables
    (``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` as is, ``OTEL_EXPORTER_OTLP_ENDPOINT`` plus
    ``/v1/traces``), else None. A URL without a path gets ``/v1/traces`` (a collector's or
    Phoenix's address works as given)."""
    env = os.environ if environ is None else environ
    if option:
        parts = urlsplit(option)
        if parts.path in ("", "/"):
            return urlunsplit(parts._replace(path="/v1/traces"))
        return option
    if env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):
        return env["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"]
    if env.get("OTEL_EXPORTER_OTLP_ENDPOINT"):
        return env["OTEL_EXPORTER_OTLP_ENDPOINT"].rstrip("/") + "/v1/traces"
    return None
