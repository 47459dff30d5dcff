"""What a trace says happened, in agentkit's terms: the user turns, each LLM call's answer, each
tool call, read from spans in any of the vocabularies GenAI traces are written in.

* the OpenTelemetry GenAI semantic conventions (agentkit's own exports, and instrumentations
  that follow them): ``gen_ai.operation.name``, ``gen_ai.input.messages``/``output.messages``
  (``parts``), ``gen_ai.tool.call.arguments``/``result``;
* OpenInference (Arize Phoenix, its LlamaIndex and OpenAI Agents instrumentations):
  ``openinference.span.kind`` and the flattened ``llm.input_messages.N.message.*``;
* the flattened ``gen_ai.prompt.N.*`` / ``gen_ai.completion.N.*`` of OpenLLMetry.

A trace that cannot become a conversation is a :class:`TraceImportError` (bad input) saying
what is missing and how to capture it.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from agentkit.core.errors import BadInputError
from agentkit.otel import genai as g
from agentkit.otel.otlp_json import SpanData

__all__ = ["TraceImportError", "Exchange", "ToolRecord", "ImportedTurn", "ImportedRun",
           "conversation", "CAPTURE_HINT"]

SpanRole = Literal["llm", "tool", "agent", "other"]

CAPTURE_HINT = ("capture message content when you trace: `agentkit run/report --otel-content`; "
                "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true for OpenTelemetry "
                "GenAI instrumentations; OpenInference (Phoenix) records it unless "
                "OPENINFERENCE_HIDE_INPUT_MESSAGES/OUTPUT_MESSAGES (or HIDE_INPUTS/OUTPUTS) are "
                "set; TRACELOOP_TRACE_CONTENT=true for OpenLLMetry")


class TraceImportError(BadInputError):
    """A trace cannot be imported; the message says what is missing and how to get it."""


@dataclass
class Exchange:
    """One LLM call: what the model answered (text and tool calls), its usage and latency."""

    content: str
    tool_calls: list[tuple[str, dict[str, Any]]]
    usage: dict[str, int] | None
    latency: float
    stream: bool = False


@dataclass
class ToolRecord:
    """One tool call as recorded: name, arguments, output or error, latency."""

    name: str
    args: dict[str, Any]
    output: str
    error: str | None
    latency: float
    start: int = 0


@dataclass
class ImportedTurn:
    """A user turn: its message, the LLM calls and tool calls it made, its answer."""

    user: str
    exchanges: list[Exchange] = field(default_factory=list)
    tools: list[ToolRecord] = field(default_factory=list)
    answer: str | None = None
    error: str | None = None
    """The error the turn ended on (its agent span's status), instead of an answer."""


@dataclass
class ImportedRun:
    """A trace read as a conversation."""

    trace_id: str
    name: str
    turns: list[ImportedTurn]
    model: str
    tool_specs: dict[str, dict[str, Any]]
    agent_type: str | None = None
    """The agentkit agent type that made the run (agentkit's own exports only)."""
    params: dict[str, Any] = field(default_factory=dict)
    """That agent type's parameters in the scenario (its limits, forced tools...; agentkit's
    own exports only: ``agentkit.agent_params``)."""
    return_direct: list[str] = field(default_factory=list)
    """The tools whose output was the answer (``agentkit.return_direct``)."""


# ---------------------------------------------------------------------------- spans
def _role(span: SpanData) -> SpanRole:
    a = span.attributes
    operation = a.get(g.OPERATION)
    if operation in ("chat", "text_completion", "generate_content"):
        return "llm"
    if operation == "execute_tool":
        return "tool"
    if operation in ("invoke_agent", "invoke_workflow"):
        return "agent"
    kind = str(a.get(g.OI_KIND, "")).upper()
    if kind == "LLM":
        return "llm"
    if kind == "TOOL":
        return "tool"
    if kind == "AGENT":
        return "agent"
    if a.get("llm.request.type") in ("chat", "completion"):
        return "llm"
    traceloop = a.get("traceloop.span.kind")
    if traceloop == "tool":
        return "tool"
    if traceloop in ("agent", "workflow"):
        return "agent"
    return "other"


def _has_genai(span: SpanData) -> bool:
    return any(key.startswith(("gen_ai.", "openinference.", "llm.")) for key in span.attributes)


def _loads(value: Any) -> Any:
    """A structured attribute: as given, or parsed when it was written as JSON text."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value


def _args(value: Any) -> dict[str, Any]:
    parsed = _loads(value)
    if isinstance(parsed, Mapping):
        return dict(parsed)
    if parsed in (None, ""):
        return {}
    return {"input": parsed}


def _indexed(attributes: Mapping[str, Any], prefix: str) -> list[dict[str, Any]]:
    """``prefix.0.x.y = v`` flattened attributes as a list of nested dicts (by index)."""
    items: dict[int, dict[str, Any]] = {}
    pattern = re.compile(re.escape(prefix) + r"\.(\d+)\.(.+)")
    for key, value in attributes.items():
        match = pattern.fullmatch(key)
        if match is None:
            continue
        node = items.setdefault(int(match.group(1)), {})
        parts = match.group(2).split(".")
        for part in parts[:-1]:
            child = node.setdefault(part, {})
            node = child if isinstance(child, dict) else {}
        node[parts[-1]] = value
    return [items[i] for i in sorted(items)]


def _nested(attributes: Mapping[str, Any], prefix: str) -> dict[str, Any]:
    """``prefix.a.b = v`` flattened attributes as one nested dict (``{"a": {"b": v}}``)."""
    found: dict[str, Any] = {}
    for key, value in attributes.items():
        if not key.startswith(prefix + "."):
            continue
        node = found
        parts = key[len(prefix) + 1:].split(".")
        for part in parts[:-1]:
            child = node.setdefault(part, {})
            node = child if isinstance(child, dict) else {}
        node[parts[-1]] = value
    return found


def _is_call(span: SpanData) -> bool:
    """Whether an LLM span is a call of the model: a GenAI ``chat`` span always; an
    OpenInference one when it has messages or token counts (LlamaIndex also marks the
    preparation of a call as an LLM span)."""
    a = span.attributes
    if a.get(g.OPERATION) in ("chat", "text_completion", "generate_content"):
        return True
    return any(key.startswith(("llm.input_messages.", "llm.output_messages.",
                               "llm.token_count.", "gen_ai.prompt.", "gen_ai.completion.",
                               "gen_ai.usage.")) for key in a)


@dataclass
class _Message:
    role: str
    text: str = ""
    tool_calls: list[tuple[str, dict[str, Any], str | None]] = field(default_factory=list)
    responds_to: str | None = None


def _from_parts(message: Mapping[str, Any]) -> _Message:
    """A GenAI conventions message (``role`` and ``parts``), or an OpenAI-style one."""
    found = _Message(str(message.get("role", "")))
    texts: list[str] = []
    parts = message.get("parts")
    if isinstance(parts, list):
        response_text: str | None = None
        for part in parts:
            if not isinstance(part, Mapping):
                continue
            kind = part.get("type")
            if kind == "text" and isinstance(part.get("content"), str):
                embedded = _embedded_message(part["content"])
                if embedded is not None and found.role == "assistant":
                    inner = _from_parts(embedded)
                    texts.append(inner.text)
                    found.tool_calls += inner.tool_calls
                else:
                    texts.append(part["content"])
            elif kind == "tool_call":
                found.tool_calls.append((str(part.get("name")), _args(part.get("arguments")),
                                         part.get("id")))
            elif kind == "tool_call_response":
                found.responds_to = part.get("id")
                # the schema says `response`; some instrumentations write `result`
                response = part.get("response", part.get("result"))
                response_text = (response if isinstance(response, str)
                                 else json.dumps(response, ensure_ascii=False))
        if response_text is not None:
            texts = [response_text]  # a text part beside it repeats it
    else:
        content = message.get("content")
        if isinstance(content, str):
            texts.append(content)
        for call in message.get("tool_calls") or ():
            if isinstance(call, Mapping):
                function = _function(call)
                found.tool_calls.append((str(function.get("name")),
                                         _args(function.get("arguments")), call.get("id")))
        found.responds_to = message.get("tool_call_id")
    found.text = "".join(texts)
    return found


def _embedded_message(text: str) -> Mapping[str, Any] | None:
    """An OpenAI message dict written as a text part's content (JSON, or a Python dict's
    repr, as an instrumentation of the OpenAI Agents SDK does for replies with tool calls),
    or None. Only literals are read (``ast.literal_eval``), never code."""
    stripped = text.strip()
    if not (stripped.startswith("{") and stripped.endswith("}") and "tool_calls" in stripped):
        return None
    for parse in (json.loads, ast.literal_eval):
        try:
            value = parse(stripped)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
        if isinstance(value, Mapping) and "tool_calls" in value and "parts" not in value:
            return {**value, "content": value.get("content") or ""}
    return None


def _from_openinference(item: Mapping[str, Any]) -> _Message:
    message = item.get("message", {}) if isinstance(item.get("message"), Mapping) else {}
    found = _Message(str(message.get("role", "")))
    content = message.get("content")
    if isinstance(content, str):
        found.text = content
    else:
        found.text = "".join(str(c.get("message_content", {}).get("text", ""))
                             for c in (message.get("contents") or {}).values()
                             if isinstance(c, Mapping)
                             and isinstance(c.get("message_content"), Mapping))
    calls = message.get("tool_calls") or {}
    for _, call in sorted(calls.items(), key=lambda kv: int(kv[0]) if str(kv[0]).isdigit() else 0):
        tool_call = call.get("tool_call", {}) if isinstance(call, Mapping) else {}
        function = tool_call.get("function", {}) if isinstance(tool_call, Mapping) else {}
        found.tool_calls.append((str(function.get("name")), _args(function.get("arguments")),
                                 tool_call.get("id")))
    found.responds_to = message.get("tool_call_id")
    return found


def _from_traceloop(item: Mapping[str, Any]) -> _Message:
    found = _Message(str(item.get("role", "")), str(item.get("content") or ""))
    calls = item.get("tool_calls") or {}
    if isinstance(calls, Mapping):
        for _, call in sorted(calls.items()):
            if isinstance(call, Mapping):
                found.tool_calls.append((str(call.get("name")), _args(call.get("arguments")),
                                         call.get("id")))
    found.responds_to = item.get("tool_call_id")
    return found


def _messages(span: SpanData, direction: Literal["input", "output"]) -> list[_Message] | None:
    """The span's input or output messages in whichever vocabulary it has (None: none)."""
    a = span.attributes
    structured = _loads(a.get(g.INPUT_MESSAGES if direction == "input" else g.OUTPUT_MESSAGES))
    if isinstance(structured, list) and structured:
        return [_from_parts(m) for m in structured if isinstance(m, Mapping)]
    flat = _indexed(a, f"llm.{direction}_messages")
    if flat:
        return [_from_openinference(item) for item in flat]
    legacy = _indexed(a, "gen_ai.prompt" if direction == "input" else "gen_ai.completion")
    if legacy:
        return [_from_traceloop(item) for item in legacy]
    return None


def _usage(span: SpanData) -> dict[str, int] | None:
    a = span.attributes
    for prompt, completion in ((g.INPUT_TOKENS, g.OUTPUT_TOKENS),
                               (g.OI_PROMPT_TOKENS, g.OI_COMPLETION_TOKENS),
                               ("gen_ai.usage.prompt_tokens", "gen_ai.usage.completion_tokens")):
        if isinstance(a.get(prompt), int) and isinstance(a.get(completion), int):
            return {"prompt_tokens": a[prompt], "completion_tokens": a[completion],
                    "total_tokens": a[prompt] + a[completion]}
    return None


def _tool_record(span: SpanData) -> ToolRecord:
    a = span.attributes
    name = a.get(g.TOOL_NAME) or a.get(g.OI_TOOL_NAME) or a.get("traceloop.entity.name") \
        or span.name.removeprefix("execute_tool ").strip()
    if g.TOOL_ARGUMENTS in a:
        args = _args(a[g.TOOL_ARGUMENTS])
    else:
        args = _args(a.get(g.OI_INPUT, a.get("traceloop.entity.input")))
        if set(args) <= {"args", "kwargs"} and isinstance(args.get("kwargs"), Mapping) \
                and not args.get("args"):
            args = dict(args["kwargs"])  # LlamaIndex's FunctionTool input: {"kwargs": {...}}
    if g.TOOL_RESULT in a:
        result: Any = a[g.TOOL_RESULT]
    else:
        result = _tool_output(a.get(g.OI_OUTPUT, a.get("traceloop.entity.output", "")))
    output = result if isinstance(result, str) else json.dumps(result, ensure_ascii=False)
    error = None
    if span.status_code == 2:
        error = span.status_message or next(
            (str(attrs.get("exception.message", "")) for name_, _, attrs in span.events
             if name_ == "exception"), "") or "the tool failed"
        error = error.removeprefix("Error: ")
    return ToolRecord(str(name), args, output, error, span.duration, span.start)


def _function(item: Mapping[str, Any]) -> Mapping[str, Any]:
    """An OpenAI-style ``{"type": "function", "function": {...}}`` item's function, or the item
    itself when it is flat."""
    inner = item.get("function")
    return inner if isinstance(inner, Mapping) else item


def _tool_output(value: Any) -> Any:
    """A tool span's ``output.value``: the text of a serialised tool output (``content``, or
    its text ``blocks``, or ``raw_output``) when it is one, else the value."""
    parsed = _loads(value)
    if isinstance(parsed, Mapping):
        if isinstance(parsed.get("content"), str):
            return parsed["content"]
        blocks = parsed.get("blocks")
        if isinstance(blocks, list) and blocks and all(isinstance(b, Mapping) for b in blocks):
            return "".join(str(b.get("text", "")) for b in blocks)
        if "raw_output" in parsed:
            return parsed["raw_output"]
    return value


def _tool_specs(spans: Iterable[SpanData]) -> dict[str, dict[str, Any]]:
    """Tool names with description and JSON-schema parameters, wherever the trace has them."""
    specs: dict[str, dict[str, Any]] = {}
    for span in spans:
        a = span.attributes
        defined = _loads(a.get(g.TOOL_DEFINITIONS))
        for item in defined if isinstance(defined, list) else ():
            if isinstance(item, Mapping) and item.get("name"):
                function = _function(item)
                specs.setdefault(str(function.get("name")), {
                    "description": function.get("description") or "",
                    "parameters": _loads(function.get("parameters")) or {}})
        for item in _indexed(a, "llm.tools"):
            schema = _loads((item.get("tool") or {}).get("json_schema"))
            if isinstance(schema, Mapping):
                function = _function(schema)
                if function.get("name"):
                    specs.setdefault(str(function["name"]), {
                        "description": function.get("description") or "",
                        "parameters": function.get("parameters") or {}})
        if _role(span) == "tool":
            name = str(a.get(g.TOOL_NAME) or a.get(g.OI_TOOL_NAME) or "")
            if name and name not in specs and (a.get(g.TOOL_DESCRIPTION)
                                               or a.get("tool.description")):
                parameters = _loads(a.get("tool.json_schema")) or _nested(a, "tool.parameters")
                specs[name] = {"description": a.get(g.TOOL_DESCRIPTION)
                               or a.get("tool.description") or "",
                               "parameters": parameters or {}}
    return specs


# ---------------------------------------------------------------------------- the run
def _pick_trace(spans: Sequence[SpanData], trace_id: str | None, source: str) -> list[SpanData]:
    traces: dict[str, list[SpanData]] = {}
    for span in spans:
        traces.setdefault(span.trace_id, []).append(span)
    if trace_id is not None:
        chosen = [t for t in traces if t.startswith(trace_id.lower())]
        if len(chosen) != 1:
            raise TraceImportError(f"{source}: --trace {trace_id}: "
                                   f"{'no' if not chosen else 'more than one'} trace of the "
                                   f"file has that id; it has: {_listing(traces)}")
        return traces[chosen[0]]
    if len(traces) > 1:
        raise TraceImportError(f"{source}: the file holds {len(traces)} traces; choose one with "
                               f"--trace ID: {_listing(traces)}")
    return next(iter(traces.values()))


def _listing(traces: Mapping[str, Sequence[SpanData]]) -> str:
    lines = []
    for trace_id, spans in traces.items():
        ids = {s.span_id for s in spans}
        root = next((s for s in spans if s.parent_id not in ids), spans[0])
        sample = root.attributes.get("agentkit.sample")
        lines.append(f"\n  {trace_id}  {root.name}"
                     + (f" (sample {sample})" if sample is not None else ""))
    return "".join(lines[:50]) + ("\n  ..." if len(lines) > 50 else "")


def _outermost(spans: Sequence[SpanData], role: SpanRole,
               by_id: Mapping[str, SpanData]) -> list[SpanData]:
    """Spans of ``role`` with no ancestor of the same role (an instrumented framework often
    nests the client library's LLM span inside its own)."""
    chosen = []
    for span in spans:
        if _role(span) != role or (role == "llm" and not _is_call(span)):
            continue
        parent = by_id.get(span.parent_id or "")
        while parent is not None and (_role(parent) != role
                                      or (role == "llm" and not _is_call(parent))):
            parent = by_id.get(parent.parent_id or "")
        if parent is None:
            chosen.append(span)
    return sorted(chosen, key=lambda s: s.start)


def _check_tree(by_id: Mapping[str, SpanData], source: str) -> None:
    """A :class:`TraceImportError` naming the spans of a parent cycle, if the trace has one
    (every walk up the parents then ends: a trace is a tree)."""
    settled: set[str] = set()
    for span_id in by_id:
        path: list[str] = []
        seen: set[str] = set()
        node = by_id.get(span_id)
        while node is not None and node.span_id not in settled:
            if node.span_id in seen:
                loop = [*path[path.index(node.span_id):], node.span_id]
                raise TraceImportError(
                    f"{source}: the spans' parents form a cycle ({' -> '.join(loop[:8])}"
                    f"{' -> ...' if len(loop) > 8 else ''}): a trace is a tree; the export "
                    "is corrupt, export the trace again")
            seen.add(node.span_id)
            path.append(node.span_id)
            node = by_id.get(node.parent_id or "")
        settled.update(path)


def _under(span: SpanData, root: SpanData, by_id: Mapping[str, SpanData]) -> bool:
    node: SpanData | None = span
    while node is not None:
        if node.span_id == root.span_id:
            return True
        node = by_id.get(node.parent_id or "")
    return False


def _last_user(messages: Sequence[_Message]) -> str | None:
    users = [m.text for m in messages if m.role == "user"]
    return users[-1] if users else None


def conversation(spans: Sequence[SpanData], source: str,
                 trace_id: str | None = None) -> ImportedRun:
    """The conversation of one trace of ``spans`` (the only one, or ``trace_id``); ``source``
    names the file in errors."""
    trace = _pick_trace(spans, trace_id, source)
    if not any(_has_genai(s) for s in trace):
        names = ", ".join(sorted({s.name for s in trace})[:6])
        raise TraceImportError(
            f"{source}: none of the trace's {len(trace)} spans ({names}) has GenAI attributes "
            "(gen_ai.operation.name, openinference.span.kind, llm.*): it was not written by a "
            "GenAI instrumentation. Trace the agent with one that follows the OpenTelemetry "
            "GenAI semantic conventions or OpenInference (agentkit run --otel-out, Phoenix's "
            "instrumentations), then export again")
    by_id = {s.span_id: s for s in trace}
    _check_tree(by_id, source)
    llms = _outermost(trace, "llm", by_id)
    if not llms:
        found = sorted({_role(s) for s in trace} - {"other"})
        raise TraceImportError(
            f"{source}: the trace has no LLM call span (gen_ai.operation.name `chat`, or "
            f"openinference.span.kind LLM){' -- only ' + ' and '.join(found) + ' spans' if found else ''}"
            "; a scenario replays the model's answers, so trace the LLM client too (its "
            "instrumentation, or the framework's with LLM spans on)")
    outputs = {s.span_id: _messages(s, "output") for s in llms}
    missing = [s for s in llms if not outputs[s.span_id]]
    if missing:
        raise TraceImportError(
            f"{source}: {len(missing)} of the trace's {len(llms)} LLM call spans (the first: "
            f"`{missing[0].name}`, span {missing[0].span_id}) carry no output messages: message "
            f"content was not captured. Re-run with content on and export again: {CAPTURE_HINT}")
    tools = _outermost(trace, "tool", by_id)
    turn_roots = _outermost(trace, "agent", by_id)
    groups: list[tuple[SpanData | None, list[SpanData], list[SpanData]]] = []
    if turn_roots:
        for root in turn_roots:
            groups.append((root, [s for s in llms if _under(s, root, by_id)],
                           [s for s in tools if _under(s, root, by_id)]))
        groups = [group for group in groups if group[1]]
    if not groups:
        groups = [(None, llms, tools)]
    turns = [_turn(root, calls, tool_spans, outputs, source) for root, calls, tool_spans in groups]
    model = next((str(s.attributes.get(key)) for s in llms
                  for key in (g.REQUEST_MODEL, g.RESPONSE_MODEL, g.OI_MODEL,
                              "gen_ai.request.model") if s.attributes.get(key)), "imported")
    ids = {s.span_id for s in trace}
    root = next((s for s in trace if s.parent_id not in ids), trace[0])
    agent_type = root.attributes.get("agentkit.agent_type")
    params = _loads(root.attributes.get("agentkit.agent_params", "{}"))
    direct = _loads(root.attributes.get("agentkit.return_direct", "[]"))
    return ImportedRun(trace_id=trace[0].trace_id, name=root.name, turns=turns, model=model,
                       tool_specs=_tool_specs(trace),
                       agent_type=str(agent_type) if agent_type else None,
                       params=dict(params) if isinstance(params, Mapping) else {},
                       return_direct=[str(n) for n in direct] if isinstance(direct, list)
                       else [])


def _turn(root: SpanData | None, llms: Sequence[SpanData], tools: Sequence[SpanData],
          outputs: Mapping[str, list[_Message] | None], source: str) -> ImportedTurn:
    first_input = _messages(llms[0], "input") or []
    user = None
    if root is not None:
        user = _last_user(_messages(root, "input") or [])
        if user is None and isinstance(root.attributes.get(g.OI_INPUT), str):
            value = _loads(root.attributes[g.OI_INPUT])
            user = value if isinstance(value, str) else None
    user = user if user is not None else _last_user(first_input)
    if user is None:
        raise TraceImportError(
            f"{source}: cannot tell the user's message of the turn that starts with LLM span "
            f"`{llms[0].name}` (span {llms[0].span_id}): its input messages have no user "
            f"message. {CAPTURE_HINT}")
    turn = ImportedTurn(user=user)
    issued: list[tuple[str, dict[str, Any], str | None]] = []
    for span in llms:
        said = outputs[span.span_id] or []
        reply = next((m for m in said if m.role in ("assistant", "model", "")), said[0])
        turn.exchanges.append(Exchange(
            content=reply.text, tool_calls=[(name, args) for name, args, _ in reply.tool_calls],
            usage=_usage(span), latency=span.duration,
            stream=bool(span.attributes.get(g.REQUEST_STREAM))))
        issued += reply.tool_calls
    turn.tools = [_tool_record(span) for span in tools]
    answers = _tool_answers(llms)
    if not turn.tools and issued:
        turn.tools = [ToolRecord(name, args, answers.get(str(call_id), ""), None, 0.0)
                      for name, args, call_id in issued]
    else:  # what the model was told a call returned is the output that matters to a replay
        pending = list(issued)
        for span, record in zip(tools, turn.tools, strict=True):
            match = next((c for c in pending if c[0] == record.name and c[1] == record.args),
                         None)
            if match is None:
                continue
            pending.remove(match)
            if (g.TOOL_RESULT not in span.attributes and record.error is None
                    and str(match[2]) in answers):
                record.output = answers[str(match[2])]
    if root is not None:
        answer = _messages(root, "output")
        if answer:
            turn.answer = answer[-1].text
        if root.status_code == 2 and root.status_message:
            turn.error = root.status_message
        elif isinstance(root.attributes.get(g.OI_OUTPUT), str):
            turn.answer = root.attributes[g.OI_OUTPUT]
    if turn.answer is None:
        turn.answer = turn.exchanges[-1].content
    return turn


def _tool_answers(llms: Sequence[SpanData]) -> dict[str, str]:
    """What each tool call returned, by call id, as the conversation told the model (the tool
    messages of later requests)."""
    answers: dict[str, str] = {}
    for span in llms:
        for message in _messages(span, "input") or []:
            if message.responds_to is not None:
                answers.setdefault(str(message.responds_to), message.text)
    return answers
