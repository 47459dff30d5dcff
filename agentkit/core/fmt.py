"""One way to write the numbers agentkit shows a person (report pages, tables, CLI lines).

Seconds always carry two decimals and a unit (``6.33s``, ``1.00s``), counts thousands
separators (``1,234``), so a column of values lines up and reads the same everywhere.
"""

from __future__ import annotations

__all__ = ["fmt_seconds", "fmt_count", "fmt_ratio", "fmt_percent", "fmt_signed_count",
           "fmt_signed_seconds"]


def fmt_seconds(seconds: float) -> str:
    """``6.33s``; a positive time too small for two decimals is ``<0.01s``, not ``0.00s``."""
    if 0 < seconds < 0.005:
        return "<0.01s"
    return f"{seconds:.2f}s"


def fmt_count(count: float) -> str:
    """``1,234``."""
    return f"{int(count):,}"


def fmt_ratio(ratio: float) -> str:
    """``2.50×`` (a speedup)."""
    return f"{ratio:.2f}×"


def fmt_percent(fraction: float) -> str:
    """``+69%`` for 0.69, ``-5%`` for -0.05 (a relative change, signed)."""
    return f"{fraction * 100:+.0f}%"


def fmt_signed_count(delta: float) -> str:
    """``+829``, ``-2``: the change of a count."""
    return f"{int(delta):+,}"


def fmt_signed_seconds(delta: float) -> str:
    """``+5.00s``, ``-0.50s``: the change of a time."""
    return f"{delta:+.2f}s"
