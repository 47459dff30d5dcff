"""The OpenAI Responses API wire, server side: ``POST /v1/responses`` as the bridge reads and
answers it (the chat-completions wire is :mod:`agentkit.llms.openai_wire`).

A request is read into agentkit's one LLM protocol -- our messages and tools
(:class:`~agentkit.llms.openai_wire.WireRequest`) -- so the model behind the bridge (a script, a
cassette, the live model recording) answers it as it answers any other:

* ``instructions`` -> a system message first; ``input`` (a string, or items) -> the messages:
  ``message`` items (roles ``user``, ``system``, ``developer``, ``assistant``; ``input_text``,
  ``output_text``, ``refusal`` and ``input_image`` parts), ``function_call`` items (joined to the
  assistant message before them, as one reply's calls) and ``function_call_output`` items (tool
  messages); ``reasoning`` items are skipped (a model behind the bridge has no reasoning to
  resume). Any other item is a 400 naming it;
* ``previous_response_id`` -> the conversation of that response (its input and output, kept by
  the bridge: :meth:`~agentkit.bridge.Bridge.conversation`) before this input; its
  ``instructions`` are not carried over, as OpenAI's are not;
* function ``tools`` (flat: ``{"type": "function", "name", "description", "parameters"}``),
  ``tool_choice``, ``parallel_tool_calls``; a hosted tool (web search, file search...) is a 400;
* what decides the answer as chat-completions options: ``temperature``, ``top_p``,
  ``max_output_tokens`` (``max_tokens``), ``text.format`` (``response_format``),
  ``text.verbosity``, ``reasoning.effort`` (``reasoning_effort``), ``top_logprobs``;
  bookkeeping (``store``, ``metadata``, ``include``, ``truncation``...) is accepted and ignored.

An answer is a ``response`` object (a ``message`` output item with the text, then a
``function_call`` item per tool call) or, streamed, its events in the official order:
``response.created``, ``response.in_progress``, per item ``response.output_item.added``, its
content part or argument deltas and their ``.done``, ``response.output_item.done``, and
``response.completed`` with the whole response; each event names its ``type`` on the SSE
``event:`` line and carries a ``sequence_number``.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Sequence
from typing import Any

from agentkit.llms.mock import split_words
from agentkit.llms.openai_wire import (
    RequestError,
    WireReply,
    WireRequest,
    WireTool,
    checked_tool,
    chosen_tool,
    image_block,
    tool_selection,
)
from agentkit.llms.types import (
    ChatMessage,
    ImageBlock,
    MessageRole,
    TextBlock,
    Usage,
    fix_message,
)

__all__ = ["WIRE", "parse_responses_request", "response_body", "response_events",
           "named_sse_body"]

WIRE = "openai_responses"

_MAPPED = ("model", "input", "instructions", "tools", "tool_choice", "parallel_tool_calls",
           "stream", "stream_options", "previous_response_id", "temperature", "top_p",
           "max_output_tokens", "text", "reasoning", "top_logprobs", "background")
_IGNORED = ("user", "metadata", "store", "service_tier", "safety_identifier",
            "prompt_cache_key", "prompt_cache_retention", "prompt_cache_options", "include",
            "truncation", "max_tool_calls", "context_management")
_UNSUPPORTED = {"conversation": "the bridge keeps no Conversations objects: chain responses "
                                "with previous_response_id, or send the whole input",
                "prompt": "the bridge has no stored prompts: send instructions and input"}
_ROLES = {"user": MessageRole.USER, "system": MessageRole.SYSTEM,
          "developer": MessageRole.SYSTEM, "assistant": MessageRole.ASSISTANT}
_ARGUMENT_PIECE = 8

Previous = Callable[[str], Sequence[ChatMessage] | None]


def parse_responses_request(content: bytes, known: dict[str, ChatMessage],
                            previous: Previous) -> WireRequest:
    """A ``/v1/responses`` request body read into our messages and tools (module docstring);
    anything malformed or unsupported is a :class:`RequestError` (400) naming the field.
    ``known``: messages read before, by their JSON (one object per message, as
    :func:`~agentkit.llms.openai_wire.from_openai_messages` keeps them); ``previous``: the
    conversation of a response id (None: unknown)."""
    try:
        body = json.loads(content or b"null")
    except (ValueError, RecursionError):
        raise RequestError("the request body is not valid JSON; send a Responses API request "
                           "as a JSON object") from None
    if not isinstance(body, dict):
        raise RequestError("the request body must be a JSON object with `model` and `input`")
    for key in body:
        if key in _UNSUPPORTED:
            raise RequestError(f"{key}: not supported by the agentkit bridge ("
                               f"{_UNSUPPORTED[key]})", param=key)
        if key not in (*_MAPPED, *_IGNORED):
            raise RequestError(f"Unrecognized request argument supplied: {key}", param=key)
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise RequestError("you must provide a model parameter (a string)", param="model")
    if body.get("background"):
        raise RequestError("background: the agentkit bridge answers in the foreground only",
                           param="background")
    stream = _flag(body, "stream", False)
    instructions = body.get("instructions")
    if instructions is not None and not isinstance(instructions, str):
        raise RequestError("instructions must be a string", param="instructions")
    head: list[ChatMessage] = []
    if instructions:
        head.append(_known(known, {"instructions": instructions},
                           lambda: ChatMessage(role=MessageRole.SYSTEM, content=instructions)))
    earlier: list[ChatMessage] = []
    previous_id = body.get("previous_response_id")
    if previous_id is not None:
        found = previous(previous_id) if isinstance(previous_id, str) else None
        if found is None:
            raise RequestError(f"Previous response with id {json.dumps(previous_id)} not found "
                               "(the bridge keeps the responses it gave in this run)",
                               param="previous_response_id", code="previous_response_not_found")
        earlier = list(found)
    if "input" not in body:
        raise RequestError("input: missing (a string, or an array of input items)",
                           param="input")
    messages = [*head, *earlier, *_input(body["input"], known)]
    tools = _tools(body.get("tools"))
    return WireRequest(
        body=body, model=model, messages=messages, tools=tools,
        tool_choice=_tool_choice(body.get("tool_choice"), tools),
        parallel_tool_calls=_flag(body, "parallel_tool_calls", True), stream=stream,
        include_usage=True, options=_options(body), wire=WIRE, conversation=len(head))


def _flag(body: dict[str, Any], key: str, default: bool) -> bool:
    value = body.get(key)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise RequestError(f"{key} must be true or false, got {json.dumps(value)}", param=key)
    return value


def _known(known: dict[str, ChatMessage], raw: Any,
           build: Callable[[], ChatMessage]) -> ChatMessage:
    key = json.dumps(raw, sort_keys=True)
    found = known.get(key)
    if found is None:
        found = known[key] = build()
        fix_message(found)  # read once, sent again as the same object (from_openai_messages)
    return found


# --------------------------------------------------------------------------- input items
def _input(value: Any, known: dict[str, ChatMessage]) -> list[ChatMessage]:
    if isinstance(value, str):
        return [_known(known, {"role": "user", "content": value},
                       lambda: ChatMessage(role=MessageRole.USER, content=value))]
    if not isinstance(value, list):
        raise RequestError("input must be a string or an array of input items", param="input")
    units: list[list[tuple[int, dict[str, Any]]]] = []  # the items of each message
    open_reply = False  # whether function calls join the last unit (an assistant reply)
    for index, item in enumerate(value):
        where = f"input[{index}]"
        if not isinstance(item, dict):
            raise RequestError(f"{where}: an input item must be an object", param=where)
        kind = item.get("type", "message" if "role" in item else None)
        if kind == "reasoning":
            continue
        if kind == "function_call" and open_reply:
            units[-1].append((index, item))
            continue
        if kind not in ("message", "function_call", "function_call_output"):
            raise RequestError(f"{where}: unsupported input item type {json.dumps(kind)} (the "
                               "agentkit bridge reads message, function_call and "
                               "function_call_output items)", param=f"{where}.type")
        units.append([(index, item)])
        open_reply = kind == "function_call" or (kind == "message"
                                                 and item.get("role") == "assistant")
    return [_known(known, [item for _, item in unit], functools.partial(_message, unit))
            for unit in units]


def _message(unit: list[tuple[int, dict[str, Any]]]) -> ChatMessage:
    index, first = unit[0]
    where = f"input[{index}]"
    kind = first.get("type", "message")
    if kind == "function_call_output":
        call_id = first.get("call_id")
        if not isinstance(call_id, str) or not call_id:
            raise RequestError(f"{where}.call_id: a function_call_output must say which call "
                               "it answers", param=f"{where}.call_id")
        return ChatMessage(role=MessageRole.TOOL, content=_output_text(first.get("output"),
                                                                       f"{where}.output"),
                           additional_kwargs={"tool_call_id": call_id})
    calls = [_call(item, f"input[{at}]") for at, item in unit if item.get("type")
             == "function_call"]
    if kind == "function_call":
        return ChatMessage(role=MessageRole.ASSISTANT, content="",
                           additional_kwargs={"tool_calls": calls})
    role = _ROLES.get(first.get("role"))  # type: ignore[arg-type]
    if role is None:
        raise RequestError(f"{where}.role: {json.dumps(first.get('role'))} is not one of "
                           f"{', '.join(_ROLES)}", param=f"{where}.role")
    content = first.get("content")
    extra = {"tool_calls": calls} if calls else {}
    if isinstance(content, str):
        return ChatMessage(role=role, content=content, additional_kwargs=extra)
    blocks = _parts(content, f"{where}.content", images=role == MessageRole.USER)
    if len(blocks) == 1 and isinstance(blocks[0], TextBlock):
        return ChatMessage(role=role, content=blocks[0].text, additional_kwargs=extra)
    return ChatMessage(role=role, blocks=blocks, additional_kwargs=extra)


def _parts(parts: Any, where: str, *, images: bool) -> list[TextBlock | ImageBlock]:
    if not isinstance(parts, list):
        raise RequestError(f"{where} must be a string or an array of content parts",
                           param=where)
    blocks: list[TextBlock | ImageBlock] = []
    for index, part in enumerate(parts):
        at = f"{where}[{index}]"
        kind = part.get("type") if isinstance(part, dict) else None
        if kind in ("input_text", "output_text") and isinstance(part.get("text"), str):
            blocks.append(TextBlock(text=part["text"]))
        elif kind == "refusal" and isinstance(part.get("refusal"), str):
            blocks.append(TextBlock(text=part["refusal"]))
        elif kind == "input_image" and images and isinstance(part.get("image_url"), str):
            blocks.append(image_block({"url": part["image_url"], "detail": part.get("detail")},
                                      at))
        else:
            allowed = "input_text and input_image (with an image_url)" if images else \
                "input_text, output_text and refusal"
            raise RequestError(f"{at}: unsupported content part {json.dumps(kind)} (this "
                               f"message takes {allowed} parts)", param=at)
    return blocks


def _output_text(output: Any, where: str) -> str:
    if isinstance(output, str):
        return output
    if isinstance(output, list) and all(isinstance(p, dict) and p.get("type") in (
            "input_text", "output_text") and isinstance(p.get("text"), str) for p in output):
        return "".join(p["text"] for p in output)
    raise RequestError(f"{where}: a function call's output must be a string (or input_text "
                       "parts)", param=where)


def _call(item: dict[str, Any], where: str) -> Any:
    call_id, name, arguments = item.get("call_id"), item.get("name"), item.get("arguments")
    if not isinstance(call_id, str) or not isinstance(name, str) or not isinstance(arguments,
                                                                                    str):
        raise RequestError(f"{where}: a function_call item needs `call_id`, `name` and "
                           "`arguments` (a JSON string)", param=where)
    return tool_selection(call_id, name, arguments)


# --------------------------------------------------------------------------- tools, options
def _tools(value: Any) -> list[WireTool] | None:
    if value is None or value == []:
        return None
    if not isinstance(value, list):
        raise RequestError("tools must be an array of {\"type\": \"function\", \"name\": ...} "
                           "objects", param="tools")
    tools = []
    for index, item in enumerate(value):
        where = f"tools[{index}]"
        kind = item.get("type") if isinstance(item, dict) else None
        if kind != "function":
            raise RequestError(f"{where}: the agentkit bridge serves function tools only (got "
                               f"{json.dumps(kind)}); a tool is {{\"type\": \"function\", "
                               "\"name\": ..., \"parameters\": {...}}", param=where)
        tools.append(checked_tool(where, item.get("name"), item.get("description") or "",
                                  item.get("parameters")))
    return tools


def _tool_choice(value: Any, tools: list[WireTool] | None) -> str | dict[str, Any] | None:
    if value is None or value in ("auto", "none", "required"):
        return value  # type: ignore[no-any-return]
    name = value.get("name") if isinstance(value, dict) and value.get("type") == "function" \
        else None
    if not isinstance(name, str):
        raise RequestError("tool_choice must be \"auto\", \"none\", \"required\" or "
                           "{\"type\": \"function\", \"name\": ...}", param="tool_choice")
    return chosen_tool(name, tools)


def _options(body: dict[str, Any]) -> dict[str, Any]:
    """What decides the answer, as chat-completions options (module docstring)."""
    options = {key: body[key] for key in ("temperature", "top_p", "top_logprobs")
               if body.get(key) is not None}
    if body.get("max_output_tokens") is not None:
        options["max_tokens"] = body["max_output_tokens"]
    text = body.get("text")
    if text is not None:
        if not isinstance(text, dict):
            raise RequestError("text must be an object ({\"format\": {...}})", param="text")
        form = text.get("format")
        kind = form.get("type") if isinstance(form, dict) else None
        if isinstance(form, dict) and kind == "json_schema":
            schema = {key: form[key] for key in ("name", "schema", "strict", "description")
                      if key in form}
            options["response_format"] = {"type": "json_schema", "json_schema": schema}
        elif kind == "json_object":
            options["response_format"] = {"type": "json_object"}
        elif form is not None and kind != "text":
            raise RequestError("text.format.type must be text, json_object or json_schema",
                               param="text.format")
        if text.get("verbosity") is not None:
            options["verbosity"] = text["verbosity"]
    reasoning = body.get("reasoning")
    if isinstance(reasoning, dict) and reasoning.get("effort") is not None:
        options["reasoning_effort"] = reasoning["effort"]
    return options


# --------------------------------------------------------------------------- answers
def usage_body(usage: Usage) -> dict[str, Any]:
    return {"input_tokens": usage.prompt_tokens, "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": usage.completion_tokens,
            "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": usage.total_tokens}


def _items(reply: WireReply, number: int) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    if reply.text or not reply.calls:
        items.append({"id": f"msg_{number}", "type": "message", "status": "completed",
                      "role": "assistant", "content": [_text_part(reply.text)]})
    items += [{"id": f"fc_{number}_{index}", "type": "function_call", "status": "completed",
               "call_id": call_id, "name": name, "arguments": arguments}
              for index, (call_id, name, arguments) in enumerate(reply.calls)]
    return items


def _text_part(text: str) -> dict[str, Any]:
    return {"type": "output_text", "text": text, "annotations": [], "logprobs": []}


def response_body(request: WireRequest, reply: WireReply | None, usage: Usage | None, *,
                  number: int, created: int) -> dict[str, Any]:
    """The ``response`` object answering ``request`` with ``reply`` (``None``: the response as
    it begins, in progress and without output)."""
    body = request.body
    text = body.get("text") if isinstance(body.get("text"), dict) else {}
    return {
        "id": f"resp_{number}", "object": "response", "created_at": created,
        "status": "completed" if reply is not None else "in_progress",
        "background": False, "error": None, "incomplete_details": None,
        "instructions": body.get("instructions"),
        "max_output_tokens": body.get("max_output_tokens"), "model": request.model,
        "output": _items(reply, number) if reply is not None else [],
        "parallel_tool_calls": request.parallel_tool_calls,
        "previous_response_id": body.get("previous_response_id"),
        "reasoning": {"effort": None, "summary": None}, "store": body.get("store", True),
        "temperature": body.get("temperature", 1.0),
        "text": {"format": {"type": "text"}, **(text or {})},
        "tool_choice": body.get("tool_choice", "auto"), "tools": body.get("tools") or [],
        "top_p": body.get("top_p", 1.0), "truncation": body.get("truncation", "disabled"),
        "usage": usage_body(usage) if reply is not None and usage is not None else None,
        "user": None, "metadata": body.get("metadata") or {}}


def response_events(request: WireRequest, reply: WireReply, usage: Usage, *, number: int,
                    created: int) -> list[dict[str, Any]]:
    """The streamed events of the response (module docstring), numbered in order."""
    started = response_body(request, None, None, number=number, created=created)
    events: list[dict[str, Any]] = [{"type": "response.created", "response": started},
                                     {"type": "response.in_progress", "response": started}]
    for index, item in enumerate(_items(reply, number)):
        events.append({"type": "response.output_item.added", "output_index": index,
                       "item": _begun(item)})
        at = {"item_id": item["id"], "output_index": index}
        if item["type"] == "message":
            pieces = reply.chunks if reply.chunks is not None else split_words(reply.text)
            events.append({"type": "response.content_part.added", **at, "content_index": 0,
                           "part": _text_part("")})
            events += [{"type": "response.output_text.delta", **at, "content_index": 0,
                        "delta": piece, "logprobs": []} for piece in pieces]
            events += [{"type": "response.output_text.done", **at, "content_index": 0,
                        "text": reply.text, "logprobs": []},
                       {"type": "response.content_part.done", **at, "content_index": 0,
                        "part": item["content"][0]}]
        else:
            arguments = item["arguments"]
            events += [{"type": "response.function_call_arguments.delta", **at,
                        "delta": arguments[i:i + _ARGUMENT_PIECE]}
                       for i in range(0, len(arguments), _ARGUMENT_PIECE)]
            events.append({"type": "response.function_call_arguments.done", **at,
                           "name": item["name"], "arguments": arguments})
        events.append({"type": "response.output_item.done", "output_index": index,
                       "item": item})
    events.append({"type": "response.completed", "response": response_body(
        request, reply, usage, number=number, created=created)})
    return [{**event, "sequence_number": number} for number, event in enumerate(events)]


def _begun(item: dict[str, Any]) -> dict[str, Any]:
    """An output item as it is added: in progress, its content still empty."""
    if item["type"] == "message":
        return {**item, "status": "in_progress", "content": []}
    return {**item, "status": "in_progress", "arguments": ""}


def named_sse_body(events: Sequence[dict[str, Any]]) -> bytes:
    """Server-sent events, each named by its ``type`` on an ``event:`` line (the Responses and
    Messages APIs' streams; no ``[DONE]`` after them)."""
    return "".join(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n"
                   for event in events).encode()
