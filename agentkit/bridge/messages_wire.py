"""The Anthropic Messages API wire, server side: ``POST /v1/messages`` as the bridge reads and
answers it.

A request is read into agentkit's one LLM protocol (:class:`~agentkit.llms.openai_wire.
WireRequest`: our messages and tools), so the model behind the bridge answers it as any other:

* ``system`` (a string, or ``text`` blocks) -> a system message first; ``messages`` (roles
  ``user`` and ``assistant``; content a string or blocks) -> our messages: ``text`` blocks,
  ``image`` blocks (base64 or URL sources, user messages), ``tool_use`` blocks (an assistant's
  tool calls, ``input`` the arguments object) and ``tool_result`` blocks (each a tool message
  answering its ``tool_use_id``, before the user's own text of the same message);
  ``thinking`` blocks are skipped (and a tool result's ``is_error`` flag: the model gets its
  content). Any other block is a 400 naming it;
* ``tools`` (``{"name", "description", "input_schema"}``; a server tool such as web search is a
  400), ``tool_choice`` (``auto``, ``any`` -> required, ``tool`` -> that tool, ``none``;
  ``disable_parallel_tool_use``);
* ``max_tokens`` (required, as Anthropic requires it), ``temperature``, ``top_p``, ``top_k``,
  ``stop_sequences`` (``stop``) as the request's options; ``metadata`` and ``service_tier`` are
  accepted and ignored.

An answer is a ``message`` object (a ``text`` block, then a ``tool_use`` block per tool call;
``stop_reason`` ``end_turn`` or ``tool_use``) or, streamed, its events in Anthropic's order:
``message_start``, per block ``content_block_start``, its ``text_delta`` or
``input_json_delta`` deltas and ``content_block_stop``, then ``message_delta`` (stop reason and
output tokens) and ``message_stop``. Errors are Anthropic's shape: ``{"type": "error",
"error": {"type": "invalid_request_error", "message": ...}}``.
"""

from __future__ import annotations

import base64
import binascii
import functools
import json
from collections.abc import Callable
from typing import Any

from agentkit.llms.mock import split_words
from agentkit.llms.openai_wire import RequestError, WireReply, WireRequest, WireTool
from agentkit.llms.types import (
    ChatMessage,
    ImageBlock,
    MessageRole,
    TextBlock,
    ToolSelection,
    Usage,
    fix_message,
)

__all__ = ["WIRE", "parse_messages_request", "message_body", "message_events", "error_body"]

WIRE = "anthropic_messages"

_MAPPED = ("model", "messages", "system", "max_tokens", "tools", "tool_choice", "stream",
           "temperature", "top_p", "top_k", "stop_sequences")
_IGNORED = ("metadata", "service_tier")
_ARGUMENT_PIECE = 8
#: Anthropic's error type for each HTTP status the bridge answers with.
_ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error",
                403: "permission_error", 404: "not_found_error", 413: "request_too_large",
                429: "rate_limit_error", 529: "overloaded_error"}


def error_body(status: int, message: str) -> dict[str, Any]:
    """An Anthropic-style error body for an answer of ``status``."""
    kind = _ERROR_TYPES.get(status, "invalid_request_error" if status < 500 else "api_error")
    return {"type": "error", "error": {"type": kind, "message": message}}


def parse_messages_request(content: bytes,
                           known: dict[str, list[ChatMessage]]) -> WireRequest:
    """A ``/v1/messages`` request body read into our messages and tools (module docstring);
    anything malformed or unsupported is a :class:`RequestError` (400) naming the field.
    ``known``: what each message read before made, by its JSON (a client sends its whole
    conversation every time: each message is read once, and is the same objects after)."""
    try:
        body = json.loads(content or b"null")
    except (ValueError, RecursionError):
        raise RequestError("the request body is not valid JSON; send a Messages API request "
                           "as a JSON object") from None
    if not isinstance(body, dict):
        raise RequestError("the request body must be a JSON object with `model`, `max_tokens` "
                           "and `messages`")
    for key in body:
        if key not in (*_MAPPED, *_IGNORED):
            raise RequestError(f"{key}: Extra inputs are not permitted (the agentkit bridge "
                               f"reads {', '.join(_MAPPED)})", param=key)
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise RequestError("model: Field required (a string)", param="model")
    max_tokens = body.get("max_tokens")
    if max_tokens is None:
        raise RequestError("max_tokens: Field required (a positive integer)",
                           param="max_tokens")
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
        raise RequestError(f"max_tokens: must be a positive integer, got {json.dumps(max_tokens)}",
                           param="max_tokens")
    stream = body.get("stream", False)
    if not isinstance(stream, bool):
        raise RequestError(f"stream must be true or false, got {json.dumps(stream)}",
                           param="stream")
    head = _system(body.get("system"), known)
    tools = _tools(body.get("tools"))
    choice, parallel = _tool_choice(body.get("tool_choice"), tools)
    options: dict[str, Any] = {"max_tokens": max_tokens}
    options.update({key: body[key] for key in ("temperature", "top_p", "top_k")
                    if body.get(key) is not None})
    if body.get("stop_sequences") is not None:
        stops = body["stop_sequences"]
        if not isinstance(stops, list) or not all(isinstance(s, str) for s in stops):
            raise RequestError("stop_sequences must be an array of strings",
                               param="stop_sequences")
        options["stop"] = stops
    return WireRequest(body=body, model=model, messages=[*head, *_messages(body.get("messages"),
                                                                           known)],
                       tools=tools, tool_choice=choice, parallel_tool_calls=parallel,
                       stream=stream, include_usage=True, options=options, wire=WIRE,
                       conversation=len(head))


def _known(known: dict[str, list[ChatMessage]], key: str,
           build: Callable[[], list[ChatMessage]]) -> list[ChatMessage]:
    found = known.get(key)
    if found is None:
        found = known[key] = build()
        for message in found:  # read once, sent again as the same objects
            fix_message(message)
    return found


def _system(value: Any, known: dict[str, list[ChatMessage]]) -> list[ChatMessage]:
    if value is None or value == "" or value == []:
        return []
    if isinstance(value, list) and all(isinstance(b, dict) and b.get("type") == "text"
                                       and isinstance(b.get("text"), str) for b in value):
        text = "\n".join(block["text"] for block in value)
    elif isinstance(value, str):
        text = value
    else:
        raise RequestError("system must be a string or an array of text blocks",
                           param="system")
    return _known(known, json.dumps({"system": text}),
                  lambda: [ChatMessage(role=MessageRole.SYSTEM, content=text)])


# --------------------------------------------------------------------------- messages
def _messages(value: Any, known: dict[str, list[ChatMessage]]) -> list[ChatMessage]:
    if not isinstance(value, list) or not value:
        raise RequestError("messages: must be a non-empty array of messages", param="messages")
    read: list[ChatMessage] = []
    for index, message in enumerate(value):
        read += _known(known, json.dumps(message, sort_keys=True),
                       functools.partial(_message, message, f"messages.{index}"))
    return read


def _message(data: Any, where: str) -> list[ChatMessage]:
    """Our messages for one Anthropic message: a user message's tool results come first, each a
    tool message; an assistant's tool_use blocks are its message's tool calls."""
    if not isinstance(data, dict):
        raise RequestError(f"{where}: a message must be an object with `role` and `content`",
                           param=where)
    role = data.get("role")
    if role not in ("user", "assistant"):
        raise RequestError(f"{where}.role: {json.dumps(role)} is not one of user, assistant "
                           "(the system prompt is the top-level `system`)", param=f"{where}.role")
    content = data.get("content")
    if isinstance(content, str):
        return [ChatMessage(role=MessageRole(role), content=content)]
    if not isinstance(content, list):
        raise RequestError(f"{where}.content: must be a string or an array of content blocks",
                           param=f"{where}.content")
    results: list[ChatMessage] = []
    blocks: list[TextBlock | ImageBlock] = []
    calls: list[ToolSelection] = []
    for index, block in enumerate(content):
        at = f"{where}.content.{index}"
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text" and isinstance(block.get("text"), str):
            blocks.append(TextBlock(text=block["text"]))
        elif kind in ("thinking", "redacted_thinking") and role == "assistant":
            continue
        elif kind == "image" and role == "user":
            blocks.append(_image(block.get("source"), at))
        elif kind == "tool_use" and role == "assistant":
            calls.append(_tool_use(block, at))
        elif kind == "tool_result" and role == "user":
            results.append(_tool_result(block, at))
        else:
            allowed = ("text, image and tool_result" if role == "user"
                       else "text, tool_use and thinking")
            raise RequestError(f"{at}: unsupported content block {json.dumps(kind)} (a {role} "
                               f"message takes {allowed} blocks)", param=at)
    if role == "assistant":
        text = "".join(b.text for b in blocks if isinstance(b, TextBlock))
        return [ChatMessage(role=MessageRole.ASSISTANT, content=text,
                            additional_kwargs={"tool_calls": calls} if calls else {})]
    if not blocks:
        return results
    if len(blocks) == 1 and isinstance(blocks[0], TextBlock):
        return [*results, ChatMessage(role=MessageRole.USER, content=blocks[0].text)]
    return [*results, ChatMessage(role=MessageRole.USER, blocks=blocks)]


def _image(source: Any, where: str) -> ImageBlock:
    kind = source.get("type") if isinstance(source, dict) else None
    if kind == "url" and isinstance(source.get("url"), str):
        return ImageBlock(url=source["url"])
    if kind == "base64" and isinstance(source.get("data"), str):
        try:
            raw = base64.b64decode(source["data"], validate=True)
        except (binascii.Error, ValueError):
            raise RequestError(f"{where}.source.data: not valid base64",
                               param=f"{where}.source.data") from None
        mime = source.get("media_type")
        return ImageBlock(image=raw, image_mimetype=mime if isinstance(mime, str) else None)
    raise RequestError(f"{where}.source: an image needs a base64 source ({{\"type\": \"base64\", "
                       "\"media_type\": ..., \"data\": ...}}) or a url source",
                       param=f"{where}.source")


def _tool_use(block: dict[str, Any], where: str) -> ToolSelection:
    tool_id, name, arguments = block.get("id"), block.get("name"), block.get("input")
    if not isinstance(tool_id, str) or not isinstance(name, str) or not isinstance(arguments,
                                                                                    dict):
        raise RequestError(f"{where}: a tool_use block needs `id`, `name` and `input` (an "
                           "object)", param=where)
    return ToolSelection(tool_id=tool_id, tool_name=name, tool_kwargs=arguments)


def _tool_result(block: dict[str, Any], where: str) -> ChatMessage:
    tool_id, content = block.get("tool_use_id"), block.get("content", "")
    if not isinstance(tool_id, str) or not tool_id:
        raise RequestError(f"{where}.tool_use_id: a tool_result must say which tool_use it "
                           "answers", param=f"{where}.tool_use_id")
    if isinstance(content, list) and all(isinstance(b, dict) and b.get("type") == "text"
                                         and isinstance(b.get("text"), str) for b in content):
        content = "".join(b["text"] for b in content)
    if not isinstance(content, str):
        raise RequestError(f"{where}.content: a tool result is a string or text blocks",
                           param=f"{where}.content")
    return ChatMessage(role=MessageRole.TOOL, content=content,
                       additional_kwargs={"tool_call_id": tool_id})


def _tools(value: Any) -> list[WireTool] | None:
    if value is None or value == []:
        return None
    if not isinstance(value, list):
        raise RequestError("tools: must be an array of {\"name\", \"description\", "
                           "\"input_schema\"} objects", param="tools")
    tools = []
    for index, item in enumerate(value):
        where = f"tools.{index}"
        if not isinstance(item, dict) or item.get("type", "custom") != "custom":
            kind = item.get("type") if isinstance(item, dict) else None
            raise RequestError(f"{where}: the agentkit bridge serves client tools only (got "
                               f"{json.dumps(kind)}); a tool is {{\"name\": ..., "
                               "\"input_schema\": {...}}", param=where)
        name, description = item.get("name"), item.get("description") or ""
        schema = item.get("input_schema")
        if not isinstance(name, str) or not name:
            raise RequestError(f"{where}.name: Field required", param=f"{where}.name")
        if not isinstance(description, str):
            raise RequestError(f"{where}.description: must be a string",
                               param=f"{where}.description")
        if not isinstance(schema, dict):
            raise RequestError(f"{where}.input_schema: Field required (a JSON schema object)",
                               param=f"{where}.input_schema")
        tools.append(WireTool(name, description, schema))
    return tools


def _tool_choice(value: Any, tools: list[WireTool] | None
                 ) -> tuple[str | dict[str, Any] | None, bool]:
    """The tool choice in agentkit's (chat-completions) terms, and whether parallel calls are
    allowed."""
    if value is None:
        return None, True
    kind = value.get("type") if isinstance(value, dict) else None
    if kind not in ("auto", "any", "tool", "none"):
        raise RequestError("tool_choice must be {\"type\": \"auto\" | \"any\" | \"tool\" | "
                           "\"none\"}", param="tool_choice")
    parallel = not value.get("disable_parallel_tool_use", False)
    if kind != "tool":
        return {"auto": "auto", "any": "required", "none": "none"}[kind], parallel
    name = value.get("name")
    offered = [tool.metadata.name for tool in tools or []]
    if name not in offered:
        raise RequestError(f"tool_choice.name: {json.dumps(name)} is not among the offered "
                           f"tools ({', '.join(offered) or 'none'})", param="tool_choice.name")
    return {"type": "function", "function": {"name": name}}, parallel


# --------------------------------------------------------------------------- answers
def _blocks(reply: WireReply) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if reply.text or not reply.calls:
        blocks.append({"type": "text", "text": reply.text})
    blocks += [{"type": "tool_use", "id": call_id, "name": name, "input": json.loads(arguments)}
               for call_id, name, arguments in reply.calls]
    return blocks


def _envelope(request: WireRequest, number: int) -> dict[str, Any]:
    return {"id": f"msg_{number:024d}", "type": "message", "role": "assistant",
            "model": request.model}


def _stop_reason(reply: WireReply) -> str:
    return "tool_use" if reply.calls else "end_turn"


def message_body(request: WireRequest, reply: WireReply, usage: Usage, *,
                 number: int) -> dict[str, Any]:
    """The ``message`` object answering ``request`` with ``reply``."""
    return {**_envelope(request, number), "content": _blocks(reply),
            "stop_reason": _stop_reason(reply), "stop_sequence": None,
            "usage": {"input_tokens": usage.prompt_tokens,
                      "output_tokens": usage.completion_tokens}}


def message_events(request: WireRequest, reply: WireReply, usage: Usage, *,
                   number: int) -> list[dict[str, Any]]:
    """The streamed events of the message (module docstring)."""
    events: list[dict[str, Any]] = [{"type": "message_start", "message": {
        **_envelope(request, number), "content": [], "stop_reason": None,
        "stop_sequence": None, "usage": {"input_tokens": usage.prompt_tokens,
                                         "output_tokens": 0}}}]
    for index, block in enumerate(_blocks(reply)):
        if block["type"] == "text":
            pieces = reply.chunks if reply.chunks is not None else split_words(reply.text)
            events.append({"type": "content_block_start", "index": index,
                           "content_block": {"type": "text", "text": ""}})
            events += [{"type": "content_block_delta", "index": index,
                        "delta": {"type": "text_delta", "text": piece}} for piece in pieces]
        else:
            arguments = json.dumps(block["input"])
            events.append({"type": "content_block_start", "index": index,
                           "content_block": {**block, "input": {}}})
            events += [{"type": "content_block_delta", "index": index, "delta": {
                "type": "input_json_delta", "partial_json": arguments[i:i + _ARGUMENT_PIECE]}}
                for i in range(0, len(arguments), _ARGUMENT_PIECE)]
        events.append({"type": "content_block_stop", "index": index})
    events += [{"type": "message_delta", "delta": {"stop_reason": _stop_reason(reply),
                                                   "stop_sequence": None},
                "usage": {"output_tokens": usage.completion_tokens}},
               {"type": "message_stop"}]
    return events
