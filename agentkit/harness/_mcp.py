"""The MCP servers of a scenario's tool world (``tools: [{mcp: ...}]``), for one run.

:class:`MCPWorld` owns a run's MCP sessions: one per distinct server (several ``tools``
entries may share a server, e.g. to give some of its tools a failure schedule), each replayed
from the agent type's cassette (:func:`agentkit.scenario._layout.cassette_path`) or, while
recording, live and recorded into it. A server with ``lifetime: session`` stays up across
runs until the process ends (:func:`close_session_servers`); any other is stopped when the run
ends, whichever way it ends (:func:`open_mcp` is a context manager).
"""

from __future__ import annotations

import atexit
import copy
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from agentkit.recording import CassetteError, replayed_cassette
from agentkit.scenario._layout import cassette_path, has_mcp
from agentkit.scenario._model import Scenario, ToolSpec
from agentkit.tools.mcp import (
    LiveConnection,
    MCPRecording,
    MCPServer,
    MCPServerError,
    MCPSession,
    UnknownMCPToolError,
)
from agentkit.tools.mcp.tools import MCPTool

__all__ = ["MCPWorld", "open_mcp", "has_mcp", "mcp_servers", "server_of", "mcp_problems",
           "close_session_servers", "mcp_cassette"]


def _base(scenario: Scenario) -> Path:
    return Path(scenario.path).resolve().parent if scenario.path else Path.cwd()


def server_of(scenario: Scenario, spec: ToolSpec) -> MCPServer:
    """The server a ``tools`` entry declares (its ``cwd`` taken from the scenario's folder)."""
    mcp = spec.mcp
    assert mcp is not None
    cwd = str((_base(scenario) / (mcp.cwd or ".")).resolve()) if mcp.command is not None else None
    return MCPServer(name=mcp.server_name(), command=mcp.command, args=tuple(mcp.args),
                     env=dict(mcp.env), cwd=cwd, url=mcp.url, headers=dict(mcp.headers),
                     timeout=mcp.timeout, lifetime=mcp.lifetime)


def mcp_servers(scenario: Scenario) -> dict[str, MCPServer]:
    """The scenario's MCP servers by name, in order of first mention."""
    servers: dict[str, MCPServer] = {}
    for spec in scenario.tools:
        if spec.mcp is not None:
            servers.setdefault(spec.mcp.server_name(), server_of(scenario, spec))
    return servers


def mcp_problems(scenario: Scenario) -> list[tuple[tuple[str | int, ...], str]]:
    """Load-time checks across entries: one name, one server (two different servers under
    one name would share a cassette's requests)."""
    problems: list[tuple[tuple[str | int, ...], str]] = []
    seen: dict[str, tuple[int, MCPServer]] = {}
    for index, spec in enumerate(scenario.tools):
        if spec.mcp is None:
            continue
        server = server_of(scenario, spec)
        first = seen.setdefault(server.name, (index, server))
        if first[1].key() != server.key():
            field = ("tools", index, "mcp", "name") if spec.mcp.name else ("tools", index, "mcp")
            problems.append((field, f"MCP server name `{server.name}` is already tools."
                                    f"{first[0]}'s, a different server ({first[1].describe()});"
                                    " give each server its own `name:`"))
    return problems


def mcp_cassette(scenario: Scenario, agent_type: str) -> Path:
    """The cassette a run's MCP exchanges live in: the agent type's own (for a team, the
    team's ``cassettes/<scenario>.<agent type>.yaml``)."""
    return cassette_path(scenario, agent_type)


_session_servers: dict[tuple[object, ...], LiveConnection] = {}
_session_lock = threading.Lock()


def _session_connection(server: MCPServer) -> LiveConnection:
    with _session_lock:
        connection = _session_servers.get(server.key())
        if connection is None or connection.ended:
            connection = LiveConnection(server)
            _session_servers[server.key()] = connection
        return connection


def close_session_servers() -> None:
    """Stop every ``lifetime: session`` server (also done when the process exits)."""
    with _session_lock:
        connections = list(_session_servers.values())
        _session_servers.clear()
    for connection in connections:
        connection.close()


atexit.register(close_session_servers)


class MCPWorld:
    """The MCP sessions of one run of ``scenario`` (see the module docstring)."""

    def __init__(self, scenario: Scenario, recording: MCPRecording) -> None:
        self.scenario = scenario
        self.recording = recording
        self.sessions: dict[str, MCPSession] = {}
        for name, server in mcp_servers(scenario).items():
            # a replay starts no server: only a recording run shares a session-long one
            shared = (_session_connection(server)
                      if server.lifetime == "session" and recording.record else None)
            self.sessions[name] = MCPSession(server, recording, shared)

    def tools(self, index: int, spec: ToolSpec) -> list[MCPTool]:
        """The tools ``tools[index]`` asks for (renamed by its ``name``, when it picks one); a
        tool the server does not offer is a :class:`ScenarioError` at its place in ``only``."""
        from agentkit.scenario._loader import ScenarioError

        assert spec.mcp is not None
        session = self.sessions[spec.mcp.server_name()]
        try:
            listed = {str(tool["name"]): tool for tool in session.list_tools()}
        except MCPServerError as exc:
            raise type(exc)(f"{self.scenario.where('tools', index, 'mcp')}: tools.{index}.mcp: "
                            f"{exc}") from None
        names = spec.only if spec.only is not None else list(listed)
        tools = []
        for number, name in enumerate(names):
            if name not in listed:
                unknown = UnknownMCPToolError(session.server.name, name, list(listed))
                raise ScenarioError(f"{self.scenario.where('tools', index, 'only', number)}: "
                                    f"tools.{index}.only.{number}: {unknown}")
            try:
                tools.append(MCPTool(session, listed[name], name=spec.name,
                                     description=spec.description,
                                     return_direct=spec.return_direct))
            except ValueError as exc:
                raise ScenarioError(
                    f"{self.scenario.where('tools', index, 'mcp')}: tools.{index}.mcp: MCP "
                    f"server `{session.server.name}` offers tool `{name}`: {exc}; pick it with "
                    f"`only: [{name}]` and give it a `name:`") from None
        return tools

    def leftovers(self) -> list[str]:
        """Recorded MCP exchanges the run did not replay (a problem of the run, as unused LLM
        exchanges are)."""
        unused = self.recording.unused
        if not unused:
            return []
        return [f"the recording has {unused} MCP exchange(s) that were not replayed (the agent "
                "made fewer MCP tool calls than when it was recorded)"]

    def close(self) -> None:
        """Stop the servers this run started (``lifetime: session`` ones stay up)."""
        for session in self.sessions.values():
            session.close()


@contextmanager
def open_mcp(scenario: Scenario, agent_type: str,
             recording: MCPRecording | None = None) -> Iterator[MCPWorld | None]:
    """The run's MCP world (None when the scenario has no MCP tools), its servers stopped when
    the block ends. Without ``recording`` the agent type's cassette is replayed: no server is
    started, and a cassette that is not there is an error saying how to record it."""
    if not has_mcp(scenario):
        yield None
        return
    if recording is None:
        path = mcp_cassette(scenario, agent_type)
        try:
            cassette = replayed_cassette(path)
        except CassetteError as exc:
            if path.exists():
                raise
            raise CassetteError(
                f"{path}: no cassette of the MCP servers' exchanges for agent type "
                f"`{agent_type}` yet; record it with `agentkit record {scenario.path or scenario.name} "
                f"--agent {agent_type}` (the servers must be installed)") from exc
        # the replayed cassette is shared by every replay of the file: the recording gets a
        # copy of its own to set its lists on
        recording = MCPRecording(copy.copy(cassette), "none")
    world = MCPWorld(scenario, recording)
    try:
        yield world
    finally:
        world.close()
