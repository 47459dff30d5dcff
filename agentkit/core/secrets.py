"""Keep secrets off disk: redact API keys, auth headers and values of secret env vars.

Redaction works on spans of the original text (every secret found, the longest first where
two overlap), so a stream's chunks can be redacted as the one text they make up and cut again
at the same places: a secret split across two chunks is still found (:meth:`Redactor.chunks`).
"""

from __future__ import annotations

import itertools
import json
import os
import re
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["Redactor"]

#: Environment variables whose values are secrets: names containing KEY, TOKEN, SECRET,
#: PASSWORD/PASSWD or CREDENTIAL, and names ending in _PAT (GITHUB_PAT) or _DSN.
_SECRET_ENV = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|(^|_)(PAT|DSN)$", re.I)
#: ``scheme://user:password@host``: the password part.
_URL_CREDENTIALS = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://[^\s/:@]*:)([^\s/@]+)(@)")
_PATTERNS = (  # (pattern, replacement, the kind listed in ``redacted``)
    (re.compile(r"sk-[A-Za-z0-9_\-]{16,}"), "<redacted:api-key>", "api-key"),
    (re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._\-]{8,}"), "Bearer <redacted>", "bearer-token"),
    (_URL_CREDENTIALS, r"\1<redacted>\3", "url-credentials"),
)
_SECRET_FIELDS = {"authorization", "api_key", "api-key", "x-api-key", "openai_api_key"}
#: What a text holds if any of the patterns can match it: most texts hold none, and one
#: search for these is much cheaper than running every pattern.
_MAYBE_PATTERN = re.compile(r"(?i)sk-|bearer|://")
#: The same for the lowercased JSON text of data: a pattern, or a key that is a secret field
#: (plain substring searches: much quicker than a regex over a long text).
_MARKERS_IN_JSON = ("sk-", "bearer", "://", "authorization", "api_key", "api-key")

_Span = tuple[int, int, str, str]  # (start, end, replacement, kind)
#: ``json.dumps(default=str, ensure_ascii=False)``, its encoder built once (not per call).
_JSON_TEXT = json.JSONEncoder(default=str, ensure_ascii=False)


class Redactor:
    """Replaces secrets in nested data; remembers what kinds it redacted.

    Secrets are: values of secret-looking environment variables (``environ``, the process's by
    default), the password of any URL with credentials in an environment value
    (``DATABASE_URL=postgres://u:pass@h``), ``secrets`` given by name (an API key, the values of
    headers a user configured), and anywhere in any text: OpenAI-style keys, bearer tokens and
    URL passwords. Values shorter than ``min_length`` are too common to be told from text.
    """

    def __init__(self, environ: Mapping[str, str] | None = None, min_length: int = 8, *,
                 secrets: Mapping[str, str] | None = None) -> None:
        env = os.environ if environ is None else environ
        found = {value: name for name, value in env.items() if _SECRET_ENV.search(name)}
        for name, value in env.items():
            for match in _URL_CREDENTIALS.finditer(value):
                found.setdefault(match.group(2), f"{name}:password")
        for name, value in (secrets or {}).items():  # an env name, if any, names it
            found.setdefault(value, name)
        self._values = sorted(((value, name) for value, name in found.items()
                               if len(value) >= min_length), key=lambda item: -len(item[0]))
        self._value_names = {name for _, name in self._values}
        self.redacted: set[str] = set()
        #: names of the environment variables / given secrets whose values were redacted
        #: (they depend on this machine's configuration, unlike the patterns)
        self.values: set[str] = set()

    @property
    def looked_for(self) -> tuple[tuple[str, str], ...]:
        """The secret values it replaces, each with its name (longest first): two redactors
        with the same redact the same text alike."""
        return tuple(self._values)

    def _spans(self, value: str) -> list[_Span]:
        """Every secret in ``value``, as non-overlapping spans in text order."""
        found: list[_Span] = []
        for secret, name in self._values:
            start = value.find(secret)
            while start >= 0:
                found.append((start, start + len(secret), f"<redacted:{name}>", name))
                start = value.find(secret, start + len(secret))
        for pattern, replacement, kind in _PATTERNS:
            found += [(m.start(), m.end(), m.expand(replacement), kind)
                      for m in pattern.finditer(value)]
        found.sort(key=lambda span: (span[0], span[0] - span[1]))
        spans: list[_Span] = []
        for span in found:
            if not spans or span[0] >= spans[-1][1]:
                spans.append(span)
        return spans

    def text(self, value: str) -> str:
        if not self._values and _MAYBE_PATTERN.search(value) is None:
            return value
        return self._apply(value, self._spans(value))

    def _apply(self, value: str, spans: list[_Span]) -> str:
        parts, position = [], 0
        for start, end, replacement, kind in spans:
            parts += [value[position:start], replacement]
            position = end
            self.redacted.add(kind)
            if kind in self._value_names:
                self.values.add(kind)
        parts.append(value[position:])
        return "".join(parts)

    def chunks(self, pieces: Sequence[str]) -> list[str]:
        """Redact the text ``pieces`` make up together, then cut it where they were cut; a cut
        inside a secret moves to the end of its replacement (so no piece holds part of it)."""
        joined = "".join(pieces)
        spans = self._spans(joined)
        if not spans:
            return list(pieces)
        redacted = self._apply(joined, spans)
        cuts, offset = [], 0
        for piece in pieces[:-1]:
            offset += len(piece)
            cuts.append(_moved(offset, spans))
        bounds = [0, *cuts, len(redacted)]
        return [redacted[a:b] for a, b in itertools.pairwise(bounds) if b > a]

    def data(self, value: Any) -> Any:
        kind = type(value)  # the exact types first: data is mostly plain JSON
        if kind is str or (kind is not dict and kind is not list and isinstance(value, str)):
            return self.text(value)
        if kind is dict or (kind is not list and isinstance(value, Mapping)):
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

    def json_data(self, value: Any) -> Any:
        """``value`` as plain JSON data -- through its JSON text: tuples become lists, keys
        strings, other objects their ``str`` -- with secrets redacted as :meth:`data` does.
        Without secret values to look for, a text in which no pattern and no secret field
        can occur (the usual case) is not walked at all."""
        text = _JSON_TEXT.encode(value)
        plain = json.loads(text)
        return self.data(plain) if self.may_redact(text) else plain

    def may_redact(self, json_text: str) -> bool:
        """Whether :meth:`data` may change data whose JSON text is ``json_text`` (however its
        keys are ordered and spaced): False when there are no secret values to look for and
        no pattern or secret field can occur in it."""
        if self._values:
            return True
        lowered = json_text.lower()
        # a loop, not any(): no generator resumed per marker
        for marker in _MARKERS_IN_JSON:  # noqa: SIM110
            if marker in lowered:
                return True
        return False


def _moved(offset: int, spans: list[_Span]) -> int:
    """Where ``offset`` of the original text lands in the redacted text."""
    shift = 0
    for start, end, replacement, _ in spans:
        if offset <= start:
            break
        shift += len(replacement) - (end - start)
        if offset < end:
            return end + shift
    return offset + shift
