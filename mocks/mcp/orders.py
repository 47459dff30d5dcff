"""An MCP server written with the official SDK's ``MCPServer`` (the ``mcp`` package, which
agentkit's dev install brings): ``python -m mocks.mcp.orders``. It serves both protocol eras,
as servers built on the SDK do -- a 2025 client through the initialize handshake, a 2026-07-28
client through ``server/discover`` and the ``_meta`` it stamps on every request -- so a
client's recording through ``agentkit mcp-proxy`` can be tested without the ``mcp-servers``
extra.

Tools: ``lookup_order(order_id)`` describes an order of a fixed table; an order that is not
there is the tool's error (an ``isError`` result)."""

from __future__ import annotations

ORDERS = {"7": "a kettle, 40.00 EUR, delivered", "8": "a lamp, 25.50 EUR, on its way"}


def main() -> None:
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    server = MCPServer("orders", version="1.0")

    @server.tool(description="Look an order up by its number.")
    def lookup_order(order_id: str) -> str:
        if order_id not in ORDERS:
            raise ToolError(f"no order {order_id}")
        return f"order {order_id}: {ORDERS[order_id]}"

    server.run("stdio")


if __name__ == "__main__":
    main()
