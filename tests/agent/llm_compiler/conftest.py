"""Shared by the LLMCompiler tests: look-up tools with simulated latency, plans, an agent."""

from collections.abc import Callable
from typing import Any

import pytest

from agentkit.agent import AgentRunner
from agentkit.agent.llm_compiler import LLMCompilerAgentWorker
from agentkit.core.sim import asleep
from agentkit.llms.mock import ScriptedLLM
from agentkit.tools import FunctionTool

SPEEDS = {"cheetah": 120, "greyhound": 70}


async def search(animal: str) -> int:
    """Top speed of an animal in km/h; takes 0.1 simulated seconds."""
    await asleep(0.1)
    return SPEEDS[animal]


def math(problem: str, values: list) -> str:
    """Solve a small math problem on the values."""
    return f"{problem} = {values[0] / values[1]:.2f}"


def explode(reason: str) -> str:
    """Always fails."""
    raise RuntimeError(reason)


TOOLS = [FunctionTool.from_defaults(async_fn=search), FunctionTool.from_defaults(math),
         FunctionTool.from_defaults(explode)]

PLAN = """Thought: look both up
1. search("cheetah")
2. search("greyhound")
3. math("ratio of $1 to $2", ["$1", "$2"])
Thought: I can answer the question now.
4. join()<END_OF_PLAN>"""
FINISH = "Thought: ratio computed.\nAction: Finish(1.71)"


@pytest.fixture
def make_agent() -> Callable[..., tuple[AgentRunner, ScriptedLLM]]:
    """``make_agent(script, tools=TOOLS, **worker_options)``: an agent over a ScriptedLLM."""
    def make(script: list[Any], tools: list[Any] | None = None,
             **options: Any) -> tuple[AgentRunner, ScriptedLLM]:
        llm = ScriptedLLM(script)
        worker = LLMCompilerAgentWorker.from_tools(TOOLS if tools is None else tools, llm=llm,
                                                   **options)
        return worker.as_agent(), llm
    return make
