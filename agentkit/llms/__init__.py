"""The LLM protocol and its data types (``llama_index.core.llms`` shape)."""

from agentkit.llms.agent_response import AgentChatResponse, StreamingAgentChatResponse
from agentkit.llms.base import LLM, CustomLLM, FunctionCallingLLM, LLMRequest, messages_to_prompt
from agentkit.llms.tool_calling import ListedTools
from agentkit.llms.types import (
    ChatMessage,
    ChatResponse,
    CompletionResponse,
    ContentBlock,
    ImageBlock,
    LLMMetadata,
    MessageRole,
    TextBlock,
    ToolOutput,
    ToolSelection,
    Usage,
)

__all__ = [
    "LLM",
    "CustomLLM",
    "FunctionCallingLLM",
    "LLMRequest",
    "ListedTools",
    "messages_to_prompt",
    "ChatMessage",
    "ChatResponse",
    "CompletionResponse",
    "ContentBlock",
    "ImageBlock",
    "LLMMetadata",
    "MessageRole",
    "TextBlock",
    "ToolOutput",
    "ToolSelection",
    "Usage",
    "AgentChatResponse",
    "StreamingAgentChatResponse",
]
