"""The functions a block of code runs, for tests that count a hot path's calls (issue 36:
counts hold on any machine, where timings would not)."""

from __future__ import annotations

import os
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

    return _profiled(block, profile), called, c_called


def _profiled(block: Callable[[], object], profile: Callable[[Any, str, Any], None]) -> object:
    """``block()`` with ``profile`` as the profile function while it runs."""
    sys.setprofile(profile)
    try:
        return block()
    finally:
        sys.setprofile(None)


HARNESS = tuple(f"{os.sep}agentkit{os.sep}{package}{os.sep}" for package in (
    "harness", "trace", "verdict", "recording", "scenario", "bridge"))
"""Where the harness's code lives: the packages that run, trace and judge a scenario."""


def harness_calls(block: Callable[[], object]) -> tuple[object, list[str]]:
    """Run ``block``; its result and the Python calls the harness made, in order, each as
    ``file:function``: its own functions' (:data:`HARNESS`) and those they called directly
    (the standard library's, pydantic's, the agent's tools'...), wherever the agent called
    the harness from -- not the agent's own (functions written in C are left out)."""
    called: list[str] = []

    def ours(code: Any) -> bool:
        return any(package in code.co_filename for package in HARNESS)

    def profile(frame: Any, event: str, arg: object) -> None:
        if event == "call" and (ours(frame.f_code) or (frame.f_back is not None
                                                       and ours(frame.f_back.f_code))):
            called.append(f"{os.path.basename(frame.f_code.co_filename)}:{frame.f_code.co_name}")

    return _profiled(block, profile), called


def noted_calls(monkeypatch: Any, owner: Any, name: str,
                note: Callable[..., Any] = lambda *args, **kwargs: args[0] if args else None,
                ) -> list[Any]:
    """Patch ``owner.name`` (a function or method) to note each call -- what ``note`` makes
    of its arguments: by default the first -- and go on as before; the notes, in order."""
    notes: list[Any] = []
    original = getattr(owner, name)

    def noted(*args: Any, **kwargs: Any) -> Any:
        notes.append(note(*args, **kwargs))
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, noted)
    return notes


def spawned_tasks(monkeypatch: Any) -> list[str]:
    """The steps a workflow run gives a task of its own from now on (the runtime's
    ``Run._spawn``), by name in the order spawned: an invocation handed over to the task
    before it is not listed."""
    from agentkit.workflow.runtime import Run

    return noted_calls(monkeypatch, Run, "_spawn", lambda run, spec, *rest: spec.name)
