"""Keep secrets off disk: redact API keys, auth headers and values of secret env vars."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

__all__ = ["Redactor"]

_SECRET_ENV = re.compile(r"(KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL)", re.I)
_PATTERNS = (  # (pattern, replacement, the kind listed in ``redacted``)
    (re.compile(r"sk-[A-Za-z0-9_\-]{16,}"), "<redacted:api-key>", "api-key"),
    (re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._\-]{8,}"), "Bearer <redacted>", "bearer-token"),
)
_SECRET_FIELDS = {"authorization", "api_key", "api-key", "x-api-key", "openai_api_key"}


class Redactor:
    """Replaces secrets in nested data; remembers what kinds it redacted."""

    def __init__(self, environ: Mapping[str, str] | None = None, min_length: int = 8) -> None:
        env = os.environ if environ is None else environ
        self._values = sorted(((value, name) for name, value in env.items()
                               if _SECRET_ENV.search(name) and len(value) >= min_length),
                              key=lambda item: -len(item[0]))
        self.redacted: set[str] = set()

    def text(self, value: str) -> str:
        for secret, name in self._values:
            if secret in value:
                value = value.replace(secret, f"<redacted:{name}>")
                self.redacted.add(name)
        for pattern, replacement, kind in _PATTERNS:
            value, count = pattern.subn(replacement, value)
            if count:
                self.redacted.add(kind)
        return value

    def data(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, Mapping):
            result = {}
            for key, item in value.items():
                if isinstance(key, str) and key.lower() in _SECRET_FIELDS and item:
                    result[key] = "<redacted>"
                    self.redacted.add(key.lower())
                else:
                    result[key] = self.data(item)
            return result
        if isinstance(value, (list, tuple)):
            return [self.data(item) for item in value]
        return value
