"""The cassette's old path: it moved to :mod:`agentkit.recording`, which this re-exports."""

from agentkit.recording import (
    CASSETTE_FORMAT,
    CASSETTE_FORMATS,
    RECORD_MODES,
    Cassette,
    CassetteError,
    CassetteLLM,
    CassetteMissError,
    CassettePlayer,
    Exchange,
    RecordedLLMError,
    RecordingLLM,
    RecordMode,
    RoleKey,
    RoleLLM,
    canonical_request,
    dump_yaml,
    public_url,
    request_hash,
    text_hash,
)

__all__ = ["CASSETTE_FORMAT", "CASSETTE_FORMATS", "RecordMode", "RECORD_MODES", "Cassette",
           "Exchange", "CassetteError", "CassetteMissError", "CassettePlayer", "RecordedLLMError",
           "CassetteLLM", "RecordingLLM", "RoleKey", "RoleLLM", "canonical_request",
           "request_hash", "text_hash", "public_url", "dump_yaml"]
