"""The worker core: the one mechanism every agentkit agent worker is built on.

:class:`AgentWorker` is :class:`BaseAgentWorker` (the LlamaIndex protocol the runner drives)
plus what every worker needs and used to carry its own copy of: the tools it offers (a fixed
list or a retriever), the task's scratch state, the step output, ``finalize_task``; tool calls
go through :class:`~agentkit.llms.tool_calling.ToolRunner` and a finished answer becomes a
stream through :meth:`StreamingAgentChatResponse.from_answer`.

What a worker implements:

* ``__init__``: call ``self._set_tools(tools, tool_retriever)`` if it uses tools.
* ``initialize_step(task)``: ``self._start_task(task, {own keys})``, then return the first
  :class:`TaskStep` (its ``step_state`` is the worker's business).
* ``arun_step(step, task)`` or ``run_step`` (the other is derived): one step, ending with
  ``return self._step_output(step, answer, is_done=...)``.
* optionally ``astream_step`` (derived by default: the finished answer as one chunk) and
  ``finalize_task`` (by default the task's new messages are appended to memory).

What it gets:

* ``await self._atools_for(query)`` / ``self._tools_for(query)``: a :class:`ToolRunner` over
  the tools offered for ``query`` (the retriever's pick, or the fixed list). ``runner.tools``
  is what the model is told about; ``await runner.acall(name, kwargs, tool_id=...)`` is one
  call as a coroutine (schedule it yourself: a DAG starts each call when its inputs are
  ready); ``await runner.arun(selections, parallel=True)`` runs a batch concurrently;
  ``runner.bind(name, args)`` names positional arguments. A call never raises: unknown tool,
  bad arguments, a raising tool are ``is_error`` outputs; ``arguments_error="..."`` makes a
  call that does not run (a dependent of a failed call). Each outcome says whether it is a
  ``return_direct`` answer. Every call emits one tool-call start/end event pair.
* Scratch state in ``task.extra_state`` (users and the runner read these keys):
  ``"sources"`` (every :class:`ToolOutput` of the task; the runner attaches them to the
  response) and :attr:`memory_key` (a ``ChatMemoryBuffer`` of the messages this task adds to
  the conversation). Reach them with ``self._sources(task)`` / ``self._new_memory(task)``.
* ``self._step_output(step, output, is_done=..., next_state=None)``: the
  :class:`TaskStepOutput`, with one follow-up step unless done (sharing this step's state,
  or ``next_state``). Anything that is not an agent response is wrapped as one.
* ``await self._aread_stream(stream)``: a model's stream read to its end (the last chunk and
  the non-empty deltas), for a worker that must see the whole reply before deciding.
* ``finalize_task``: appends the new messages to the *full* history (``get_all``; a fix over
  LlamaIndex's custom worker, which rebuilt it from the token-limited window), then clears
  them.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any, ClassVar

from agentkit.agent.types import (
    AgentChatResponse,
    BaseAgentWorker,
    StreamingAgentChatResponse,
    Task,
    TaskStep,
    TaskStepOutput,
)
from agentkit.core import ids as _ids
from agentkit.core.sim import run_sync
from agentkit.llms.types import ChatResponse
from agentkit.memory import BaseMemory, ChatMemoryBuffer
from agentkit.tools import (
    BaseTool,
    ObjectRetriever,
    ToolCallOutcome,
    ToolErrorWording,
    ToolOutput,
    ToolRunner,
)

__all__ = ["AgentWorker", "SOURCES_KEY", "ToolRunner", "ToolCallOutcome"]

SOURCES_KEY = "sources"


class AgentWorker(BaseAgentWorker):
    """Base of every agentkit worker: tools, scratch state, step output and finalize in one
    place (the module docstring is the contract)."""

    memory_key: ClassVar[str] = "new_memory"
    """Where ``task.extra_state`` keeps the messages this task adds to the conversation."""

    tool_wording: ClassVar[ToolErrorWording] = ToolErrorWording()
    """How this worker's failed tool calls read to the model (LlamaIndex's ReAct wording by
    default; the function-calling worker uses ``call_tool``'s)."""

    _tool_runner: ToolRunner = ToolRunner()
    _tool_retriever: ObjectRetriever[BaseTool] | None = None

    # ------------------------------------------------------------------ tools
    def _set_tools(self, tools: Sequence[BaseTool] | None,
                   tool_retriever: ObjectRetriever[BaseTool] | None) -> None:
        """Offer a fixed list of tools, or let ``tool_retriever`` pick them per task."""
        if tool_retriever is not None and not hasattr(tool_retriever, "aretrieve"):
            raise TypeError(f"tool_retriever must be an ObjectRetriever, got "
                            f"{type(tool_retriever).__name__} (pass the model as llm=...)")
        if tools and tool_retriever is not None:
            raise ValueError("Cannot specify both tools and tool_retriever")
        self._tool_runner = ToolRunner(tools or [], wording=self.tool_wording)
        self._tool_retriever = tool_retriever

    async def _atools_for(self, query: str) -> ToolRunner:
        """A runner over the tools offered for ``query`` (reported to the bus as a
        :class:`ToolsOfferedEvent`, so a trace holds what each tool was described as)."""
        if self._tool_retriever is None:
            return self._tool_runner.offered()
        return ToolRunner(await self._tool_retriever.aretrieve(query),
                          wording=self.tool_wording).offered()

    def _tools_for(self, query: str) -> ToolRunner:
        """:meth:`_atools_for` for sync code (derived through ``run_sync``, so a retriever
        answers through its ``aretrieve`` either way)."""
        return run_sync(self._atools_for(query))

    # ------------------------------------------------------------------ scratch state
    def _start_task(self, task: Task, state: dict[str, Any] | None = None) -> dict[str, Any]:
        """Fresh scratch state: ``state`` plus empty ``sources`` and new-message memory,
        copied into ``task.extra_state``; returns ``state`` with them."""
        state = {} if state is None else state
        reserved = (SOURCES_KEY, self.memory_key)
        if SOURCES_KEY in state or self.memory_key in state:
            clash = sorted(set(state) & set(reserved))
            raise ValueError(f"state keys {clash} are reserved (agentkit keeps the task's "
                             f"{' and '.join(reserved)} there); rename them")
        # from_defaults() with no arguments, without its call
        state.update({SOURCES_KEY: [], self.memory_key: ChatMemoryBuffer()})
        task.extra_state.update(state)
        return state

    @staticmethod
    def _sources(task: Task) -> list[ToolOutput]:
        """Every tool output of the task so far (the response's ``sources``)."""
        sources: list[ToolOutput] = task.extra_state[SOURCES_KEY]
        return sources

    def _new_memory(self, task: Task) -> BaseMemory:
        """The messages this task adds to the conversation at finalize."""
        memory: BaseMemory = task.extra_state[self.memory_key]
        return memory

    # ------------------------------------------------------------------ steps
    @staticmethod
    def _step_output(step: TaskStep, output: Any, *, is_done: bool,
                     next_state: dict[str, Any] | None = None) -> TaskStepOutput:
        """The step's output and, unless done, one follow-up step (with ``next_state``, or
        sharing this step's state)."""
        if not isinstance(output, (AgentChatResponse, StreamingAgentChatResponse)):
            output = AgentChatResponse(response=str(output))
        if is_done:
            next_steps = []
        elif type(step) is TaskStep:  # step.get_next_step(new_uuid(), ...), inline: each step
            next_steps = [TaskStep.__pydantic_validator__.validate_python(
                {"task_id": step.task_id, "step_id": _ids._current.get(_ids._default).uuid(),
                 "input": None,
                 "step_state": step.step_state if next_state is None else next_state})]
        else:
            next_steps = [step.get_next_step(step_id=_ids._current.get(_ids._default).uuid(),
                                             input=None, step_state=next_state)]
        # TaskStepOutput(...) validated without BaseModel.__init__'s frame (as every model a
        # step builds on the hot path: the same validation, one Python call less)
        return TaskStepOutput.__pydantic_validator__.validate_python(  # type: ignore[no-any-return]
            {"output": output, "task_step": step, "is_last": is_done, "next_steps": next_steps})

    @staticmethod
    async def _aread_stream(
            stream: AsyncIterator[ChatResponse]) -> tuple[ChatResponse | None, list[str]]:
        """The stream's last chunk (``None`` if it had none) and its non-empty deltas: what a
        worker that must see a whole reply keeps to hand an answer out in the model's chunks."""
        last: ChatResponse | None = None
        deltas: list[str] = []
        async for chunk in stream:
            last = chunk
            if chunk.delta:
                deltas.append(chunk.delta)
        return last, deltas

    def finalize_task(self, task: Task, **kwargs: Any) -> None:
        """Append this task's new messages to the full history, then clear them.

        Upstream writes ``set(get_all() + new)``, which ends in the same history but copies
        and compares all of it on every chat; appending costs only the new messages."""
        new_memory = task.extra_state[self.memory_key]  # _new_memory(task), inline
        task.memory.put_messages(new_memory.get_all())
        new_memory.reset()
