"""Code as a typed user writes it against agentkit's public API.

``test_public_types.py`` checks it with mypy (``--strict``: zero errors) and runs it, so
every form here both type-checks and works."""

from __future__ import annotations

import asyncio

from agentkit.agent import (
    AgentChatResponse,
    FunctionCallingAgent,
    ReActAgent,
    Task,
    TaskStep,
    TaskStepOutput,
)
from agentkit.agent.workflow import (
    AgentOutput,
    AgentStream,
    AgentWorkflow,
    FunctionAgent,
)
from agentkit.agent.workflow import ReActAgent as ReActWorkflowAgent
from agentkit.llms import (
    ChatMessage,
    ChatResponse,
    CompletionResponse,
    ImageBlock,
    MessageRole,
    TextBlock,
    ToolSelection,
)
from agentkit.llms.mock import (
    FunctionLLM,
    ModelDouble,
    ModelFunction,
    RequestInfo,
    ScriptedLLM,
    ScriptedResponse,
    tool_call,
)
from agentkit.memory import ChatMemoryBuffer
from agentkit.tools import FunctionTool, ToolMetadata, ToolOutput
from agentkit.workflow import Context, Event, HumanResponseEvent, StartEvent, StopEvent, Workflow, step


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def messages() -> list[ChatMessage]:
    """Every way of building a message."""
    return [
        ChatMessage(role=MessageRole.USER, content="hi"),
        ChatMessage(role="user", content="hi"),
        ChatMessage(content="hi"),
        ChatMessage(role=MessageRole.ASSISTANT, blocks=[TextBlock(text="a"), ImageBlock(url="https://x/y.png")]),
        ChatMessage(role="tool", content="5", additional_kwargs={"tool_call_id": "call_1"}),
        ChatMessage.from_str("hi", role="user"),
    ]


def models() -> None:
    """Responses, tool results and tool metadata."""
    message = ChatMessage(role=MessageRole.ASSISTANT, content="5")
    message.content = "6"
    text: str | None = message.content
    assert text == "6"
    assert str(ChatResponse(message=message, delta="6")) == "assistant: 6"
    assert str(CompletionResponse(text="6")) == "6"
    selection = ToolSelection(tool_id="call_1", tool_name="add", tool_kwargs={"a": 1, "b": 2})
    output = ToolOutput(content="3", tool_name="add", raw_input={"a": 1, "b": 2}, raw_output=3)
    assert str(output) == "3" and selection.tool_name == "add"
    metadata = ToolMetadata(name="add", description="Add two integers.")
    assert metadata.to_openai_tool()["function"]["name"] == "add"
    response = AgentChatResponse(response="3", sources=[output])
    assert str(response) == "3"


def react_agent() -> str:
    """A ReAct agent on a scripted LLM."""
    tool = FunctionTool.from_defaults(fn=add)
    llm = ScriptedLLM([
        'Thought: add\nAction: add\nAction Input: {"a": 2, "b": 3}',
        "Thought: done\nAnswer: 5",
    ])
    agent = ReActAgent.from_tools([tool], llm=llm, memory=ChatMemoryBuffer.from_defaults())
    return str(agent.chat("What is 2 + 3?"))


def streaming() -> list[str]:
    """A streamed chat, and memory used directly."""
    memory = ChatMemoryBuffer.from_defaults(token_limit=1000)
    memory.put(ChatMessage(role=MessageRole.USER, content="earlier"))
    agent = ReActAgent.from_tools([], llm=ScriptedLLM(["Thought: done\nAnswer: a b"]), memory=memory)
    response = agent.stream_chat("Say a b")
    deltas = list(response.response_gen)
    assert memory.get()[0].content == "earlier"
    return deltas


async def streamed_workflow_agent() -> tuple[list[str], str]:
    """A workflow agent's event stream and result, in async code."""
    agent = FunctionAgent(tools=[add], llm=ScriptedLLM(["the answer"]))
    handler = agent.run(user_msg="hi")
    deltas = [event.delta async for event in handler.stream_events() if isinstance(event, AgentStream)]
    output: AgentOutput = await handler
    calls: list[ToolSelection] = output.tool_calls
    assert calls == []
    return deltas, str(output)


def steps() -> str:
    """The step-wise runner API."""
    llm = ScriptedLLM([ScriptedResponse(tool_calls=[tool_call("add", a=2, b=3)]), "5"])
    agent = FunctionCallingAgent.from_tools([FunctionTool.from_defaults(add)], llm=llm)
    task: Task = agent.create_task("What is 2 + 3?")
    output: TaskStepOutput = agent.run_step(task.task_id)
    while not output.is_last:
        output = agent.run_step(task.task_id)
    next_steps: list[TaskStep] = output.next_steps
    assert next_steps == []
    return str(agent.finalize_response(task.task_id))


def workflow_agents() -> str:
    """A workflow FunctionAgent, and a team."""
    agent = FunctionAgent(name="adder", description="Adds.", tools=[add],
                          llm=ScriptedLLM([ScriptedResponse(tool_calls=[tool_call("add", a=2, b=3)]),
                                           "5"]),
                          system_prompt="You add numbers.")
    output: AgentOutput = agent.run_sync(user_msg="What is 2 + 3?")
    react = ReActWorkflowAgent(name="helper", description="Helps.", tools=[add],
                               llm=ScriptedLLM(["Thought: done\nAnswer: ok"]))
    team = AgentWorkflow(agents=[react], root_agent="helper")
    assert str(team.run_sync(user_msg="help")) == "ok"
    return str(output)


class Draft(Event):
    text: str


class Writer(Workflow):
    @step
    async def write(self, ctx: Context, ev: StartEvent) -> Draft:
        await ctx.store.set("topic", ev.topic)
        return Draft(text=f"about {ev.topic}")

    @step(num_workers=2)
    async def review(self, ev: Draft) -> StopEvent:
        return StopEvent(result=ev.text.upper())


def workflow() -> str:
    """A workflow with a typed event and extras on the start event."""
    result = Writer(timeout=10).run_sync(topic="tea")
    assert StartEvent(topic="tea").topic == "tea"
    assert HumanResponseEvent(response="yes")["response"] == "yes"
    return str(result)


def model_function() -> str:
    """A typed model function answering a ReAct agent from the tools its request lists."""
    def answer(messages: list[ChatMessage], info: RequestInfo) -> str:
        listed = info.listed_tools
        names = [spec["name"] for spec in listed.specs] if listed is not None else []
        return f"Thought: done\nAnswer: {', '.join(names)}"

    function: ModelFunction = answer
    llm = FunctionLLM(function=function)
    double: ModelDouble = llm
    assert double.leftovers() == []
    return str(ReActAgent.from_tools([FunctionTool.from_defaults(add)], llm=llm).chat("hi"))


def main() -> None:
    """Run everything above: the forms mypy accepts also work."""
    assert model_function() == "add"
    assert [m.content for m in messages()] == ["hi", "hi", "hi", "a", "5", "hi"]
    models()
    assert react_agent() == "5"
    assert steps() == "5"
    assert workflow_agents() == "5"
    assert workflow() == "ABOUT TEA"
    assert "".join(streaming()) == "a b"
    deltas, answer = asyncio.run(streamed_workflow_agent())
    assert ("".join(deltas), answer) == ("the answer", "the answer")
