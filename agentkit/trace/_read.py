"""Reading a trace's messages back: the lists :mod:`agentkit.trace._trace` writes with
references (format 3) expanded, so a diff shows and compares the messages themselves.

Traces of format 2 and before hold every list in full: they are read as they are, so a trace
of an older agentkit still diffs (``agentkit diff``, a report's ``--baseline``).
"""

from __future__ import annotations

from typing import Any

from agentkit.core.errors import BadInputError
from agentkit.core.reflists import ListReader, ListRefError, Shared
from agentkit.core.yamlsafe import YamlLocations

__all__ = ["TraceError", "expand_trace", "message_lists"]


class TraceError(BadInputError):
    """A trace file that is not an agentkit trace; the message says where and why."""


def message_lists(trace: dict[str, Any]) -> list[tuple[tuple[str | int, ...], Any]]:
    """Every message list of ``trace`` (each LLM call's ``messages``, each turn's ``memory``)
    with its path, in the order they are written (the order references are followed in)."""
    found: list[tuple[tuple[str | int, ...], Any]] = []
    turns = trace.get("turns")
    for t, turn in enumerate(turns if isinstance(turns, list) else []):
        if not isinstance(turn, dict):
            continue
        steps = turn.get("steps")
        for s, step in enumerate(steps if isinstance(steps, list) else []):
            calls = step.get("llm_calls") if isinstance(step, dict) else None
            for c, call in enumerate(calls if isinstance(calls, list) else []):
                if isinstance(call, dict) and "messages" in call:
                    found.append((("turns", t, "steps", s, "llm_calls", c, "messages"),
                                  call["messages"]))
        if "memory" in turn:
            found.append((("turns", t, "memory"), turn["memory"]))
    return found


def expand_trace(trace: dict[str, Any], source: str = "trace",
                 where: YamlLocations | None = None) -> dict[str, Any]:
    """``trace`` with every message list expanded (references followed); each turn's
    ``memory`` is a :class:`~agentkit.core.reflists.Shared` view (a long run's memories share
    one buffer). ``trace`` itself is not changed. A reference that cannot be followed is a
    :class:`TraceError` naming ``source``, the line (from ``where``) and the place."""
    lists = ListReader()
    expanded: dict[tuple[str | int, ...], Shared[Any]] = {}
    for path, segments in message_lists(trace):
        pointer = "/" + "/".join(str(part) for part in path)
        try:
            expanded[path] = lists.read(pointer, segments)
        except ListRefError as exc:
            place = (*path, exc.index)
            line = where.line(place) if where is not None else 1
            raise TraceError(f"{source}:{line}: {'.'.join(map(str, place))}: {exc.problem}; "
                             "not an agentkit trace (a snapshot or --trace-dir output)"
                             ) from None
    if not expanded:
        return trace
    turns = []
    for t, turn in enumerate(trace["turns"]):
        if not isinstance(turn, dict):
            turns.append(turn)
            continue
        turn = dict(turn)
        if ("turns", t, "memory") in expanded:
            turn["memory"] = expanded["turns", t, "memory"]
        if isinstance(turn.get("steps"), list):
            turn["steps"] = [_step(step, expanded, t, s) for s, step in enumerate(turn["steps"])]
        turns.append(turn)
    return {**trace, "turns": turns}


def _step(step: Any, expanded: dict[tuple[str | int, ...], Shared[Any]], t: int,
          s: int) -> Any:
    if not isinstance(step, dict) or not isinstance(step.get("llm_calls"), list):
        return step
    calls = []
    for c, call in enumerate(step["llm_calls"]):
        path = ("turns", t, "steps", s, "llm_calls", c, "messages")
        calls.append({**call, "messages": list(expanded[path])} if path in expanded else call)
    return {**step, "llm_calls": calls}
