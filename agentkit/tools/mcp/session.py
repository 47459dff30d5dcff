"""An MCP server's ``tools/list`` and ``tools/call``, live, recorded or replayed.

:class:`MCPSession` is what an MCP tool calls. Where the answer comes from follows the
cassette's record mode, as for LLM calls (:mod:`agentkit.recording`): ``none`` replays
only -- the server is never started, and a request the cassette lacks is a
:class:`~agentkit.recording.CassetteMissError` naming the nearest recorded request and the
first difference; ``once``/``new_episodes``/``all``/``rewrite`` start the server when a
request must be recorded and keep the exchange in the cassette's ``mcp_exchanges``. Without a
cassette a session is simply live.

A request is kept as canonical JSON -- ``{server, method, params}`` with sorted keys, secrets
redacted -- without what the MCP protocol makes per-session: the JSON-RPC id and the params'
``_meta`` (the protocol version, client info and capabilities a 2026 client stamps on every
request, a progress token), so a replay never depends on request ids, on the order the SDK
numbered them or on the protocol version a session negotiated. A result is kept as the server
sent it (as JSON) after a check that it is MCP-shaped; a malformed one is an
:class:`MCPProtocolError` and is not recorded. The latency of each ``tools/call`` is recorded
and slept on the virtual clock when replayed; ``tools/list`` happens before the agent runs and
takes no simulated time.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import time
from typing import Any, Literal

from agentkit.core.secrets import Redactor
from agentkit.core.sim import Stopwatch, VirtualTimeLoop, asleep
from agentkit.recording import (
    Cassette,
    CassetteMissError,
    CassettePlayer,
    Exchange,
    MCPMethod,
    RecordMode,
    request_hash,
)
from agentkit.tools.mcp.live import LiveConnection, await_future
from agentkit.tools.mcp.server import MCPCallError, MCPProtocolError, MCPServer, MCPServerError

__all__ = ["MCPSession", "MCPRecording", "canonical_mcp_request"]

Method = Literal["tools/list", "tools/call"]
Handshake = Literal["initialize", "server/discover"]

# JSON-RPC error codes the SDK raises itself when the connection ends or a request times out:
# the server is gone or hung, which is never an answer to record
_SDK_LOCAL_CODES = frozenset({-32000, -32001})


def _canonical(value: Any) -> Any:
    """Plain JSON with sorted keys: the one spelling of a request (its hash decides a match)."""
    return json.loads(json.dumps(value, sort_keys=True, ensure_ascii=False, default=str))


def _plain(value: Any) -> Any:
    """Plain JSON in the server's own key order (a schema's ``properties`` order is the order
    of positional arguments for agent types that pass them so)."""
    return json.loads(json.dumps(value, ensure_ascii=False, default=str))


def canonical_mcp_request(server: str, method: MCPMethod | Handshake, params: dict[str, Any] | None = None,
                          redactor: Redactor | None = None) -> dict[str, Any]:
    """The request as a cassette keeps it: server name, method and params less their
    per-session ``_meta``, secrets redacted (without a ``redactor``, only what any text may
    hold: keys, bearer tokens, URL passwords)."""
    data: dict[str, Any] = {"server": server, "method": method}
    asked = {key: value for key, value in (params or {}).items() if key != "_meta"}
    if method == "tools/call" and "name" in asked:
        asked.setdefault("arguments", {})  # a call without arguments is one with none
    if params is not None and (asked or "_meta" not in params):
        data["params"] = asked
    canonical: dict[str, Any] = (redactor or Redactor(environ={})).data(_canonical(data))
    return canonical


class MCPRecording:
    """The MCP part of one cassette for one run: replays and records per ``mode`` (shared by
    every server of the run; their requests carry their names)."""

    def __init__(self, cassette: Cassette, mode: RecordMode = "none", *,
                 repeat: bool = False) -> None:
        self.cassette = cassette
        self.mode = mode
        self.repeat = repeat
        """Replay a request asked more often than it was recorded with its last recorded
        answer (a replaying server answers many clients; a run replays each call once)."""
        exists = cassette.path is not None and cassette.path.exists()
        if mode == "rewrite":
            cassette.mcp_exchanges = []
        self.record = mode in ("all", "rewrite", "new_episodes") or (mode == "once" and not exists)
        self.replay = mode in ("none", "new_episodes") or (mode == "once" and exists)
        # a request recorded with its `_meta` (before agentkit left it out) is matched as
        # it is canonical now
        cassette.mcp_exchanges = [_without_meta(e) for e in cassette.mcp_exchanges]
        self.player = CassettePlayer(cassette, "mcp_exchanges")
        self.recorded = 0
        self._recorded_hashes: set[str] = set()
        self._kept = list(cassette.mcp_exchanges)
        self._new: list[tuple[int, Exchange]] = []
        self._requests = 0

    def take(self, canonical: dict[str, Any]) -> tuple[int, Exchange | None]:
        """The request's number in this run, and the recorded exchange for ``canonical``
        (consumed), or None when it must be made live; a :class:`CassetteMissError` when it
        is not there and may not be recorded."""
        self._requests += 1
        key = request_hash(canonical)
        exchange = self.player.take(canonical, key) if self.replay else None
        if exchange is None and self.replay and self.repeat:
            exchange = next((e for e in reversed(self.cassette.mcp_exchanges)
                             if e.request_hash == key), None)
        if exchange is None and not self.record:
            raise self.player.miss(canonical)
        return self._requests, exchange

    def store(self, number: int, canonical: dict[str, Any], latency: float,
              response: dict[str, Any] | None, error: dict[str, Any] | None,
              notifications: list[dict[str, Any]] | None = None) -> None:
        """Keep request ``number``'s exchange. Exchanges are kept in the order of their
        requests, not of their answers: concurrent calls finish in any order, and the file of
        an unchanged re-recording must come out the same."""
        key = request_hash(canonical)
        if self.mode == "all" and key not in self._recorded_hashes:
            self._kept = [e for e in self._kept if e.request_hash != key]
        self._recorded_hashes.add(key)
        self._new.append((number, Exchange(request=canonical, request_hash=key,
                                           response=response, error=error,
                                           latency=round(latency, 6),
                                           notifications=notifications or None)))
        self._new.sort(key=lambda item: item[0])
        self.cassette.mcp_exchanges = [*self._kept, *(e for _, e in self._new)]
        self.recorded += 1

    def handshake(self, server: str, method: Handshake) -> dict[str, Any] | None:
        """The server's recorded answer to the handshake ``method``, if the cassette has it."""
        canonical = canonical_mcp_request(server, method)
        return next((e.response for e in self.cassette.mcp_exchanges
                     if e.request == canonical and e.response is not None), None)

    def keep_handshake(self, server: str, method: Handshake, result: dict[str, Any]) -> None:
        """Keep the server's answer to the handshake ``method`` (one per server and method:
        the newest replaces one recorded before), first among the new exchanges; a handshake
        the cassette already holds as it is changes nothing."""
        result = _plain(result)
        if self.handshake(server, method) == result:
            return
        canonical = canonical_mcp_request(server, method)
        key = request_hash(canonical)
        self._kept = [e for e in self._kept if e.request_hash != key]
        self._new = [(n, e) for n, e in self._new if e.request_hash != key]
        self._new.append((0, Exchange(request=canonical, request_hash=key, response=result)))
        self._new.sort(key=lambda item: item[0])
        self.cassette.mcp_exchanges = [*self._kept, *(e for _, e in self._new)]
        self.recorded += 1

    @property
    def unused(self) -> int:
        """Recorded MCP exchanges this run did not replay."""
        return self.player.remaining() if self.replay else 0


class MCPSession:
    """One MCP server for one run: its tool list and tool calls (see the module docstring).

    ``recording`` is the cassette part to replay from and record into (None: always live);
    ``connection`` is the live server, started on the first request that needs it (a shared,
    session-long one may be handed in; :meth:`close` leaves that one running)."""

    def __init__(self, server: MCPServer, recording: MCPRecording | None = None,
                 connection: LiveConnection | None = None) -> None:
        self.server = server
        self.recording = recording
        self._connection = connection
        self._owns_connection = connection is None
        self._redactor_secrets = server.secrets()
        self.listed: list[dict[str, Any]] | None = None
        """The server's tools once :meth:`list_tools` has asked (asked once per session)."""

    # ---------------------------------------------------------------- live server
    def connection(self) -> LiveConnection:
        """The live server (started now if it is not running yet)."""
        if self._connection is None:
            self._connection = LiveConnection(self.server)
        self._connection.start()
        return self._connection

    @property
    def started(self) -> bool:
        return self._connection is not None and self._connection.alive

    def close(self) -> None:
        """Stop the live server if this session started it."""
        if self._connection is not None and self._owns_connection:
            self._connection.close()

    # ---------------------------------------------------------------- requests
    def _request(self, method: Method, params: dict[str, Any] | None
                 ) -> tuple[dict[str, Any], int, Exchange | None]:
        # the server's own secrets (its env values, headers), never this machine's
        # environment: a replay in CI must hash a request as the recording did
        redactor = Redactor(environ={}, secrets=self._redactor_secrets)
        canonical = canonical_mcp_request(self.server.name, method, params, redactor)
        if self.recording is None:
            return canonical, 0, None
        number, exchange = self.recording.take(canonical)
        return canonical, number, exchange

    def list_tools(self) -> list[dict[str, Any]]:
        """The server's tools (``tools/list``, every page), as MCP tool objects (JSON)."""
        if self.listed is None:
            self.listed = self._list_tools()
        return self.listed

    def _list_tools(self) -> list[dict[str, Any]]:
        canonical, number, exchange = self._request("tools/list", None)
        if exchange is not None:
            return _tools_of(self.server, _answer(self.server, None, exchange))
        connection = self.connection()
        started = time.monotonic()

        async def listing(client: Any) -> dict[str, Any]:
            from pydantic import ValidationError

            tools: list[Any] = []
            cursor: str | None = None
            try:
                for _ in range(100):  # a server whose pages never end cannot hang the run
                    page = await client.list_tools(cursor=cursor)
                    tools += page.tools
                    cursor = page.next_cursor
                    if cursor is None:
                        break
            except ValidationError as exc:
                # the SDK says where, not which tool: the server's own JSON names it
                return {"__rejected__": str(exc), "raw": await _raw_listing(client)}
            return {"tools": [t.model_dump(mode="json", by_alias=True, exclude_none=True)
                              for t in tools]}

        try:
            result = _plain(connection.submit(listing).result())
        except Exception as exc:  # noqa: BLE001 (what the SDK raised says what broke: kept)
            raise _live_error(connection, exc, None) from None
        if "__rejected__" in result:
            if isinstance(result["raw"], dict):
                _tools_of(self.server, result["raw"])  # names the tool, when agentkit sees why
            raise connection.error(f"sent a tools/list result that is not MCP-shaped: "
                                   f"{' '.join(result['__rejected__'].split())}",
                                   cls=MCPProtocolError)
        tools = _tools_of(self.server, result)  # checked before it is kept
        if self.recording is not None:
            self.recording.store(number, canonical, time.monotonic() - started, result, None)
        return tools

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """The result of ``tools/call`` (an MCP ``CallToolResult`` as JSON); a JSON-RPC error
        the server answered is an :class:`MCPCallError` (the agent sees it as the tool's
        error)."""
        canonical, number, exchange = self._request("tools/call",
                                                    {"name": name, "arguments": arguments})
        if exchange is not None:
            if exchange.latency:
                await asleep(exchange.latency)
            recorded = _answer(self.server, name, exchange)
            _check_result(self.server, name, recorded)
            return recorded
        connection = self.connection()
        watch = Stopwatch.start()
        started = time.monotonic()

        async def calling(client: Any) -> dict[str, Any]:
            from mcp.shared.exceptions import MCPError

            try:
                result = await client.call_tool(name, arguments)
            except MCPError as exc:
                if exc.code in _SDK_LOCAL_CODES:
                    raise
                return {"__error__": {"code": exc.code, "message": exc.message}}
            dumped: dict[str, Any] = result.model_dump(mode="json", by_alias=True,
                                                       exclude_none=True)
            return dumped

        try:
            answer: dict[str, Any] = _plain(await await_future(connection.submit(calling)))
        except Exception as exc:  # noqa: BLE001 (what the SDK raised says what broke: kept)
            raise _live_error(connection, exc, name) from None
        # on a virtual-time loop a live call's time passed as real I/O and moved the clock
        # (by whole milliseconds; an answer already there when the loop looked, by nothing):
        # that is its latency, counted whole as the replay's sleep will count it -- not less
        # the latency of calls that overlapped it. Elsewhere the clock stood still: the real
        # time is recorded, for replays.
        if isinstance(asyncio.get_running_loop(), VirtualTimeLoop):
            latency = watch.wall
            watch.clock.count_latency(latency)
        else:
            latency = time.monotonic() - started
        error = answer.get("__error__") if isinstance(answer, dict) else None
        if error is None:
            _check_result(self.server, name, answer)
        if self.recording is not None:
            self.recording.store(number, canonical, latency, None if error else answer, error)
        if error is not None:
            raise MCPCallError(self.server.name, name, int(error["code"]), str(error["message"]))
        return answer


def _without_meta(exchange: Exchange) -> Exchange:
    """A recorded exchange whose request has no ``params._meta`` (re-hashed without it)."""
    params = exchange.request.get("params")
    if not isinstance(params, dict) or "_meta" not in params:
        return exchange
    request = {key: value for key, value in exchange.request.items() if key != "params"}
    asked = {key: value for key, value in params.items() if key != "_meta"}
    if asked:
        request["params"] = asked
    return dataclasses.replace(exchange, request=request, request_hash=request_hash(request))


async def _raw_listing(client: Any) -> Any:
    """The server's ``tools/list`` result as it sent it, unchecked (None if it cannot be had):
    only to name the tool a rejected listing got wrong. It goes below the SDK's typed API to
    its session's dispatcher (a private attribute of mcp 2.x, pinned in pyproject.toml)."""
    try:
        dispatcher = client.session._dispatcher
        raw: Any = await dispatcher.send_raw_request("tools/list", None, {})
        return raw
    except Exception:  # noqa: BLE001 (a better message is all that is lost)
        return None


def _answer(server: MCPServer, tool: str | None, exchange: Exchange) -> dict[str, Any]:
    """A recorded exchange's result, or its recorded JSON-RPC error raised."""
    if exchange.error is not None:
        raise MCPCallError(server.name, tool or "tools/list", int(exchange.error["code"]),
                           str(exchange.error.get("message", "")))
    return exchange.response or {}


def _live_error(connection: LiveConnection, exc: Exception, tool: str | None) -> Exception:
    """What a failed live request means for the run: the server's fault (it died, hung, or
    sent something the SDK could not read) as an :class:`MCPServerError` with its stderr."""
    if isinstance(exc, MCPServerError | CassetteMissError):
        return exc
    if isinstance(exc, TimeoutError):
        return connection.error(f"did not answer within {connection.server.timeout:g} s "
                                "(`timeout:`)", tool)
    if not connection.alive or _closed(exc):
        return connection.error(f"stopped: {_reason(exc)}", tool)
    if type(exc).__name__ == "ValidationError" or isinstance(exc, RuntimeError):
        return connection.error(f"sent a result that is not MCP-shaped: {_reason(exc)}", tool,
                                MCPProtocolError)
    return connection.error(f"failed: {_reason(exc)}", tool)


def _closed(exc: BaseException) -> bool:
    return getattr(exc, "code", None) in _SDK_LOCAL_CODES


def _reason(exc: BaseException) -> str:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = " ".join(str(exc).split())
    if len(text) > 400:
        text = text[:397] + "..."
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _tools_of(server: MCPServer, result: dict[str, Any]) -> list[dict[str, Any]]:
    """The tool objects of a ``tools/list`` result, each checked: a name, a description if
    any, and an input schema that is a JSON-schema object."""
    tools = result.get("tools")
    if not isinstance(tools, list):
        raise MCPProtocolError(f"MCP server `{server.name}` ({server.describe()}): its "
                               f"tools/list result has no `tools` list: {_shown(result)}")
    for tool in tools:
        name = tool.get("name") if isinstance(tool, dict) else None
        if not isinstance(name, str) or not name:
            raise MCPProtocolError(f"MCP server `{server.name}` ({server.describe()}) lists a "
                                   f"tool without a name: {_shown(tool)}")
        schema = tool.get("inputSchema")
        problem = _schema_problem(schema)
        if problem is not None:
            raise MCPProtocolError(f"MCP server `{server.name}` ({server.describe()}) offers "
                                   f"tool `{name}` with a malformed input schema ({problem}): "
                                   f"{_shown(schema)}")
        if not isinstance(tool.get("description", ""), str):
            raise MCPProtocolError(f"MCP server `{server.name}` ({server.describe()}) offers "
                                   f"tool `{name}` with a description that is not text: "
                                   f"{_shown(tool.get('description'))}")
    return tools


def _schema_problem(schema: Any) -> str | None:
    if not isinstance(schema, dict):
        return "not a JSON object"
    if schema.get("type") != "object":
        return "its `type` is not `object`: tool arguments are named"
    properties = schema.get("properties", {})
    if not isinstance(properties, dict) or not all(isinstance(v, dict | bool)
                                                   for v in properties.values()):
        return "`properties` is not a mapping of parameter schemas"
    required = schema.get("required", [])
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        return "`required` is not a list of parameter names"
    return None


def _check_result(server: MCPServer, tool: str, result: Any) -> None:
    """A ``tools/call`` result is MCP-shaped: ``content`` is a list of typed blocks (text
    blocks with text), ``isError`` a boolean, ``structuredContent`` an object."""
    problem = None
    if not isinstance(result, dict):
        problem = "it is not a JSON object"
    elif not isinstance(result.get("content"), list):
        problem = "`content` is not a list of content blocks"
    elif not isinstance(result.get("isError", False), bool):
        problem = "`isError` is not true or false"
    elif not isinstance(result.get("structuredContent", {}), dict):
        problem = "`structuredContent` is not an object"
    else:
        for index, block in enumerate(result["content"]):
            if not isinstance(block, dict) or not isinstance(block.get("type"), str):
                problem = f"content[{index}] has no `type`"
            elif block["type"] == "text" and not isinstance(block.get("text"), str):
                problem = f"content[{index}] is a text block without text"
            if problem:
                break
    if problem is not None:
        raise MCPProtocolError(f"MCP server `{server.name}` ({server.describe()}) answered "
                               f"`{tool}` with a result that is not MCP-shaped ({problem}): "
                               f"{_shown(result)}")


def _shown(value: Any) -> str:
    text = json.dumps(value, default=str, ensure_ascii=False)
    return text if len(text) <= 200 else text[:197] + "..."
