"""An MCP server as agentkit sees it: how to start or reach it, and what goes wrong with it."""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from agentkit.core.errors import InfrastructureError

__all__ = ["MCPServer", "MCPServerError", "MCPCallError", "MCPProtocolError", "Lifetime"]

Lifetime = Literal["run", "session"]


class MCPServerError(InfrastructureError):
    """A live MCP server did not start, died, hung or broke the protocol: nobody's agent is at
    fault. The message names the server (its command or URL), the tool when there is one, and
    the last lines the server wrote to stderr."""


class MCPProtocolError(MCPServerError):
    """A server answered with something that is not MCP-shaped (a malformed tool schema, a
    result without content blocks)."""


class MCPCallError(RuntimeError):
    """The server answered a ``tools/call`` with a JSON-RPC error (an unknown tool, arguments it
    refused): the agent sees it as the tool's error, as it would a raising function tool."""

    def __init__(self, server: str, tool: str, code: int, message: str) -> None:
        super().__init__(f"MCP server `{server}` refused `{tool}` (JSON-RPC error {code}): "
                         f"{message}")
        self.code = code
        self.message = message


_PYTHONS = frozenset({"python", "python3", f"python3.{sys.version_info.minor}"})


@dataclass(frozen=True)
class MCPServer:
    """An MCP server: started over stdio (``command``, ``args``, ``env``, ``cwd``) or reached
    over streamable HTTP (``url``, ``headers``). ``name`` tells its exchanges apart in a
    cassette; ``timeout`` bounds each live request in real seconds; ``lifetime`` is how long a
    live server lives: one ``run`` (the default) or the whole ``session`` (the process).

    ``env`` values and ``headers`` are secrets as far as recordings go: neither is written to
    a cassette (requests and results are redacted of their values)."""

    name: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    timeout: float = 60.0
    lifetime: Lifetime = "run"

    def __post_init__(self) -> None:
        if (self.command is None) == (self.url is None):
            raise ValueError(f"MCP server `{self.name}`: give exactly one of `command` (stdio) "
                             "or `url` (streamable HTTP)")
        if not self.name:
            raise ValueError("an MCP server needs a `name`")
        object.__setattr__(self, "args", tuple(self.args))
        if not 0 < self.timeout <= 86_400:
            raise ValueError(f"MCP server `{self.name}`: timeout must be between 0 and 86400 "
                             f"seconds, got {self.timeout!r}")

    @property
    def transport(self) -> Literal["stdio", "http"]:
        return "stdio" if self.command is not None else "http"

    def describe(self) -> str:
        """The command line or URL, for messages (never ``env`` values or ``headers``)."""
        if self.command is not None:
            return shlex.join([self.command, *self.args])
        from agentkit.recording import public_url

        return public_url(self.url) or "<url>"

    def key(self) -> tuple[object, ...]:
        """What makes two declarations the same server (one live process for both)."""
        return (self.name, self.command, self.args, tuple(sorted(self.env.items())), self.cwd,
                self.url, tuple(sorted(self.headers.items())))

    def secrets(self) -> dict[str, str]:
        """Values that must not reach a cassette: its ``env`` values and ``headers``."""
        found = {f"{self.name}.env.{k}": v for k, v in self.env.items()}
        found.update({f"{self.name}.headers.{k}": v for k, v in self.headers.items()})
        return found

    def executable(self) -> str:
        """The command to start: ``python`` is this interpreter; a bare name is looked up in
        this interpreter's own scripts folder first (a virtual environment need not be
        activated for the servers installed in it), then on ``PATH``; a relative path is
        taken from ``cwd``. A command that is not there is an :class:`MCPServerError`."""
        assert self.command is not None
        command = self.command
        if command in _PYTHONS:
            return sys.executable
        if os.sep in command or (os.altsep and os.altsep in command):
            path = Path(command)
            if not path.is_absolute() and self.cwd is not None:
                path = Path(self.cwd) / path
            if path.is_file() and os.access(path, os.X_OK):
                return str(path)
            raise MCPServerError(f"MCP server `{self.name}`: cannot start `{self.describe()}`: "
                                 f"{path} is not an executable file")
        scripts = Path(sys.executable).parent
        found = shutil.which(command, path=str(scripts)) or shutil.which(command)
        if found is None:
            raise MCPServerError(
                f"MCP server `{self.name}`: cannot start `{self.describe()}`: command "
                f"`{command}` not found (looked in {scripts} and on PATH); install it (the "
                "bundled servers: pip install 'agentkit[mcp-servers]') or fix `command`")
        return found
