"""``ReActAgent``: a workflow agent that reasons in the Thought / Action / Answer text format."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar, Unpack

from pydantic import Field

from agentkit.agent.react.formatter import ReActChatFormatter
from agentkit.agent.react.output_parser import ReActOutputParser
from agentkit.agent.react.prompts import CONTEXT_REACT_CHAT_SYSTEM_HEADER
from agentkit.agent.react.types import (
    ActionReasoningStep,
    BaseReasoningStep,
    ObservationReasoningStep,
    ResponseReasoningStep,
)
from agentkit.agent.workflow.base_agent import BaseWorkflowAgent, WorkflowAgentOptions
from agentkit.agent.workflow.events import AgentInput, AgentOutput, ToolCallResult
from agentkit.agent.workflow.prompts import REACT_EMPTY_PROMPT, REACT_RETRY_PROMPT
from agentkit.core.ids import new_id
from agentkit.llms.prompts import PromptTemplate
from agentkit.llms.tool_calling import ListedTools
from agentkit.llms.types import ChatMessage, ChatResponse, MessageRole, ToolSelection
from agentkit.memory import BaseMemory
from agentkit.workflow import Context

__all__ = ["ReActAgent"]


class ReActAgent(BaseWorkflowAgent):
    """One ``(a)stream_chat`` call per step on the ReAct prompt (agentkit's formatter and
    parser). The reasoning so far lives in ``ctx.store["current_reasoning"]``; at the end
    the whole transcript (``Thought… Action… Action Input… Observation… Answer…``) goes into
    memory as one assistant message and the response is the answer alone ("Answer:"
    stripped). An output that cannot be parsed (or an empty one) is not a step: the agent is
    asked again with its output and an ``Error while parsing the output: ...`` user message
    (``AgentOutput.retry_messages``).

    Fixes over LlamaIndex: ``system_prompt`` reaches the model as the header's context block
    (0.12 dropped it); a hand-off also moves the transcript into memory (upstream left it in
    the scratch, where the next ReAct agent read it as its own).
    """

    reasoning_key: str = "current_reasoning"
    output_parser: ReActOutputParser = Field(default_factory=ReActOutputParser)
    formatter: ReActChatFormatter = Field(default_factory=ReActChatFormatter.from_defaults)

    context_types: ClassVar[tuple[type, ...]] = (ActionReasoningStep, ObservationReasoningStep,
                                                 ResponseReasoningStep)

    def __init__(self, *, formatter: ReActChatFormatter | None = None,
                 output_parser: ReActOutputParser | None = None,
                 reasoning_key: str = "current_reasoning",
                 **options: Unpack[WorkflowAgentOptions]) -> None:
        super().__init__(formatter=formatter or ReActChatFormatter.from_defaults(),
                         output_parser=output_parser or ReActOutputParser(),
                         reasoning_key=reasoning_key, **options)

    def model_post_init(self, context: Any, /) -> None:
        """The system prompt goes into the formatter's context block."""
        super().model_post_init(context)
        if self.system_prompt:
            block = self.formatter.context.strip()
            if self.system_prompt not in block:
                self.formatter.context = (f"{self.system_prompt}\n\n{block}" if block
                                          else self.system_prompt)
        if self.formatter.context and "{context}" not in self.formatter.system_header:
            self.formatter.system_header = CONTEXT_REACT_CHAT_SYSTEM_HEADER

    def context_store_schema(self) -> dict[str, Any]:
        return {self.reasoning_key: list[BaseReasoningStep]}

    # ------------------------------------------------------------------ prompts
    def get_prompts(self) -> dict[str, PromptTemplate]:
        return {"react_header": self.formatter.header_template}

    def update_prompts(self, prompts: dict[str, str | PromptTemplate]) -> None:
        header = prompts.get("react_header")
        if header is not None:
            self.formatter.set_header(header)

    # ------------------------------------------------------------------ the hooks
    async def take_step(self, ctx: Context, llm_input: list[ChatMessage], tools: Sequence[Any],
                        memory: BaseMemory) -> AgentOutput:
        if (llm_input and llm_input[0].role == MessageRole.SYSTEM
                and llm_input[0].content == self.system_prompt):
            llm_input = llm_input[1:]  # the system prompt is the header's context already
        reasoning: list[BaseReasoningStep] = ctx.store.data.get(self.reasoning_key, [])
        messages = self.formatter.format(tools, chat_history=llm_input,
                                         current_reasoning=reasoning)
        if ctx.stream_reads(AgentInput):
            ctx.write_event_to_stream(AgentInput(input=messages, current_agent_name=self.name))
        llm = self._require_llm()
        listed = ListedTools.of("react", tools)
        if self.streaming:
            response = await self._streamed(ctx, await llm.astream_chat(messages,
                                                                        listed_tools=listed))
        else:
            response = await llm.achat(messages, listed_tools=listed)
        message = response.message
        text = message.content
        if not text:
            return self._retry(response, REACT_EMPTY_PROMPT)
        try:
            step = self.output_parser.parse(text, is_streaming=False)
        except ValueError as exc:
            return self._retry(response, REACT_RETRY_PROMPT.format(error=exc))
        reasoning.append(step)
        ctx.store.data[self.reasoning_key] = reasoning
        calls = []
        if isinstance(step, ActionReasoningStep):
            calls = [ToolSelection(tool_id=new_id("call"), tool_name=step.action,
                                   tool_kwargs=step.action_input)]
        return AgentOutput(response=message, tool_calls=calls, raw=response.raw,
                           current_agent_name=self.name)

    def _retry(self, response: ChatResponse, error: str) -> AgentOutput:
        return AgentOutput(response=response.message, raw=response.raw,
                           current_agent_name=self.name,
                           retry_messages=[response.message,
                                           ChatMessage(role=MessageRole.USER, content=error)])

    async def handle_tool_call_results(self, ctx: Context, results: list[ToolCallResult],
                                       memory: BaseMemory) -> None:
        reasoning: list[BaseReasoningStep] = ctx.store.data.get(self.reasoning_key, [])
        for result in results:
            observation = ObservationReasoningStep(observation=result.tool_output.content,
                                                   return_direct=result.direct)
            reasoning.append(observation)
            if result.direct and not result.is_handoff:
                reasoning.append(ResponseReasoningStep(thought=observation.observation,
                                                       response=observation.observation))
                break
        ctx.store.data[self.reasoning_key] = reasoning

    async def finalize(self, ctx: Context, output: AgentOutput,
                       memory: BaseMemory) -> AgentOutput:
        reasoning: list[BaseReasoningStep] = ctx.store.data.get(self.reasoning_key, [])
        if not reasoning:
            return output
        last = reasoning[-1]
        answered = isinstance(last, ResponseReasoningStep)
        handed_off = isinstance(last, ObservationReasoningStep) and last.return_direct
        if answered or handed_off:
            await memory.aput(ChatMessage(role=MessageRole.ASSISTANT,
                                          content="\n".join(s.get_content() for s in reasoning)))
            ctx.store.data[self.reasoning_key] = []
        if answered:
            assert isinstance(last, ResponseReasoningStep)
            output.response = output.response.model_copy(update={"blocks": []})
            output.response.content = last.response
        return output

    async def discard_scratch(self, ctx: Context) -> None:
        ctx.store.data[self.reasoning_key] = []
