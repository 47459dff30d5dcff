"""The agent runner: owns tasks and their step queues, and drives a worker step by step."""

from __future__ import annotations

import copy
from collections import deque
from collections.abc import Iterable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Any, Literal

from agentkit.agent.types import (
    AgentChatResponse,
    BaseAgent,
    BaseAgentWorker,
    StreamingAgentChatResponse,
    Task,
    TaskStep,
    TaskStepOutput,
)
from agentkit.core import ids as _ids
from agentkit.core.events import (
    AgentChatEndEvent,
    AgentChatStartEvent,
    AgentStepEndEvent,
    AgentStepStartEvent,
    Span,
    _current_span,
    _new_tuple,
    dispatcher,
)
from agentkit.core.ids import new_uuid
from agentkit.core.sim import run_sync
from agentkit.instrumentation import CallbackManager
from agentkit.llms.types import ChatMessage
from agentkit.memory import BaseMemory, ChatMemoryBuffer

__all__ = ["AgentRunner", "AgentState", "StepSnapshot", "TaskState"]

StepMode = Literal["run", "stream"]
_new = object.__new__


@dataclass
class TaskState:
    """A task the runner holds: the task, its queue of steps to run, the outputs of the steps
    completed and their undo snapshots."""

    task: Task
    step_queue: deque[TaskStep] = field(default_factory=deque)
    completed_steps: list[TaskStepOutput] = field(default_factory=list)
    undo_stack: list[StepSnapshot] = field(default_factory=list, repr=False)
    """One snapshot per completed step, taken before it ran (``AgentRunner.undo_step``)."""


@dataclass
class StepSnapshot:
    """What a task was before one of its steps: the queued steps (each with its input and
    state), the task's scratch state, and the messages of every memory the task holds (its
    conversation memory and the worker's new-message buffers).

    Containers (dicts, lists, sets, deques, tuples) are copied, keeping their sharing (a
    worker may keep one dict as both step state and task state); memories are kept with a
    copy of their messages and put back in place, so a memory object keeps its identity;
    anything else (messages, tool outputs, reasoning steps) is a record and kept as is. A
    ``ChatMemoryBuffer``'s snapshot costs nothing however long the conversation is."""

    queue: list[tuple[TaskStep, str | None, dict[str, Any]]]
    extra_state: dict[str, Any]
    memories: list[tuple[BaseMemory, Any]]

    @classmethod
    def take(cls, task: Task, queue: deque[TaskStep]) -> StepSnapshot:
        # plain state (dicts of records, lists of records and memories) is copied by
        # _copy_dict, with no _Copier built: that is for anything else (see there)
        copies: dict[int, Any] = {}
        memories: dict[int, tuple[BaseMemory, Any]] = {}
        memory = task.memory
        if type(memory) is ChatMemoryBuffer:  # its snapshot(), inline (the usual memory)
            history = memory._history
            memories[id(memory)] = (memory, (history, len(history)))
        elif type(memory) in _memory_types:  # the conversation's memory, as ``_Copier._memory``
            memories[id(memory)] = (memory, memory.snapshot())
        else:
            _Copier(copies, memories).copy(memory)
        steps = []
        for step in queue:  # a loop, not a comprehension: the queue holds one step or none
            state = step.step_state
            if (type(state) is dict and id(state) not in copies
                    and _record_types.issuperset(map(type, state.values()))):
                # records only (an empty state, flags): _copy_dict's copy, without its call
                copied = copies[id(state)] = state.copy()
            elif type(state) is dict:
                copied = _copy_dict(state, copies, memories)
            else:
                copied = _Copier(copies, memories).copy(state)
            steps.append((step, step.input, copied))
        extra_state = task.extra_state
        extra_state = (_copy_dict(extra_state, copies, memories) if type(extra_state) is dict
                       else _Copier(copies, memories).copy(extra_state))
        # cls(...) without the dataclass __init__'s frame: a snapshot per step
        snapshot = _new(cls)
        snapshot.queue, snapshot.extra_state = steps, extra_state
        snapshot.memories = list(memories.values())
        return snapshot

    def restore(self, task: Task, queue: deque[TaskStep]) -> None:
        queue.clear()
        for step, step_input, step_state in self.queue:
            step.input, step.step_state = step_input, step_state
            queue.append(step)
        task.extra_state.clear()
        task.extra_state.update(self.extra_state)
        for memory, saved in self.memories:
            memory.restore(saved)


_RECORD, _MEMORY, _TUPLE, _CONTAINER = range(4)
_kinds: dict[type, int] = {}
"""What :class:`_Copier` does with a value of each type (:func:`_kind`), by type."""


def _kind(cls: type) -> int:
    """Worked out once per type: a step's snapshot meets the same few types every time."""
    kind = _kinds.get(cls)
    if kind is None:
        if issubclass(cls, BaseMemory):
            kind = _MEMORY
            _memory_types.add(cls)
        elif cls is tuple:  # a named tuple is a record
            kind = _TUPLE
        elif issubclass(cls, (dict, list, set, deque)):
            kind = _CONTAINER
        else:
            kind = _RECORD
            _record_types.add(cls)
        _kinds[cls] = kind
    return kind


_record_types: set[type] = set()
"""The types :func:`_kind` found to be records."""
_memory_types: set[type] = set()
"""The types :func:`_kind` found to be memories."""


def _records_only(values: Iterable[Any]) -> bool:
    """Whether every value is a record (kept as is): a look-up per type, not per value."""
    types = set(map(type, values))
    return types <= _record_types or all(_kind(cls) == _RECORD for cls in types)


class _Copier:
    """The copy a :class:`StepSnapshot` keeps (see there), of any value: ``copies`` holds the
    containers copied so far (by id, so sharing is kept), ``memories`` the memories met and
    their snapshots. Plain state dicts are copied by :func:`_copy_dict` without one."""

    __slots__ = ("_copies", "memories")

    def __init__(self, copies: dict[int, Any], memories: dict[int, tuple[BaseMemory, Any]],
                 ) -> None:
        self._copies = copies
        self.memories = memories

    def _memory(self, memory: BaseMemory) -> BaseMemory:
        if id(memory) not in self.memories:
            self.memories[id(memory)] = (memory, memory.snapshot())
        return memory

    def copy(self, value: Any) -> Any:
        cls = type(value)
        if cls in _record_types:
            return value
        if cls is dict:  # the common case, without copy.copy's dispatch
            return _copy_dict(value, self._copies, self.memories)
        kind = _kinds.get(cls)
        if kind is None:
            kind = _kind(cls)
        if kind == _RECORD:
            return value
        if kind == _MEMORY:
            return self._memory(value)
        if kind == _TUPLE:
            return tuple(self.copy(item) for item in value)
        known = self._copies.get(id(value))
        if known is not None:
            return known
        if cls is list and _records_only(value):
            copied = value.copy()
            self._copies[id(value)] = copied
            return copied
        copied = copy.copy(value)  # the same container type, filled again below
        self._copies[id(value)] = copied
        copied.clear()
        if isinstance(value, dict) and isinstance(copied, dict):
            copied.update((key, self.copy(item)) for key, item in value.items())
        elif isinstance(copied, set):
            copied.update(value)  # set members are hashable, so immutable records
        elif isinstance(copied, (list, deque)):
            copied.extend(value if _records_only(value) else (self.copy(item) for item in value))
        return copied


def _copy_dict(value: dict[Any, Any], copies: dict[int, Any],
               memories: dict[int, tuple[BaseMemory, Any]]) -> dict[Any, Any]:
    """A state dict's copy (:class:`_Copier`'s, for a ``dict``): a step's state is mostly
    records, lists of records and memories, taken in the dict's own loop -- a look-up per
    value's type (a type seen before is known), a call only for what is nested deeper."""
    known: dict[Any, Any] | None = copies.get(id(value))
    if known is not None:
        return known
    copied = copies[id(value)] = value.copy()  # records stay as they are
    for key, item in value.items():
        cls = type(item)
        if cls in _record_types:
            continue
        if (cls is list and id(item) not in copies
                and _record_types.issuperset(map(type, item))):
            copied[key] = copies[id(item)] = item.copy()
        elif cls is ChatMemoryBuffer:  # its snapshot(), inline (a worker's new messages)
            if id(item) not in memories:
                history = item._history
                memories[id(item)] = (item, (history, len(history)))
        elif cls in _memory_types:
            if id(item) not in memories:
                memories[id(item)] = (item, item.snapshot())
        else:
            copied[key] = _Copier(copies, memories).copy(item)
    return copied


@dataclass
class AgentState:
    """Every task of a runner, by task id."""

    task_dict: dict[str, TaskState] = field(default_factory=dict)

    def _state(self, task_id: str) -> TaskState:
        try:
            return self.task_dict[task_id]
        except KeyError:
            raise ValueError(f"No task with task_id: {task_id}") from None

    def get_task(self, task_id: str) -> Task:
        return self._state(task_id).task

    def get_completed_steps(self, task_id: str) -> list[TaskStepOutput]:
        return self._state(task_id).completed_steps

    def get_step_queue(self, task_id: str) -> deque[TaskStep]:
        return self._state(task_id).step_queue

    def reset(self) -> None:
        self.task_dict = {}


def _error_text(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


class AgentRunner(BaseAgent):
    """Chat with an agent, or drive its tasks step by step.

    A step run pops the task's queue, runs the worker, appends the output to the completed
    steps and, unless it is the last, queues the step's next steps. Every chat emits one chat
    start/end event pair around one step start/end pair per step.
    """

    def __init__(self, agent_worker: BaseAgentWorker,
                 chat_history: list[ChatMessage] | None = None, state: AgentState | None = None,
                 memory: BaseMemory | None = None, llm: Any = None,
                 callback_manager: CallbackManager | None = None,
                 init_task_state_kwargs: dict[str, Any] | None = None,
                 delete_task_on_finish: bool = False, default_tool_choice: str = "auto",
                 verbose: bool = False) -> None:
        self.agent_worker = agent_worker
        self.state = state or AgentState()
        llm = llm if llm is not None else getattr(agent_worker, "llm", None)
        self.memory = memory or ChatMemoryBuffer.from_defaults(chat_history=chat_history, llm=llm)
        self.callback_manager = (callback_manager or agent_worker.callback_manager
                                 or CallbackManager())
        agent_worker.set_callback_manager(self.callback_manager)
        self.init_task_state_kwargs = init_task_state_kwargs or {}
        self.delete_task_on_finish = delete_task_on_finish
        self.default_tool_choice = default_tool_choice
        self.verbose = verbose

    @classmethod
    def from_llm(cls, tools: list[Any] | None = None, llm: Any = None,
                 **kwargs: Any) -> AgentRunner:
        """A function-calling agent if ``llm`` supports it, a ReAct agent otherwise."""
        if llm is None:
            raise ValueError("AgentRunner.from_llm needs an `llm`")
        if llm.metadata.is_function_calling_model:
            from agentkit.agent.function_calling import FunctionCallingAgent

            return FunctionCallingAgent.from_tools(tools or [], llm=llm, **kwargs)
        from agentkit.agent.react import ReActAgent

        return ReActAgent.from_tools(tools or [], llm=llm, **kwargs)

    # ------------------------------------------------------------------ tasks
    def create_task(self, input: str, **kwargs: Any) -> Task:
        if not self.init_task_state_kwargs:
            extra_state = kwargs.pop("extra_state", {})
        elif "extra_state" in kwargs:
            raise ValueError("Cannot specify both `extra_state` and `init_task_state_kwargs`")
        else:
            extra_state = dict(self.init_task_state_kwargs)
        callback_manager = kwargs.pop("callback_manager", self.callback_manager)
        if kwargs:  # a caller's own Task fields (task_id=...)
            task = Task(input=input, memory=self.memory, extra_state=extra_state,
                        callback_manager=callback_manager, **kwargs)
        else:  # the same, validated without BaseModel.__init__'s frame (once per chat)
            task = Task.__pydantic_validator__.validate_python(
                {"input": input, "memory": self.memory, "extra_state": extra_state,
                 "callback_manager": callback_manager})
        initial_step = self.agent_worker.initialize_step(task)
        self.state.task_dict[task.task_id] = TaskState(task, deque([initial_step]))
        return task

    def delete_task(self, task_id: str) -> None:
        self.state._state(task_id)
        del self.state.task_dict[task_id]

    def list_tasks(self, **kwargs: Any) -> list[TaskState]:
        return list(self.state.task_dict.values())

    def get_task(self, task_id: str, **kwargs: Any) -> Task:
        return self.state.get_task(task_id)

    def get_upcoming_steps(self, task_id: str, **kwargs: Any) -> list[TaskStep]:
        return list(self.state.get_step_queue(task_id))

    def get_completed_steps(self, task_id: str, **kwargs: Any) -> list[TaskStepOutput]:
        return self.state.get_completed_steps(task_id)

    def get_task_output(self, task_id: str, **kwargs: Any) -> TaskStepOutput:
        completed = self.get_completed_steps(task_id)
        if not completed:
            raise ValueError(f"No completed steps for task_id: {task_id}")
        return completed[-1]

    def get_completed_tasks(self, **kwargs: Any) -> list[Task]:
        return [s.task for s in self.state.task_dict.values()
                if s.completed_steps and s.completed_steps[-1].is_last]

    # ------------------------------------------------------------------ steps
    def _listening(self, callback_manager: CallbackManager | None) -> AbstractContextManager[Any]:
        manager = callback_manager or self.callback_manager
        return dispatcher.listen(manager) if manager.handlers else nullcontext()

    @staticmethod
    def _next_step(task_id: str, queue: deque[TaskStep], step: TaskStep | None,
                   input: str | None) -> TaskStep:
        if step is not None:
            for queued in list(queue):
                if queued.step_id == step.step_id:
                    queue.remove(queued)
            return step
        if queue:
            step = queue.popleft()
            if input is not None:
                step.input = input
            return step
        if input is not None:
            return TaskStep(task_id=task_id, step_id=new_uuid(), input=input)
        raise ValueError(f"No steps left to run for task_id: {task_id}")

    def _queue_next_steps(self, state: TaskState, output: TaskStepOutput) -> None:
        """Queue the next steps of ``output``, a step that is not the last."""
        state.step_queue.extend(output.next_steps)

    _keeps_undo = True
    """Whether each step's snapshot is kept for :meth:`undo_step`."""

    async def _arun_step(self, task_id: str, step: TaskStep | None = None,
                         input: str | None = None, mode: StepMode = "run",
                         **kwargs: Any) -> TaskStepOutput:
        state = self.state.task_dict.get(task_id)  # self.state._state(task_id), inline
        if state is None:
            state = self.state._state(task_id)  # raises its ValueError
        task = state.task
        queue = state.step_queue
        snapshot = StepSnapshot.take(task, queue) if self._keeps_undo else None
        if step is None and queue:  # the usual next step, as _next_step takes it
            step = queue.popleft()
            if input is not None:
                step.input = input
        else:
            step = self._next_step(task_id, queue, step, input)
        if self.verbose:
            print(f"> Running step {step.step_id}. Step input: {step.input}")
        # dispatcher.span()'s block, inline (its __enter__ and __exit__ are two frames each time)
        parent = _current_span.get()
        numbers = _ids._current.get(_ids._default).span_numbers
        token = _current_span.set(_new_tuple(Span, (f"span-{next(numbers)}",
                                                    parent.id if parent is not None else None)))
        try:
            if dispatcher.wants(AgentStepStartEvent):  # else not built
                dispatcher.emit(AgentStepStartEvent(task_id=task_id, step_id=step.step_id,
                                                    input=input, step=step))
            try:
                if mode == "stream":
                    output = await self.agent_worker.astream_step(step, task, **kwargs)
                else:
                    output = await self.agent_worker.arun_step(step, task, **kwargs)
            except BaseException as exc:
                dispatcher.emit(AgentStepEndEvent(task_id=task_id, step_id=step.step_id,
                                                  error=_error_text(exc)))
                raise
            if dispatcher.wants(AgentStepEndEvent):
                dispatcher.emit(AgentStepEndEvent(task_id=task_id, step_id=step.step_id,
                                                  output=output, is_last=output.is_last))
        finally:
            _current_span.reset(token)
        if output.is_last:  # a last step queues nothing, in any runner
            pass
        elif type(self)._queue_next_steps is AgentRunner._queue_next_steps:
            state.step_queue.extend(output.next_steps)  # the method's body, without its frame
        else:
            self._queue_next_steps(state, output)
        state.completed_steps.append(output)
        if snapshot is not None:
            state.undo_stack.append(snapshot)
        return output

    def undo_step(self, task_id: str) -> TaskStepOutput:
        """Undo the task's last completed step and return its output: the step queue, the
        task's state and memory (the conversation's too, if the step's answer was already
        written to it) are as they were before that step, so the next ``run_step`` runs it
        again -- with another LLM, or another ``input``. Repeatable, back to the first step.

        LlamaIndex 0.12 only declares this method (NotImplementedError). A ValueError says
        when the task has no step to undo; a deleted task (``delete_task_on_finish``) has
        none left.
        """
        state = self.state._state(task_id)
        if not state.completed_steps or not state.undo_stack:
            raise ValueError(f"Nothing to undo for task_id: {task_id} (no step of it has "
                             "completed since it was created)")
        snapshot = state.undo_stack.pop()
        output = state.completed_steps.pop()
        snapshot.restore(state.task, state.step_queue)
        return output

    @staticmethod
    def _check_step_args(input: str | None, step: TaskStep | None) -> None:
        if step is not None and input is not None:
            raise ValueError("Cannot specify both `step` and `input`")

    async def arun_step(self, task_id: str, input: str | None = None,
                        step: TaskStep | None = None, **kwargs: Any) -> TaskStepOutput:
        """Run one step (the next queued one, or ``step``); ``input`` feeds the step."""
        self._check_step_args(input, step)
        with self._listening(self.state.get_task(task_id).callback_manager):
            return await self._arun_step(task_id, step, input, mode="run", **kwargs)

    def run_step(self, task_id: str, input: str | None = None, step: TaskStep | None = None,
                 **kwargs: Any) -> TaskStepOutput:
        return run_sync(self.arun_step(task_id, input, step, **kwargs))

    async def astream_step(self, task_id: str, input: str | None = None,
                           step: TaskStep | None = None, **kwargs: Any) -> TaskStepOutput:
        self._check_step_args(input, step)
        with self._listening(self.state.get_task(task_id).callback_manager):
            return await self._arun_step(task_id, step, input, mode="stream", **kwargs)

    def stream_step(self, task_id: str, input: str | None = None, step: TaskStep | None = None,
                    **kwargs: Any) -> TaskStepOutput:
        return run_sync(self.astream_step(task_id, input, step, **kwargs))

    # ------------------------------------------------------------------ finishing
    def _finish_task(self, task: Task) -> None:
        self.agent_worker.finalize_task(task)
        if self.delete_task_on_finish and task.task_id in self.state.task_dict:
            self.delete_task(task.task_id)

    def finalize_response(self, task_id: str, step_output: TaskStepOutput | None = None,
                          ) -> AgentChatResponse | StreamingAgentChatResponse:
        """Finalize the task (write memory) and return its answer with every step's sources.

        A streamed answer is finalized when its stream ends (at once if it already has).
        Fix: with ``delete_task_on_finish`` the task is deleted after the sources are attached
        (LlamaIndex read the already-deleted task and crashed).
        """
        if step_output is None:
            step_output = self.get_task_output(task_id)
        if not step_output.is_last:
            raise ValueError("finalize_response can only be called on the last step output")
        output: AgentChatResponse | StreamingAgentChatResponse = step_output.output
        if not isinstance(output, (AgentChatResponse, StreamingAgentChatResponse)):
            raise ValueError("When `is_last` is True, the step output must be an "
                             f"AgentChatResponse or StreamingAgentChatResponse, got {output!r}")
        state = self.state.task_dict.get(task_id)  # self.state.get_task(task_id), inline
        task = state.task if state is not None else self.state.get_task(task_id)
        output.sources = task.extra_state.get("sources", output.sources)
        if isinstance(output, StreamingAgentChatResponse) and not output.is_done:
            output.add_on_end(lambda _text: self._finish_task(task))
        else:
            self._finish_task(task)
        return output

    # ------------------------------------------------------------------ chat
    async def _arun_task(self, task_id: str, mode: StepMode,
                         tool_choice: str | dict[str, Any]) -> TaskStepOutput:
        """Run steps until one is last; ``tool_choice`` applies to the first step only."""
        while True:
            output = await self._arun_step(task_id, mode=mode, tool_choice=tool_choice)
            if output.is_last:
                return output
            tool_choice = "auto"

    def _task_options(self, chat_kwargs: dict[str, Any]) -> dict[str, Any]:
        """``create_task`` keywords from a chat call's extra keywords: the hook a runner uses
        to turn its own chat options (images, say) into task state. The base runner ignores
        extra keywords, as LlamaIndex's does."""
        return {}

    async def _achat(self, message: str, chat_history: list[ChatMessage] | None,
                     tool_choice: str | dict[str, Any] | None, mode: StepMode,
                     chat_kwargs: dict[str, Any]) -> AgentChatResponse | StreamingAgentChatResponse:
        task_options = self._task_options(chat_kwargs)
        if chat_history is not None:
            self.memory.set(chat_history)
        tool_choice = tool_choice if tool_choice is not None else self.default_tool_choice
        if self.callback_manager.handlers:  # as _listening, without a no-op block per chat
            with dispatcher.listen(self.callback_manager):
                return await self._achat_in_span(message, tool_choice, mode, task_options)
        return await self._achat_in_span(message, tool_choice, mode, task_options)

    async def _achat_in_span(self, message: str, tool_choice: str | dict[str, Any],
                             mode: StepMode, task_options: dict[str, Any],
                             ) -> AgentChatResponse | StreamingAgentChatResponse:
        """The chat's span: its start/end events around its task's steps."""
        with dispatcher.span():
            if dispatcher.wants(AgentChatStartEvent):  # else not built
                dispatcher.emit(AgentChatStartEvent(user_msg=message))
            try:
                task = self.create_task(message, **task_options)
                output = await self._arun_task(task.task_id, mode, tool_choice)
                result = self.finalize_response(task.task_id, output)
            except BaseException as exc:
                dispatcher.emit(AgentChatEndEvent(error=_error_text(exc)))
                raise
            if dispatcher.wants(AgentChatEndEvent):
                dispatcher.emit(AgentChatEndEvent(response=result))
        return result

    async def achat(self, message: str, chat_history: list[ChatMessage] | None = None,
                    tool_choice: str | dict[str, Any] | None = None,
                    **kwargs: Any) -> AgentChatResponse:
        result = await self._achat(message, chat_history, tool_choice, "run", kwargs)
        assert isinstance(result, AgentChatResponse)
        return result

    async def astream_chat(self, message: str, chat_history: list[ChatMessage] | None = None,
                           tool_choice: str | dict[str, Any] | None = None,
                           **kwargs: Any) -> StreamingAgentChatResponse:
        result = await self._achat(message, chat_history, tool_choice, "stream", kwargs)
        if isinstance(result, AgentChatResponse):  # a worker that streamed nothing
            result = StreamingAgentChatResponse(response=result.response, sources=result.sources)
        return result

    def chat(self, message: str, chat_history: list[ChatMessage] | None = None,
             tool_choice: str | dict[str, Any] | None = None, **kwargs: Any) -> AgentChatResponse:
        return run_sync(self.achat(message, chat_history, tool_choice, **kwargs))

    def stream_chat(self, message: str, chat_history: list[ChatMessage] | None = None,
                    tool_choice: str | dict[str, Any] | None = None,
                    **kwargs: Any) -> StreamingAgentChatResponse:
        return run_sync(self.astream_chat(message, chat_history, tool_choice, **kwargs))

    # ------------------------------------------------------------------ memory
    def reset(self) -> None:
        self.memory.reset()
        self.state.reset()

    @property
    def chat_history(self) -> list[ChatMessage]:
        return self.memory.get_all()

    def get_prompts(self) -> dict[str, Any]:
        return self.agent_worker.get_prompts()

    def update_prompts(self, prompts: dict[str, Any]) -> None:
        self.agent_worker.update_prompts(prompts)
