"""The ReAct agent worker: think, act (call a tool), observe, repeat, answer."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any, ClassVar, Self

from agentkit.agent.react.formatter import ReActChatFormatter
from agentkit.agent.react.output_parser import ReActOutputParser, first_marker
from agentkit.agent.react.types import (
    ActionReasoningStep,
    BaseReasoningStep,
    ObservationReasoningStep,
    ResponseReasoningStep,
)
from agentkit.agent.types import (
    AgentChatResponse,
    StreamingAgentChatResponse,
    Task,
    TaskStep,
    TaskStepOutput,
)
from agentkit.agent.worker import SOURCES_KEY, AgentWorker
from agentkit.core.ids import new_uuid
from agentkit.instrumentation import CallbackManager
from agentkit.llms.base import LLM
from agentkit.llms.tool_calling import ListedTools
from agentkit.llms.types import ChatMessage, ChatResponse, MessageRole, text_message
from agentkit.tools import BaseTool, ObjectRetriever, ToolOutput, ToolRunner

__all__ = ["ReActAgentWorker", "PARSE_FAILURE_OBSERVATION",
           "tell_llm_about_failure_in_extract_reasoning_step"]

PARSE_FAILURE_OBSERVATION = (
    "Error: Could not parse output. Please follow the thought-action-input format. Try again.")

FailureHandler = Callable[[CallbackManager, Exception], ToolOutput | str]


def tell_llm_about_failure_in_extract_reasoning_step(callback_manager: CallbackManager,
                                                     error: Exception) -> ToolOutput:
    """The default parse-failure handler: an observation asking the model to keep the format."""
    return ToolOutput(content=PARSE_FAILURE_OBSERVATION, tool_name="unknown", raw_input={},
                      raw_output=str(error), is_error=True)


def _after_answer(text: str) -> str:
    return text.split("Answer:", 1)[1]


class _Unsent:
    """What of a growing answer text has not been handed out yet. Surrounding whitespace is
    held back, so the deltas join to the stripped answer the parser returns."""

    def __init__(self) -> None:
        self.sent = ""

    def take(self, answer: str) -> str:
        current = answer.strip()
        if len(current) <= len(self.sent) or not current.startswith(self.sent):
            return ""
        delta, self.sent = current[len(self.sent):], current
        return delta


class ReActAgentWorker(AgentWorker):
    """Runs the ReAct loop, one LLM call per step.

    State lives in ``task.extra_state``: ``sources`` (tool outputs), ``current_reasoning``
    and ``new_memory`` (this task's messages). A parse failure becomes an observation and the
    loop goes on; an unknown tool or a failing tool is an ``Error: ...`` observation; a
    ``return_direct`` tool's output is the answer. Memory after finalize: previous history +
    user input + final answer.

    ``max_iterations`` counts reasoning steps, as LlamaIndex does: a tool call is two (the
    action and its observation), a parse failure or an observation given as a later step's
    input one. A step that does not finish the task and leaves ``current_reasoning`` holding
    ``max_iterations`` or more steps raises ``ValueError("Reached max iterations.")``, so the
    default 10 allows 5 tool calls. Fix: a step that answers always succeeds (LlamaIndex's
    ``chat`` also counts the answer step and fails it, e.g. a direct answer with
    ``max_iterations=1``, while its ``stream_chat`` does not).
    """

    callback_manager: CallbackManager  # never None here: a fresh one when none is given
    #: keyword arguments a subclass's ``__init__`` takes beyond ReAct's, which ``from_tools``
    #: passes on (any other is a TypeError naming it)
    _from_tools_extras: ClassVar[frozenset[str]] = frozenset()

    def __init__(self, tools: Sequence[BaseTool], llm: LLM, max_iterations: int = 10,
                 react_chat_formatter: ReActChatFormatter | None = None,
                 output_parser: ReActOutputParser | None = None,
                 callback_manager: CallbackManager | None = None, verbose: bool = False,
                 tool_retriever: ObjectRetriever[BaseTool] | None = None,
                 handle_reasoning_failure_fn: FailureHandler | None = None) -> None:
        self._set_tools(tools, tool_retriever)
        if llm is None:
            raise ValueError(f"{type(self).__name__} needs an `llm`")
        if max_iterations < 1:
            raise ValueError(f"max_iterations must be at least 1, got {max_iterations}")
        self._llm = llm
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
                   **kwargs: Any) -> Self:
        """Build a worker; arguments in SPEC order (``tools, llm, max_iterations, ...``), then
        the keywords of a subclass (``multi_modal_llm=``...: ``_from_tools_extras``)."""
        unknown = sorted(set(kwargs) - cls._from_tools_extras)
        if unknown:
            raise TypeError(f"{cls.__name__}.from_tools got unexpected arguments: {unknown}")
        return cls(tools=list(tools or []), llm=llm, max_iterations=max_iterations,  # type: ignore[arg-type]
                   react_chat_formatter=react_chat_formatter, output_parser=output_parser,
                   callback_manager=callback_manager, verbose=verbose,
                   tool_retriever=tool_retriever,
                   handle_reasoning_failure_fn=handle_reasoning_failure_fn, **kwargs)

    @property
    def llm(self) -> LLM:
        return self._llm

    # ------------------------------------------------------------------ prompts
    def get_prompts(self) -> dict[str, Any]:
        return {"system_prompt": self._react_chat_formatter.header_template}

    def update_prompts(self, prompts: dict[str, Any]) -> None:
        super().update_prompts(prompts)
        if "system_prompt" in prompts:
            self._react_chat_formatter.set_header(prompts["system_prompt"])

    # ------------------------------------------------------------------ steps
    def initialize_step(self, task: Task, **kwargs: Any) -> TaskStep:
        self._start_task(task, {"current_reasoning": []})
        return TaskStep.__pydantic_validator__.validate_python(  # type: ignore[no-any-return]
            {"task_id": task.task_id, "step_id": new_uuid(), "input": task.input,
             "step_state": {"is_first": True}})

    def _user_message(self, task: Task, text: str) -> ChatMessage:
        """The task's user message (the first step's input); a subclass may add blocks."""
        return text_message(MessageRole.USER, text)

    def _prepare(self, step: TaskStep, task: Task) -> None:
        """The first step's input is the user message, a later step's input
        (``run_step(task_id, input=...)``) is an observation."""
        state = task.extra_state
        if step.input is not None:
            if step.step_state.get("is_first"):
                state[self.memory_key].put(self._user_message(task, step.input))
                step.step_state["is_first"] = False
            else:
                state["current_reasoning"].append(ObservationReasoningStep(observation=step.input))
                if self._verbose:
                    print(f"Added user message to memory: {step.input}")

    def _messages(self, task: Task, tools: Sequence[Any]) -> list[ChatMessage]:
        state = task.extra_state  # _new_memory(task) read inline (as in every step's code here)
        history = task.memory.get(input=task.input) + state[self.memory_key].get_all()
        return self._react_chat_formatter.format(
            tools, chat_history=history, current_reasoning=state["current_reasoning"])

    async def _aprocess_output(self, task: Task, runner: ToolRunner,
                               text: str) -> tuple[list[BaseReasoningStep], bool]:
        """Parse the model's text; call the tool it asks for. Returns (steps, is_done).
        (Each step is printed when ``verbose``: checked here, not in a call per step.)"""
        sources: list[ToolOutput] = task.extra_state[SOURCES_KEY]
        try:
            step = self._output_parser.parse(text)
        except ValueError as exc:
            failure = self._handle_reasoning_failure_fn(self.callback_manager, exc)
            if isinstance(failure, ToolOutput):
                sources.append(failure)
            observation = ObservationReasoningStep(observation=str(failure))
            if self._verbose:
                print(observation.get_content())
            return [observation], False
        if self._verbose:
            print(step.get_content())
        if not isinstance(step, ActionReasoningStep):
            return [step], step.is_done
        outcome = await runner.acall(step.action, step.action_input)
        sources.append(outcome.output)
        # ObservationReasoningStep(...) validated without BaseModel.__init__'s frame, and
        # str(output) as a ToolOutput's content without its __str__ frame
        output = outcome.output
        observation = ObservationReasoningStep.__pydantic_validator__.validate_python(
            {"observation": output.content if type(output) is ToolOutput else str(output),
             "return_direct": outcome.return_direct})
        if self._verbose:
            print(observation.get_content())
        return [step, observation], outcome.return_direct

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

    def _finish_step(self, task: Task, step: TaskStep, reasoning: list[BaseReasoningStep],
                     is_done: bool) -> TaskStepOutput:
        state = task.extra_state
        current_reasoning = state["current_reasoning"]
        current_reasoning.extend(reasoning)
        if not is_done and len(current_reasoning) >= self._max_iterations:
            raise ValueError("Reached max iterations.")
        response = self._get_response(current_reasoning, state[SOURCES_KEY])
        if is_done:
            state[self.memory_key].put(text_message(MessageRole.ASSISTANT, response.response))
        return self._step_output(step, response, is_done=is_done)

    async def arun_step(self, step: TaskStep, task: Task, **kwargs: Any) -> TaskStepOutput:
        self._prepare(step, task)
        # a fixed tool list offered without the _atools_for coroutine (once per step)
        runner = (self._tool_runner.offered() if self._tool_retriever is None
                  else await self._atools_for(task.input))
        tools = runner.tools
        response = await self._llm.achat(self._messages(task, tools),
                                         listed_tools=ListedTools.of("react", tools))
        reasoning, is_done = await self._aprocess_output(task, runner,
                                                         response.message.content or "")
        return self._finish_step(task, step, reasoning, is_done)

    def _streams_early(self) -> bool:
        """Early answer detection knows only the default wire format: a custom parser sees
        the whole text before anything is handed out."""
        parser = self._output_parser
        return isinstance(parser, ReActOutputParser) and (
            type(parser).parse is ReActOutputParser.parse)

    async def astream_step(self, step: TaskStep, task: Task, **kwargs: Any) -> TaskStepOutput:
        """Stream the LLM; hand the answer out as soon as the text is past ``Answer:`` (the
        parser's decision is final there: :func:`first_marker`). Any other text is read
        whole and handled exactly as :meth:`arun_step` does; if it is an answer (implicit, or
        a ``return_direct`` tool's output) it is handed out when the model's stream ends."""
        self._prepare(step, task)
        runner = await self._atools_for(task.input)
        tools = runner.tools
        stream = await self._llm.astream_chat(self._messages(task, tools),
                                              listed_tools=ListedTools.of("react", tools))
        # per chunk only what deciding needs; the deltas of an answer that shows only at the
        # end are worked out then from where each chunk ended (most streamed steps are
        # actions). Lengths, not texts: a text per chunk is memory quadratic in the answer
        text, ends, deciding = "", [], self._streams_early()
        async for chunk in stream:
            text = chunk.message.content or ""
            ends.append(len(text))
            if deciding:
                decision = first_marker(text)
                if decision == "answer":
                    answer = StreamingAgentChatResponse(self._answer_deltas(task, text, stream))
                    return self._step_output(step, answer, is_done=True)
                deciding = decision is None
        reasoning, is_done = await self._aprocess_output(task, runner, text)
        output = self._finish_step(task, step, reasoning, is_done)
        if is_done:
            unsent = _Unsent()
            deltas = [unsent.take(text[:end]) for end in ends]
            output = output.model_copy(update={
                "output": StreamingAgentChatResponse.from_answer(output.output, deltas)})
        return output

    async def _answer_deltas(self, task: Task, text: str,
                             stream: AsyncIterator[ChatResponse]) -> AsyncIterator[str]:
        """Deltas of the answer; at the end, record the parsed response step and put the
        answer in the task's memory."""
        unsent = _Unsent()
        delta = unsent.take(_after_answer(text))
        if delta:
            yield delta
        async for chunk in stream:
            text = chunk.message.content or ""
            delta = unsent.take(_after_answer(text))
            if delta:
                yield delta
        final = self._output_parser.parse(text, is_streaming=True)
        # the text was decided an answer by a prefix, and appending text never undoes that
        assert isinstance(final, ResponseReasoningStep) and final.response == unsent.sent
        if self._verbose:
            print(final.get_content())
        task.extra_state["current_reasoning"].append(final)
        self._new_memory(task).put(text_message(MessageRole.ASSISTANT, final.response))
