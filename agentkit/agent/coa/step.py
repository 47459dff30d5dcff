"""The Chain-of-Abstraction agent worker: plan with placeholders, fill them in, refine."""

from __future__ import annotations

import asyncio
import string
from collections.abc import AsyncIterator, Sequence
from typing import Any, Protocol

from agentkit.agent.coa.chain import Chain, ChainCall, parse_chain
from agentkit.agent.coa.events import ChainLevelEvent, ChainParsedEvent
from agentkit.agent.coa.prompts import REASONING_PROMPT_TEMPLATE, REFINE_REASONING_PROMPT_TEMPLATE
from agentkit.agent.coa.stubs import tool_stubs
from agentkit.agent.types import (
    AgentChatResponse,
    StreamingAgentChatResponse,
    Task,
    TaskStep,
    TaskStepOutput,
)
from agentkit.agent.worker import AgentWorker
from agentkit.core.events import dispatcher
from agentkit.core.ids import new_uuid
from agentkit.core.sim import now
from agentkit.instrumentation import CallbackManager
from agentkit.llms.base import LLM
from agentkit.llms.tool_calling import ListedTools
from agentkit.llms.types import ChatMessage, ChatResponse, MessageRole
from agentkit.tools import BaseTool, ObjectRetriever, ToolCallOutcome, ToolRunner

__all__ = ["CoAAgentWorker", "ChainOfAbstractionParser", "ChainParser"]


class ChainParser(Protocol):
    """What the worker's ``output_parser`` does: read a model's text into a :class:`Chain`
    whose problems sit on its calls (it must not raise on a bad chain)."""

    def parse(self, text: str) -> Chain: ...


class ChainOfAbstractionParser:
    """The default ``output_parser``: :func:`~agentkit.agent.coa.chain.parse_chain`.

    Unlike LlamaIndex's, it only reads the chain; the worker runs the calls (through the one
    tool runner, so every call is an event and a source)."""

    def parse(self, text: str) -> Chain:
        return parse_chain(text)


def _check_template(template: str, fields: set[str], what: str) -> str:
    """``template`` if it is a ``str.format`` template with exactly ``fields``."""
    if not isinstance(template, str):
        raise TypeError(f"{what} must be a str.format template, got {type(template).__name__}")
    try:
        found = {name for _, name, _, _ in string.Formatter().parse(template) if name is not None}
    except ValueError as exc:
        raise ValueError(f"{what} is not a valid str.format template ({exc}); double literal "
                         "braces: {{ and }}") from None
    missing, unknown = sorted(fields - found), sorted(found - fields)
    if missing or unknown:
        problems = ([f"it lacks {', '.join('{' + f + '}' for f in missing)}"] if missing else []) + (
            [f"it has unknown field(s) {', '.join('{' + f + '}' for f in unknown)} (double "
             "literal braces: {{ and }})"] if unknown else [])
        raise ValueError(f"{what} must use exactly {', '.join('{' + f + '}' for f in sorted(fields))}"
                         f": {'; '.join(problems)}")
    return template


class CoAAgentWorker(AgentWorker):
    """Chain-of-Abstraction: the model writes its reasoning once, with each value a function
    can compute written as a call ``[FUNC add(3, 2) = y1]`` and used by later calls and the
    prose as a placeholder; the calls run; a second LLM call turns the filled-in reasoning
    into the answer.

    Step 1: the memory messages + one user message, the reasoning prompt (function stubs from
    the tools' schemas, the question). A reply with no ``[FUNC`` is the answer (1 LLM call).
    Otherwise the chain is parsed (:class:`~agentkit.agent.coa.chain.Chain`, emitted as
    :class:`ChainParsedEvent`) and run level by level, the calls of a level concurrently (four
    independent 1 s calls take 1 s of simulated wall time), each level emitting a
    :class:`ChainLevelEvent`. A placeholder argument gets the raw output of the call defining
    it. Every call's ``ToolOutput`` is a source. The filled-in text -- each placeholder, on
    whole tokens, replaced by ``"<output>"`` -- is the step's output. Step 2: the memory
    messages + the refine prompt (question, filled-in reasoning); its reply is the answer, as
    written (calls in it are not run). If a call's tool is ``return_direct`` and it succeeds,
    its output is the answer instead (the first such call in the text) and there is no step 2.

    A chain with problems still runs: every call that can run does, and each problem is that
    call's ``is_error`` output, emitted as a tool call that does not run the tool
    (``arguments_error``) and written into the reasoning where its output would be -- so the
    refine call sees which FUNC failed and why. Problems: a FUNC that cannot be read (no name,
    unclosed argument list or string, no ``= yN]``; the call ends at its ``= yN]`` if one
    follows, else at the end of its line), arguments that are not literals, an undefined or
    repeated placeholder, a cycle, an unknown function (``No such tool named ...``), arguments
    the tool rejects, a tool that raises. A call whose input failed is not run: its output is
    ``Error: input y1 failed, so FUNC #2 (...) was not run``.

    Streaming: the reasoning call is streamed and read to its end (the chain must be whole to
    be run); a direct answer is then handed out in the model's chunks. The refine call is
    streamed to the caller as it arrives.

    Memory: this chat's user message and final answer, nothing else, appended to the full
    history at finalize.

    Fixes over LlamaIndex: placeholders replaced on token boundaries (``y1`` never touches
    ``y10``, a quoted ``"y1"`` becomes ``"<output>"``); arguments read by a real parser
    (commas in strings and lists survive); a failed call's dependents are errors naming the
    failed input, not calls with the placeholder's name as argument; the history is not
    duplicated every chat; sources are kept; the calls of a level run concurrently (LlamaIndex
    awaited them one by one); no ``asyncio.run`` inside (sync is derived through
    ``run_sync``, so it works inside a running loop); the refine call is streamed (LlamaIndex
    raised ``NotImplementedError``).
    """

    def __init__(self, llm: LLM, reasoning_prompt_template: str = REASONING_PROMPT_TEMPLATE,
                 refine_reasoning_prompt_template: str = REFINE_REASONING_PROMPT_TEMPLATE,
                 output_parser: ChainParser | None = None,
                 tools: Sequence[BaseTool] | None = None,
                 tool_retriever: ObjectRetriever[BaseTool] | None = None,
                 callback_manager: CallbackManager | None = None, verbose: bool = False) -> None:
        if llm is None:
            raise ValueError(f"{type(self).__name__} needs an `llm`")
        if tools is None and tool_retriever is None:
            raise ValueError("Either tools or tool_retriever must be provided.")
        self._set_tools(tools, tool_retriever)
        self._llm = llm
        self.reasoning_prompt_template = _check_template(
            reasoning_prompt_template, {"functions", "question"}, "reasoning_prompt_template")
        self.refine_reasoning_prompt_template = _check_template(
            refine_reasoning_prompt_template, {"question", "prev_reasoning"},
            "refine_reasoning_prompt_template")
        self.output_parser: ChainParser = output_parser or ChainOfAbstractionParser()
        self.callback_manager = callback_manager or CallbackManager()
        self.verbose = verbose

    @classmethod
    def from_tools(cls, tools: Sequence[BaseTool] | None = None,
                   tool_retriever: ObjectRetriever[BaseTool] | None = None,
                   llm: LLM | None = None, reasoning_prompt_template: str | None = None,
                   refine_reasoning_prompt_template: str | None = None,
                   output_parser: ChainParser | None = None,
                   callback_manager: CallbackManager | None = None, verbose: bool = False,
                   **kwargs: Any) -> CoAAgentWorker:
        """Build a worker; arguments as LlamaIndex's (``None`` = the default prompt/parser)."""
        if kwargs:
            raise TypeError(f"CoAAgentWorker.from_tools got unexpected arguments: "
                            f"{sorted(kwargs)}")
        return cls(llm,  # type: ignore[arg-type]
                   reasoning_prompt_template or REASONING_PROMPT_TEMPLATE,
                   refine_reasoning_prompt_template or REFINE_REASONING_PROMPT_TEMPLATE,
                   output_parser, tools=tools, tool_retriever=tool_retriever,
                   callback_manager=callback_manager, verbose=verbose)

    @property
    def llm(self) -> LLM:
        return self._llm

    # ------------------------------------------------------------------ steps
    def initialize_step(self, task: Task, **kwargs: Any) -> TaskStep:
        self._start_task(task)
        self._new_memory(task).put(ChatMessage(role=MessageRole.USER, content=task.input))
        return TaskStep(task_id=task.task_id, step_id=new_uuid(), input=task.input,
                        step_state={"prev_reasoning": ""})

    async def arun_step(self, step: TaskStep, task: Task, **kwargs: Any) -> TaskStepOutput:
        return await self._astep(step, task, stream=False)

    async def astream_step(self, step: TaskStep, task: Task, **kwargs: Any) -> TaskStepOutput:
        return await self._astep(step, task, stream=True)

    async def _astep(self, step: TaskStep, task: Task, *, stream: bool) -> TaskStepOutput:
        question = step.input if step.input is not None else task.input
        prev_reasoning = step.step_state.get("prev_reasoning", "")
        if prev_reasoning:
            prompt = self.refine_reasoning_prompt_template.format(
                question=question, prev_reasoning=prev_reasoning)
            if stream:
                return await self._astream_answer(step, task, self._messages(task, prompt))
            response = await self._llm.achat(self._messages(task, prompt))
            return self._answer(step, task, response.message.content or "")
        runner = await self._atools_for(task.input)
        functions = tool_stubs(runner.tools)
        self._print("Available Parsed Functions", functions)
        prompt = self.reasoning_prompt_template.format(functions=functions, question=question)
        text, deltas = await self._areply(self._messages(task, prompt), stream,
                                          ListedTools.of("coa", runner.tools))
        self._print("Generated Chain of Abstraction", text)
        chain = self.output_parser.parse(text)
        if not chain.calls:
            return self._answer(step, task, text, deltas)
        dispatcher.emit(ChainParsedEvent(chain=chain))
        outcomes = await self._arun_chain(runner, chain)
        outputs = [outcomes[call.index].output for call in chain.calls]
        self._sources(task).extend(outputs)
        direct = next((outcomes[c.index].output for c in chain.calls
                       if outcomes[c.index].return_direct), None)
        if direct is not None:
            return self._answer(step, task, direct.content, [] if stream else None)
        filled = chain.fill({index: o.output.content for index, o in outcomes.items()})
        self._print("Filled-in Reasoning", filled)
        return self._step_output(step, AgentChatResponse(response=filled, sources=outputs),
                                 is_done=False, next_state={"prev_reasoning": filled})

    def _messages(self, task: Task, prompt: str) -> list[ChatMessage]:
        return [*task.memory.get(input=task.input),
                ChatMessage(role=MessageRole.USER, content=prompt)]

    async def _areply(self, messages: list[ChatMessage], stream: bool,
                      listed: ListedTools) -> tuple[str, list[str] | None]:
        """The model's whole reply, and its chunks when streamed."""
        if not stream:
            return ((await self._llm.achat(messages, listed_tools=listed)).message.content
                    or "", None)
        last, deltas = await self._aread_stream(await self._llm.astream_chat(
            messages, listed_tools=listed))
        return ("" if last is None else last.message.content or ""), deltas

    def _answer(self, step: TaskStep, task: Task, text: str,
                deltas: list[str] | None = None) -> TaskStepOutput:
        """The final step: the answer in memory and as the output (a stream when ``deltas``
        is a list: the model's chunks, or one chunk if they do not make up ``text``)."""
        self._remember(task, text)
        answer = AgentChatResponse(response=text, sources=list(self._sources(task)))
        output = answer if deltas is None else StreamingAgentChatResponse.from_answer(answer,
                                                                                       deltas)
        return self._step_output(step, output, is_done=True)

    async def _astream_answer(self, step: TaskStep, task: Task,
                              messages: list[ChatMessage]) -> TaskStepOutput:
        stream = await self._llm.astream_chat(messages)
        answer = StreamingAgentChatResponse(_deltas(stream), sources=list(self._sources(task)))
        answer.add_on_end(lambda text: self._remember(task, text))
        return self._step_output(step, answer, is_done=True)

    def _remember(self, task: Task, text: str) -> None:
        self._new_memory(task).put(ChatMessage(role=MessageRole.ASSISTANT, content=text))
        self._print("Final Response", text)

    # ------------------------------------------------------------------ the chain
    async def _arun_chain(self, runner: ToolRunner, chain: Chain) -> dict[int, ToolCallOutcome]:
        """Run the chain level by level, each level's calls concurrently."""
        outcomes: dict[int, ToolCallOutcome] = {}
        for number, level in enumerate(chain.levels):
            started = now()
            results = await asyncio.gather(*(self._acall(runner, chain, chain.call(index),
                                                         outcomes) for index in level))
            outcomes.update(zip(level, results, strict=True))
            dispatcher.emit(ChainLevelEvent(
                level=number, calls=[chain.label(i) for i in level],
                failed=[chain.label(i) for i, r in zip(level, results, strict=True) if r.output.is_error],
                started=started))
        return outcomes

    async def _acall(self, runner: ToolRunner, chain: Chain, call: ChainCall,
                     done: dict[int, ToolCallOutcome]) -> ToolCallOutcome:
        """One call: not run if it has a problem or an input failed (its output says why)."""
        inputs = {}
        for name in call.inputs:
            source = chain.defining(name)
            if source is not None and source.index in done:
                inputs[name] = done[source.index].output
        problem = call.error
        failed = [name for name in call.inputs if name not in inputs or inputs[name].is_error]
        if problem is None and failed:
            problem = (f"input{'s' if len(failed) > 1 else ''} {', '.join(failed)} failed, so "
                       f"{call.where} was not run")
        arguments: dict[str, Any] = {}
        if problem is None:
            args, kwargs = call.arguments({n: o.raw_output for n, o in inputs.items()})
            try:
                arguments = self._bind(runner, call, args, kwargs)
            except ValueError as exc:
                problem = f"{call.where}: {exc}"
        if self.verbose:
            print(f"==== Executing {call.name} with inputs {arguments} ====", flush=True)
        return await runner.acall(call.name, arguments, arguments_error=problem)

    @staticmethod
    def _bind(runner: ToolRunner, call: ChainCall, args: list[Any],
              kwargs: dict[str, Any]) -> dict[str, Any]:
        """Keyword arguments for the tool: positional ones named in schema order
        (``ValueError`` for an unknown tool, too many or clashing arguments)."""
        named = runner.bind(call.name, args)
        clash = sorted(set(named) & set(kwargs))
        if clash:
            raise ValueError(f"{call.name}() got several values for {', '.join(clash)}")
        return {**named, **kwargs}

    def _print(self, title: str, text: str) -> None:
        if self.verbose:
            print(f"==== {title} ====\n{text}", flush=True)


async def _deltas(stream: AsyncIterator[ChatResponse]) -> AsyncIterator[str]:
    async for chunk in stream:
        if chunk.delta:
            yield chunk.delta
