"""ReAct: reasoning and acting in a Thought / Action / Observation / Answer loop."""

from agentkit.agent.react.base import ReActAgent
from agentkit.agent.react.formatter import ReActChatFormatter, get_react_tool_descriptions
from agentkit.agent.react.output_parser import ReActOutputParser
from agentkit.agent.react.prompts import CONTEXT_REACT_CHAT_SYSTEM_HEADER, REACT_CHAT_SYSTEM_HEADER
from agentkit.agent.react.step import PARSE_FAILURE_OBSERVATION, ReActAgentWorker
from agentkit.agent.react.types import (
    ActionReasoningStep,
    BaseReasoningStep,
    ObservationReasoningStep,
    ResponseReasoningStep,
)

__all__ = [
    "ActionReasoningStep",
    "BaseReasoningStep",
    "CONTEXT_REACT_CHAT_SYSTEM_HEADER",
    "ObservationReasoningStep",
    "PARSE_FAILURE_OBSERVATION",
    "REACT_CHAT_SYSTEM_HEADER",
    "ReActAgent",
    "ReActAgentWorker",
    "ReActChatFormatter",
    "ReActOutputParser",
    "ResponseReasoningStep",
    "get_react_tool_descriptions",
]
