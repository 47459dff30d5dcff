"""How agentkit prints numbers, in one place: the CLI, expectation messages and the report
show a time, a ratio or a count the same way everywhere (``wall=6.33s`` beside ``wall=1.00s``,
never ``6.32919s`` beside ``1s``)."""

from __future__ import annotations

__all__ = ["seconds", "ratio", "count", "signed_seconds", "signed_count", "percent"]


def seconds(value: float) -> str:
    """A duration in seconds with two decimals: ``6.33s``."""
    return f"{value:.2f}s"


def ratio(value: float) -> str:
    """A factor such as a speedup with two decimals: ``2.50×``."""
    return f"{value:.2f}×"


def count(value: int) -> str:
    """A whole number with thousands separators: ``12,345``."""
    return f"{value:,}"


def signed_seconds(value: float) -> str:
    """A change of a duration, signed: ``+5.00s``, ``-0.50s``."""
    return f"{value:+.2f}s"


def signed_count(value: int) -> str:
    """A change of a count, signed, with thousands separators: ``+829``, ``-2``."""
    return f"{value:+,}"


def percent(fraction: float) -> str:
    """A relative change, signed, in whole percent: ``+69%`` for 0.69."""
    return f"{fraction * 100:+.0f}%"
