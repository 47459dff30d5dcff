"""The step-wise agent stack (``llama_index.core.agent`` shape)."""

from agentkit.agent.custom import CustomSimpleAgentWorker, FnAgentWorker, QueryPipelineAgentWorker
from agentkit.agent.function_calling import FunctionCallingAgent, FunctionCallingAgentWorker
from agentkit.agent.pack import BaseLlamaPack
from agentkit.agent.react import (
    ReActAgent,
    ReActAgentWorker,
    ReActChatFormatter,
    ReActOutputParser,
)
from agentkit.agent.react_multimodal import MultimodalReActAgent, MultimodalReActAgentWorker
from agentkit.agent.runner import AgentRunner, AgentState, ParallelAgentRunner, TaskState
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
