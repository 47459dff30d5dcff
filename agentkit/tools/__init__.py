"""Tools agents can call (``llama_index.core.tools`` shape)."""

from agentkit.tools.calling import (
    CALL_TOOL_WORDING,
    ToolCallOutcome,
    ToolErrorWording,
    ToolRunner,
    acall_tool,
    acall_tool_with_selection,
    call_tool,
    call_tool_with_selection,
)
from agentkit.tools.function_tool import FunctionTool, ToolArgumentsError
from agentkit.tools.retriever import KeywordObjectRetriever, ObjectRetriever
from agentkit.tools.types import (
    AsyncBaseTool,
    BaseTool,
    BaseToolAsyncAdapter,
    JSONSchemaToolMetadata,
    ToolMetadata,
    ToolOutput,
    adapt_to_async_tool,
)

__all__ = [
    "CALL_TOOL_WORDING",
    "AsyncBaseTool",
    "BaseTool",
    "BaseToolAsyncAdapter",
    "FunctionTool",
    "JSONSchemaToolMetadata",
    "KeywordObjectRetriever",
    "ObjectRetriever",
    "ToolArgumentsError",
    "ToolCallOutcome",
    "ToolErrorWording",
    "ToolMetadata",
    "ToolOutput",
    "ToolRunner",
    "acall_tool",
    "acall_tool_with_selection",
    "adapt_to_async_tool",
    "call_tool",
    "call_tool_with_selection",
]
