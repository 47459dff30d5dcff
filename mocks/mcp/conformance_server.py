"""The MCP server whose recording agentkit's replaying server serves to the MCP conformance
suite's server scenarios (tests/mcp_conformance): the tools those scenarios call, answering
what each scenario's description asks for (``test_simple_text``, ``test_image_content``,
``test_audio_content``, ``test_embedded_resource``, ``test_multiple_content_types``,
``test_error_handling``). Built with the official SDK, over stdio:
``python -m mocks.mcp.conformance_server``.

``python -m mocks.mcp.conformance_server --requests REVISION`` prints instead what the suite
asks such a server at that revision (its handshake, then the tool requests, one JSON-RPC
message a line): piped into ``agentkit mcp-proxy --mode rewrite -- python -m
mocks.mcp.conformance_server``, it records ``mocks/mcp/conformance_server.<REVISION>.yaml``
(docs/mcp.md)."""

from __future__ import annotations

import base64
import io
import json
import struct
import sys
import wave
import zlib

from mcp.server.mcpserver import MCPServer
from mcp.types import (
    AudioContent,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    TextContent,
    TextResourceContents,
)

server = MCPServer("agentkit-conformance-fixture", version="1.0.0", log_level="WARNING")


def _red_pixel_png() -> str:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)  # 1x1, 8-bit RGB
    pixels = zlib.compress(b"\x00\xff\x00\x00")
    png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels)
           + chunk(b"IEND", b""))
    return base64.b64encode(png).decode("ascii")


def _silent_wav() -> str:
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as file:
        file.setnchannels(1)
        file.setsampwidth(2)
        file.setframerate(8000)
        file.writeframes(b"\x00\x00" * 80)  # 10 ms of silence
    return base64.b64encode(buffer.getvalue()).decode("ascii")


_PNG = _red_pixel_png()
_WAV = _silent_wav()


@server.tool(description="Answers a simple text block.")
def test_simple_text() -> list[TextContent]:
    return [TextContent(type="text", text="This is a simple text response for testing.")]


@server.tool(description="Answers an image block (a 1x1 red PNG).")
def test_image_content() -> list[ImageContent]:
    return [ImageContent(type="image", data=_PNG, mime_type="image/png")]


@server.tool(description="Answers an audio block (10 ms of silence as WAV).")
def test_audio_content() -> list[AudioContent]:
    return [AudioContent(type="audio", data=_WAV, mime_type="audio/wav")]


def _embedded(uri: str, mime: str, text: str) -> EmbeddedResource:
    return EmbeddedResource(type="resource", resource=TextResourceContents(
        uri=uri, mime_type=mime, text=text))


@server.tool(description="Answers an embedded text resource.")
def test_embedded_resource() -> list[EmbeddedResource]:
    return [_embedded("test://embedded-resource", "text/plain",
                      "This is an embedded resource content.")]


@server.tool(description="Answers a text, an image and an embedded resource block.")
def test_multiple_content_types() -> list[TextContent | ImageContent | EmbeddedResource]:
    return [TextContent(type="text", text="Multiple content types test:"),
            ImageContent(type="image", data=_PNG, mime_type="image/png"),
            _embedded("test://mixed-content-resource", "application/json",
                      '{"test":"data","value":123}')]


@server.tool(description="Always fails: answers a result with isError.")
def test_error_handling() -> CallToolResult:
    return CallToolResult(is_error=True, content=[TextContent(
        type="text", text="This tool intentionally returns an error for testing")])


_META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
         "io.modelcontextprotocol/clientCapabilities": {}}


def requests(revision: str) -> list[dict[str, object]]:
    """What the conformance suite's tool scenarios ask at ``revision``: 2025-11-25 opens with
    the initialize handshake, 2026-07-28 with server/discover and a ``_meta`` on every
    request; ``test_simple_text`` is called without arguments, as the suite calls it."""
    modern = revision == "2026-07-28"
    meta: dict[str, object] = {"_meta": _META} if modern else {}
    messages: list[dict[str, object]] = (
        [{"jsonrpc": "2.0", "id": 0, "method": "server/discover", "params": meta}] if modern
        else [{"jsonrpc": "2.0", "id": 0, "method": "initialize",
               "params": {"protocolVersion": revision, "capabilities": {},
                          "clientInfo": {"name": "agentkit", "version": "1"}}},
              {"jsonrpc": "2.0", "method": "notifications/initialized"}])
    messages.append({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": meta})
    tools = ["test_simple_text", "test_image_content", "test_audio_content",
             "test_embedded_resource", "test_multiple_content_types", "test_error_handling"]
    for number, tool in enumerate(tools, 2):
        arguments = {} if tool == "test_simple_text" else {"arguments": {}}
        messages.append({"jsonrpc": "2.0", "id": number, "method": "tools/call",
                         "params": {"name": tool, **arguments, **meta}})
    return messages


if __name__ == "__main__":
    if sys.argv[1:2] == ["--requests"]:
        print("\n".join(json.dumps(message) for message in requests(sys.argv[2])))
    else:
        server.run("stdio")
