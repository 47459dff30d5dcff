"""The function-calling agent worker: the model picks tools through the tool-calling API."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentkit.agent.runner.base import AgentRunner, AgentState
from agentkit.agent.types import (
    AgentChatResponse,
    StreamingAgentChatResponse,
    Task,
    TaskStep,
    TaskStepOutput,
)
from agentkit.agent.worker import SOURCES_KEY, AgentWorker
from agentkit.core.events import AgentLimitEvent, dispatcher
from agentkit.core.ids import new_uuid
from agentkit.instrumentation import CallbackManager
from agentkit.llms.base import FunctionCallingLLM
from agentkit.llms.types import ChatMessage, ChatResponse, MessageRole, text_message
from agentkit.memory import BaseMemory
from agentkit.tools import CALL_TOOL_WORDING, BaseTool, ObjectRetriever, ToolOutput, ToolRunner

__all__ = ["FunctionCallingAgentWorker", "FunctionCallingAgent", "DEFAULT_MAX_FUNCTION_CALLS"]

DEFAULT_MAX_FUNCTION_CALLS = 5


class FunctionCallingAgentWorker(AgentWorker):
    """One ``chat_with_tools`` call per step; every tool call of the reply is run.

    Memory after finalize keeps the whole exchange: user message, each assistant tool-call
    message followed by one ``tool`` message per call (with ``tool_call_id``), and the final
    assistant message. The task ends when a reply has no tool calls, a ``return_direct`` tool
    answered, or ``max_function_calls`` were made.

    Fixes over LlamaIndex: all calls of a reply run even when one is ``return_direct`` (an
    unanswered tool call would make the stored history invalid for OpenAI); when
    ``max_function_calls`` stops the task, the last reply is stored without its unrun tool
    calls for the same reason; an empty answer is ``""``, not ``"None"``.

    A failed call reads as LlamaIndex's function-calling worker words it: ``Encountered
    error: <exc>`` (the message as ``raw_output``), and an unknown tool "Tool with name x not
    found, please double check."; a one-parameter tool's ``raw_input`` is positional.

    Streaming reads each reply to its end before deciding (a reply may add tool calls after
    its text); a final reply is then handed out chunk by chunk.
    """

    tool_wording = CALL_TOOL_WORDING

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
        self._set_tools(tools, tool_retriever)
        self._llm = llm
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
        self._start_task(task, {"n_function_calls": 0})
        return TaskStep.__pydantic_validator__.validate_python(  # type: ignore[no-any-return]
            {"task_id": task.task_id, "step_id": new_uuid(), "input": task.input})

    def get_all_messages(self, task: Task) -> list[ChatMessage]:
        new_memory: BaseMemory = task.extra_state[self.memory_key]  # _new_memory(task), inline
        return self.prefix_messages + task.memory.get(input=task.input) + new_memory.get_all()

    def _begin(self, step: TaskStep, task: Task) -> None:
        if step.input is not None:
            task.extra_state[self.memory_key].put(text_message(MessageRole.USER, step.input))

    async def _handle_reply(self, task: Task, runner: ToolRunner,
                            response: ChatResponse) -> tuple[AgentChatResponse, bool]:
        """Store the reply, run its tool calls; returns (answer, is_done)."""
        state = task.extra_state
        memory: BaseMemory = state[self.memory_key]
        calls = self._llm.get_tool_calls_from_response(response, error_on_no_tool_call=False)
        text = response.message.content or ""
        if self._verbose and text:
            print(f"=== LLM Response ===\n{text}")
        if not calls:
            memory.put(response.message)
            return AgentChatResponse(response=text, sources=[]), True
        if state["n_function_calls"] >= self._max_function_calls:
            if dispatcher.wants(AgentLimitEvent):
                dispatcher.emit(AgentLimitEvent(limit="max_function_calls",
                                                value=self._max_function_calls))
            memory.put(text_message(MessageRole.ASSISTANT, text))
            return AgentChatResponse(response=text, sources=[]), True
        memory.put(response.message)
        outcomes = await runner.arun(calls, parallel=self.allow_parallel_tool_calls)
        outputs = []
        direct = None  # the first return_direct output
        for outcome in outcomes:  # a loop: no comprehension and generator (frames) per step
            outputs.append(outcome.output)
            if direct is None and outcome.return_direct:
                direct = outcome.output
        for call, output in zip(calls, outputs, strict=True):
            if self._verbose:
                print(f"=== Calling Function ===\n{call.tool_name}({call.tool_kwargs})\n"
                      f"=== Function Output ===\n{output}")
            # str(output) is a ToolOutput's content (read without its __str__ frame)
            content = output.content if type(output) is ToolOutput else str(output)
            memory.put(text_message(MessageRole.TOOL, content,
                                    {"name": call.tool_name, "tool_call_id": call.tool_id}))
        state[SOURCES_KEY].extend(outputs)
        state["n_function_calls"] += len(calls)
        if direct is not None:
            return AgentChatResponse(response=direct.content, sources=outputs), True
        return AgentChatResponse(response=text, sources=outputs), False

    async def arun_step(self, step: TaskStep, task: Task, **kwargs: Any) -> TaskStepOutput:
        if step.input is not None:  # self._begin(step, task), inline
            task.extra_state[self.memory_key].put(text_message(MessageRole.USER, step.input))
        # a fixed tool list offered without the _atools_for coroutine (once per step)
        runner = (self._tool_runner.offered() if self._tool_retriever is None
                  else await self._atools_for(task.input))
        response = await self._llm.achat_with_tools(
            runner.tools, chat_history=self.get_all_messages(task),
            allow_parallel_tool_calls=self.allow_parallel_tool_calls,
            tool_choice=kwargs.get("tool_choice") or "auto")
        answer, is_done = await self._handle_reply(task, runner, response)
        return self._step_output(step, answer, is_done=is_done)

    async def astream_step(self, step: TaskStep, task: Task, **kwargs: Any) -> TaskStepOutput:
        self._begin(step, task)
        runner = await self._atools_for(task.input)
        stream = await self._llm.astream_chat_with_tools(
            runner.tools, chat_history=self.get_all_messages(task),
            allow_parallel_tool_calls=self.allow_parallel_tool_calls,
            tool_choice=kwargs.get("tool_choice") or "auto")
        last, deltas = await self._aread_stream(stream)
        if last is None:
            raise ValueError("the LLM stream ended without a single chunk")
        answer, is_done = await self._handle_reply(task, runner, last)
        output = StreamingAgentChatResponse.from_answer(answer, deltas) if is_done else answer
        return self._step_output(step, output, is_done=is_done)


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
