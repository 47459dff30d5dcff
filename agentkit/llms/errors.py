"""Typed errors of model backends, independent of any provider SDK.

A backend translates its SDK's exceptions into these, so agents and user code catch one set
of errors whatever the provider::

    LLMError
    ├── MissingAPIKeyError        (also a ValueError: a configuration mistake)
    ├── APIStatusError            the server answered with an HTTP error status
    │   ├── BadRequestError       400, 422 and other 4xx (also a ValueError)
    │   │   └── NotFoundError     404 (e.g. an unknown model name)
    │   ├── AuthenticationError   401: the API key is missing or wrong
    │   ├── PermissionDeniedError 403
    │   ├── ConflictError         409, e.g. a lock timeout (retried, as the openai SDK does)
    │   ├── RateLimitError        429 (retried; raised once retries are spent)
    │   │   └── QuotaExceededError  429 "insufficient_quota" (never retried)
    │   └── ServerError           5xx (retried; raised once retries are spent)
    ├── APIConnectionError        no answer at all (retried)
    │   └── APITimeoutError       the request timed out (also a TimeoutError)
    ├── MalformedResponseError    an answer that cannot be read (not JSON, wrong shape)
    │   └── IncompleteStreamError a stream that ended before completion
    └── NotSentError              no answer reached the run (a spent budget, a shutdown)

No message, repr or attribute of these errors holds an API key: backends build the messages
themselves and redact what the server said.
"""

from __future__ import annotations

from agentkit.core.errors import BadInputError, InfrastructureError

__all__ = [
    "LLMError",
    "MissingAPIKeyError",
    "APIStatusError",
    "BadRequestError",
    "NotFoundError",
    "AuthenticationError",
    "PermissionDeniedError",
    "ConflictError",
    "RateLimitError",
    "QuotaExceededError",
    "ServerError",
    "APIConnectionError",
    "APITimeoutError",
    "MalformedResponseError",
    "IncompleteStreamError",
    "NotSentError",
    "error_for_status",
]


class LLMError(Exception):
    """Base of every backend error.

    ``retryable`` says whether the same request may succeed later; ``attempts`` is how many
    requests were made before giving up (0 when none could be sent).
    """

    retryable: bool = False
    default_status: int | None = None

    def __init__(self, message: str = "", *, status_code: int | None = None,
                 request_id: str | None = None, retry_after: float | None = None,
                 attempts: int = 0, provider: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.status_code = status_code if status_code is not None else self.default_status
        self.request_id = request_id
        self.retry_after = retry_after
        self.attempts = attempts
        self.provider = provider

    def __repr__(self) -> str:
        details = "".join(f", {name}={value!r}" for name, value in (
            ("status_code", self.status_code), ("attempts", self.attempts or None),
            ("request_id", self.request_id)) if value is not None)
        return f"{type(self).__name__}({self.message!r}{details})"


class MissingAPIKeyError(LLMError, BadInputError):
    """No API key was given and none is in the environment."""


class APIStatusError(LLMError):
    """The server answered with an HTTP error status (``status_code``)."""


class BadRequestError(APIStatusError, ValueError):
    """The server rejected the request itself (HTTP 400, 422, ...); retrying cannot help."""

    default_status = 400


class NotFoundError(BadRequestError):
    default_status = 404


class AuthenticationError(APIStatusError, BadInputError):
    """HTTP 401: the API key is invalid (the message never contains the key)."""

    default_status = 401


class PermissionDeniedError(APIStatusError, BadInputError):
    default_status = 403


class ConflictError(APIStatusError, InfrastructureError):
    """HTTP 409: the request conflicts with another in progress (a lock timeout); retried."""

    default_status = 409
    retryable = True


class RateLimitError(APIStatusError, InfrastructureError):
    default_status = 429
    retryable = True


class QuotaExceededError(RateLimitError):
    """HTTP 429 with ``insufficient_quota``: the account is out of credit; waiting won't help."""

    retryable = False


class ServerError(APIStatusError, InfrastructureError):
    default_status = 500
    retryable = True


class APIConnectionError(LLMError, InfrastructureError):
    """The server could not be reached or dropped the connection."""

    retryable = True


class APITimeoutError(APIConnectionError, TimeoutError):
    """The request timed out."""


class MalformedResponseError(LLMError, InfrastructureError):
    """The server answered, but not with something the backend can read: a body or stream
    event that is not JSON, or JSON of another shape. Not retried: the same server will
    likely answer the same way."""


class IncompleteStreamError(MalformedResponseError):
    """A streamed answer ended before its terminator (no finish_reason, no ``[DONE]``): the
    text so far is not the answer, so nothing of it is kept."""


class NotSentError(LLMError, InfrastructureError):
    """No model's answer reached the run: the request was refused before it was sent (a call
    or token budget is spent, the run is stopping), or agentkit's own machinery lost it (an
    executor shut down, a cancelled task). A recording never keeps it; a resumed one asks
    again."""


_BY_STATUS: dict[int, type[APIStatusError]] = {
    400: BadRequestError, 401: AuthenticationError, 403: PermissionDeniedError,
    404: NotFoundError, 409: ConflictError, 422: BadRequestError, 429: RateLimitError,
}


def error_for_status(status_code: int) -> type[LLMError]:
    """The error class for an HTTP error status (408 counts as a timeout)."""
    if status_code == 408:
        return APITimeoutError
    if status_code >= 500:
        return ServerError
    return _BY_STATUS.get(status_code, BadRequestError if 400 <= status_code < 500 else APIStatusError)
