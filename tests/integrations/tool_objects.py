"""The frameworks' own tool objects over one function, as scenario refs name them
(tests/integrations/test_tool_refs.py)."""

from agents import WebSearchTool, function_tool
from langchain_core.tools import tool
from llama_index.core.tools import FunctionTool
from pydantic_ai import Tool


async def plus(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


langchain_add = tool(add)
langchain_async_add = tool("add")(plus)
pydantic_ai_add = Tool(add)
llama_index_add = FunctionTool.from_defaults(add)
sdk_add = function_tool(add)


def divide(a: int, b: int) -> float:
    """Divide a by b."""
    return a / b


sdk_divide = function_tool(divide)
sdk_divide_raising = function_tool(divide, failure_error_function=None)
sdk_divide_answering = function_tool(
    divide, failure_error_function=lambda context, error: f"cannot divide: {error}")
sdk_web_search = WebSearchTool()
