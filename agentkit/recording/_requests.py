"""What identifies a recorded request: its canonical form (secrets redacted), its hash, and the
server it went to as a cassette may name it."""

from __future__ import annotations

import hashlib
import json
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from agentkit.core.secrets import Redactor
from agentkit.llms.base import LLMRequest

__all__ = ["canonical_request", "request_hash", "text_hash", "public_url"]


def public_url(url: str | None) -> str | None:
    """``url`` without what must not be written down: user, password, query and fragment."""
    if not url:
        return None
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:  # an IPv6 address
        host = f"[{host}]"
    try:
        port = f":{parts.port}" if parts.port is not None else ""
    except ValueError:
        port = ""
    return urlunsplit((parts.scheme, host + port, parts.path, "", "")) or None


def canonical_request(request: LLMRequest, redactor: Redactor | None = None) -> dict[str, Any]:
    """The parts of a request that decide the answer, as plain JSON data, secrets redacted
    (by ``redactor``, if given, which then knows what it redacted).

    Redacting before hashing keeps replay stable: a recorded (redacted) answer that is fed back
    into the next request hashes the same as at recording time. Without a ``redactor`` only
    what any text may hold is redacted (keys, bearer tokens, URL passwords), never values of
    this machine's environment: a replay matches the same way whatever variables are set.
    """
    # images by their sha256: the same image replays, another one misses (and never bytes on disk)
    data: dict[str, Any] = {"kind": request.kind, "stream": request.stream,
                            "messages": [m.to_dict(images="digest") for m in request.messages]}
    if request.tools is not None:
        data["tools"] = request.tool_specs()
        data["tool_choice"] = request.tool_choice
        data["allow_parallel_tool_calls"] = request.allow_parallel_tool_calls
    if request.kwargs:
        data["kwargs"] = request.kwargs
    canonical: dict[str, Any] = (redactor or Redactor(environ={})).json_data(data)
    return canonical


def request_hash(canonical: dict[str, Any]) -> str:
    text = json.dumps(canonical, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def text_hash(text: str) -> str:
    """A short, stable hash of a text (a rubric, a persona, a transcript) for role keys."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
