"""What identifies a recorded request: its canonical form (secrets redacted), its hash, and the
server it went to as a cassette may name it."""

from __future__ import annotations

import hashlib
import json
from typing import Any, NamedTuple
from urllib.parse import urlsplit, urlunsplit

from agentkit.core.bounded import BoundedStore
from agentkit.core.secrets import Redactor
from agentkit.llms.base import LLMRequest
from agentkit.llms.types import ChatMessage, TextBlock, fixed_memo

__all__ = ["canonical_request", "request_hash", "request_key", "keyed_request", "text_hash",
           "public_url"]

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
    # images by their sha256: the same image replays, another one misses (and never bytes on
    # disk); the usual message, one text block and nothing else, read without to_dict's layers
    data = _request_data(request, [
        {"role": m.role._value_, "content": blocks[0].text}
        if not m.additional_kwargs and len(blocks := m.blocks) == 1
        and type(blocks[0]) is TextBlock else m.to_dict(images="digest")
        for m in request.messages])
    canonical: dict[str, Any] = (redactor or _ANY_TEXT).json_data(data)
    return canonical


def _request_data(request: LLMRequest, messages: list[Any],
                  specs: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """``request`` as plain data but its ``messages`` (its tools' ``specs``, if worked out)."""
    data: dict[str, Any] = {"kind": request.kind, "stream": request.stream,
                            "messages": messages}
    if request.tools is not None:
        data["tools"] = specs if specs is not None else request.tool_specs()
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
    what its new messages cost, not the whole conversation again; and a request of the same
    message objects, tools and options as one keyed before (a conversation replayed again)
    is not put together again (:data:`_KEYS`). The result is the same either way (redacting
    and writing JSON work part by part); the canonical form is then shared between requests:
    treat it as read-only."""
    canonical, key, _ = keyed_request(request)
    return canonical, key


def keyed_request(request: LLMRequest) -> tuple[dict[str, Any], str, bool]:
    """:func:`request_key`'s canonical form and hash, and whether every message of
    ``request`` is fixed (a conversation nothing changes: the bridge's)."""
    kept = _kept_key(request)
    if kept is not None:
        found = _KEYS.get(kept[0])
        if found is not None:
            return found.canonical, found.key, True
    parts = _fixed_parts(request.messages)
    if parts is None:
        canonical = canonical_request(request)
        return canonical, request_hash(canonical), False
    rest, before, after = _rest(_request_data(request, [], kept[1] if kept else None))
    canonical = {**rest, "messages": [data for data, _ in parts]}
    messages = f'"messages":[{",".join(text for _, text in parts)}]'
    key = text_hash(f"{{{','.join(p for p in (before, messages, after) if p)}}}")
    if kept is not None:
        _KEYS.put(kept[0], _Keyed((*request.messages, *kept[1]), canonical, key), len(messages))
    return canonical, key, True


class _Keyed(NamedTuple):
    """A request :func:`request_key` worked out: the objects its :func:`_kept_key` names by id
    (held, so that no id is another object's while it is kept), its canonical form and hash."""

    objects: tuple[Any, ...]
    canonical: dict[str, Any]
    key: str


_KEYS: BoundedStore[tuple[Any, ...], _Keyed] = BoundedStore(1024, 1 << 22)
""":func:`request_key`'s answers for requests of fixed messages, by :func:`_kept_key`: a
replayed conversation sends the same message objects every time it is replayed (the bridge
reads a body it read before as the same objects), so each of its requests is put together
once per process, not once per replay. At most 1,024 requests and 4 Mi characters of their
messages (as hashed)."""


def _kept_key(request: LLMRequest) -> tuple[tuple[Any, ...], list[Any]] | None:
    """What ``request``'s key is kept by in :data:`_KEYS`, and the objects that key names by
    id: its messages by id, the rest of :func:`_request_data` by values that tell apart what
    its JSON does -- the tools by their specs (one object per spec, shared by every request
    that offers the same tool: :func:`~agentkit.llms.tool_calling.tool_specs`), the options
    by their JSON text. None when the request has no such key: it is worked out every
    time."""
    messages = request.messages
    if messages and fixed_memo(messages[-1]) is None:  # not the bridge's: worked out anew
        return None
    stream, parallel, choice = (request.stream, request.allow_parallel_tool_calls,
                                request.tool_choice)
    # exact types: 1 == True == 1.0 as keys, but they are different JSON
    if type(stream) is not bool or type(parallel) is not bool or not (
            choice is None or type(choice) is str):
        return None
    options = None
    if request.kwargs:
        try:
            options = _REST_KEY.encode(request.kwargs)
        except (TypeError, ValueError):
            return None
    specs = request.tool_specs()
    return ((tuple(map(id, messages)), request.kind, stream,
             None if specs is None else tuple(map(id, specs)), choice, parallel, options),
            specs or [])


_RESTS: BoundedStore[str, tuple[dict[str, Any], str, str]] = BoundedStore(256)
""":func:`_rest` by the JSON text of what it was given, which decides it (the redactor of
:data:`_ANY_TEXT` looks for no values of this machine): a conversation's requests offer the
same tools with the same options call after call."""
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
            _RESTS.put(text, found)
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
