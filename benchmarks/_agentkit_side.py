"""The benchmark conversations on agentkit: scripted agents built once, chatted many times."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from _conversation import (
    MAX_ITERATIONS,
    PLANNING_QUESTION,
    TOOL_LATENCY,
    TOOL_NAME,
    answer,
    lookup_population,
    planning_script,
    react_script,
    tool_call_arguments,
    user_message,
)
from _harness import PlanningRun, ScriptedChat
from agentkit.agent import AgentRunner, FunctionCallingAgentWorker, ReActAgentWorker
from agentkit.agent.coa import CoAAgentWorker
from agentkit.agent.llm_compiler import LLMCompilerAgentWorker
from agentkit.agent.workflow import AgentWorkflow, FunctionAgent
from agentkit.core.sim import Stopwatch, asleep
from agentkit.llms import MessageRole
from agentkit.llms.mock import ScriptedLLM, tool_call
from agentkit.memory import ChatMemoryBuffer
from agentkit.tools import BaseTool, FunctionTool


def build_tool() -> BaseTool:
    return FunctionTool.from_defaults(lookup_population)


def build_chat(kind: str, calls: int, tool: BaseTool, *, final_answer: str | None = None,
               keep_history: bool = False, delete_task_on_finish: bool = False) -> ScriptedChat:
    """An ``AgentRunner`` over a ReAct or function-calling worker with ``calls`` tool calls
    per chat, on a :class:`ScriptedLLM` holding one chat's script (``delete_task_on_finish``
    as the runner's: without it the runner keeps every finished task, as LlamaIndex's does)."""
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
    return ScriptedChat(AgentRunner(worker, llm=llm, delete_task_on_finish=delete_task_on_finish),
                        llm, keep_history)


def inspect(response: Any) -> tuple[str, list[str]]:
    return response.response, [source.content for source in response.sources]


def build_planning_run(kind: str, llm_latency: float) -> PlanningRun:
    """One architecture answering the planning question on virtual time: the look-up sleeps
    ``TOOL_LATENCY`` and each LLM call ``llm_latency`` simulated seconds. Run it inside
    ``agentkit.core.sim.simulation``; its times are the simulated ones."""
    looked_up: list[str] = []

    async def lookup(city: str) -> str:
        await asleep(TOOL_LATENCY)
        looked_up.append(city)
        return lookup_population(city)

    tool = FunctionTool.from_defaults(async_fn=lookup, name=TOOL_NAME,
                                      description=lookup_population.__doc__)
    script = [[tool_call(TOOL_NAME, **arguments) for arguments in item]
              if isinstance(item, list) else item for item in planning_script(kind)]
    llm = ScriptedLLM(script, latency=llm_latency)
    if kind == "react":
        agent: Any = ReActAgentWorker.from_tools([tool], llm=llm).as_agent()
    elif kind == "function_calling":
        agent = FunctionCallingAgentWorker.from_tools([tool], llm=llm).as_agent()
    elif kind == "llm_compiler":
        agent = LLMCompilerAgentWorker.from_tools([tool], llm=llm).as_agent()
    else:
        agent = CoAAgentWorker.from_tools([tool], llm=llm).as_agent()

    def run() -> tuple[str, list[str], int, float, float]:
        agent.reset()
        llm.reset()
        looked_up.clear()
        watch = Stopwatch.start()
        response = agent.chat(PLANNING_QUESTION)
        return response.response, sorted(looked_up), llm.calls, watch.wall, watch.serial

    return run


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
