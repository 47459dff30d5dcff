"""The cassette: a versioned YAML file of recorded exchanges (the package docstring says what
it holds), read with every part checked (``_schema``) and written atomically with secrets
redacted, in the lowest format that holds it."""

from __future__ import annotations

import functools
import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Literal, cast

import yaml

from agentkit.core.files import atomic_write_text
from agentkit.core.parsecache import MISSING, ParseCache, text_key
from agentkit.core.reflists import ListReader, ListRefError, ListWriter
from agentkit.core.secrets import Redactor
from agentkit.core.textfiles import TextFileError, read_text
from agentkit.core.yamlsafe import YamlError, YamlLocations, parse_yaml
from agentkit.recording._errors import CassetteError
from agentkit.recording._requests import request_hash
from agentkit.recording._schema import (
    PART_FORMATS,
    ExchangeData,
    MCPExchangeData,
    check_cassette,
    parts_of,
)

__all__ = ["CASSETTE_FORMAT", "CASSETTE_FORMATS", "RecordMode", "RECORD_MODES", "Cassette",
           "Exchange", "dump_yaml", "WIRES", "Wire", "on_wire", "current_wire",
           "replayed_cassette", "ReplayedCassettes", "REPLAYED"]

CASSETTE_FORMAT = 5
"""The newest cassette format (package docstring: each optional part needs a minimum format,
and a cassette is written in the lowest one that holds all its parts)."""
CASSETTE_FORMATS = (1, 2, 3, 4, 5)
Wire = Literal["openai_responses", "anthropic_messages"]
WIRES: tuple[str, ...] = ("openai_responses", "anthropic_messages")
"""The wires an exchange may name besides OpenAI chat completions (an exchange naming none came
over chat completions, or from agentkit's own agents): the API the agent spoke to the bridge."""
_WIRE: ContextVar[Wire | None] = ContextVar("agentkit_wire", default=None)


@contextmanager
def on_wire(wire: str | None) -> Iterator[None]:
    """Model calls inside came over ``wire`` (one of :data:`WIRES`, or None for chat
    completions; the bridge says so): a recording notes it on the exchanges it records. The
    wire is not part of the request's match: the same conversation replays whichever API
    carries it."""
    if wire is not None and wire not in WIRES:
        raise ValueError(f"unknown wire {wire!r}; use one of {', '.join(WIRES)} (or None)")
    token = _WIRE.set(cast(Wire | None, wire))
    try:
        yield
    finally:
        _WIRE.reset(token)


def current_wire() -> Wire | None:
    """The wire the model call being made came over (:func:`on_wire`; None: chat completions)."""
    return _WIRE.get()
RecordMode = Literal["none", "once", "new_episodes", "all", "rewrite"]
RECORD_MODES: tuple[str, ...] = ("none", "once", "new_episodes", "all", "rewrite")


class _Dumper(yaml.SafeDumper):
    """Multi-line strings as ``|`` blocks, so recorded prompts read like the prompts."""


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _represent_str)


def dump_yaml(data: Any) -> str:
    return yaml.dump(data, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)


@dataclass
class Exchange:
    request: dict[str, Any]
    request_hash: str
    response: dict[str, Any] | None = None  # {"message": ..., "usage": ..., "chunks": [...]}
    error: dict[str, Any] | None = None  # {"type": ..., "message": ..., "status_code"?}
    latency: float = 0.0
    sample: int = 0
    """The sample (run) it belongs to; always 0 in a cassette of one run."""
    role: str | None = None
    """The harness role that made the request (``judge``, ``user``); None: the agent."""
    key: dict[str, str] | None = None
    """A role exchange's :class:`RoleKey` as written (:meth:`RoleKey.fields`)."""
    wire: Wire | None = None
    """The API the agent spoke to the bridge (:data:`WIRES`; None: chat completions)."""
    notifications: list[dict[str, Any]] | None = None
    """An MCP exchange's notifications from the server while it answered (progress, log
    messages), in the order they came: ``{method, params}`` each."""
    variant: str | None = None
    """The fault variant whose continuation it is (``lookup_order#1:timeout``: the run went
    on from the recorded prefix after that fault); None: the scenario's own run."""
    _reply: tuple[Any, ...] | None = field(default=None, init=False, repr=False,
                                           compare=False)
    """The recorded response as its replays to fixed requests share it, built from
    ``response`` once (:func:`~agentkit.recording._responses.response_from`): that
    ``response`` object, the message and the usage. Not part of the exchange's data."""

    def to_dict(self, *, sampled: bool = False) -> dict[str, Any]:
        data: dict[str, Any] = {"sample": self.sample} if sampled else {}
        if self.role is not None:
            data.update({"role": self.role, "key": dict(self.key or {})})
        if self.wire is not None:
            data["wire"] = self.wire
        if self.variant is not None:
            data["variant"] = self.variant
        data.update({"request_hash": self.request_hash, "request": self.request})
        if self.notifications:
            data["notifications"] = self.notifications
        if self.response is not None:
            data["response"] = self.response
        if self.error is not None:
            data["error"] = self.error
        data["latency"] = round(self.latency, 6)
        return data


@dataclass
class Cassette:
    """An in-memory cassette; :meth:`load` and :meth:`save` read and write the file.

    Whose recording it is: a scenario's (``scenario`` and ``agent_type``) or a plain test's
    (``test``, its pytest node id); the file holds the ones that are set."""

    path: Path | None = None
    model: str = "unknown"
    function_calling: bool = True
    context_window: int = 3900
    agent_type: str | None = None
    scenario: str | None = None
    test: str | None = None
    recorded_at: str | None = None
    agentkit_version: str | None = None
    base_url: str | None = None
    """The server it was recorded against (scheme, host, port and path; never credentials or
    a query): what a re-record hint names."""
    redactions: list[str] = field(default_factory=list)
    exchanges: list[Exchange] = field(default_factory=list)
    mcp_exchanges: list[Exchange] = field(default_factory=list)
    """The run's MCP exchanges (format 2): ``tools/list`` and ``tools/call``, and what
    ``agentkit mcp-proxy`` records besides (:data:`MCP_METHODS`, the handshakes)."""
    samples: int | None = None
    """How many independent runs it holds (None: one run)."""
    sampling: dict[str, Any] | None = None
    """How the samples were drawn: ``temperature`` and ``seed`` (sample i used seed + i)."""
    complete: list[int] = field(default_factory=list)
    """The samples whose run went to its end (a sampled cassette only)."""
    _messages: dict[str, Any] = field(default_factory=dict, init=False, repr=False,
                                      compare=False)
    """Every request message of the cassette, each once by its content (:meth:`shared`)."""
    _written: _Written | None = field(default=None, init=False, repr=False, compare=False)
    """The exchanges as :meth:`dumps` last wrote them (:class:`_Written`)."""

    def shared(self, request: dict[str, Any],
               seen: dict[int, Any] | None = None) -> dict[str, Any]:
        """``request`` with each of its messages the cassette's one object of that content:
        a long recording holds each message once, and writes it once (:meth:`to_dict`).
        ``seen``: the message objects shared so far, by id, while every one of them is alive
        (a load: the requests of a file repeat the same objects, see
        :func:`_read_messages`), so each object is keyed once."""
        messages = request.get("messages")
        if not isinstance(messages, list):
            return request
        kept = []
        for message in messages:
            found = seen.get(id(message)) if seen is not None else None
            if found is None:
                key = json.dumps(message, sort_keys=True, ensure_ascii=False, default=str)
                found = self._messages.setdefault(key, message)
                if seen is not None:
                    seen[id(message)] = found
            kept.append(found)
        return {**request, "messages": kept}

    @property
    def sampled(self) -> bool:
        return self.samples is not None

    def sample_exchanges(self, sample: int) -> list[Exchange]:
        """The exchanges of one sample, in recorded order."""
        return [e for e in self.exchanges if e.sample == sample]

    def variant_exchanges(self, sample: int, variant: str | None) -> list[Exchange]:
        """The exchanges a run of fault variant ``variant`` (None: the scenario's own run) of
        one sample replays: the scenario's run -- the prefix every variant continues from --
        and the variant's own continuation."""
        return [e for e in self.exchanges
                if e.sample == sample and e.variant in (None, variant)]

    def drop_sample(self, sample: int) -> None:
        """Forget what a sample recorded (to record it again from its start)."""
        self.exchanges = [e for e in self.exchanges if e.sample != sample]
        self.complete = [i for i in self.complete if i != sample]

    @classmethod
    def load(cls, path: str | Path) -> Cassette:
        """The cassette of the file at ``path``, checked: a fresh object, the caller's to
        change. A text loaded (and checked) before, in this process or -- with
        ``AGENTKIT_PARSE_CACHE`` -- another, is built from what that load built
        (:data:`LOADED`), not parsed and checked again. To replay a file again and again,
        :func:`replayed_cassette` keeps the built cassette itself."""
        path = Path(path)
        text = _read_cassette(path)
        return cls._from_text(path, text, _loaded_key(text))

    @classmethod
    def _from_text(cls, path: Path, text: str, key: str) -> Cassette:
        """The cassette of ``text`` (the file at ``path``, whose :func:`_loaded_key` is
        ``key``): from :data:`LOADED` when it holds it, else parsed, checked and kept there."""
        cassette = _rebuilt(cls, LOADED.get(key), path)
        if cassette is not None:
            return cassette
        try:
            data, where = parse_yaml(text)
        except YamlError as exc:
            fix = f"\n  fix: {exc.fix}" if exc.fix else ""
            raise CassetteError(f"{path}{exc.where}: cassette is not valid YAML: "
                                f"{exc.problem}{fix}") from None
        cassette = cls.from_dict(data, path, where)
        LOADED.put(key, _as_built(cassette))
        return cassette

    @classmethod
    def from_dict(cls, data: Any, path: Path | None = None,
                  where: YamlLocations | None = None) -> Cassette:
        """A cassette from its file's data, checked (``where`` gives the lines for errors)."""
        def place(*field: str) -> str:
            return f"{path or '<cassette>'}{f':{where.line(field)}' if where else ''}"

        if not isinstance(data, dict):
            raise CassetteError(f"{place()}: a cassette must be a mapping with `format` and "
                                "`exchanges`")
        if data.get("format") not in CASSETTE_FORMATS:
            raise CassetteError(f"{place('format')}: format: unsupported cassette format "
                                f"{data.get('format')!r} (this agentkit reads formats "
                                f"{', '.join(map(str, CASSETTE_FORMATS))}); re-record it")
        checked = check_cassette(data, path, where)
        # the header fields of CassetteData are this class's, by name
        cassette = cls(path=path, **checked.model_dump(
            exclude={"format", "exchanges", "mcp_exchanges"}))
        lists = ListReader() if data["format"] >= 3 else None  # references: format 3
        seen: dict[int, Any] = {}  # every message object shared so far, by id (all alive)
        kinds: list[tuple[str, Sequence[ExchangeData | MCPExchangeData], list[Exchange]]] = [
            ("exchanges", checked.exchanges, cassette.exchanges),
            ("mcp_exchanges", checked.mcp_exchanges, cassette.mcp_exchanges)]
        for key, found, into in kinds:
            for index, (item, exchange) in enumerate(
                    zip(data.get(key) or [], found, strict=True)):
                request = item["request"]
                if key == "exchanges" and isinstance(request, dict) and "messages" in request:
                    request = cassette.shared(
                        _read_messages(request, index, lists, path, where), seen)
                into.append(Exchange(
                    request=request, request_hash=exchange.request_hash or request_hash(request),
                    response=item.get("response"), error=item.get("error"),
                    latency=exchange.latency, notifications=item.get("notifications"),
                    **_role_and_sample(exchange)))
        return cassette

    def to_dict(self) -> dict[str, Any]:
        data = self._header()
        data["exchanges"] = _exchanges_dict(self._ordered(), sampled=self.sampled)
        if self.mcp_exchanges:
            data["mcp_exchanges"] = [e.to_dict() for e in self.mcp_exchanges]
        data["format"] = max((PART_FORMATS[part] for _, part in parts_of(data)), default=1)
        return data

    def _header(self) -> dict[str, Any]:
        """The file's fields before ``exchanges`` (``format`` still to be worked out)."""
        owner = {key: value for key, value in (("agent_type", self.agent_type),
                                               ("scenario", self.scenario), ("test", self.test))
                 if value is not None}
        server = {"base_url": self.base_url} if self.base_url is not None else {}
        runs: dict[str, Any] = {}
        if self.samples is not None:
            runs = {"samples": self.samples, "sampling": dict(self.sampling or {}),
                    "complete": sorted(set(self.complete))}
        return {"format": 1, "agentkit_version": self.agentkit_version,
                "model": self.model, "function_calling": self.function_calling,
                "context_window": self.context_window, **owner,
                "recorded_at": self.recorded_at, **server, **runs,
                "redactions": sorted(self.redactions)}

    def _ordered(self) -> list[Exchange]:
        # a sampled cassette lists its exchanges by sample (each sample's in recorded order),
        # so samples recorded concurrently are written the same as one after another
        return (sorted(self.exchanges, key=lambda e: e.sample) if self.sampled
                else self.exchanges)

    def dumps(self, *, secrets: dict[str, str] | None = None) -> str:
        """The file's text: secrets redacted (also ``secrets``, e.g. the recording backend's),
        their kinds added to ``redactions``.

        A recording saves after every exchange, so each exchange's text is kept from the last
        call and only the ones added since are redacted and written out (:class:`_Written`):
        saving after each of N exchanges costs what the N exchanges cost once, not N times."""
        redactor = Redactor(secrets=secrets)
        written = self._written
        if written is None or written.looked_for != redactor.looked_for:
            written = self._written = _Written(redactor.looked_for)
        entries = written.update(self._ordered(), self.sampled, redactor)
        header = self._header()
        mcp = ({"mcp_exchanges": [e.to_dict() for e in self.mcp_exchanges]}
               if self.mcp_exchanges else {})
        mcp = redactor.data(mcp)
        header["format"] = max((PART_FORMATS[part] for _, part in parts_of(
            {**header, "exchanges": entries, **mcp})), default=1)
        header = redactor.data(header)
        header["redactions"] = sorted(set(self.redactions) | redactor.redacted
                                      | written.redacted)
        self.redactions = header["redactions"]
        exchanges = ("exchanges:\n" + "".join(written.texts) if written.texts
                     else "exchanges: []\n")
        return dump_yaml(header) + exchanges + (dump_yaml(mcp) if mcp else "")

    def save(self, path: str | Path | None = None, *,
             secrets: dict[str, str] | None = None) -> Path:
        """Write :meth:`dumps` atomically."""
        target = Path(path or self.path or "")
        if not str(target):
            raise CassetteError("cassette has no path to save to")
        atomic_write_text(target, self.dumps(secrets=secrets))
        self.path = target
        return target


def _read_cassette(path: Path) -> str:
    """The text of the cassette file at ``path``; what keeps it from being read is a
    :class:`CassetteError` saying so (and, for a missing file, how to record it)."""
    try:
        return read_text(path)
    except TextFileError as exc:
        raise CassetteError(str(exc)) from None
    except FileNotFoundError:
        raise CassetteError(f"{path}: cannot read cassette: no such file; record it first "
                            "(`agentkit record`, or pytest --record-mode once)") from None
    except OSError as exc:
        raise CassetteError(f"{path}: cannot read cassette: {exc.strerror or exc}") from None


def replayed_cassette(path: str | Path) -> Cassette:
    """The cassette at ``path``, to replay: one object shared by every replay of the file's
    current text (only read: a replay's player keeps its own queues; to change a cassette,
    :meth:`Cassette.load` one). The file is read once per call, and its text compared with the
    one the kept cassette was built from; the cassette is built again (its text hashed for
    :data:`LOADED`) only when the text changed (:data:`REPLAYED`)."""
    path = Path(path)
    text = _read_cassette(path)
    return REPLAYED.get(path, text, lambda: Cassette._from_text(path, text, _loaded_key(text)))


class ReplayedCassettes:
    """The cassettes :func:`replayed_cassette` built, by path: each with the text it was
    built from, so an edited file is built again and an entry is never stale. Bounded by
    ``text_bytes`` of cassette text, the least recently replayed let go first. Counts what it
    did: ``built`` (texts built into a cassette) and ``hits`` (replays that reused one)."""

    def __init__(self, text_bytes: int) -> None:
        self.text_bytes = text_bytes
        self._kept: OrderedDict[str, tuple[str, int, Cassette]] = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()
        self.built = 0
        self.hits = 0

    def get(self, path: Path, text: str, build: Callable[[], Cassette]) -> Cassette:
        """The cassette kept for ``path`` when it was built from ``text`` (compared whole: as
        cheap as a hash of it would be to compare, without hashing it), else ``build()``'s
        (then kept)."""
        name = str(path)
        with self._lock:
            kept = self._kept.get(name)
            if kept is not None and kept[0] == text:
                self._kept.move_to_end(name)
                self.hits += 1
                return kept[2]
        cassette = build()
        size = len(text)
        with self._lock:
            self.built += 1
            self._forget(name)
            self._kept[name] = text, size, cassette
            self._size += size
            while self._size > self.text_bytes and len(self._kept) > 1:
                self._forget(next(iter(self._kept)))
        return cassette

    def __len__(self) -> int:
        return len(self._kept)

    @property
    def size(self) -> int:
        """The text (characters) of the cassettes kept."""
        return self._size

    def clear(self) -> None:
        with self._lock:
            self._kept.clear()
            self._size = 0

    def _forget(self, name: str) -> None:
        gone = self._kept.pop(name, None)
        if gone is not None:
            self._size -= gone[1]


REPLAYED = ReplayedCassettes(text_bytes=16 * 1024 * 1024)
"""The cassettes being replayed (:func:`replayed_cassette`): a scenario replayed again, its
samples, fault variants and mutants share one built cassette per file text."""

LOADED = ParseCache(memory_bytes=32 * 1024 * 1024)
"""Cassettes as a load built them, by their file's text (the ``.pyc`` idea, one step past
:mod:`agentkit.core.parsecache`'s parsed YAML): a cassette loaded again -- every replay of a
scenario, its samples, fault variants and mutants -- is neither parsed nor checked again, only
built anew from plain data (a fresh copy each time: a caller may change what it gets). The
key is the text's SHA-256 and the code that builds it (:func:`_loaded_key`), so an edited
file or an edited loader is loaded the careful way; an entry that does not build is ignored
and written again. On disk too when ``AGENTKIT_PARSE_CACHE`` names a folder."""

_HEADER_FIELDS = tuple(f.name for f in fields(Cassette)
                       if f.init and f.name not in ("path", "exchanges", "mcp_exchanges"))
_EXCHANGE_FIELDS = tuple(f.name for f in fields(Exchange) if f.init)


@functools.cache
def _loader_digest() -> str:
    """The code a load runs to build a cassette (this module and its checks): an entry
    built by other code is never read."""
    from agentkit.recording import _schema

    digest = hashlib.sha256()
    for module in (__file__, _schema.__file__):
        try:
            digest.update(Path(module).read_bytes())
        except OSError:  # no source to read (a frozen build): its version stands for it
            digest.update(module.encode())
    return digest.hexdigest()[:16]


def _loaded_key(text: str) -> str:
    return f"cassette-{_loader_digest()}-{text_key(text)}"


def _as_built(cassette: Cassette) -> tuple[Any, ...]:
    """What a load built, as plain data (``marshal`` keeps objects shared by several
    requests -- each message, :meth:`Cassette.shared` -- shared in every copy)."""
    return ({name: getattr(cassette, name) for name in _HEADER_FIELDS},
            [[getattr(e, name) for name in _EXCHANGE_FIELDS] for e in cassette.exchanges],
            [[getattr(e, name) for name in _EXCHANGE_FIELDS] for e in cassette.mcp_exchanges],
            cassette._messages)


def _rebuilt(cls: type[Cassette], built: Any, path: Path) -> Cassette | None:
    """The cassette :func:`_as_built` kept, at ``path``; None when there is none, or what
    is kept does not build one (not what this code keeps: ignored, loaded again)."""
    if built is MISSING:
        return None
    try:
        header, exchanges, mcp, messages = built
        cassette = cls(path=path, **header)
        cassette.exchanges = [Exchange(**dict(zip(_EXCHANGE_FIELDS, e, strict=True)))
                              for e in exchanges]
        cassette.mcp_exchanges = [Exchange(**dict(zip(_EXCHANGE_FIELDS, e, strict=True)))
                                  for e in mcp]
    except (TypeError, ValueError):
        return None
    if not isinstance(messages, dict):
        return None
    cassette._messages = messages
    return cassette


def _role_and_sample(exchange: ExchangeData | MCPExchangeData) -> dict[str, Any]:
    """An agent's or role's exchange's sample, role and key (an MCP exchange has none)."""
    if not isinstance(exchange, ExchangeData):
        return {}
    key = exchange.key.model_dump(exclude_none=True) if exchange.key is not None else None
    return {"sample": exchange.sample or 0, "role": exchange.role, "key": key,
            "wire": exchange.wire, "variant": exchange.variant}


class _Written:
    """The exchanges of a cassette as written so far, for one set of secret values: each
    one's data (redacted, its messages written as references to earlier ones) and its YAML
    text (an item of the ``exchanges`` list, as the whole document's dump writes it). An
    exchange is written again only when it, or one before it, is not the one written there
    before (dropped, replaced, reordered)."""

    def __init__(self, looked_for: tuple[tuple[str, str], ...]) -> None:
        self.looked_for = looked_for
        self._clear()

    def _clear(self) -> None:
        self.lists = ListWriter()
        self.sources: list[tuple[Exchange, dict[str, Any]]] = []
        self.entries: list[dict[str, Any]] = []
        self.texts: list[str] = []
        self.redacted: set[str] = set()

    def update(self, exchanges: list[Exchange], sampled: bool,
               redactor: Redactor) -> list[dict[str, Any]]:
        """The written data of ``exchanges`` (in this order), writing what is new."""
        same = 0
        for (before, shallow), exchange in zip(self.sources, exchanges, strict=False):
            if before is not exchange or shallow != exchange.to_dict(sampled=sampled):
                break
            same += 1
        if same < len(self.sources):  # the list changed before its end: write it all again
            self._clear()
        kinds = redactor.redacted
        for index in range(len(self.sources), len(exchanges)):
            exchange = exchanges[index]
            shallow = exchange.to_dict(sampled=sampled)
            redactor.redacted = set()
            entry = _written_exchange(exchange, index, shallow, self.lists)
            response = entry.get("response") or {}
            if response.get("chunks"):  # a secret may be split across chunks
                entry["response"] = {**response, "chunks": redactor.chunks(response["chunks"])}
            entry = redactor.data(entry)
            self.redacted |= redactor.redacted
            self.sources.append((exchange, shallow))
            self.entries.append(entry)
            self.texts.append(dump_yaml([entry]))
        redactor.redacted = kinds
        return self.entries


def _written_exchange(exchange: Exchange, index: int, data: dict[str, Any],
                      lists: ListWriter) -> dict[str, Any]:
    """Exchange ``index`` as written: its request's messages once (package docstring), a
    message run an earlier exchange holds being a reference to it."""
    data = dict(data)
    messages = exchange.request.get("messages")
    if isinstance(messages, list):
        segments = lists.write(f"/exchanges/{index}/request/messages", messages)
        data["request"] = {**exchange.request, "messages": segments}
    return data


def _exchanges_dict(exchanges: list[Exchange], *, sampled: bool) -> list[dict[str, Any]]:
    """The exchanges as written (in this order), each request's messages once (package
    docstring): a message run an earlier exchange holds is a reference to it."""
    lists = ListWriter()
    written = []
    for index, exchange in enumerate(exchanges):
        data = exchange.to_dict(sampled=sampled)
        messages = exchange.request.get("messages")
        if isinstance(messages, list):
            segments = lists.write(f"/exchanges/{index}/request/messages", messages)
            data["request"] = {**exchange.request, "messages": segments}
        written.append(data)
    return written


def _read_messages(request: dict[str, Any], index: int, lists: ListReader | None,
                   path: Path | None, where: YamlLocations | None) -> dict[str, Any]:
    """``request`` (of exchange ``index``) with its messages' references followed (format 3;
    ``lists`` is None for older formats, which hold every message in full)."""
    if lists is None:
        return request
    try:
        messages = lists.read(f"/exchanges/{index}/request/messages", request["messages"])
    except ListRefError as exc:
        at = ("exchanges", index, "request", "messages", exc.index)
        line = f":{where.line(at)}" if where else ""
        raise CassetteError(f"{path or '<cassette>'}{line}: exchanges.{index}.request.messages."
                            f"{exc.index}: {exc.problem}; re-record the cassette") from None
    return {**request, "messages": list(messages)}
