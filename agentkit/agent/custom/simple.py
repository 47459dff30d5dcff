"""Write an agent by implementing one method: :class:`CustomSimpleAgentWorker`."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from typing import Any

from agentkit.agent.types import AgentChatResponse, BaseAgentWorker, Task, TaskStep, TaskStepOutput
from agentkit.core.ids import new_uuid
from agentkit.instrumentation import CallbackManager
from agentkit.memory import ChatMemoryBuffer
from agentkit.tools import BaseTool, ObjectRetriever

__all__ = ["CustomSimpleAgentWorker", "RESERVED_STATE_KEYS"]

RESERVED_STATE_KEYS = ("sources", "memory")


def _as_response(response: Any) -> AgentChatResponse:
    return response if isinstance(response, AgentChatResponse) else AgentChatResponse(str(response))


class StatefulStepsMixin:
    """Shared by the state-dict workers: the step state carries ``sources`` and ``memory`` (the
    task's new messages) next to the worker's keys, is merged into the task after each step, and
    ``memory`` is appended to the full history at finalize."""

    def _new_task_state(self, task: Task, step_state: dict[str, Any]) -> TaskStep:
        clash = set(step_state) & set(RESERVED_STATE_KEYS)
        if clash:
            raise ValueError(f"state keys {sorted(clash)} are reserved (agentkit keeps the task's "
                             f"{' and '.join(RESERVED_STATE_KEYS)} there); rename them")
        step_state.update({"sources": [], "memory": ChatMemoryBuffer.from_defaults()})
        task.extra_state.update(step_state)
        return TaskStep(task_id=task.task_id, step_id=new_uuid(), input=task.input,
                        step_state=step_state)

    @staticmethod
    def _step_output(response: Any, step: TaskStep, task: Task,
                     is_done: bool) -> TaskStepOutput:
        task.extra_state.update(step.step_state)
        next_steps = [] if is_done else [step.get_next_step(step_id=new_uuid(), input=None)]
        return TaskStepOutput(output=_as_response(response), task_step=step, is_last=is_done,
                              next_steps=next_steps)

    @staticmethod
    def _append_new_messages(task: Task) -> None:
        """Fix: appends to the full history (``get_all``), not to the token-limited window
        LlamaIndex used, which silently dropped old messages at every finalize."""
        new_memory = task.extra_state["memory"]
        task.memory.set(task.memory.get_all() + new_memory.get_all())
        new_memory.reset()


class CustomSimpleAgentWorker(StatefulStepsMixin, BaseAgentWorker):
    """Subclass and implement ``_initialize_state`` and ``_run_step`` (optionally
    ``_arun_step`` and ``_finalize_task``).

    ``_run_step(state, task, input)`` returns ``(response, is_done)``; ``state`` is the
    step's state dict, merged into ``task.extra_state`` after each step. The keys ``sources``
    (tool outputs) and ``memory`` (this task's new messages) are reserved.
    """

    def __init__(self, tools: Sequence[BaseTool] | None = None, llm: Any = None,
                 callback_manager: CallbackManager | None = None, verbose: bool = False,
                 tool_retriever: ObjectRetriever[BaseTool] | None = None, **kwargs: Any) -> None:
        if tools and tool_retriever is not None:
            raise ValueError("Cannot specify both tools and tool_retriever")
        self.tools = list(tools or [])
        self.llm = llm
        self.callback_manager = callback_manager or CallbackManager()
        self.verbose = verbose
        self.tool_retriever = tool_retriever
        for key, value in kwargs.items():
            setattr(self, key, value)

    @classmethod
    def from_tools(cls, tools: Sequence[BaseTool] | None = None,
                   tool_retriever: ObjectRetriever[BaseTool] | None = None, llm: Any = None,
                   callback_manager: CallbackManager | None = None, verbose: bool = False,
                   **kwargs: Any) -> CustomSimpleAgentWorker:
        return cls(tools=tools, llm=llm, callback_manager=callback_manager, verbose=verbose,
                   tool_retriever=tool_retriever, **kwargs)

    def _get_tools(self, input: str) -> list[BaseTool]:
        if self.tool_retriever is not None:
            return list(self.tool_retriever.retrieve(input))
        return self.tools

    @abstractmethod
    def _initialize_state(self, task: Task, **kwargs: Any) -> dict[str, Any]:
        """The state of the task's first step."""

    @abstractmethod
    def _run_step(self, state: dict[str, Any], task: Task,
                  input: str | None = None) -> tuple[AgentChatResponse, bool]:
        """Run one step; return ``(response, is_done)``."""

    async def _arun_step(self, state: dict[str, Any], task: Task,
                         input: str | None = None) -> tuple[AgentChatResponse, bool]:
        return self._run_step(state, task, input)

    def _finalize_task(self, state: dict[str, Any], **kwargs: Any) -> None:
        """Optional hook after the task's messages are in memory."""

    def initialize_step(self, task: Task, **kwargs: Any) -> TaskStep:
        return self._new_task_state(task, self._initialize_state(task, **kwargs))

    def run_step(self, step: TaskStep, task: Task, **kwargs: Any) -> TaskStepOutput:
        response, is_done = self._run_step(step.step_state, task, input=step.input)
        return self._step_output(response, step, task, is_done)

    async def arun_step(self, step: TaskStep, task: Task, **kwargs: Any) -> TaskStepOutput:
        response, is_done = await self._arun_step(step.step_state, task, input=step.input)
        return self._step_output(response, step, task, is_done)

    def finalize_task(self, task: Task, **kwargs: Any) -> None:
        self._append_new_messages(task)
        self._finalize_task(task.extra_state, **kwargs)
