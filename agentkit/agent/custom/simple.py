"""Write an agent by implementing one method: :class:`CustomSimpleAgentWorker`."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from typing import Any

from agentkit.agent.types import AgentChatResponse, Task, TaskStep, TaskStepOutput
from agentkit.agent.worker import SOURCES_KEY, AgentWorker
from agentkit.core.ids import new_uuid
from agentkit.instrumentation import CallbackManager
from agentkit.tools import BaseTool, ObjectRetriever

__all__ = ["CustomSimpleAgentWorker", "RESERVED_STATE_KEYS", "StateDictWorker"]

class StateDictWorker(AgentWorker):
    """A worker whose step state is one dict shared with the user's code: it holds the
    worker's keys next to ``sources`` and ``memory`` (the task's new messages) and is merged
    into ``task.extra_state`` after each step."""

    memory_key = "memory"

    def _first_step(self, task: Task, state: dict[str, Any]) -> TaskStep:
        return TaskStep(task_id=task.task_id, step_id=new_uuid(), input=task.input,
                        step_state=self._start_task(task, state))

    def _state_step_output(self, step: TaskStep, task: Task, response: Any,
                           is_done: bool) -> TaskStepOutput:
        task.extra_state.update(step.step_state)
        return self._step_output(step, response, is_done=is_done)


RESERVED_STATE_KEYS = (SOURCES_KEY, StateDictWorker.memory_key)


class CustomSimpleAgentWorker(StateDictWorker):
    """Subclass and implement ``_initialize_state`` and ``_run_step`` (optionally
    ``_arun_step`` and ``_finalize_task``).

    ``_run_step(state, task, input)`` returns ``(response, is_done)``; ``state`` is the
    step's state dict, merged into ``task.extra_state`` after each step. The keys ``sources``
    (tool outputs) and ``memory`` (this task's new messages) are reserved.
    """

    def __init__(self, tools: Sequence[BaseTool] | None = None, llm: Any = None,
                 callback_manager: CallbackManager | None = None, verbose: bool = False,
                 tool_retriever: ObjectRetriever[BaseTool] | None = None, **kwargs: Any) -> None:
        self._set_tools(tools, tool_retriever)
        self.llm = llm
        self.callback_manager = callback_manager or CallbackManager()
        self.verbose = verbose
        for key, value in kwargs.items():
            setattr(self, key, value)

    @classmethod
    def from_tools(cls, tools: Sequence[BaseTool] | None = None,
                   tool_retriever: ObjectRetriever[BaseTool] | None = None, llm: Any = None,
                   callback_manager: CallbackManager | None = None, verbose: bool = False,
                   **kwargs: Any) -> CustomSimpleAgentWorker:
        return cls(tools=tools, llm=llm, callback_manager=callback_manager, verbose=verbose,
                   tool_retriever=tool_retriever, **kwargs)

    @property
    def tools(self) -> list[BaseTool]:
        """The fixed tools (empty when a retriever picks them); assignable, as upstream's field."""
        return self._tool_runner.tools

    @tools.setter
    def tools(self, tools: Sequence[BaseTool]) -> None:
        self._set_tools(tools, self._tool_retriever)

    @property
    def tool_retriever(self) -> ObjectRetriever[BaseTool] | None:
        return self._tool_retriever

    @tool_retriever.setter
    def tool_retriever(self, tool_retriever: ObjectRetriever[BaseTool] | None) -> None:
        self._set_tools(self.tools, tool_retriever)

    def _get_tools(self, input: str) -> list[BaseTool]:
        """The tools for ``input``: the retriever's pick, or the fixed list."""
        return self._tools_for(input).tools

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
        return self._first_step(task, self._initialize_state(task, **kwargs))

    def run_step(self, step: TaskStep, task: Task, **kwargs: Any) -> TaskStepOutput:
        response, is_done = self._run_step(step.step_state, task, input=step.input)
        return self._state_step_output(step, task, response, is_done)

    async def arun_step(self, step: TaskStep, task: Task, **kwargs: Any) -> TaskStepOutput:
        response, is_done = await self._arun_step(step.step_state, task, input=step.input)
        return self._state_step_output(step, task, response, is_done)

    def finalize_task(self, task: Task, **kwargs: Any) -> None:
        super().finalize_task(task, **kwargs)
        self._finalize_task(task.extra_state, **kwargs)
