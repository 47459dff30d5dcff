"""The function-calling agent worker: the model picks tools through the tool-calling API."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from agentkit.agent.runner.base import AgentRunner, AgentState
from agentkit.agent.types import (
    AgentChatResponse,
    BaseAgentWorker,
    StreamingAgentChatResponse,
    Task,
    TaskStep,
    TaskStepOutput,
)
from agentkit.core.ids import new_uuid
from agentkit.instrumentation import CallbackManager
from agentkit.llms.base import FunctionCallingLLM
from agentkit.llms.types import ChatMessage, ChatResponse, MessageRole, ToolSelection
from agentkit.memory import BaseMemory, ChatMemoryBuffer
from agentkit.tools import BaseTool, ObjectRetriever, ToolOutput, acall_tool_with_selection

__all__ = ["FunctionCallingAgentWorker", "FunctionCallingAgent", "DEFAULT_MAX_FUNCTION_CALLS"]

DEFAULT_MAX_FUNCTION_CALLS = 5


class FunctionCallingAgentWorker(BaseAgentWorker):
    """One ``chat_with_tools`` call per step; every tool call of the reply is run.

    Memory after finalize keeps the whole exchange: user message, each assistant tool-call
    message followed by one ``tool`` message per call (with ``tool_call_id``), and the final
    assistant message. The task ends when a reply has no tool calls, a ``return_direct`` tool
    answered, or ``max_function_calls`` were made.

    Fixes over LlamaIndex: all calls of a reply run even when one is ``return_direct`` (an
    unanswered tool call would make the stored history invalid for OpenAI); when
    ``max_function_calls`` stops the task, the last reply is stored without its unrun tool
    calls for the same reason; an empty answer is ``""``, not ``"None"``.

    Streaming reads each reply to its end before deciding (a reply may add tool calls after
    its text); a final reply is then handed out chunk by chunk.
    """

    def __init__(self, tools: Sequence[BaseTool], llm: FunctionCallingLLM,
                 prefix_messages: list[ChatMessage] | None = None, verbose: bool = False,
                 max_function_calls: int = DEFAULT_MAX_FUNCTION_CALLS,
                 callback_manager: CallbackManager | None = None,
                 tool_retriever: ObjectRetriever[BaseTool] | None = None,
                 allow_parallel_tool_calls: bool = True) -> None:
        if llm is None:
            raise ValueError(f"{type(self).__name__} needs an `llm`")
        if not llm.metadata.is_function_calling_model or not hasattr(llm, "achat_with_tools"):
            raise ValueError(f"Model name {llm.metadata.model_name} does not support function "
                             "calling API.")
        if tools and tool_retriever is not None:
            raise ValueError("Cannot specify both tools and tool_retriever")
        self._llm = llm
        self._tools = list(tools)
        self._tool_retriever = tool_retriever
        self.prefix_messages = list(prefix_messages or [])
        self._verbose = verbose
        self._max_function_calls = max_function_calls
        self.allow_parallel_tool_calls = allow_parallel_tool_calls
        self.callback_manager = callback_manager or CallbackManager()

    @classmethod
    def from_tools(cls, tools: Sequence[BaseTool] | None = None,
                   tool_retriever: ObjectRetriever[BaseTool] | None = None,
                   llm: FunctionCallingLLM | None = None, verbose: bool = False,
                   max_function_calls: int = DEFAULT_MAX_FUNCTION_CALLS,
                   callback_manager: CallbackManager | None = None,
                   system_prompt: str | None = None,
                   prefix_messages: list[ChatMessage] | None = None,
                   allow_parallel_tool_calls: bool = True,
                   **kwargs: Any) -> FunctionCallingAgentWorker:
        if system_prompt is not None:
            if prefix_messages is not None:
                raise ValueError("Cannot specify both system_prompt and prefix_messages")
            prefix_messages = [ChatMessage(role=MessageRole.SYSTEM, content=system_prompt)]
        return cls(tools=list(tools or []), llm=llm, prefix_messages=prefix_messages,  # type: ignore[arg-type]
                   verbose=verbose, max_function_calls=max_function_calls,
                   callback_manager=callback_manager, tool_retriever=tool_retriever,
                   allow_parallel_tool_calls=allow_parallel_tool_calls)

    @property
    def llm(self) -> FunctionCallingLLM:
        return self._llm

    def initialize_step(self, task: Task, **kwargs: Any) -> TaskStep:
        task.extra_state.update({"sources": [], "n_function_calls": 0,
                                 "new_memory": ChatMemoryBuffer.from_defaults()})
        return TaskStep(task_id=task.task_id, step_id=new_uuid(), input=task.input)

    async def _aget_tools(self, query: str) -> list[BaseTool]:
        if self._tool_retriever is not None:
            return list(await self._tool_retriever.aretrieve(query))
        return self._tools

    def get_all_messages(self, task: Task) -> list[ChatMessage]:
        return (self.prefix_messages + task.memory.get(input=task.input)
                + task.extra_state["new_memory"].get_all())

    def _begin(self, step: TaskStep, task: Task) -> None:
        if step.input is not None:
            task.extra_state["new_memory"].put(ChatMessage(role=MessageRole.USER,
                                                           content=step.input))

    async def _run_calls(self, task: Task, tools: Sequence[BaseTool],
                         calls: list[ToolSelection]) -> list[ToolOutput]:
        if self.allow_parallel_tool_calls and len(calls) > 1:
            return list(await asyncio.gather(*(acall_tool_with_selection(c, tools) for c in calls)))
        return [await acall_tool_with_selection(c, tools) for c in calls]

    async def _handle_reply(self, step: TaskStep, task: Task, tools: Sequence[BaseTool],
                            response: ChatResponse) -> tuple[AgentChatResponse, bool]:
        """Store the reply, run its tool calls; returns (answer, is_done)."""
        state = task.extra_state
        memory: BaseMemory = state["new_memory"]
        calls = self._llm.get_tool_calls_from_response(response, error_on_no_tool_call=False)
        text = response.message.content or ""
        if self._verbose and text:
            print(f"=== LLM Response ===\n{text}")
        if not calls:
            memory.put(response.message)
            return AgentChatResponse(response=text, sources=[]), True
        if state["n_function_calls"] >= self._max_function_calls:
            memory.put(ChatMessage(role=MessageRole.ASSISTANT, content=text))
            return AgentChatResponse(response=text, sources=[]), True
        memory.put(response.message)
        outputs = await self._run_calls(task, tools, calls)
        direct = None
        for call, output in zip(calls, outputs):
            if self._verbose:
                print(f"=== Calling Function ===\n{call.tool_name}({call.tool_kwargs})\n"
                      f"=== Function Output ===\n{output}")
            memory.put(ChatMessage(role=MessageRole.TOOL, content=str(output),
                                   additional_kwargs={"name": call.tool_name,
                                                      "tool_call_id": call.tool_id}))
            state["sources"].append(output)
            state["n_function_calls"] += 1
            tool = next((t for t in tools if t.metadata.name == call.tool_name), None)
            if direct is None and tool is not None and tool.metadata.return_direct \
                    and not output.is_error:
                direct = output
        if direct is not None:
            return AgentChatResponse(response=direct.content, sources=outputs), True
        return AgentChatResponse(response=text, sources=outputs), False

    def _step_output(self, output: Any, step: TaskStep, is_done: bool) -> TaskStepOutput:
        next_steps = [] if is_done else [step.get_next_step(step_id=new_uuid(), input=None)]
        return TaskStepOutput(output=output, task_step=step, is_last=is_done,
                              next_steps=next_steps)

    async def arun_step(self, step: TaskStep, task: Task, **kwargs: Any) -> TaskStepOutput:
        self._begin(step, task)
        tools = await self._aget_tools(task.input)
        response = await self._llm.achat_with_tools(
            tools, chat_history=self.get_all_messages(task),
            allow_parallel_tool_calls=self.allow_parallel_tool_calls,
            tool_choice=kwargs.get("tool_choice") or "auto")
        answer, is_done = await self._handle_reply(step, task, tools, response)
        return self._step_output(answer, step, is_done)

    async def astream_step(self, step: TaskStep, task: Task, **kwargs: Any) -> TaskStepOutput:
        self._begin(step, task)
        tools = await self._aget_tools(task.input)
        stream = await self._llm.astream_chat_with_tools(
            tools, chat_history=self.get_all_messages(task),
            allow_parallel_tool_calls=self.allow_parallel_tool_calls,
            tool_choice=kwargs.get("tool_choice") or "auto")
        deltas: list[str] = []
        last: ChatResponse | None = None
        async for chunk in stream:
            last = chunk
            if chunk.delta:
                deltas.append(chunk.delta)
        if last is None:
            raise ValueError("the LLM stream ended without a single chunk")
        answer, is_done = await self._handle_reply(step, task, tools, last)
        if is_done:
            replay = deltas if "".join(deltas) == answer.response else [answer.response]
            answer = StreamingAgentChatResponse(_replay(replay), sources=answer.sources)  # type: ignore[assignment]
        return self._step_output(answer, step, is_done)

    def finalize_task(self, task: Task, **kwargs: Any) -> None:
        new_memory: ChatMemoryBuffer = task.extra_state["new_memory"]
        task.memory.set(task.memory.get_all() + new_memory.get_all())
        new_memory.reset()


async def _replay(deltas: list[str]) -> Any:
    for delta in deltas:
        if delta:
            yield delta


class FunctionCallingAgent(AgentRunner):
    """An :class:`AgentRunner` over a :class:`FunctionCallingAgentWorker`."""

    @classmethod
    def from_tools(cls, tools: Sequence[BaseTool] | None = None,
                   tool_retriever: ObjectRetriever[BaseTool] | None = None,
                   llm: FunctionCallingLLM | None = None, verbose: bool = False,
                   max_function_calls: int = DEFAULT_MAX_FUNCTION_CALLS,
                   callback_manager: CallbackManager | None = None,
                   system_prompt: str | None = None,
                   prefix_messages: list[ChatMessage] | None = None,
                   memory: BaseMemory | None = None,
                   chat_history: list[ChatMessage] | None = None,
                   state: AgentState | None = None,
                   allow_parallel_tool_calls: bool = True, **kwargs: Any) -> FunctionCallingAgent:
        """Any other keyword (``delete_task_on_finish``, ``default_tool_choice``...) goes to
        :class:`AgentRunner`, which rejects unknown ones."""
        worker = FunctionCallingAgentWorker.from_tools(
            tools, tool_retriever=tool_retriever, llm=llm, verbose=verbose,
            max_function_calls=max_function_calls, callback_manager=callback_manager,
            system_prompt=system_prompt, prefix_messages=prefix_messages,
            allow_parallel_tool_calls=allow_parallel_tool_calls)
        return cls(worker, memory=memory, chat_history=chat_history, state=state, llm=llm,
                   callback_manager=callback_manager, verbose=verbose, **kwargs)
