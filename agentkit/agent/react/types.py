"""The reasoning steps of a ReAct loop and their wire format."""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from json.encoder import c_make_encoder as _c_make_encoder  # type: ignore[attr-defined]
from json.encoder import encode_basestring
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


def _arguments_json(arguments: dict[str, Any]) -> str:
    """``_ARGUMENTS_JSON.encode(arguments)``: the C encoder its ``encode`` and ``iterencode``
    make (Python frames both, on every action step), made here directly -- its arguments are
    those ``iterencode`` passes for this encoder; the pure-Python one where there is none."""
    if _c_make_encoder is None:
        return _ARGUMENTS_JSON.encode(arguments)
    encoder = _c_make_encoder({}, str, encode_basestring, None, ": ", ", ", False, False, True)
    return "".join(encoder(arguments, 0))


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
        arguments = _arguments_json(self.action_input)
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
