"""A recorded exchange's answer, both ways: a live response or error as a cassette keeps it,
and a kept one as the response (or stream, or error) its replay gives."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from agentkit.llms import errors as llm_errors
from agentkit.llms.types import ChatMessage, ChatResponse, Usage, fix_message
from agentkit.recording._cassette import Exchange
from agentkit.recording._errors import RecordedLLMError

__all__ = ["message_dict", "error_dict", "response_from", "replay_stream", "worth_recording"]


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


def message_dict(message: ChatMessage) -> dict[str, Any]:
    data: dict[str, Any] = _jsonable(message.to_dict())
    return data


def _recorded_error(error: dict[str, Any]) -> Exception:
    """The error a recorded exchange raises: a backend error (:mod:`agentkit.llms.errors`) is
    raised as its own type, so agents handle it as they did live; others as
    :class:`RecordedLLMError`."""
    kind, message = str(error.get("type", "Error")), str(error.get("message", ""))
    cls = getattr(llm_errors, kind, None)
    if isinstance(cls, type) and issubclass(cls, llm_errors.LLMError):
        return cls(message, status_code=error.get("status_code"))
    return RecordedLLMError(kind, message)


def error_dict(error: BaseException) -> dict[str, Any]:
    data: dict[str, Any] = {"type": type(error).__name__, "message": str(error)}
    status = getattr(error, "status_code", None) if isinstance(error, llm_errors.LLMError) else None
    if status is not None:
        data["status_code"] = status
    return data


def response_from(exchange: Exchange, *, fixed: bool = False,
                  ) -> tuple[ChatResponse, list[str] | None]:
    """The recorded answer of ``exchange`` as its replay gives it (a recorded error is raised):
    a new response each call. Its message and usage are new too, unless ``fixed`` -- the
    request's messages are fixed (:func:`~agentkit.llms.types.fix_message`: the bridge's,
    which reads the reply and changes nothing) --, then they are built once per exchange,
    fixed and shared by every replay of it (``Exchange._reply``): read-only."""
    if exchange.error is not None:
        raise _recorded_error(exchange.error)
    data = exchange.response or {}
    if not fixed:
        message, usage = _reply(data)
        return ChatResponse(message=message, usage=usage), data.get("chunks")
    built = exchange._reply
    if built is None or built[0] is not exchange.response:
        message, usage = _reply(data)
        fix_message(message)
        built = exchange._reply = (exchange.response, message, usage)
    return ChatResponse(message=built[1], usage=built[2]), data.get("chunks")


def _reply(data: dict[str, Any]) -> tuple[ChatMessage, Usage | None]:
    """The message and usage of a recorded response, built from what the cassette holds."""
    message = ChatMessage.model_validate(data.get("message") or {"role": "assistant"})
    return message, Usage(**data["usage"]) if data.get("usage") else None


async def replay_stream(response: ChatResponse, chunks: list[str] | None) -> AsyncIterator[ChatResponse]:
    text = ""
    for delta in chunks if chunks is not None else [response.message.content or ""]:
        text += delta
        yield ChatResponse(message=ChatMessage(role="assistant", content=text), delta=delta)
    yield ChatResponse(message=response.message, delta="", usage=response.usage)


def worth_recording(error: BaseException) -> bool:
    """An API's answer (a 429, a 500 after retries...) is recorded; failing to reach it at
    all, a missing/invalid key, or a request that was never sent (a spent budget) is a problem
    of the recording session, not of the model."""
    return not isinstance(error, (llm_errors.APIConnectionError, llm_errors.AuthenticationError,
                                  llm_errors.NotSentError))
