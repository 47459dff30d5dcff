"""Step-aligned diffs of traces: which steps were inserted, dropped or changed, then the deep
diff inside each changed step -- instead of a wall of JSON."""

from __future__ import annotations

import difflib
import json
from typing import Any

from deepdiff import DeepDiff
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agentkit.core.yamlsafe import MAX_DEPTH, YamlLocations

__all__ = ["diff_traces", "step_signature", "check_trace", "TraceError"]


class TraceError(ValueError):
    """A trace file that is not an agentkit trace; the message says where and why."""


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class _Named(_Open):
    name: str | None = None


class _Response(_Open):
    content: str | None = None
    tool_calls: list[_Named] = Field(default_factory=list)


class _LLMCall(_Open):
    response: _Response | None = None


class _Step(_Open):
    is_last: bool | None = None
    llm_calls: list[_LLMCall] = Field(default_factory=list)
    tool_calls: list[_Named] = Field(default_factory=list)


class _Turn(_Open):
    steps: list[_Step] = Field(default_factory=list)


class _TraceShape(_Open):
    turns: list[_Turn]


def check_trace(data: Any, source: str, where: YamlLocations | None = None) -> dict[str, Any]:
    """``data`` if it has the shape of a trace (what :func:`diff_traces` reads), else a
    :class:`TraceError` naming ``source``, the line (from ``where``) and the field."""
    depth = _depth(data)
    if depth > MAX_DEPTH:
        raise TraceError(f"{source}:1: not an agentkit trace: nested {depth} levels deep")
    if not isinstance(data, dict):
        raise TraceError(f"{source}:1: not an agentkit trace (a JSON object with `turns`)")
    try:
        _TraceShape.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = tuple(first["loc"])
        line = where.line(loc) if where is not None else 1
        dotted = ".".join(str(p) for p in loc) or "(top level)"
        message = first["msg"]
        raise TraceError(f"{source}:{line}: {dotted}: {message}; not an agentkit trace "
                         f"(a snapshot or --trace-dir output)") from None
    return data


def _depth(value: Any) -> int:
    """How deeply ``value`` nests (without recursing, whatever its depth)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        deepest = max(deepest, level)
        if level > MAX_DEPTH:
            break
        if isinstance(item, dict):
            stack += [(child, level + 1) for child in item.values()]
        elif isinstance(item, list):
            stack += [(child, level + 1) for child in item]
    return deepest

_MAX_VALUE = 160


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= _MAX_VALUE else text[: _MAX_VALUE - 3] + "..."


def step_signature(step: dict[str, Any]) -> tuple[Any, ...]:
    """What a step *did* (the tools it called, whether it ended the task), for alignment."""
    tools = tuple(c.get("name") for c in step.get("tool_calls", []))
    requested = tuple(
        tuple(t.get("name") for t in (c.get("response") or {}).get("tool_calls", []))
        for c in step.get("llm_calls", []))
    return tools, requested, step.get("is_last")


def _summary(step: dict[str, Any]) -> str:
    parts = []
    for call in step.get("llm_calls", []):
        response = call.get("response") or {}
        said = (response.get("content") or "").strip().replace("\n", " \\n ")
        if said:
            parts.append(f"llm: {_short(said)}")
        if call.get("error"):
            parts.append(f"llm error: {call['error']}")
    for call in step.get("tool_calls", []):
        flag = " (error)" if call.get("is_error") else ""
        parts.append(f"tool: {call.get('name')}({_short(call.get('args'))}) -> "
                     f"{_short(call.get('output'))}{flag}")
    return "; ".join(parts) or "(no calls)"


def _path(parts: list[Any]) -> str:
    text = ""
    for part in parts:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "(root)"


def _deep(old: Any, new: Any, indent: str) -> list[str]:
    diff = DeepDiff(old, new, view="tree", verbose_level=2)
    lines = []
    for kind in ("values_changed", "type_changes", "dictionary_item_added",
                 "dictionary_item_removed", "iterable_item_added", "iterable_item_removed"):
        for level in diff.get(kind, []):
            where = _path(level.path(output_format="list"))
            if kind in ("values_changed", "type_changes"):
                lines.append(f"{indent}{where}: {_short(level.t1)} -> {_short(level.t2)}")
            elif kind.endswith("added"):
                lines.append(f"{indent}{where}: added {_short(level.t2)}")
            else:
                lines.append(f"{indent}{where}: removed {_short(level.t1)}")
    return sorted(lines)


def _diff_steps(old: list[dict[str, Any]], new: list[dict[str, Any]]) -> list[str]:
    lines: list[str] = []
    matcher = difflib.SequenceMatcher(a=[step_signature(s) for s in old],
                                      b=[step_signature(s) for s in new], autojunk=False)
    for tag, a0, a1, b0, b1 in matcher.get_opcodes():
        pairs = list(zip(range(a0, a1), range(b0, b1))) if tag in ("equal", "replace") else []
        for i, j in pairs:
            inner = _deep(_without_index(old[i]), _without_index(new[j]), "      ")
            if inner:
                label = f"step {i + 1}" if i == j else f"step {i + 1} (now step {j + 1})"
                lines.append(f"    {label}: changed")
                lines.extend(inner)
        if tag in ("replace", "delete"):
            for i in range(a0 + len(pairs), a1):
                lines.append(f"    step {i + 1}: dropped  - {_summary(old[i])}")
        if tag in ("replace", "insert"):
            for j in range(b0 + len(pairs), b1):
                lines.append(f"    step {j + 1}: inserted + {_summary(new[j])}")
    return lines


def _without_index(step: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in step.items() if k != "index"}


def diff_traces(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """Lines describing how trace ``new`` differs from ``old`` (empty when equal)."""
    lines: list[str] = []
    old_turns, new_turns = old.get("turns", []), new.get("turns", [])
    for index in range(max(len(old_turns), len(new_turns))):
        if index >= len(old_turns):
            lines.append(f"turn {index + 1}: inserted + {_short(new_turns[index].get('user'))}")
            continue
        if index >= len(new_turns):
            lines.append(f"turn {index + 1}: dropped - {_short(old_turns[index].get('user'))}")
            continue
        before, after = old_turns[index], new_turns[index]
        turn_lines = _diff_steps(before.get("steps", []), after.get("steps", []))
        rest_old = {k: v for k, v in before.items() if k != "steps"}
        rest_new = {k: v for k, v in after.items() if k != "steps"}
        turn_lines += _deep(rest_old, rest_new, "    ")
        if turn_lines:
            lines.append(f"turn {index + 1} ({_short(after.get('user'))}):")
            lines.extend(turn_lines)
    header_old = {k: v for k, v in old.items() if k != "turns"}
    header_new = {k: v for k, v in new.items() if k != "turns"}
    lines += _deep(header_old, header_new, "")
    return lines
