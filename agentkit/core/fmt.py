"""How agentkit prints numbers, in one place: the CLI, expectation messages and the report
show a time, a ratio or a count the same way everywhere (``wall=6.33s`` beside ``wall=1.00s``,
never ``6.32919s`` beside ``1s``)."""

from __future__ import annotations

__all__ = ["seconds", "ratio", "count"]


def seconds(value: float) -> str:
    """A duration in seconds with two decimals: ``6.33s``."""
    return f"{value:.2f}s"


def ratio(value: float) -> str:
    """A factor such as a speedup with two decimals: ``2.50×``."""
    return f"{value:.2f}×"


def count(value: int) -> str:
    """A whole number with thousands separators: ``12,345``."""
    return f"{value:,}"
