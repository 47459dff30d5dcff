"""What an MCP server wrote to stderr reaches an error bounded: only the end of the file is
read, the last lines each cut, however much the server wrote (before: 300 MB of stderr was read
whole, took minutes and gigabytes, and became a 300 MB message)."""

from __future__ import annotations

import tracemalloc

from agentkit.tools.mcp import LiveConnection, MCPServer
from agentkit.tools.mcp.live import STDERR_LINE_CHARS, STDERR_LINES


def test_an_error_shows_a_bounded_tail_of_a_huge_stderr_read_from_its_end():
    connection = LiveConnection(MCPServer(name="loud", command="loud-server"))
    try:
        with connection._stderr_path.open("w") as stderr:
            for _ in range(64):
                stderr.write(("noise " * 50_000) + "\n")  # 64 lines of 300 KB: 19 MB
            stderr.write(("detail " * 200 + "\n") * 3)  # 1,400 characters each
            stderr.write("loud: the last words\n")
        tracemalloc.start()
        try:
            message = str(connection.error("did not answer"))
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    finally:
        connection._stderr_path.unlink()

    assert message.splitlines()[-1] == "    loud: the last words"
    assert len(message) < STDERR_LINES * (STDERR_LINE_CHARS + 40) + 200
    assert message.count("... (1,400 characters)") == 3
    assert peak < 2 << 20
