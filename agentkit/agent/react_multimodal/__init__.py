"""Multimodal ReAct: the ReAct loop over a model that sees the task's images."""

from agentkit.agent.react_multimodal.base import MultimodalReActAgent
from agentkit.agent.react_multimodal.prompts import MM_FAILURE_ANSWER, REACT_MM_CHAT_SYSTEM_HEADER
from agentkit.agent.react_multimodal.step import (
    IMAGE_DOCS_KEY,
    MultimodalReActAgentWorker,
    generate_image_chat_message,
)

__all__ = [
    "IMAGE_DOCS_KEY",
    "MM_FAILURE_ANSWER",
    "MultimodalReActAgent",
    "MultimodalReActAgentWorker",
    "REACT_MM_CHAT_SYSTEM_HEADER",
    "generate_image_chat_message",
]
