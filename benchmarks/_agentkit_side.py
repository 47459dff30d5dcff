"""The benchmark conversations on agentkit: scripted agents built once, chatted many times."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from _conversation import (
    MAX_ITERATIONS,
    TOOL_NAME,
    answer,
    lookup_population,
    react_script,
    tool_call_arguments,
    user_message,
)
from _harness import ScriptedChat

from agentkit.agent import AgentRunner, FunctionCallingAgentWorker, ReActAgentWorker
from agentkit.agent.workflow import AgentWorkflow, FunctionAgent
from agentkit.llms import MessageRole
from agentkit.llms.mock import ScriptedLLM, tool_call
from agentkit.memory import ChatMemoryBuffer
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


def build_workflow_run(calls: int, tool: BaseTool) -> Callable[[int], tuple[str, list[str]]]:
    """Run ``n``: one ``AgentWorkflow`` run of a non-streaming ``FunctionAgent`` with ``calls``
    tool calls, from empty memory; gives (answer, tool outputs in memory)."""
    llm = ScriptedLLM([tool_call(TOOL_NAME, **arguments)
                       for arguments in tool_call_arguments(calls)] + [answer(calls)])
    workflow = AgentWorkflow(agents=[FunctionAgent(tools=[tool], llm=llm, streaming=False)])

    def run(n: int) -> tuple[str, list[str]]:
        llm.reset()
        memory = ChatMemoryBuffer.from_defaults()
        output = workflow.run_sync(user_msg=user_message(n), memory=memory,
                                   max_iterations=MAX_ITERATIONS)
        return str(output), [m.content or "" for m in memory.get_all()
                             if m.role == MessageRole.TOOL]
    return run
