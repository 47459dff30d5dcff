"""``FunctionAgent``: a workflow agent that calls tools through the model's tool-calling API."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any, Unpack

from agentkit.agent.workflow.base_agent import BaseWorkflowAgent, WorkflowAgentOptions
from agentkit.agent.workflow.events import AgentInput, AgentOutput, ToolCallResult
from agentkit.llms.types import ChatMessage, ChatResponse, MessageRole, ToolSelection
from agentkit.memory import BaseMemory
from agentkit.workflow import Context

__all__ = ["FunctionAgent"]


class FunctionAgent(BaseWorkflowAgent):
    """One ``(a)stream_chat_with_tools`` call per step (``achat_with_tools`` when not
    ``streaming``); the scratchpad (``ctx.store["scratchpad"]``) holds the assistant tool-call
    messages and one ``tool`` message per call (with ``tool_call_id``) until ``finalize``
    moves it into memory: ``[user, assistant (tool calls), tool, ..., assistant answer]``; the
    system prompt is never stored. A ``return_direct`` result (not a hand-off, not an error)
    also goes in as an assistant message, the answer, with the call's ``tool_call_id`` in
    its ``additional_kwargs`` (as upstream; the OpenAI backend sends it only on tool
    messages).

    ``allow_parallel_tool_calls`` lets one reply ask for several calls (they run
    concurrently); ``initial_tool_choice`` forces a tool on the first call of a run.
    """

    allow_parallel_tool_calls: bool = True
    initial_tool_choice: str | None = None
    scratchpad_key: str = "scratchpad"

    def __init__(self, *, allow_parallel_tool_calls: bool = True,
                 initial_tool_choice: str | None = None, scratchpad_key: str = "scratchpad",
                 **options: Unpack[WorkflowAgentOptions]) -> None:
        super().__init__(allow_parallel_tool_calls=allow_parallel_tool_calls,
                         initial_tool_choice=initial_tool_choice, scratchpad_key=scratchpad_key,
                         **options)

    def context_store_schema(self) -> dict[str, Any]:
        return {self.scratchpad_key: list[ChatMessage]}

    async def take_step(self, ctx: Context, llm_input: list[ChatMessage], tools: Sequence[Any],
                        memory: BaseMemory) -> AgentOutput:
        if not self._require_llm().metadata.is_function_calling_model:
            raise ValueError("LLM must be a FunctionCallingLLM")
        scratchpad: list[ChatMessage] = ctx.store.data.get(self.scratchpad_key, [])
        messages = [*llm_input, *scratchpad]
        if ctx.stream_reads(AgentInput):
            ctx.write_event_to_stream(AgentInput(input=messages, current_agent_name=self.name))
        kwargs: dict[str, Any] = {"chat_history": messages,
                                  "allow_parallel_tool_calls": self.allow_parallel_tool_calls}
        if self.initial_tool_choice is not None and messages[-1].role == MessageRole.USER:
            kwargs["tool_choice"] = self.initial_tool_choice
        llm: Any = self._require_llm()
        if self.streaming:
            response = await self._streamed(ctx, await llm.astream_chat_with_tools(tools, **kwargs))
        else:
            response = await llm.achat_with_tools(tools, **kwargs)
        calls = self._tool_calls_of(response)
        scratchpad.append(response.message)
        ctx.store.data[self.scratchpad_key] = scratchpad
        return AgentOutput(response=response.message, tool_calls=calls, raw=response.raw,
                           current_agent_name=self.name)

    def _tool_calls_of(self, response: ChatResponse) -> list[ToolSelection]:
        llm: Any = self._require_llm()
        calls: list[ToolSelection] = llm.get_tool_calls_from_response(
            response, error_on_no_tool_call=False)
        return calls

    def _chunk_tool_calls(self) -> Callable[[ChatResponse], list[ToolSelection]] | None:
        """The model's ``get_tool_calls_from_response``, looked up once per stream (unless a
        subclass reads tool calls its own way)."""
        if type(self)._tool_calls_of is not FunctionAgent._tool_calls_of:
            return super()._chunk_tool_calls()
        llm: Any = self._require_llm()
        return partial(llm.get_tool_calls_from_response, error_on_no_tool_call=False)

    async def handle_tool_call_results(self, ctx: Context, results: list[ToolCallResult],
                                       memory: BaseMemory) -> None:
        scratchpad: list[ChatMessage] = ctx.store.data.get(self.scratchpad_key, [])
        for result in results:
            scratchpad.append(ChatMessage(role=MessageRole.TOOL,
                                          content=result.tool_output.content,
                                          additional_kwargs={"tool_call_id": result.tool_id}))
        # every call gets its tool message first (upstream stopped at a return_direct one,
        # leaving later calls unanswered: a history OpenAI rejects)
        direct = next((r for r in results if r.direct and not r.is_handoff), None)
        if direct is not None:
            scratchpad.append(ChatMessage(role=MessageRole.ASSISTANT,
                                          content=direct.tool_output.content,
                                          additional_kwargs={"tool_call_id": direct.tool_id}))
        ctx.store.data[self.scratchpad_key] = scratchpad

    async def finalize(self, ctx: Context, output: AgentOutput,
                       memory: BaseMemory) -> AgentOutput:
        scratchpad: list[ChatMessage] = ctx.store.data.get(self.scratchpad_key, [])
        await memory.aput_messages(scratchpad)
        ctx.store.data[self.scratchpad_key] = []
        return output

    async def discard_scratch(self, ctx: Context) -> None:
        ctx.store.data[self.scratchpad_key] = []
