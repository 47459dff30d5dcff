"""The attribute names agentkit writes and reads, and GenAI messages in the conventions' shape.

agentkit follows the OpenTelemetry GenAI semantic conventions of semantic-conventions
v1.41.1 (status: Development), the last release of the main repository that holds them before
they moved to their own repository. Spans also carry ``openinference.span.kind`` (and a few
OpenInference attributes) so that Arize Phoenix shows them as agent, LLM and tool spans;
importing reads both vocabularies.

This module needs no OpenTelemetry package: the importer works without the ``otel`` extra.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["SEMCONV_VERSION", "genai_messages", "genai_output", "tool_definitions", "dumps"]

SEMCONV_VERSION = "1.41.1"
"""The semantic-conventions release whose GenAI conventions the spans follow."""

# GenAI semantic conventions
OPERATION = "gen_ai.operation.name"
PROVIDER = "gen_ai.provider.name"
AGENT_NAME = "gen_ai.agent.name"
WORKFLOW_NAME = "gen_ai.workflow.name"
CONVERSATION = "gen_ai.conversation.id"
REQUEST_MODEL = "gen_ai.request.model"
RESPONSE_MODEL = "gen_ai.response.model"
REQUEST_STREAM = "gen_ai.request.stream"
FINISH_REASONS = "gen_ai.response.finish_reasons"
INPUT_TOKENS = "gen_ai.usage.input_tokens"
OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
INPUT_MESSAGES = "gen_ai.input.messages"
OUTPUT_MESSAGES = "gen_ai.output.messages"
TOOL_DEFINITIONS = "gen_ai.tool.definitions"
TOOL_NAME = "gen_ai.tool.name"
TOOL_DESCRIPTION = "gen_ai.tool.description"
TOOL_TYPE = "gen_ai.tool.type"
TOOL_CALL_ID = "gen_ai.tool.call.id"
TOOL_ARGUMENTS = "gen_ai.tool.call.arguments"
TOOL_RESULT = "gen_ai.tool.call.result"
ERROR_TYPE = "error.type"
EVALUATION_EVENT = "gen_ai.evaluation.result"
EVALUATION_NAME = "gen_ai.evaluation.name"
EVALUATION_LABEL = "gen_ai.evaluation.score.label"
EVALUATION_VALUE = "gen_ai.evaluation.score.value"
EVALUATION_EXPLANATION = "gen_ai.evaluation.explanation"

# OpenInference (Arize Phoenix's vocabulary)
OI_KIND = "openinference.span.kind"
OI_MODEL = "llm.model_name"
OI_PROMPT_TOKENS = "llm.token_count.prompt"
OI_COMPLETION_TOKENS = "llm.token_count.completion"
OI_TOTAL_TOKENS = "llm.token_count.total"
OI_TOOL_NAME = "tool.name"
OI_INPUT = "input.value"
OI_OUTPUT = "output.value"

PROVIDER_NAME = "agentkit"
"""``gen_ai.provider.name`` of a model that answers itself (scripts, mocks; a custom value,
which the conventions allow); a call to a vendor's wire carries the vendor's name
(:attr:`agentkit.llms.LLM.provider`)."""


def dumps(value: Any) -> str:
    """JSON text of an attribute that holds structure (spans take no nested values yet: the
    conventions say to write such values as JSON strings)."""
    return json.dumps(value, ensure_ascii=False, sort_keys=False, separators=(",", ":"),
                      default=str)


def _parts(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The conventions' ``parts`` of a message as a trace keeps it (role, content, tool
    calls with normalised ids, the tool call a tool message answers, images by digest)."""
    role = message.get("role")
    content = message.get("content")
    if role == "tool":
        return [{"type": "tool_call_response", "id": message.get("tool_call_id"),
                 "response": content}]
    parts: list[dict[str, Any]] = []
    if content:
        parts.append({"type": "text", "content": content})
    for block in message.get("blocks") or ():
        if isinstance(block, Mapping) and block.get("block_type", block.get("type")) == "image":
            parts.append({"type": "image", **{k: v for k, v in block.items()
                                              if k not in ("block_type", "type")}})
    for call in message.get("tool_calls") or ():
        parts.append({"type": "tool_call", "id": call.get("id"), "name": call.get("name"),
                      "arguments": call.get("args", {})})
    return parts


def genai_messages(messages: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Trace messages (``{"role", "content", "tool_calls"...}``) as the conventions' input
    messages: ``[{"role", "parts": [...]}]``."""
    return [{"role": m.get("role"), "parts": _parts(m)} for m in messages]


def genai_output(response: Mapping[str, Any] | None, finish_reason: str) -> list[dict[str, Any]]:
    """A trace's LLM response as the conventions' output messages (one choice)."""
    if response is None:
        return []
    return [{"role": "assistant", "parts": _parts({"role": "assistant", **response}),
             "finish_reason": finish_reason}]


def tool_definitions(tools: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """A trace's tool specs (name, description, parameters) as ``gen_ai.tool.definitions``."""
    return [{"type": "function", "name": t.get("name"), "description": t.get("description"),
             "parameters": t.get("parameters")} for t in tools]
