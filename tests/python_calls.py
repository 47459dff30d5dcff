"""The functions a block of code runs, for tests that count a hot path's calls (issue 36:
counts hold on any machine, where timings would not)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any


def python_calls(block: Callable[[], object]) -> tuple[object, list[str]]:
    """Run ``block``; its result and the names of the Python functions run, in order: the
    block's own first, then those it called (functions written in C are left out)."""
    result, called, _c_called = calls(block)
    return result, called


def calls(block: Callable[[], object]) -> tuple[object, list[str], list[str]]:
    """Run ``block``; its result, the names of the Python functions run (as
    :func:`python_calls`) and those of the C functions called (``validate_python`` is a
    pydantic validation), each in order."""
    called: list[str] = []
    c_called: list[str] = []

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            called.append(frame.f_code.co_name)
        elif event == "c_call":
            c_called.append(arg.__name__)

    sys.setprofile(profile)
    try:
        result = block()
    finally:
        sys.setprofile(None)
    return result, called, c_called
