"""An old import path: these names moved to :mod:`agentkit.harness`
(``agentkit.harness._mcp``), as agentkit.scenario is the file format only; importing them
from here keeps working."""

from agentkit.harness._mcp import (
    MCPWorld,
    close_session_servers,
    has_mcp,
    mcp_cassette,
    mcp_problems,
    mcp_servers,
    open_mcp,
    server_of,
)

__all__ = ["MCPWorld", "open_mcp", "has_mcp", "mcp_servers", "server_of", "mcp_problems",
           "close_session_servers", "mcp_cassette"]
