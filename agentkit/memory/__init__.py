"""Chat memory (``llama_index.core.memory`` shape)."""

from agentkit.memory.chat_memory_buffer import (
    DEFAULT_TOKEN_LIMIT,
    DEFAULT_TOKEN_LIMIT_RATIO,
    BaseMemory,
    ChatMemoryBuffer,
)

__all__ = ["BaseMemory", "ChatMemoryBuffer", "DEFAULT_TOKEN_LIMIT", "DEFAULT_TOKEN_LIMIT_RATIO"]
