"""MCP servers of the test suite: one that misbehaves on purpose, and a wrapper that runs the
real ``mcp-server-git`` on a fresh temporary repository."""
