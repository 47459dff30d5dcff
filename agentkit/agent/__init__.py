"""The step-wise agent stack (``llama_index.core.agent`` shape).

The runner, the ReAct and function-calling workers and the task types are imported with the
package; the rarer agents (custom and multimodal workers, the parallel runner, packs) on first
use (:mod:`agentkit.core.lazy`), so ``import agentkit.agent`` loads only what a chat needs."""

from typing import TYPE_CHECKING

from agentkit.agent.function_calling import FunctionCallingAgent, FunctionCallingAgentWorker
from agentkit.agent.react import (
    ReActAgent,
    ReActAgentWorker,
    ReActChatFormatter,
    ReActOutputParser,
)
from agentkit.agent.runner import AgentRunner, AgentState, TaskState
from agentkit.agent.types import (
    AgentChatResponse,
    BaseAgent,
    BaseAgentWorker,
    StreamingAgentChatResponse,
    Task,
    TaskStep,
    TaskStepOutput,
)
from agentkit.agent.worker import AgentWorker
from agentkit.core.lazy import lazy_names

if TYPE_CHECKING:
    from agentkit.agent.custom import (
        CustomSimpleAgentWorker,
        FnAgentWorker,
        QueryPipelineAgentWorker,
    )
    from agentkit.agent.pack import BaseLlamaPack
    from agentkit.agent.react_multimodal import MultimodalReActAgent, MultimodalReActAgentWorker
    from agentkit.agent.runner import ParallelAgentRunner

__all__ = [
    "AgentChatResponse",
    "AgentRunner",
    "AgentState",
    "AgentWorker",
    "BaseAgent",
    "BaseAgentWorker",
    "BaseLlamaPack",
    "CustomSimpleAgentWorker",
    "FnAgentWorker",
    "FunctionCallingAgent",
    "FunctionCallingAgentWorker",
    "MultimodalReActAgent",
    "MultimodalReActAgentWorker",
    "ParallelAgentRunner",
    "QueryPipelineAgentWorker",
    "ReActAgent",
    "ReActAgentWorker",
    "ReActChatFormatter",
    "ReActOutputParser",
    "StreamingAgentChatResponse",
    "Task",
    "TaskState",
    "TaskStep",
    "TaskStepOutput",
]

__getattr__, __dir__ = lazy_names(__name__, {
    "CustomSimpleAgentWorker": "agentkit.agent.custom",
    "FnAgentWorker": "agentkit.agent.custom",
    "QueryPipelineAgentWorker": "agentkit.agent.custom",
    "BaseLlamaPack": "agentkit.agent.pack",
    "MultimodalReActAgent": "agentkit.agent.react_multimodal",
    "MultimodalReActAgentWorker": "agentkit.agent.react_multimodal",
    "ParallelAgentRunner": "agentkit.agent.runner.parallel",
})
