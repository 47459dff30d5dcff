"""The harness's LLM roles on a cassette: an LLM judge's verdicts and a simulated user's
messages, each keyed by a :class:`RoleKey` and played through a :class:`RoleLLM`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from agentkit.llms.base import LLM, FunctionCallingLLM, LLMRequest
from agentkit.llms.types import ChatResponse, LLMMetadata, model_metadata

__all__ = ["RoleKey", "RoleLLM", "RoleChannel", "KEY_NOUNS"]

#: What a role's key field is called in messages (the subject fields and the transcript).
KEY_NOUNS = {"model": "model", "rubric": "rubric", "persona": "persona", "goal": "goal",
             "transcript": "transcript it saw"}


@dataclass(frozen=True)
class RoleKey:
    """What one call of a harness role answers, as the cassette keys it: the ``role``
    (``judge`` or ``user``), the scenario field it serves (``at``: ``expect.answer``,
    ``user``...; ``where`` names its file and line for messages), the model it must have been
    recorded with (``model``; None: whichever model recorded it), the hashes of its subject
    (``{"rubric": ...}``; ``{"persona": ..., "goal": ...}``) and of the transcript it saw."""

    role: str
    at: str
    subject: Mapping[str, str]
    transcript: str
    model: str | None = None
    where: str = field(default="", compare=False)

    def fields(self, model: str | None) -> dict[str, str]:
        """The key as a cassette writes it (``model``: the model that answered)."""
        data = {"at": self.at}
        if model is not None:
            data["model"] = model
        return {**data, **self.subject, "transcript": self.transcript}

    def changes(self, recorded: Mapping[str, Any]) -> list[str]:
        """The key fields in which ``recorded`` (an exchange's key) differs from this one, in
        the order they are reported (model, subject, transcript)."""
        now = self.fields(self.model)
        found = [name for name in ("model", *self.subject, "transcript")
                 if name in now and recorded.get(name) != now[name]]
        return found


@runtime_checkable
class RoleChannel(Protocol):
    """What a role's calls go through: a model that keeps a recording (a cassette's replaying
    or recording LLM), into which the harness's roles' calls go too."""

    def role(self, key: RoleKey, live: LLM | None = None) -> RoleLLM: ...

    async def _role_chat(self, request: LLMRequest, role: RoleKey,
                         live: LLM | None) -> tuple[ChatResponse, str]: ...

    @property
    def provider(self) -> str: ...


class RoleLLM(FunctionCallingLLM):
    """One harness role's model (a judge, a simulated user) on a scenario's cassette: each
    call is replayed from the cassette's exchanges of that role and key, or recorded through
    the role's live model (see :meth:`CassetteLLM.role`)."""

    def __init__(self, channel: RoleChannel, key: RoleKey, live: LLM | None = None) -> None:
        self.channel = channel
        self.key = key
        self.live = live
        self.answered_by: str | None = None
        """The model that gave the last answer (as recorded, when it was replayed)."""

    @property
    def metadata(self) -> LLMMetadata:
        name = (self.live.metadata.model_name if self.live is not None
                else self.key.model or f"recorded {self.key.role}")
        return model_metadata(name, function_calling=False)

    @property
    def provider(self) -> str:
        return self.live.provider if self.live is not None else self.channel.provider

    async def _achat(self, request: LLMRequest) -> ChatResponse:
        response, self.answered_by = await self.channel._role_chat(request, self.key, self.live)
        return response
