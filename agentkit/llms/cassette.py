"""Cassettes: recorded LLM exchanges at the protocol level, replayed forever.

A cassette file (YAML) has a versioned header and a list of exchanges, each a canonical
request, its hash, and the response (message, usage, stream chunks) or error, with the
latency it took. Format 2 adds ``mcp_exchanges``: the ``tools/list`` and ``tools/call``
exchanges of the run's MCP servers (:mod:`agentkit.tools.mcp`), kept the same way; format 3
writes request messages with references (below). A cassette is written in the lowest format
that holds it, and every format is read.
:class:`CassetteLLM` replays a cassette; :class:`RecordingLLM` wraps any backend and records
through it according to a VCR-style mode:

* ``none`` -- replay only; a request not on the cassette fails (the default);
* ``once`` -- record if the cassette does not exist yet, else replay only;
* ``new_episodes`` -- replay what is recorded, record what is not;
* ``all`` -- never replay; record every call (appended to what is there);
* ``rewrite`` -- start an empty cassette and record every call.

A miss is one short message: the request, the nearest recorded one, and where it first differs
(as a unified diff around the change, never cut), then how to re-record. Secrets are
redacted before anything is written, and writes are atomic.

Each request's messages are written once (format 3, :mod:`agentkit.core.reflists`): a run of
messages an earlier request of the cassette holds is a reference to it, so a cassette of N
exchanges of a conversation grows with N, not with N times its memory window.

**Samples.** A cassette may hold several independent runs of the same conversation against a
live model (``samples: N``): every exchange carries the index of its sample,
and a replay (``CassetteLLM(..., sample=i)``) or a recording (``RecordingLLM(...,
sample=i)``) sees only that sample's exchanges -- the same request in two samples is two
answers, never one answer served twice. ``complete`` lists the samples whose run went to its
end (an interrupted evaluation resumes the others); ``sampling`` keeps how they were drawn
(temperature, the seed of sample 0: sample i used ``seed + i``). A cassette of one run has
no sample keys.

**Formats.** The optional parts of a cassette each need a minimum ``format``
(:data:`~agentkit.llms.cassette_schema.PART_FORMATS`): samples 2, ``mcp_exchanges`` 2,
message references 3, role exchanges 3. A cassette is written in the lowest format that holds all its parts
(the highest of their needs; with none of them, format 1), so a recording keeps the format it
always had. Formats 1, 2 and 3 are read; a part that needs a higher format than the file
declares is refused, naming the file, its line and the part.

**Roles.** Beside the agent's exchanges a scenario's cassette keeps those of the harness's own
LLM roles -- an LLM judge's verdicts, a simulated user's messages (:mod:`agentkit.scenario`)
-- each tagged with its ``role`` and a :class:`RoleKey`: the scenario field it serves, the
role's model, hashes of its subject (the rubric; the persona and goal) and of the transcript
it saw. A role's call goes through :meth:`CassetteLLM.role` (or :meth:`RecordingLLM.role`):
replayed by its key and request, or recorded through the role's own live model. A role's
request that is not on the cassette is a miss that says which part of the key changed (a
changed rubric is never judged again silently). Role exchanges need format 3.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from collections import defaultdict, deque
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit, urlunsplit

import yaml

from agentkit.core.errors import RecordingMismatchError
from agentkit.core.files import atomic_write_text
from agentkit.core.reflists import ListReader, ListRefError, ListWriter
from agentkit.core.secrets import Redactor
from agentkit.core.sim import Stopwatch, asleep
from agentkit.core.textdiff import changes, short
from agentkit.core.textfiles import TextFileError, read_text
from agentkit.core.yamlsafe import YamlError, YamlLocations, parse_yaml
from agentkit.llms import errors as llm_errors
from agentkit.llms.base import LLM, FunctionCallingLLM, LLMRequest, estimate_usage
from agentkit.llms.cassette_schema import (
    PART_FORMATS,
    CassetteError,
    ExchangeData,
    MCPExchangeData,
    check_cassette,
    parts_of,
)
from agentkit.llms.types import ChatMessage, ChatResponse, LLMMetadata, Usage

__all__ = [
    "CASSETTE_FORMAT",
    "CASSETTE_FORMATS",
    "RecordMode",
    "RECORD_MODES",
    "Cassette",
    "Exchange",
    "CassetteError",
    "CassetteMissError",
    "CassettePlayer",
    "RecordedLLMError",
    "CassetteLLM",
    "RecordingLLM",
    "RoleKey",
    "RoleLLM",
    "canonical_request",
    "request_hash",
]

CASSETTE_FORMAT = 3
"""The newest cassette format (module docstring: each optional part needs a minimum format,
and a cassette is written in the lowest one that holds all its parts)."""
CASSETTE_FORMATS = (1, 2, 3)
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


class CassetteMissError(RecordingMismatchError, LookupError):
    """A request is not on the cassette (and the record mode does not allow recording it)."""


class RecordedLLMError(RuntimeError):
    """Replays an error the live backend raised while recording."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(f"{kind}: {message}")
        self.kind = kind


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


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


#: What a role's key field is called in messages (the subject fields and the transcript).
_KEY_NOUNS = {"model": "model", "rubric": "rubric", "persona": "persona", "goal": "goal",
              "transcript": "transcript it saw"}


@dataclass(frozen=True)
class RoleKey:
    """What one call of a harness role answers, as the cassette keys it: the ``role``
    (``judge`` or ``user``), the scenario field it serves (``at``: ``expect.answer``,
    ``user``...; ``where`` names its file and line for messages), the model it must have been
    recorded with (``model``; None: whichever model recorded it), the hashes of its subject
    (``{"rubric": ...}``; ``{"persona": ..., "goal": ...}``) and of the transcript it saw."""

    role: str
    at: str
    subject: Mapping[str, str]
    transcript: str
    model: str | None = None
    where: str = field(default="", compare=False)

    def fields(self, model: str | None) -> dict[str, str]:
        """The key as a cassette writes it (``model``: the model that answered)."""
        data = {"at": self.at}
        if model is not None:
            data["model"] = model
        return {**data, **self.subject, "transcript": self.transcript}

    def changes(self, recorded: Mapping[str, Any]) -> list[str]:
        """The key fields in which ``recorded`` (an exchange's key) differs from this one, in
        the order they are reported (model, subject, transcript)."""
        now = self.fields(self.model)
        found = [name for name in ("model", *self.subject, "transcript")
                 if name in now and recorded.get(name) != now[name]]
        return found


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

    def to_dict(self, *, sampled: bool = False) -> dict[str, Any]:
        data: dict[str, Any] = {"sample": self.sample} if sampled else {}
        if self.role is not None:
            data.update({"role": self.role, "key": dict(self.key or {})})
        data.update({"request_hash": self.request_hash, "request": self.request})
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
    """The run's MCP ``tools/list`` and ``tools/call`` exchanges (format 2)."""
    samples: int | None = None
    """How many independent runs it holds (None: one run)."""
    sampling: dict[str, Any] | None = None
    """How the samples were drawn: ``temperature`` and ``seed`` (sample i used seed + i)."""
    complete: list[int] = field(default_factory=list)
    """The samples whose run went to its end (a sampled cassette only)."""
    _messages: dict[str, Any] = field(default_factory=dict, init=False, repr=False,
                                      compare=False)
    """Every request message of the cassette, each once by its content (:meth:`shared`)."""

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

    def drop_sample(self, sample: int) -> None:
        """Forget what a sample recorded (to record it again from its start)."""
        self.exchanges = [e for e in self.exchanges if e.sample != sample]
        self.complete = [i for i in self.complete if i != sample]

    @classmethod
    def load(cls, path: str | Path) -> Cassette:
        path = Path(path)
        try:
            text = read_text(path)
        except TextFileError as exc:
            raise CassetteError(str(exc)) from None
        except FileNotFoundError:
            raise CassetteError(f"{path}: cannot read cassette: no such file; record it first "
                                "(`agentkit record`, or pytest --record-mode once)") from None
        except OSError as exc:
            raise CassetteError(f"{path}: cannot read cassette: {exc.strerror or exc}") from None
        try:
            data, where = parse_yaml(text)
        except YamlError as exc:
            fix = f"\n  fix: {exc.fix}" if exc.fix else ""
            raise CassetteError(f"{path}{exc.where}: cassette is not valid YAML: "
                                f"{exc.problem}{fix}") from None
        return cls.from_dict(data, path, where)

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
                    latency=exchange.latency, **_role_and_sample(exchange)))
        return cassette

    def to_dict(self) -> dict[str, Any]:
        owner = {key: value for key, value in (("agent_type", self.agent_type),
                                               ("scenario", self.scenario), ("test", self.test))
                 if value is not None}
        server = {"base_url": self.base_url} if self.base_url is not None else {}
        mcp = ({"mcp_exchanges": [e.to_dict() for e in self.mcp_exchanges]}
               if self.mcp_exchanges else {})
        runs: dict[str, Any] = {}
        if self.samples is not None:
            runs = {"samples": self.samples, "sampling": dict(self.sampling or {}),
                    "complete": sorted(set(self.complete))}
        # a sampled cassette lists its exchanges by sample (each sample's in recorded order),
        # so samples recorded concurrently are written the same as one after another
        ordered = (sorted(self.exchanges, key=lambda e: e.sample) if self.sampled
                   else self.exchanges)
        exchanges = _exchanges_dict(ordered, sampled=self.sampled)
        data = {"format": 1, "agentkit_version": self.agentkit_version,
                "model": self.model, "function_calling": self.function_calling,
                "context_window": self.context_window, **owner,
                "recorded_at": self.recorded_at, **server, **runs,
                "redactions": sorted(self.redactions), "exchanges": exchanges, **mcp}
        data["format"] = max((PART_FORMATS[part] for _, part in parts_of(data)), default=1)
        return data

    def dumps(self, *, secrets: dict[str, str] | None = None) -> str:
        """The file's text: secrets redacted (also ``secrets``, e.g. the recording backend's),
        their kinds added to ``redactions``."""
        redactor = Redactor(secrets=secrets)
        data = self.to_dict()
        for exchange in data["exchanges"]:
            response = exchange.get("response") or {}
            if response.get("chunks"):  # a secret may be split across chunks
                response["chunks"] = redactor.chunks(response["chunks"])
        data = redactor.data(data)
        data["redactions"] = sorted(set(self.redactions) | redactor.redacted)
        self.redactions = data["redactions"]
        return dump_yaml(data)

    def save(self, path: str | Path | None = None, *,
             secrets: dict[str, str] | None = None) -> Path:
        """Write :meth:`dumps` atomically."""
        target = Path(path or self.path or "")
        if not str(target):
            raise CassetteError("cassette has no path to save to")
        atomic_write_text(target, self.dumps(secrets=secrets))
        self.path = target
        return target


def _role_and_sample(exchange: ExchangeData | MCPExchangeData) -> dict[str, Any]:
    """An agent's or role's exchange's sample, role and key (an MCP exchange has none)."""
    if not isinstance(exchange, ExchangeData):
        return {}
    key = exchange.key.model_dump(exclude_none=True) if exchange.key is not None else None
    return {"sample": exchange.sample or 0, "role": exchange.role, "key": key}


def _exchanges_dict(exchanges: list[Exchange], *, sampled: bool) -> list[dict[str, Any]]:
    """The exchanges as written (in this order), each request's messages once (module
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


def _message_to_dict(message: ChatMessage) -> dict[str, Any]:
    data: dict[str, Any] = _jsonable(message.to_dict())
    return data


def _first_difference(recorded: dict[str, Any], request: dict[str, Any]) -> list[str]:
    """Where ``request`` first differs from the ``recorded`` one: the path, and the change as
    a unified diff around it (recorded -> now), whole, however long the text."""
    found = changes(recorded, request)
    if not found:
        return ["(no difference)"]
    first = found[0].lines()
    lines = [f"first difference (recorded -> now), at {first[0]}", *first[1:]]
    if len(found) > 1:
        lines.append(f"(and {len(found) - 1} more difference{'s' if len(found) > 2 else ''})")
    return lines


def _describe(request: dict[str, Any]) -> str:
    """A request in a few words: kind, messages, the last message, the tools offered (an MCP
    request: its server, method, tool and arguments)."""
    if "method" in request:
        params = request.get("params") or {}
        tool = f" {params.get('name')}" if isinstance(params, dict) and "name" in params else ""
        arguments = params.get("arguments") if isinstance(params, dict) else None
        text = json.dumps(arguments, sort_keys=True, ensure_ascii=False)
        shown = f" {text if len(text) <= 70 else text[:67] + '...'}" if arguments else ""
        return f"MCP server {request.get('server')}: {request.get('method')}{tool}{shown}"
    messages = request.get("messages") or []
    text = f"{'stream ' if request.get('stream') else ''}{request.get('kind', 'request')}, " \
           f"{len(messages)} message{'' if len(messages) == 1 else 's'}"
    if messages and isinstance(messages[-1], dict):
        last = messages[-1]
        text += f", last {last.get('role')}: {short(last.get('content'), 70)}"
    tools = request.get("tools")
    if tools:
        text += f", tools {', '.join(str(t.get('name')) for t in tools if isinstance(t, dict))}"
    return text


def _distance(a: dict[str, Any], b: dict[str, Any]) -> tuple[float, float]:
    """How far apart two requests are: structurally (deepdiff), then textually (a changed
    string counts the same to deepdiff whether one character or all of it changed)."""
    from deepdiff import DeepDiff

    structural = float(DeepDiff(a, b, get_deep_distance=True).get("deep_distance", 0.0))
    text = difflib.SequenceMatcher(None, json.dumps(a, sort_keys=True, default=str),
                                   json.dumps(b, sort_keys=True, default=str)).ratio()
    return structural, 1.0 - text


_Slot = tuple[str | None, str | None, str]
"""Where the player queues an exchange: its role, the scenario field it serves, its hash."""


def _slot(exchange: Exchange) -> _Slot:
    return exchange.role, (exchange.key or {}).get("at"), exchange.request_hash


class CassettePlayer:
    """Replay state: exchanges by role, field and request hash, each consumed in recorded
    order (an agent's request never takes a judge's answer, nor one judge another's);
    ``part`` is the list of the cassette it plays (``exchanges``, or ``mcp_exchanges``); of
    the exchanges those of one sample only (``sample``; a cassette of one run has only
    sample 0)."""

    def __init__(self, cassette: Cassette, part: Literal["exchanges", "mcp_exchanges"]
                 = "exchanges", sample: int = 0) -> None:
        self.cassette = cassette
        self.part = part
        self.sample = sample
        self._queues: dict[_Slot, deque[Exchange]] = defaultdict(deque)
        for exchange in self.exchanges:
            self._queues[_slot(exchange)].append(exchange)

    @property
    def exchanges(self) -> list[Exchange]:
        """The recorded exchanges it plays (MCP exchanges are not kept by sample)."""
        if self.part == "mcp_exchanges":
            return self.cassette.mcp_exchanges
        return self.cassette.sample_exchanges(self.sample)

    @property
    def _where(self) -> str:
        where = str(self.cassette.path or "<cassette>")
        return f"{where} (sample {self.sample})" if self.cassette.sampled else where

    def take(self, canonical: dict[str, Any], key: str, role: RoleKey | None = None,
             ) -> Exchange | None:
        queue = self._queues.get((None, None, key) if role is None else (role.role, role.at, key))
        if not queue:
            return None
        if role is None or role.model is None:
            return queue.popleft()
        # the first answer of the model the scenario names (a panel's judges share requests)
        found = next((e for e in queue if (e.key or {}).get("model") == role.model), None)
        if found is not None:
            queue.remove(found)
        return found

    def remaining(self) -> int:
        return sum(len(q) for q in self._queues.values())

    def left_over(self) -> list[Exchange]:
        """The exchanges not replayed (yet)."""
        return [exchange for queue in self._queues.values() for exchange in queue]

    def unused_roles(self) -> dict[str, int]:
        """Unreplayed role exchanges, by role."""
        found: dict[str, int] = {}
        for (role, _, _), queue in self._queues.items():
            if role is not None and queue:
                found[role] = found.get(role, 0) + len(queue)
        return found

    def miss(self, canonical: dict[str, Any]) -> CassetteMissError:
        where = self._where
        part = self.part
        agents = [e for e in self.exchanges if e.role is None]
        if not agents:
            what = "exchanges" if part == "exchanges" else "MCP exchanges"
            return CassetteMissError(f"{where}: the cassette has no recorded {what}; record "
                                     "it first (record mode `once` or `new_episodes`)")
        nearest = min(agents, key=lambda e: _distance(e.request, canonical))
        index = getattr(self.cassette, part).index(nearest)
        if nearest.request == canonical:
            times = sum(e.request == canonical for e in agents)
            return CassetteMissError(
                f"{where}: this request (hash {request_hash(canonical)}, first recorded as "
                f"{part}[{index}]) was recorded {times} time(s) and every recording of it "
                "was already replayed: the agent now makes it more often. If that is intended, "
                "re-record with record mode `new_episodes` or `rewrite`.")
        used = "" if self._queues.get(_slot(nearest)) else ", already replayed"
        return CassetteMissError("\n".join([
            f"{where}: no recorded exchange matches this request (hash "
            f"{request_hash(canonical)}: {_describe(canonical)})",
            f"nearest recorded: {part}[{index}] (hash {nearest.request_hash}{used}: "
            f"{_describe(nearest.request)})",
            *_first_difference(nearest.request, canonical),
            "If the change is intended, re-record with record mode `new_episodes` or "
            "`rewrite`."]))

    def role_miss(self, canonical: dict[str, Any], role: RoleKey) -> CassetteMissError:
        """A role's request that is not on the cassette, saying which part of its key changed:
        the model, the subject (rubric, persona, goal) or the transcript it saw."""
        where = self._where
        noun = _ROLE_NOUNS.get(role.role, f"{role.role} answer")
        field_name = f"{role.at} ({role.where})" if role.where else role.at
        fix = (f"A changed rubric, persona, goal, {role.role} model or conversation is never "
               "answered again silently: re-record with record mode `new_episodes` (asks the "
               "role again, replays the agent's recorded answers) or `rewrite`.")
        same_role = [e for e in self.exchanges if e.role == role.role]
        candidates = [e for e in same_role if (e.key or {}).get("at") == role.at] or same_role
        if not candidates:
            others = sorted({e.sample for e in self.cassette.exchanges
                             if e.role == role.role and e.sample != self.sample})
            held = (f"sample {self.sample} has none (sample{'s' if len(others) > 1 else ''} "
                    f"{', '.join(map(str, others))} of the cassette "
                    f"{'have' if len(others) > 1 else 'has'} one: was this sample's cut short "
                    "or removed?)" if self.cassette.sampled and others
                    else "the cassette has none (it was recorded before the scenario had one)")
            return CassetteMissError(f"{where}: no recorded {noun} for {field_name}: {held}. "
                                     f"{fix}")
        nearest = min(candidates, key=lambda e: (len(role.changes(e.key or {})),
                                                 _distance(e.request, canonical)))
        index = self.cassette.exchanges.index(nearest)
        changed = role.changes(nearest.key or {})
        if not changed and nearest.request == canonical:
            return CassetteMissError(
                f"{where}: the {noun} for {field_name} was recorded "
                f"{sum(e.request == canonical for e in candidates)} time(s) and every recording "
                f"was already replayed: it is now asked more often (more samples?). {fix}")
        recorded = nearest.key or {}
        now = role.fields(role.model)
        shown = []
        for name in changed:
            if name == "model":
                shown.append(f"the {role.role}'s model changed (recorded with "
                             f"`{recorded.get('model')}`, the scenario now names `{role.model}`)")
            else:
                shown.append(f"the {_KEY_NOUNS.get(name, name)} changed (recorded "
                             f"{recorded.get(name)} in exchanges[{index}], now {now.get(name)})")
        lines = [f"{where}: no recorded {noun} for {field_name}: " + "; ".join(shown)
                 if shown else f"{where}: no recorded {noun} for {field_name} matches this "
                               f"request (nearest: exchanges[{index}])"]
        if nearest.request != canonical:
            lines += _first_difference(nearest.request, canonical)
        lines.append(fix)
        return CassetteMissError("\n".join(lines))


_ROLE_NOUNS = {"judge": "verdict of the judge", "user": "message of the simulated user"}


def _recorded_error(error: dict[str, Any]) -> Exception:
    """The error a recorded exchange raises: a backend error (:mod:`agentkit.llms.errors`) is
    raised as its own type, so agents handle it as they did live; others as
    :class:`RecordedLLMError`."""
    kind, message = str(error.get("type", "Error")), str(error.get("message", ""))
    cls = getattr(llm_errors, kind, None)
    if isinstance(cls, type) and issubclass(cls, llm_errors.LLMError):
        return cls(message, status_code=error.get("status_code"))
    return RecordedLLMError(kind, message)


def _error_dict(error: BaseException) -> dict[str, Any]:
    data: dict[str, Any] = {"type": type(error).__name__, "message": str(error)}
    status = getattr(error, "status_code", None) if isinstance(error, llm_errors.LLMError) else None
    if status is not None:
        data["status_code"] = status
    return data


def _response_from(exchange: Exchange) -> tuple[ChatResponse, list[str] | None]:
    if exchange.error is not None:
        raise _recorded_error(exchange.error)
    data = exchange.response or {}
    message = ChatMessage.model_validate(data.get("message") or {"role": "assistant"})
    usage = Usage(**data["usage"]) if data.get("usage") else None
    return ChatResponse(message=message, usage=usage), data.get("chunks")


async def _replay_stream(response: ChatResponse, chunks: list[str] | None) -> AsyncIterator[ChatResponse]:
    text = ""
    for delta in chunks if chunks is not None else [response.message.content or ""]:
        text += delta
        yield ChatResponse(message=ChatMessage(role="assistant", content=text), delta=delta)
    yield ChatResponse(message=response.message, delta="", usage=response.usage)


def _worth_recording(error: BaseException) -> bool:
    """An API's answer (a 429, a 500 after retries...) is recorded; failing to reach it at
    all, a missing/invalid key, or a request that was never sent (a spent budget) is a problem
    of the recording session, not of the model."""
    return not isinstance(error, (llm_errors.APIConnectionError, llm_errors.AuthenticationError,
                                  llm_errors.NotSentError))


class CassetteLLM(FunctionCallingLLM):
    """Replays a cassette: same requests, same answers, same latency.

    With ``mode`` other than ``none`` (and the live backend as ``llm``) it records through
    that backend as :class:`RecordingLLM` does; with ``autosave=False`` nothing is written
    until :meth:`save` (a caller that keeps a recording only when it turned out good);
    ``test`` names the test whose recording it is in the cassette's header. A cassette of
    several samples replays one of them, ``sample`` (replaying one without saying which is a
    :class:`CassetteError`).
    """

    def __init__(self, cassette: Cassette | str | Path, mode: RecordMode = "none",
                 llm: LLM | None = None, *, autosave: bool = True,
                 test: str | None = None, sample: int | None = None) -> None:
        self._recorder: RecordingLLM | None = None
        if mode != "none":
            if llm is None:
                raise ValueError(f"record mode {mode!r} needs the live backend to record "
                                 "through: CassetteLLM(cassette, mode, llm=...)")
            path = cassette.path if isinstance(cassette, Cassette) else cassette
            if path is None:
                raise ValueError("recording needs a cassette with a file path")
            self._recorder = RecordingLLM(llm, path, mode, autosave=autosave, test=test)
            self.cassette = self._recorder.cassette
        else:
            self.cassette = cassette if isinstance(cassette, Cassette) else Cassette.load(cassette)
        self.mode = mode
        self._player = CassettePlayer(self.cassette, sample=_sample_of(self.cassette, sample))

    @property
    def metadata(self) -> LLMMetadata:
        if self._recorder is not None:
            return self._recorder.metadata
        return LLMMetadata(model_name=self.cassette.model, is_chat_model=True,
                           is_function_calling_model=self.cassette.function_calling,
                           context_window=self.cassette.context_window)

    @property
    def unused(self) -> int:
        """Recorded exchanges not replayed yet (the agent's and the roles')."""
        return self._player.remaining()

    @property
    def unused_roles(self) -> dict[str, int]:
        """Recorded role exchanges not replayed yet, by role (``{"judge": 1}``)."""
        return self._player.unused_roles()

    def role(self, key: RoleKey, live: LLM | None = None) -> RoleLLM:
        """The model of one harness role's call (a judge's, a simulated user's) through this
        cassette: replayed by ``key`` (:class:`RoleKey`), or -- while recording -- recorded
        through ``live``, the role's own live model."""
        return RoleLLM(self, key, live)

    @property
    def recorded(self) -> int:
        """Exchanges recorded through the live backend so far (0 when only replaying)."""
        return self._recorder.recorded if self._recorder is not None else 0

    def save(self) -> bool:
        """Write what was recorded (atomically, secrets redacted); False if nothing was."""
        if self._recorder is None or not self._recorder.recorded:
            return False
        self.cassette.save(secrets=self._recorder.secrets)
        return True

    async def _replayed(self, request: LLMRequest) -> tuple[ChatResponse, list[str] | None]:
        canonical = canonical_request(request)
        exchange = self._player.take(canonical, request_hash(canonical))
        if exchange is None:
            raise self._player.miss(canonical)
        if exchange.latency:
            await asleep(exchange.latency)
        return _response_from(exchange)

    async def _role_chat(self, request: LLMRequest, role: RoleKey,
                         live: LLM | None) -> tuple[ChatResponse, str]:
        if self._recorder is not None:
            return await self._recorder._role_chat(request, role, live)
        canonical = canonical_request(request)
        exchange = self._player.take(canonical, request_hash(canonical), role)
        if exchange is None:
            raise self._player.role_miss(canonical, role)
        if exchange.latency:
            await asleep(exchange.latency)
        return _response_from(exchange)[0], (exchange.key or {}).get("model", "unknown")

    async def _achat(self, request: LLMRequest) -> ChatResponse:
        if self._recorder is not None:
            return await self._recorder._achat(request)
        return (await self._replayed(request))[0]

    async def _astream_chat(self, request: LLMRequest) -> AsyncIterator[ChatResponse]:
        if self._recorder is not None:
            async for chunk in self._recorder._astream_chat(request):
                yield chunk
            return
        response, chunks = await self._replayed(request)
        async for chunk in _replay_stream(response, chunks):
            yield chunk


def _sample_of(cassette: Cassette, sample: int | None) -> int:
    """The sample to replay of ``cassette``, checked against what it holds."""
    where = cassette.path or "<cassette>"
    if cassette.samples is None:
        if sample not in (None, 0):
            raise CassetteError(f"{where}: holds one run, not samples; there is no sample "
                                f"{sample} to replay")
        return 0
    if sample is None:
        raise CassetteError(f"{where}: holds {cassette.samples} samples (independent runs); "
                            "replay each with sample=0, 1, ... (agentkit's commands and the "
                            "pytest plugin replay all of them)")
    if not 0 <= sample < cassette.samples:
        raise CassetteError(f"{where}: holds samples 0-{cassette.samples - 1}; there is no "
                            f"sample {sample}")
    return sample


class RoleLLM(FunctionCallingLLM):
    """One harness role's model (a judge, a simulated user) on a scenario's cassette: each
    call is replayed from the cassette's exchanges of that role and key, or recorded through
    the role's live model (see :meth:`CassetteLLM.role`)."""

    def __init__(self, channel: CassetteLLM | RecordingLLM, key: RoleKey,
                 live: LLM | None = None) -> None:
        self.channel = channel
        self.key = key
        self.live = live
        self.answered_by: str | None = None
        """The model that gave the last answer (as recorded, when it was replayed)."""

    @property
    def metadata(self) -> LLMMetadata:
        name = (self.live.metadata.model_name if self.live is not None
                else self.key.model or f"recorded {self.key.role}")
        return LLMMetadata(model_name=name, is_chat_model=True, is_function_calling_model=False)

    async def _achat(self, request: LLMRequest) -> ChatResponse:
        response, self.answered_by = await self.channel._role_chat(request, self.key, self.live)
        return response


def _with_stable_ids(response: ChatResponse, key: str) -> ChatResponse:
    """``response`` with its tool calls' ids derived from the request (its hash ``key``) and
    their place, instead of the provider's: a live model gives new ids on every call, which
    the next request carries back -- so without this, re-recording an unchanged conversation
    would change every request after the first tool call."""
    calls = response.message.tool_calls
    if calls:
        response.message.additional_kwargs["tool_calls"] = [
            call.model_copy(update={"tool_id": f"call_{key[:12]}_{index}"})
            for index, call in enumerate(calls, start=1)]
    return response


class RecordingLLM(FunctionCallingLLM):
    """Wraps a live backend and records its exchanges to a cassette, per ``mode``.

    With ``autosave`` (the default) the cassette file is rewritten (atomically, secrets
    redacted) after every recorded exchange, so an interrupted recording keeps what it got.
    Without it nothing is written: the caller saves :attr:`cassette` when the recording is
    known to be good (what :func:`agentkit.scenario.record.record_scenario` does). Latency is
    measured on the virtual clock, which a live call on agentkit's virtual-time loop advances
    by the real time it took; replays sleep the recorded latency on the virtual clock, so a
    replayed trace shows the same latencies as the recorded one.

    ``recorded`` counts the exchanges recorded; ``unrecorded`` keeps the errors that were not
    (the model could not be reached, the key was refused, the request was never sent);
    ``request_secrets`` names the environment variables and backend secrets whose values were
    redacted from a request.

    Samples: given a :class:`Cassette` object (shared by the recorders of its samples) and
    ``sample``, it replays and records that sample's exchanges only; ``on_record`` is called
    after each recorded exchange (e.g. to save the shared cassette under a lock).
    """

    def __init__(self, llm: LLM, cassette: str | Path | Cassette, mode: RecordMode = "none", *,
                 agent_type: str | None = None, scenario: str | None = None,
                 test: str | None = None, autosave: bool = True, sample: int | None = None,
                 on_record: Callable[[], None] | None = None) -> None:
        if mode not in RECORD_MODES:
            raise ValueError(f"unknown record mode {mode!r}; use one of {', '.join(RECORD_MODES)}")
        self.llm = llm
        self.mode = mode
        self.sample = sample or 0
        self.on_record = on_record
        if isinstance(cassette, Cassette):
            exists = cassette.path is not None and cassette.path.exists()
            self.cassette = cassette
        else:
            path = Path(cassette)
            exists = path.exists()
            if mode == "rewrite" or not exists:
                if mode == "none":
                    raise CassetteMissError(f"{path}: cassette not found and record mode is "
                                            "`none`; record it with --record-mode once")
                self.cassette = Cassette(path=path)
            else:
                self.cassette = Cassette.load(path)
        self._record = mode in ("all", "rewrite", "new_episodes") or (mode == "once" and not exists)
        self._replay = mode in ("none", "new_episodes") or (mode == "once" and exists)
        meta = llm.metadata
        self.cassette.model = meta.model_name
        self.cassette.function_calling = meta.is_function_calling_model
        self.cassette.context_window = meta.context_window
        self.cassette.agent_type = agent_type or self.cassette.agent_type
        self.cassette.scenario = scenario or self.cassette.scenario
        self.cassette.test = test or self.cassette.test
        self.cassette.base_url = public_url(getattr(llm, "base_url", None))
        self._player = CassettePlayer(self.cassette, sample=self.sample)
        self.autosave = autosave
        self.recorded = 0
        self.unrecorded: list[BaseException] = []
        self.request_secrets: set[str] = set()
        self._request_redactions: set[str] = set()
        self._recorded_hashes: set[_Slot] = set()
        self._role_secrets: dict[str, str] = {}

    @property
    def metadata(self) -> LLMMetadata:
        return self.llm.metadata

    @property
    def secrets(self) -> dict[str, str]:
        """The live backend's secrets and those of the role models it recorded through."""
        return {**self.llm.secrets, **self._role_secrets}

    def _stamp(self) -> None:
        from agentkit import __version__

        self.cassette.agentkit_version = __version__
        self.cassette.recorded_at = datetime.now(UTC).replace(microsecond=0).isoformat()

    def role(self, key: RoleKey, live: LLM | None = None) -> RoleLLM:
        """One harness role's model on this cassette (as :meth:`CassetteLLM.role`): what is
        recorded replays, the rest is recorded through ``live``, the role's live model."""
        return RoleLLM(self, key, live)

    def drop_unused_roles(self) -> int:
        """Forget the recorded role exchanges this recording did not replay -- verdicts on a
        rubric that changed, messages of a persona that changed: a re-record (``new_episodes``,
        ``all``) asks the role again and keeps only what it asked; how many were dropped."""
        unused = {id(e) for e in self._player.left_over() if e.role is not None}
        before = len(self.cassette.exchanges)
        self.cassette.exchanges = [e for e in self.cassette.exchanges if id(e) not in unused]
        return before - len(self.cassette.exchanges)

    def _lookup(self, request: LLMRequest, role: RoleKey | None = None,
                live: LLM | None = None) -> tuple[dict[str, Any], str, Exchange | None]:
        if live is not None:
            self._role_secrets.update(live.secrets)
        redactor = Redactor(secrets=self.secrets)
        canonical = canonical_request(request, redactor)
        self._request_redactions |= redactor.redacted
        self.request_secrets |= redactor.values
        key = request_hash(canonical)
        exchange = self._player.take(canonical, key, role) if self._replay else None
        if exchange is None and not self._record:
            raise (self._player.miss(canonical) if role is None
                   else self._player.role_miss(canonical, role))
        return canonical, key, exchange

    async def _role_chat(self, request: LLMRequest, role: RoleKey,
                         live: LLM | None) -> tuple[ChatResponse, str]:
        canonical, key, exchange = self._lookup(request, role, live)
        if exchange is not None:
            if exchange.latency:
                await asleep(exchange.latency)
            return _response_from(exchange)[0], (exchange.key or {}).get("model", "unknown")
        if live is None:
            raise CassetteMissError(
                f"{self.cassette.path}: no live model to record the {role.role} of {role.at}"
                f"{f' ({role.where})' if role.where else ''} with; give the recording one "
                f"(agentkit record --judge-model, the pytest plugin's judge_llm fixture)")
        model = live.metadata.model_name
        if role.model is not None and model != role.model:
            raise CassetteMissError(
                f"{self.cassette.path}: the {role.role} of {role.at}"
                f"{f' ({role.where})' if role.where else ''} names model `{role.model}`, but "
                f"the live {role.role} model recording it is `{model}`; record with that model "
                "or change the scenario")
        watch = Stopwatch.start()
        try:
            response = await live._achat(request)
        except Exception as exc:
            self._store(request, canonical, key, watch, None, None, exc,
                        role=(role.role, role.fields(model)))
            raise
        self._store(request, canonical, key, watch, response, None, None,
                    role=(role.role, role.fields(model)))
        return response, model

    def _store(self, request: LLMRequest, canonical: dict[str, Any], key: str, watch: Stopwatch,
               response: ChatResponse | None, chunks: list[str] | None,
               error: BaseException | None, *,
               role: tuple[str, dict[str, str]] | None = None) -> None:
        # A live call's time passed as real I/O, not simulated latency: count all of it as
        # latency, as the replay (which sleeps the recorded latency) will.
        watch.clock.count_latency(watch.wall - watch.serial)
        if error is not None and not _worth_recording(error):
            self.unrecorded.append(error)
            return
        slot = (None, None, key) if role is None else (role[0], role[1].get("at"), key)
        if self.mode == "all" and slot not in self._recorded_hashes:
            # re-recorded: the new answer replaces the old one instead of queueing behind it
            self.cassette.exchanges = [e for e in self.cassette.exchanges
                                       if _slot(e) != slot or e.sample != self.sample]
        self._recorded_hashes.add(slot)
        exchange = Exchange(request=self.cassette.shared(canonical), request_hash=key,
                            latency=round(watch.wall, 6), sample=self.sample)
        if role is not None:
            exchange.role, exchange.key = role
        if error is not None:
            exchange.error = _error_dict(error)
        else:
            assert response is not None
            if response.usage is None:
                response.usage = estimate_usage(request, response.message)
            exchange.response = {"message": _message_to_dict(response.message),
                                  "usage": response.usage.model_dump() if response.usage else None}
            if chunks is not None:
                exchange.response["chunks"] = chunks
        self.cassette.exchanges.append(exchange)
        self.cassette.redactions = sorted(set(self.cassette.redactions)
                                          | self._request_redactions)
        self.recorded += 1
        self._stamp()
        if self.autosave:
            self.cassette.save(secrets=self.secrets)
        if self.on_record is not None:
            self.on_record()

    async def _achat(self, request: LLMRequest) -> ChatResponse:
        canonical, key, exchange = self._lookup(request)
        if exchange is not None:
            if exchange.latency:
                await asleep(exchange.latency)
            return _response_from(exchange)[0]
        watch = Stopwatch.start()
        try:
            response = _with_stable_ids(await self.llm._achat(request), key)
        except Exception as exc:
            self._store(request, canonical, key, watch, None, None, exc)
            raise
        self._store(request, canonical, key, watch, response, None, None)
        return response

    async def _astream_chat(self, request: LLMRequest) -> AsyncIterator[ChatResponse]:
        canonical, key, exchange = self._lookup(request)
        if exchange is not None:
            if exchange.latency:
                await asleep(exchange.latency)
            response, recorded = _response_from(exchange)
            async for chunk in _replay_stream(response, recorded):
                yield chunk
            return
        watch = Stopwatch.start()
        chunks: list[str] = []
        last: ChatResponse | None = None
        try:
            async for chunk in self.llm._astream_chat(request):
                last = _with_stable_ids(chunk, key)
                if chunk.delta:
                    chunks.append(chunk.delta)
                yield last
        except Exception as exc:
            self._store(request, canonical, key, watch, None, None, exc)
            raise
        if last is not None:
            self._store(request, canonical, key, watch, last, chunks, None)
