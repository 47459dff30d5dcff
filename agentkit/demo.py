"""The offline demo: a ReAct and a function-calling agent on scripted LLMs, with their traces."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, TextIO

from agentkit.agent import AgentRunner, FunctionCallingAgentWorker, ReActAgent
from agentkit.core.events import (
    AgentStepStartEvent,
    Event,
    LLMCallEndEvent,
    ToolCallEndEvent,
)
from agentkit.core.sim import Stopwatch, simulation
from agentkit.instrumentation import collect_events
from agentkit.llms.mock import ScriptedLLM, ScriptedResponse, tool_call
from agentkit.tools import FunctionTool

__all__ = ["run_demo"]


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


def _tools() -> list[FunctionTool]:
    return [FunctionTool.from_defaults(add), FunctionTool.from_defaults(multiply)]


QUESTION = "What is (2 + 3) * 4?"


def _react_agent() -> AgentRunner:
    llm = ScriptedLLM([
        'Thought: First I add 2 and 3.\nAction: add\nAction Input: {"a": 2, "b": 3}',
        'Thought: Now I multiply the sum by 4.\nAction: multiply\nAction Input: {"a": 5, "b": 4}',
        "Thought: I can answer without using any more tools.\nAnswer: (2 + 3) * 4 = 20",
    ], latency=0.8, name="scripted-react")
    return ReActAgent.from_tools(_tools(), llm=llm)


def _function_calling_agent() -> AgentRunner:
    llm = ScriptedLLM([
        ScriptedResponse(tool_calls=[tool_call("add", a=2, b=3)]),
        ScriptedResponse(tool_calls=[tool_call("multiply", a=5, b=4)]),
        "(2 + 3) * 4 = 20",
    ], latency=0.8, name="scripted-fc")
    return FunctionCallingAgentWorker.from_tools(_tools(), llm=llm).as_agent()


AGENTS: dict[str, Callable[[], AgentRunner]] = {
    "react": _react_agent,
    "function_calling": _function_calling_agent,
}


def _describe(event: Event) -> str | None:
    if isinstance(event, AgentStepStartEvent):
        return f"step     input={event.input!r}"
    if isinstance(event, LLMCallEndEvent):
        reply = event.response.message if event.response is not None else None
        said = (reply.content or "") if reply is not None else f"<error: {event.error}>"
        calls = [f"{c.tool_name}({json.dumps(c.tool_kwargs)})" for c in
                 (reply.tool_calls if reply is not None else [])]
        usage = event.usage
        tokens = f"{usage.prompt_tokens}+{usage.completion_tokens} tok" if usage else "? tok"
        text = " | ".join(filter(None, [said.replace("\n", " \\n "), ", ".join(calls)]))
        return f"  llm    [{event.latency:.1f}s, {tokens}] {text}"
    if isinstance(event, ToolCallEndEvent):
        flag = " (error)" if event.is_error else ""
        return f"  tool   {event.tool_name}({json.dumps(event.arguments)}) -> {event.output}{flag}"
    return None


def run_demo(out: TextIO) -> int:
    """Run each demo agent once and print its trace; returns 0."""
    for name, build in AGENTS.items():
        with simulation(seed=0):
            agent = build()
            watch = Stopwatch.start()
            with collect_events() as events:
                response = agent.chat(QUESTION)
            print(f"== {name} ==", file=out)
            print(f"user     {QUESTION}", file=out)
            for event in events:
                line = _describe(event)
                if line:
                    print(line, file=out)
            print(f"answer   {response}", file=out)
            memory: list[Any] = [f"{m.role.value}" for m in agent.chat_history]
            print(f"memory   {' > '.join(memory)}", file=out)
            print(f"time     {watch.wall:.1f}s simulated (no real waiting)\n", file=out)
    return 0
