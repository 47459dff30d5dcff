"""The ReAct agent worker: think, act (call a tool), observe, repeat, answer."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

from agentkit.agent.react.formatter import ReActChatFormatter
from agentkit.agent.react.output_parser import ReActOutputParser
from agentkit.agent.react.types import (
    ActionReasoningStep,
    BaseReasoningStep,
    ObservationReasoningStep,
    ResponseReasoningStep,
)
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
from agentkit.llms.base import LLM
from agentkit.llms.prompts import PromptTemplate
from agentkit.llms.types import ChatMessage, ChatResponse, MessageRole
from agentkit.memory import BaseMemory, ChatMemoryBuffer
from agentkit.tools import BaseTool, ObjectRetriever, ToolOutput, acall_tool, adapt_to_async_tool

__all__ = ["ReActAgentWorker", "PARSE_FAILURE_OBSERVATION", "tell_llm_about_failure_in_extract_reasoning_step"]

PARSE_FAILURE_OBSERVATION = (
    "Error: Could not parse output. Please follow the thought-action-input format. Try again.")

FailureHandler = Callable[[CallbackManager, Exception], ToolOutput | str]


def tell_llm_about_failure_in_extract_reasoning_step(callback_manager: CallbackManager,
                                                     error: Exception) -> ToolOutput:
    """The default parse-failure handler: an observation asking the model to keep the format."""
    return ToolOutput(content=PARSE_FAILURE_OBSERVATION, tool_name="unknown", raw_input={},
                      raw_output=str(error), is_error=True)


def add_user_step_to_reasoning(step: TaskStep, memory: BaseMemory,
                               current_reasoning: list[BaseReasoningStep],
                               verbose: bool = False) -> None:
    """The first step's input is the user message; later inputs are observations."""
    if step.step_state.get("is_first"):
        memory.put(ChatMessage(role=MessageRole.USER, content=step.input))
        step.step_state["is_first"] = False
    else:
        current_reasoning.append(ObservationReasoningStep(observation=step.input or ""))
        if verbose:
            print(f"Added user message to memory: {step.input}")


def _stream_kind(text: str) -> str | None:
    """While streaming: ``action``, ``answer``, ``implicit`` (no format at all) or undecided."""
    if "Action:" in text:
        return "action"
    if "Answer:" in text:
        return "answer"
    head = text.lstrip()
    if len(head) >= len("Thought:") and not head.startswith(("Thought", "Action", "Answer")):
        return "implicit"
    return None


def _answer_text(text: str, kind: str) -> str:
    return text.split("Answer:", 1)[1].lstrip() if kind == "answer" else text.lstrip()


class ReActAgentWorker(BaseAgentWorker):
    """Runs the ReAct loop, one LLM call per step.

    State lives in ``task.extra_state``: ``sources`` (tool outputs), ``current_reasoning``,
    ``new_memory`` (this task's messages) and ``iterations`` (LLM calls so far). A parse
    failure becomes an observation and the loop goes on; an unknown tool or a failing tool
    is an ``Error: ...`` observation; a ``return_direct`` tool's output is the answer. A task
    that needs more than ``max_iterations`` LLM calls raises ``ValueError("Reached max
    iterations.")``. Memory after finalize: previous history + user input + final answer.
    """

    def __init__(self, tools: Sequence[BaseTool], llm: LLM, max_iterations: int = 10,
                 react_chat_formatter: ReActChatFormatter | None = None,
                 output_parser: ReActOutputParser | None = None,
                 callback_manager: CallbackManager | None = None, verbose: bool = False,
                 tool_retriever: ObjectRetriever[BaseTool] | None = None,
                 handle_reasoning_failure_fn: FailureHandler | None = None) -> None:
        if tool_retriever is not None and not hasattr(tool_retriever, "aretrieve"):
            raise TypeError(f"tool_retriever must be an ObjectRetriever, got "
                            f"{type(tool_retriever).__name__} (pass the model as llm=...)")
        if llm is None:
            raise ValueError(f"{type(self).__name__} needs an `llm`")
        if tools and tool_retriever is not None:
            raise ValueError("Cannot specify both tools and tool_retriever")
        if max_iterations < 1:
            raise ValueError(f"max_iterations must be at least 1, got {max_iterations}")
        self._llm = llm
        self._tools = [adapt_to_async_tool(t) for t in tools]
        self._tool_retriever = tool_retriever
        self._max_iterations = max_iterations
        self._react_chat_formatter = react_chat_formatter or ReActChatFormatter.from_defaults()
        self._output_parser = output_parser or ReActOutputParser()
        self.callback_manager = callback_manager or CallbackManager()
        self._verbose = verbose
        self._handle_reasoning_failure_fn = (handle_reasoning_failure_fn
                                             or tell_llm_about_failure_in_extract_reasoning_step)

    @classmethod
    def from_tools(cls, tools: Sequence[BaseTool] | None = None, llm: LLM | None = None,
                   max_iterations: int = 10,
                   react_chat_formatter: ReActChatFormatter | None = None,
                   output_parser: ReActOutputParser | None = None, verbose: bool = False,
                   tool_retriever: ObjectRetriever[BaseTool] | None = None,
                   handle_reasoning_failure_fn: FailureHandler | None = None,
                   callback_manager: CallbackManager | None = None,
                   **kwargs: Any) -> ReActAgentWorker:
        """Build a worker; arguments in SPEC order (``tools, llm, max_iterations, ...``)."""
        if kwargs:
            raise TypeError(f"ReActAgentWorker.from_tools got unexpected arguments: "
                            f"{sorted(kwargs)}")
        return cls(tools=list(tools or []), llm=llm, max_iterations=max_iterations,  # type: ignore[arg-type]
                   react_chat_formatter=react_chat_formatter, output_parser=output_parser,
                   callback_manager=callback_manager, verbose=verbose,
                   tool_retriever=tool_retriever,
                   handle_reasoning_failure_fn=handle_reasoning_failure_fn)

    @property
    def llm(self) -> LLM:
        return self._llm

    # ------------------------------------------------------------------ prompts
    def get_prompts(self) -> dict[str, Any]:
        return {"system_prompt": PromptTemplate(self._react_chat_formatter.system_header)}

    def update_prompts(self, prompts: dict[str, Any]) -> None:
        super().update_prompts(prompts)
        if "system_prompt" in prompts:
            prompt = prompts["system_prompt"]
            self._react_chat_formatter.system_header = (
                prompt.get_template() if isinstance(prompt, PromptTemplate) else str(prompt))

    # ------------------------------------------------------------------ steps
    def initialize_step(self, task: Task, **kwargs: Any) -> TaskStep:
        task.extra_state.update({"sources": [], "current_reasoning": [], "iterations": 0,
                                 "new_memory": ChatMemoryBuffer.from_defaults()})
        return TaskStep(task_id=task.task_id, step_id=new_uuid(), input=task.input,
                        step_state={"is_first": True})

    async def _aget_tools(self, query: str) -> list[Any]:
        if self._tool_retriever is not None:
            return [adapt_to_async_tool(t) for t in await self._tool_retriever.aretrieve(query)]
        return self._tools

    def _prepare(self, step: TaskStep, task: Task) -> None:
        state = task.extra_state
        if state["iterations"] >= self._max_iterations:
            raise ValueError("Reached max iterations.")
        if step.input is not None:
            add_user_step_to_reasoning(step, state["new_memory"], state["current_reasoning"],
                                       self._verbose)
        state["iterations"] += 1

    def _messages(self, task: Task, tools: Sequence[Any]) -> list[ChatMessage]:
        state = task.extra_state
        history = task.memory.get(input=task.input) + state["new_memory"].get_all()
        return self._react_chat_formatter.format(tools, chat_history=history,
                                                 current_reasoning=state["current_reasoning"])

    async def _aprocess_output(self, task: Task, tools: Sequence[Any],
                               text: str) -> tuple[list[BaseReasoningStep], bool]:
        """Parse the model's text; call the tool it asks for. Returns (steps, is_done)."""
        sources: list[ToolOutput] = task.extra_state["sources"]
        try:
            step = self._output_parser.parse(text)
        except ValueError as exc:
            failure = self._handle_reasoning_failure_fn(self.callback_manager, exc)
            if isinstance(failure, ToolOutput):
                sources.append(failure)
            observation = ObservationReasoningStep(observation=str(failure))
            self._print(observation)
            return [observation], False
        self._print(step)
        if not isinstance(step, ActionReasoningStep):
            return [step], step.is_done
        tool = next((t for t in tools if t.metadata.name == step.action), None)
        output = await acall_tool(tool, step.action_input, tool_name=step.action)
        sources.append(output)
        return_direct = bool(tool is not None and tool.metadata.return_direct
                             and not output.is_error)
        observation = ObservationReasoningStep(observation=str(output), return_direct=return_direct)
        self._print(observation)
        return [step, observation], return_direct

    def _print(self, step: BaseReasoningStep) -> None:
        if self._verbose:
            print(step.get_content())

    def _get_response(self, current_reasoning: list[BaseReasoningStep],
                      sources: list[ToolOutput]) -> AgentChatResponse:
        last = current_reasoning[-1]
        if isinstance(last, ResponseReasoningStep):
            text = last.response
        elif isinstance(last, ObservationReasoningStep) and last.return_direct:
            text = last.observation
        else:
            text = last.get_content()
        return AgentChatResponse(response=text, sources=sources)

    def _step_output(self, output: Any, step: TaskStep, is_done: bool) -> TaskStepOutput:
        next_steps = [] if is_done else [step.get_next_step(step_id=new_uuid(), input=None)]
        return TaskStepOutput(output=output, task_step=step, is_last=is_done,
                              next_steps=next_steps)

    def _finish_step(self, task: Task, step: TaskStep, reasoning: list[BaseReasoningStep],
                     is_done: bool) -> TaskStepOutput:
        state = task.extra_state
        state["current_reasoning"].extend(reasoning)
        response = self._get_response(state["current_reasoning"], state["sources"])
        if is_done:
            state["new_memory"].put(ChatMessage(role=MessageRole.ASSISTANT,
                                                content=response.response))
        return self._step_output(response, step, is_done)

    async def arun_step(self, step: TaskStep, task: Task, **kwargs: Any) -> TaskStepOutput:
        self._prepare(step, task)
        tools = await self._aget_tools(task.input)
        response = await self._llm.achat(self._messages(task, tools))
        reasoning, is_done = await self._aprocess_output(task, tools,
                                                         response.message.content or "")
        return self._finish_step(task, step, reasoning, is_done)

    def _streams_early(self) -> bool:
        """Early answer detection knows only the default wire format: a custom parser sees
        the whole text before anything is handed out."""
        parser = self._output_parser
        return isinstance(parser, ReActOutputParser) and (
            type(parser).parse is ReActOutputParser.parse)

    async def astream_step(self, step: TaskStep, task: Task, **kwargs: Any) -> TaskStepOutput:
        """Stream the LLM; hand the answer out as soon as the text is past ``Answer:``."""
        self._prepare(step, task)
        tools = await self._aget_tools(task.input)
        stream = await self._llm.astream_chat(self._messages(task, tools))
        text, kind = "", None
        if self._streams_early():
            async for chunk in stream:
                text = chunk.message.content or ""
                kind = _stream_kind(text)
                if kind is not None:
                    break
        if kind in ("answer", "implicit"):
            deltas = self._answer_deltas(task, text, kind, stream)
            return self._step_output(StreamingAgentChatResponse(deltas), step, is_done=True)
        async for chunk in stream:  # an action (or undecided): read it to the end
            text = chunk.message.content or ""
        reasoning, is_done = await self._aprocess_output(task, tools, text)
        output = self._finish_step(task, step, reasoning, is_done)
        if is_done:  # an answer read whole, or a return_direct tool's output
            output = output.model_copy(update={"output": StreamingAgentChatResponse(
                response=output.output.response, sources=output.output.sources)})
        return output

    async def _answer_deltas(self, task: Task, text: str, kind: str,
                             stream: AsyncIterator[ChatResponse]) -> AsyncIterator[str]:
        """Deltas of the answer (trailing whitespace held back); at the end, record the
        response step and put the answer in the task's memory."""
        sent = ""
        pending = _answer_text(text, kind).rstrip()
        if pending:
            sent = pending
            yield pending
        async for chunk in stream:
            text = chunk.message.content or ""
            current = _answer_text(text, kind).rstrip()
            if current.startswith(sent) and len(current) > len(sent):
                delta, sent = current[len(sent):], current
                yield delta
        try:
            final = self._output_parser.parse(text, is_streaming=True)
        except ValueError:
            final = None
        thought = final.thought if isinstance(final, ResponseReasoningStep) else ""
        step = ResponseReasoningStep(thought=thought, response=sent, is_streaming=True)
        self._print(step)
        task.extra_state["current_reasoning"].append(step)
        task.extra_state["new_memory"].put(ChatMessage(role=MessageRole.ASSISTANT, content=sent))

    def finalize_task(self, task: Task, **kwargs: Any) -> None:
        """Append this task's user message and answer to the agent's memory."""
        new_memory: ChatMemoryBuffer = task.extra_state["new_memory"]
        task.memory.set(task.memory.get_all() + new_memory.get_all())
        new_memory.reset()
