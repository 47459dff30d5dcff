"""Tasks, steps and the worker/agent base classes (``llama_index.core.agent.types`` shape)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any

from pydantic import ConfigDict, Field, SkipValidation

from agentkit.core.ids import new_uuid
from agentkit.core.models import Model
from agentkit.core.sim import run_sync
from agentkit.instrumentation import CallbackManager
from agentkit.llms.agent_response import AgentChatResponse, StreamingAgentChatResponse
from agentkit.llms.types import ChatMessage
from agentkit.memory import BaseMemory

if TYPE_CHECKING:
    from agentkit.agent.runner.base import AgentRunner

__all__ = [
    "Task",
    "TaskStep",
    "TaskStepOutput",
    "BaseAgent",
    "BaseAgentWorker",
    "AgentChatResponse",
    "StreamingAgentChatResponse",
]


class Task(Model):
    """One user request being worked on: its input, the shared memory and per-task state."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    task_id: str = Field(default_factory=new_uuid)
    input: str
    memory: SkipValidation[BaseMemory]
    callback_manager: SkipValidation[CallbackManager] = Field(default_factory=CallbackManager,
                                                              repr=False)
    extra_state: SkipValidation[dict[str, Any]] = Field(default_factory=dict, repr=False)


class TaskStep(Model):
    """One step of a task. Steps form a DAG through ``next_steps``/``prev_steps``."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    task_id: str
    step_id: str = Field(default_factory=new_uuid)
    input: str | None = None
    step_state: SkipValidation[dict[str, Any]] = Field(default_factory=dict)
    next_steps: SkipValidation[dict[str, TaskStep]] = Field(default_factory=dict, repr=False,
                                                           exclude=True)
    prev_steps: SkipValidation[dict[str, TaskStep]] = Field(default_factory=dict, repr=False,
                                                           exclude=True)
    is_ready: bool = True

    def get_next_step(self, step_id: str, input: str | None = None,
                      step_state: dict[str, Any] | None = None) -> TaskStep:
        """A follow-up step. It shares this step's state unless ``step_state`` is given.

        Fix: LlamaIndex used ``step_state or self.step_state``, so an explicit empty state
        was silently replaced by the parent's; here only ``None`` means "inherit".
        """
        # TaskStep(...) validated without BaseModel.__init__'s frame: a step per step
        return TaskStep.__pydantic_validator__.validate_python(  # type: ignore[no-any-return]
            {"task_id": self.task_id, "step_id": step_id, "input": input,
             "step_state": self.step_state if step_state is None else step_state})

    def link_step(self, next_step: TaskStep) -> None:
        self.next_steps[next_step.step_id] = next_step
        next_step.prev_steps[self.step_id] = self


class TaskStepOutput(Model):
    """What running a step produced: its output, the steps to run next, and whether it ended the task."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    output: SkipValidation[Any]
    task_step: SkipValidation[TaskStep]
    next_steps: SkipValidation[list[TaskStep]] = Field(default_factory=list)
    is_last: bool = False

    def __str__(self) -> str:
        return str(self.output)


def _overrides(obj: object, base: type, name: str) -> bool:
    return getattr(type(obj), name) is not getattr(base, name)


class BaseAgentWorker(ABC):
    """Runs the steps of tasks. Implement ``initialize_step``, ``finalize_task`` and at least
    one of ``run_step``/``arun_step``; the other variants (and streaming) are derived."""

    callback_manager: CallbackManager | None = None

    @abstractmethod
    def initialize_step(self, task: Task, **kwargs: Any) -> TaskStep: ...

    def run_step(self, step: TaskStep, task: Task, **kwargs: Any) -> TaskStepOutput:
        if not _overrides(self, BaseAgentWorker, "arun_step"):
            raise NotImplementedError(f"{type(self).__name__} must implement run_step or arun_step")
        return run_sync(self.arun_step(step, task, **kwargs))

    async def arun_step(self, step: TaskStep, task: Task, **kwargs: Any) -> TaskStepOutput:
        if not _overrides(self, BaseAgentWorker, "run_step"):
            raise NotImplementedError(f"{type(self).__name__} must implement run_step or arun_step")
        return self.run_step(step, task, **kwargs)

    def stream_step(self, step: TaskStep, task: Task, **kwargs: Any) -> TaskStepOutput:
        return run_sync(self.astream_step(step, task, **kwargs))

    async def astream_step(self, step: TaskStep, task: Task, **kwargs: Any) -> TaskStepOutput:
        """Derived: a non-streaming step whose final answer is handed out as a one-chunk stream."""
        if _overrides(self, BaseAgentWorker, "stream_step"):
            return self.stream_step(step, task, **kwargs)
        output = await self.arun_step(step, task, **kwargs)
        if output.is_last and isinstance(output.output, AgentChatResponse):
            stream = StreamingAgentChatResponse.from_answer(output.output)
            output = output.model_copy(update={"output": stream})
        return output

    @abstractmethod
    def finalize_task(self, task: Task, **kwargs: Any) -> None: ...

    def set_callback_manager(self, callback_manager: CallbackManager) -> None:
        self.callback_manager = callback_manager

    def as_agent(self, **kwargs: Any) -> AgentRunner:
        """An :class:`AgentRunner` over this worker."""
        from agentkit.agent.runner.base import AgentRunner

        return AgentRunner(self, **kwargs)

    def get_prompts(self) -> dict[str, Any]:
        return {}

    def update_prompts(self, prompts: dict[str, Any]) -> None:
        unknown = set(prompts) - set(self.get_prompts())
        if unknown:
            raise ValueError(f"{type(self).__name__} has no prompt(s) named {sorted(unknown)}")


class BaseAgent(ABC):
    """Anything you can chat with: ``chat``/``achat``/``stream_chat``/``astream_chat``."""

    @abstractmethod
    async def achat(self, message: str, chat_history: list[ChatMessage] | None = None,
                    **kwargs: Any) -> AgentChatResponse: ...

    @abstractmethod
    async def astream_chat(self, message: str, chat_history: list[ChatMessage] | None = None,
                           **kwargs: Any) -> StreamingAgentChatResponse: ...

    @abstractmethod
    def reset(self) -> None: ...

    @property
    @abstractmethod
    def chat_history(self) -> list[ChatMessage]: ...

    def chat(self, message: str, chat_history: list[ChatMessage] | None = None,
             **kwargs: Any) -> AgentChatResponse:
        return run_sync(self.achat(message, chat_history, **kwargs))

    def stream_chat(self, message: str, chat_history: list[ChatMessage] | None = None,
                    **kwargs: Any) -> StreamingAgentChatResponse:
        return run_sync(self.astream_chat(message, chat_history, **kwargs))

    def query(self, query: str) -> AgentChatResponse:
        """Answer one question with an empty history (LlamaIndex's contract: it clears memory)."""
        return self.chat(query, chat_history=[])

    async def aquery(self, query: str) -> AgentChatResponse:
        return await self.achat(query, chat_history=[])
