"""The MCP server whose recording agentkit's replaying server serves to the MCP conformance
suite's server scenarios (tests/mcp_conformance): the tools, resources, prompts and
completions those scenarios ask for, answering what each scenario's description asks for
(``test_simple_text``, ``test_image_content``, ``test_audio_content``,
``test_embedded_resource``, ``test_multiple_content_types``, ``test_error_handling``; the
tools that log (``test_tool_with_logging``) and report progress (``test_tool_with_progress``)
while they run; the resources ``test://static-text``, ``test://static-binary`` and the
template ``test://template/{id}/data``; the prompts ``test_simple_prompt``,
``test_prompt_with_arguments``, ``test_prompt_with_embedded_resource``,
``test_prompt_with_image``; ``logging/setLevel``, ``resources/subscribe`` and ``unsubscribe`` and
``completion/complete``). Built with the
official SDK, over stdio: ``python -m mocks.mcp.conformance_server``.

``python -m mocks.mcp.conformance_server --requests REVISION`` prints instead what the suite
asks such a server at that revision (its handshake, then the tool requests, one JSON-RPC
message a line): piped into ``agentkit mcp-proxy --mode rewrite -- python -m
mocks.mcp.conformance_server``, it records ``mocks/mcp/conformance_server.<REVISION>.yaml``
(docs/mcp.md)."""

from __future__ import annotations

import asyncio
import base64
import io
import json
import struct
import sys
import warnings
import wave
import zlib
from typing import Any

from mcp.server import CacheHint
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.prompts.base import Message, UserMessage
from mcp.shared.exceptions import MCPError
from mcp.types import (
    AudioContent,
    CallToolResult,
    Completion,
    ElicitRequest,
    ElicitRequestFormParams,
    EmbeddedResource,
    EmptyResult,
    ImageContent,
    InputRequiredResult,
    SetLevelRequestParams,
    SubscribeRequestParams,
    TextContent,
    TextResourceContents,
    UnsubscribeRequestParams,
)
from mcp_types import MISSING_REQUIRED_CLIENT_CAPABILITY

warnings.simplefilter("ignore")  # the SDK's deprecation of logging at 2026-07-28

_HINT = CacheHint(ttl_ms=60_000, scope="public")
_CACHED = ("tools/list", "prompts/list", "resources/list", "resources/templates/list",
           "resources/read")
server = MCPServer("agentkit-conformance-fixture", version="1.0.0", log_level="WARNING",
                   cache_hints=dict.fromkeys(_CACHED, _HINT), subscriptions=False)


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


@server.tool(description="Logs three messages at info level while it runs.")
async def test_tool_with_logging(ctx: Context) -> str:
    for number, text in enumerate(("Tool execution started", "Tool processing data",
                                   "Tool execution completed")):
        if number:
            await asyncio.sleep(0.05)
        await ctx.log("info", text)
    return "Tool with logging executed successfully"


@server.tool(description="Logs a message at info level (2026-07-28: if the request asks for "
                         "logs).")
async def test_logging_tool(ctx: Context) -> str:
    await ctx.log("info", "test_logging_tool ran")
    return "logged"


@server.tool(description="Needs the client's sampling capability (2026-07-28).")
async def test_missing_capability(ctx: Context) -> str:
    declared = ctx.request_context.session.client_capabilities
    if declared is None or declared.sampling is None:
        raise MCPError(code=MISSING_REQUIRED_CLIENT_CAPABILITY,
                       message="test_missing_capability needs the client's sampling capability",
                       data={"requiredCapabilities": {"sampling": {}}})
    return "sampling declared"


@server.tool(description="Asks the client to confirm before it answers (2026-07-28: an "
                         "input-required result).")
async def test_streaming_elicitation(ctx: Context) -> InputRequiredResult:
    return InputRequiredResult(input_requests={"confirm": ElicitRequest(
        params=ElicitRequestFormParams(message="Go on?", requested_schema={
            "type": "object", "properties": {"ok": {"type": "boolean"}}}))})


@server.tool(description="Reports progress 0, 50 and 100 of 100 while it runs.")
async def test_tool_with_progress(ctx: Context) -> str:
    for number, progress in enumerate((0, 50, 100)):
        if number:
            await asyncio.sleep(0.05)
        await ctx.report_progress(progress, 100)
    return "Tool with progress executed successfully"


@server.resource("test://static-text", name="static-text", mime_type="text/plain",
                 description="A static text resource.")
def static_text() -> str:
    return "This is the content of the static text resource."


@server.resource("test://static-binary", name="static-binary", mime_type="image/png",
                 description="A static binary resource (a 1x1 red PNG).")
def static_binary() -> bytes:
    return base64.b64decode(_PNG)


@server.resource("test://template/{id}/data", name="template-data",
                 mime_type="application/json", description="Data for an id.")
def template_data(id: str) -> str:
    return json.dumps({"id": id, "templateTest": True, "data": f"Data for ID: {id}"})


@server.prompt(description="A simple prompt without arguments.")
def test_simple_prompt() -> list[Message]:
    return [UserMessage(TextContent(type="text", text="This is a simple prompt for testing."))]


@server.prompt(description="A prompt with two required arguments.")
def test_prompt_with_arguments(arg1: str, arg2: str) -> list[Message]:
    return [UserMessage(TextContent(
        type="text", text=f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"))]


@server.prompt(description="A prompt embedding the resource it is given.")
def test_prompt_with_embedded_resource(resourceUri: str) -> list[Message]:
    return [UserMessage(_embedded(resourceUri, "text/plain",
                                  "Embedded resource content for testing.")),
            UserMessage(TextContent(type="text",
                                    text="Please process the embedded resource above."))]


@server.prompt(description="A prompt with an image.")
def test_prompt_with_image() -> list[Message]:
    return [UserMessage(ImageContent(type="image", data=_PNG, mime_type="image/png")),
            UserMessage(TextContent(type="text", text="Please analyze the image above."))]


@server.completion()
async def complete(ref: Any, argument: Any, context: Any) -> Completion:
    values = [v for v in ("paris", "park", "party") if v.startswith(argument.value)]
    return Completion(values=values, total=len(values), has_more=False)


async def _set_level(ctx: Any, params: Any) -> EmptyResult:
    return EmptyResult()


async def _subscription(ctx: Any, params: Any) -> EmptyResult:
    return EmptyResult()


# the SDK's own server offers no decorator for these (2025-11-25 requests)
server._lowlevel_server.add_request_handler("logging/setLevel", SetLevelRequestParams, _set_level)
server._lowlevel_server.add_request_handler("resources/subscribe", SubscribeRequestParams,
                                            _subscription)
server._lowlevel_server.add_request_handler("resources/unsubscribe", UnsubscribeRequestParams,
                                            _subscription)


_META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
         "io.modelcontextprotocol/clientCapabilities": {}}


def requests(revision: str) -> list[dict[str, object]]:
    """What the conformance suite's server scenarios ask at ``revision``, each as the suite
    asks it: 2025-11-25 opens with the initialize handshake and sets the log level (info, then
    debug for the tool that logs; 2026-07-28 has no ``logging/setLevel``), 2026-07-28 opens
    with server/discover and puts a ``_meta`` on every request; then the tool list and calls
    (``test_simple_text`` without arguments, ``test_tool_with_progress`` with a progress
    token), the resources (and, at 2025-11-25, a subscription), a resource that is not there,
    the prompts and a completion."""
    modern = revision == "2026-07-28"
    asked: list[tuple[str, dict[str, Any]]] = (
        [("server/discover", {})] if modern
        else [("initialize", {"protocolVersion": revision, "capabilities": {},
                              "clientInfo": {"name": "agentkit", "version": "1"}}),
              ("logging/setLevel", {"level": "info"}),
              ("logging/setLevel", {"level": "debug"})])
    asked.append(("tools/list", {}))
    tools = ["test_simple_text", "test_image_content", "test_audio_content",
             "test_embedded_resource", "test_multiple_content_types", "test_error_handling"]
    for tool in tools:
        asked.append(("tools/call", {"name": tool} if tool == "test_simple_text"
                      else {"name": tool, "arguments": {}}))
    if not modern:
        asked.append(("tools/call", {"name": "test_tool_with_logging", "arguments": {}}))
        asked += [(method, {"uri": "test://watched-resource"})
                  for method in ("resources/subscribe", "resources/unsubscribe")]
    else:  # the stateless checks' own tools: one that logs if asked, one that needs sampling
        asked += [("tools/call", {"name": "test_logging_tool", "arguments": {},
                                  "_meta": {"io.modelcontextprotocol/logLevel": "debug"}}),
                  ("tools/call", {"name": "test_missing_capability", "arguments": {}}),
                  ("tools/call", {"name": "test_streaming_elicitation", "arguments": {},
                                  "_meta": {"io.modelcontextprotocol/clientCapabilities": {
                                      "elicitation": {}}}})]
    asked.append(("tools/call", {"name": "test_tool_with_progress", "arguments": {},
                                 "_meta": {"progressToken": "progress-test-1"}}))
    asked += [("resources/list", {}), ("resources/templates/list", {})]
    asked += [("resources/read", {"uri": uri}) for uri in (
        "test://static-text", "test://static-binary", "test://template/123/data",
        "test://nonexistent-resource-for-conformance-testing")]
    asked += [("prompts/list", {}),
              ("prompts/get", {"name": "test_simple_prompt"}),
              ("prompts/get", {"name": "test_prompt_with_arguments",
                               "arguments": {"arg1": "testValue1", "arg2": "testValue2"}}),
              ("prompts/get", {"name": "test_prompt_with_embedded_resource",
                               "arguments": {"resourceUri": "test://example-resource"}}),
              ("prompts/get", {"name": "test_prompt_with_image"}),
              ("completion/complete", {"ref": {"type": "ref/prompt",
                                               "name": "test_prompt_with_arguments"},
                                       "argument": {"name": "arg1", "value": "test"}})]
    messages: list[dict[str, object]] = []
    for number, (method, params) in enumerate(asked):
        if method != "initialize" and modern:
            params = {**params, "_meta": {**_META, **params.get("_meta", {})}}
        messages.append({"jsonrpc": "2.0", "id": number, "method": method,
                         **({"params": params} if params or modern else {})})
        if method == "initialize":
            messages.append({"jsonrpc": "2.0", "method": "notifications/initialized"})
    return messages


if __name__ == "__main__":
    if sys.argv[1:2] == ["--requests"]:
        print("\n".join(json.dumps(message) for message in requests(sys.argv[2])))
    else:
        server.run("stdio")
