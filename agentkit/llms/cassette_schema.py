"""The cassette schema's old path: it moved to :mod:`agentkit.recording`, which this
re-exports."""

from agentkit.recording import (
    PART_FORMATS,
    CassetteData,
    CassetteError,
    ExchangeData,
    MCPExchangeData,
    check_cassette,
    parts_of,
)

__all__ = ["CassetteError", "CassetteData", "ExchangeData", "MCPExchangeData", "PART_FORMATS",
           "check_cassette", "parts_of"]
