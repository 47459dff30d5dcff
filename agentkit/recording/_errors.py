"""The recording layer's errors: a malformed cassette, a request it does not hold, an error it
replays."""

from __future__ import annotations

from agentkit.core.errors import BadInputError, RecordingMismatchError

__all__ = ["CassetteError", "CassetteMissError", "RecordedLLMError"]


class CassetteError(BadInputError):
    """A cassette file is malformed or cannot be used; the message says where and why."""


class CassetteMissError(RecordingMismatchError, LookupError):
    """A request is not on the cassette (and the record mode does not allow recording it)."""


class RecordedLLMError(RuntimeError):
    """Replays an error the live backend raised while recording."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(f"{kind}: {message}")
        self.kind = kind
