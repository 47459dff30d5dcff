"""What identifies a recorded request: its canonical form (secrets redacted), its hash, and the
server it went to as a cassette may name it."""

from __future__ import annotations

import hashlib
import json
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from agentkit.core.secrets import Redactor
from agentkit.llms.base import LLMRequest
from agentkit.llms.types import ChatMessage, fixed_memo

__all__ = ["canonical_request", "request_hash", "request_key", "text_hash", "public_url"]

_ANY_TEXT = Redactor(environ={})
"""The redactor of a request no recording's redactor reads: what any text may hold."""


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
    data = _request_data(request, [m.to_dict(images="digest") for m in request.messages])
    canonical: dict[str, Any] = (redactor or _ANY_TEXT).json_data(data)
    return canonical


def _request_data(request: LLMRequest, messages: list[Any]) -> dict[str, Any]:
    data: dict[str, Any] = {"kind": request.kind, "stream": request.stream,
                            "messages": messages}
    if request.tools is not None:
        data["tools"] = request.tool_specs()
        data["tool_choice"] = request.tool_choice
        data["allow_parallel_tool_calls"] = request.allow_parallel_tool_calls
    if request.kwargs:
        data["kwargs"] = request.kwargs
    return data


def request_hash(canonical: dict[str, Any]) -> str:
    return text_hash(_hashed_text(canonical))


_HASHED = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)
"""How a request is written for its hash (built once: ``json.dumps`` with options builds an
encoder per call)."""


def _hashed_text(value: Any) -> str:
    """``value`` as the JSON text a request's hash is taken of (keys sorted, no spaces)."""
    return _HASHED.encode(value)


def request_key(request: LLMRequest) -> tuple[dict[str, Any], str]:
    """``canonical_request(request)`` and its :func:`request_hash`, as a replay matches it.

    When every message is fixed (:func:`~agentkit.llms.types.fix_message`: the bridge's, which
    a client resends with each request) each one's canonical form and JSON text are worked
    out once and kept with it, and the request's text is put together from them: a call costs
    what its new messages cost, not the whole conversation again. The result is the same
    either way (redacting and writing JSON work part by part); the canonical form's messages
    are then shared between requests: treat it as read-only."""
    parts = _fixed_parts(request.messages)
    if parts is None:
        canonical = canonical_request(request)
        return canonical, request_hash(canonical)
    rest, before, after = _rest(_request_data(request, []))
    canonical = {**rest, "messages": [data for data, _ in parts]}
    messages = f'"messages":[{",".join(text for _, text in parts)}]'
    return canonical, text_hash(f"{{{','.join(p for p in (before, messages, after) if p)}}}")


_RESTS: dict[str, tuple[dict[str, Any], str, str]] = {}
""":func:`_rest` by the JSON text of what it was given, which decides it (the redactor of
:data:`_ANY_TEXT` looks for no values of this machine): a conversation's requests offer the
same tools with the same options call after call."""
_RESTS_KEPT = 256
_REST_KEY = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
"""How :data:`_RESTS` is keyed: JSON values only (what holds anything else is worked out
each time)."""


def _rest(data: dict[str, Any]) -> tuple[dict[str, Any], str, str]:
    """A request's canonical form but its messages (``data``: kind, tools, options... as
    plain JSON data, secrets redacted), and the hashed text of its fields before and after
    ``messages``; the form is shared between requests: read-only."""
    try:
        text: str | None = _REST_KEY.encode(data)
    except (TypeError, ValueError):
        text = None
    found = _RESTS.get(text) if text is not None else None
    if found is None:
        rest: dict[str, Any] = _ANY_TEXT.json_data(data)
        # the text request_hash writes: the fields before "messages", it, the fields after
        found = (rest, _hashed_text({k: v for k, v in rest.items() if k < "messages"})[1:-1],
                 _hashed_text({k: v for k, v in rest.items() if k > "messages"})[1:-1])
        if text is not None:
            if len(_RESTS) >= _RESTS_KEPT:
                _RESTS.clear()
            _RESTS[text] = found
    return found


def _fixed_parts(messages: list[ChatMessage]) -> list[tuple[dict[str, Any], str]] | None:
    """Each message's canonical form and its JSON text as hashed, kept with the message; None
    unless every message is fixed."""
    parts = []
    for message in messages:
        memo = fixed_memo(message)
        if memo is None:
            return None
        part = memo.get("canonical")
        if part is None:
            data = message.to_dict(images="digest")  # plain JSON data already
            text = _hashed_text(data)
            if _ANY_TEXT.may_redact(text):
                data = _ANY_TEXT.json_data(data)
                text = _hashed_text(data)
            part = memo["canonical"] = (data, text)
        parts.append(part)
    return parts


def text_hash(text: str) -> str:
    """A short, stable hash of a text (a rubric, a persona, a transcript) for role keys."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
