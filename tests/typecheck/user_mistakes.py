"""Mistakes a typed user's mypy must report: each line marked ``# E: code`` is an error of
that code, and no other line is (checked by ``test_public_types.py``; never run)."""

from __future__ import annotations

from agentkit.agent.workflow import FunctionAgent, ReActAgent
from agentkit.llms import ChatMessage, ChatResponse, MessageRole, TextBlock
from agentkit.llms.mock import ScriptedLLM
from agentkit.tools import ToolOutput
from agentkit.workflow import Event, StartEvent, StopEvent, Workflow, step


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


class Draft(Event):
    text: str


class Writer(Workflow):
    @step(num_workers=2)
    async def review(self, ev: Draft) -> StopEvent:
        return StopEvent(result=ev.text)


def mistakes() -> None:
    """One mistake per statement."""
    llm = ScriptedLLM([])
    ChatMessage(role=MessageRole.USER, contnt="hi")  # E: call-arg
    ChatMessage(content=42)  # E: arg-type
    ChatMessage(blocks="hi")  # E: arg-type
    ChatMessage(blocks=[TextBlock(txt="hi")])  # E: call-arg
    ChatMessage(role=MessageRole.USER, content="hi").content = 5  # E: assignment
    ChatResponse(message="hi")  # E: arg-type
    ToolOutput(content="3")  # E: call-arg
    FunctionAgent(tool=[add], llm=llm)  # E: call-arg
    ReActAgent(tools=[add], llm=llm, streaming="no")  # E: arg-type
    StartEvent(topic="tea").topic.upper()
    _ = Writer().review(Draft(txt="x"))  # E: call-arg
    _ = Writer().review("a draft")  # E: arg-type
