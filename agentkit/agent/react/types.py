"""The reasoning steps of a ReAct loop and their wire format."""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from typing import Any

from pydantic import Field

from agentkit.core.models import Model

__all__ = [
    "BaseReasoningStep",
    "ActionReasoningStep",
    "ObservationReasoningStep",
    "ResponseReasoningStep",
]


_ARGUMENTS_JSON = json.JSONEncoder(ensure_ascii=False, default=str)
"""What ``json.dumps(..., ensure_ascii=False, default=str)`` builds on every call, built once."""


class BaseReasoningStep(Model, ABC):
    @abstractmethod
    def get_content(self) -> str:
        """The step as the model writes (or reads) it."""

    @property
    @abstractmethod
    def is_done(self) -> bool: ...


class ActionReasoningStep(BaseReasoningStep):
    """``Thought: ...`` / ``Action: <tool>`` / ``Action Input: {...}``.

    The input is replayed as JSON (LlamaIndex replayed a Python dict repr, which teaches the
    model to write invalid JSON).
    """

    thought: str
    action: str
    action_input: dict[str, Any] = Field(default_factory=dict)

    def get_content(self) -> str:
        arguments = _ARGUMENTS_JSON.encode(self.action_input)
        return f"Thought: {self.thought}\nAction: {self.action}\nAction Input: {arguments}"

    @property
    def is_done(self) -> bool:
        return False


class ObservationReasoningStep(BaseReasoningStep):
    observation: str
    return_direct: bool = False

    def get_content(self) -> str:
        return f"Observation: {self.observation}"

    @property
    def is_done(self) -> bool:
        return self.return_direct


class ResponseReasoningStep(BaseReasoningStep):
    thought: str
    response: str
    is_streaming: bool = False

    def get_content(self) -> str:
        return f"Thought: {self.thought}\nAnswer: {self.response}"

    @property
    def is_done(self) -> bool:
        return True
