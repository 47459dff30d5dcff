"""The fake OpenAI endpoint's old path: it moved to :mod:`agentkit.recording`, which this
re-exports."""

from agentkit.recording import (
    DEFAULT_BASE_URL,
    EPOCH,
    TEST_API_KEY,
    FakeOpenAIServer,
    HTTPError,
    RawToolCall,
)

__all__ = ["FakeOpenAIServer", "HTTPError", "RawToolCall", "EPOCH", "DEFAULT_BASE_URL",
           "TEST_API_KEY"]
