"""The benchmark conversations on agentkit: scripted agents built once, chatted many times."""

from __future__ import annotations

from typing import Any

from _conversation import (
    MAX_ITERATIONS,
    TOOL_NAME,
    answer,
    lookup_population,
    react_script,
    tool_call_arguments,
)
from _harness import ScriptedChat

from agentkit.agent import AgentRunner, FunctionCallingAgentWorker, ReActAgentWorker
from agentkit.llms.mock import ScriptedLLM, tool_call
from agentkit.tools import BaseTool, FunctionTool


def build_tool() -> BaseTool:
    return FunctionTool.from_defaults(lookup_population)


def build_chat(kind: str, calls: int, tool: BaseTool, *, final_answer: str | None = None,
            keep_history: bool = False) -> ScriptedChat:
    """An ``AgentRunner`` over a ReAct or function-calling worker with ``calls`` tool calls
    per chat, on a :class:`ScriptedLLM` holding one chat's script."""
    text = final_answer if final_answer is not None else answer(calls)
    if kind == "react":
        llm = ScriptedLLM(react_script(calls, text))
        worker: Any = ReActAgentWorker.from_tools([tool], llm=llm, max_iterations=MAX_ITERATIONS)
    elif kind == "function_calling":
        llm = ScriptedLLM([tool_call(TOOL_NAME, **arguments)
                           for arguments in tool_call_arguments(calls)] + [text])
        worker = FunctionCallingAgentWorker.from_tools([tool], llm=llm,
                                                       max_function_calls=MAX_ITERATIONS)
    else:
        raise ValueError(f"unknown agent kind {kind!r}: use 'react' or 'function_calling'")
    return ScriptedChat(AgentRunner(worker, llm=llm), llm, keep_history)


def inspect(response: Any) -> tuple[str, list[str]]:
    return response.response, [source.content for source in response.sources]
