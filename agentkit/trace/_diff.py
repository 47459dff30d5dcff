"""Step-aligned diffs of traces: which steps were inserted, dropped or changed, then the deep
diff inside each changed step -- instead of a wall of JSON.

Written for a person reading a failed test, who should see each change once, where it began:

* a long or multi-line text (a system prompt, a tool description, a tool's output) is shown
  around the change with the changed words marked (:mod:`agentkit.core.textdiff`: a ``~`` line,
  ``[-old-]{+new+}`` in plain text, colours on a terminal and in HTML), never as the first
  characters of both sides;
* one change that propagates is shown once, where it began, and named where else it shows:
  a tool's output that the step's output, the next LLM requests and the memory repeat is
  ``tool_calls[0] (refund).output`` with ``also in: step output, requests of steps 2-3,
  memory``; a system prompt every LLM call sends is shown at the first call. The same edit
  (the same words replaced by the same words) counts as one change wherever it is; within a
  step a change is taken to begin at the LLM call, then the tool calls, then the step's output;
* token counts follow every change of a request or a reply, so a step's usage changes are
  folded into one line (``usage: 1 LLM call, tokens 489+33 -> 491+33``), shown field by field
  only when usage is all that changed in the trace (a re-recording, a tokenizer); the trace
  totals' two token counts are one line too;
* paths name what a list holds where it has a name (``tool_calls[0] (refund).output``), steps
  of a team name their agent, and the trace's ``tools`` (name, description and schema of each
  tool, once per run) are compared by tool name and listed first, so a changed docstring is
  one readable change ahead of the prompt changes it causes.

The lines need no header to be read (old is on the left of ``->``, ``-``/``[-`` is old,
``+``/``{+`` is new), so every caller prints its own one header above them.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agentkit.core.reflists import Shared
from agentkit.core.textdiff import PLAIN, Change, Line, Style, changes, edits, render, short
from agentkit.core.yamlsafe import MAX_DEPTH, YamlLocations
from agentkit.trace._read import TraceError, expand_trace

__all__ = ["diff_traces", "trace_diff", "step_signature", "check_trace", "TraceError"]


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
    expand_trace(data, source, where)  # every reference between its messages can be followed
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
            parts.append(f"llm: {short(said)}")
        if call.get("error"):
            parts.append(f"llm error: {call['error']}")
    for call in step.get("tool_calls", []):
        flag = " (error)" if call.get("is_error") else ""
        parts.append(f"tool: {call.get('name')}({short(call.get('args'))}) -> "
                     f"{short(call.get('output'))}{flag}")
    return "; ".join(parts) or "(no calls)"


@dataclass(frozen=True)
class _Place:
    """Where in the trace a change is: the header (no turn), a turn, or a step of a turn
    (numbered as in the old trace)."""

    turn: int | None = None
    step: int | None = None


@dataclass(eq=False)
class _Entry:
    """A change at a place; the first of its kind is shown, with the places of the rest."""

    change: Change
    place: _Place
    key: tuple[Any, ...] | None
    also: list[_Entry] = field(default_factory=list)
    repeat: bool = False


def _key(change: Change) -> tuple[Any, ...]:
    """What makes two changes one: the same words replaced by the same words in a text
    (wherever the text is and whatever surrounds the words), else the same field with the
    same old and new value, or the same item added or removed."""
    if change.kind != "changed":
        return change.kind, short(change.new if change.kind == "added" else change.old, 10**9)
    if isinstance(change.old, str) and isinstance(change.new, str):
        return "text", edits(change.old, change.new)
    name = next((p for p in reversed(change.parts) if isinstance(p, str)), None)
    return "value", name, short(change.old, 10**9), short(change.new, 10**9)


def _entries(old: Any, new: Any, place: _Place) -> list[_Entry]:
    return [_Entry(c, place, _key(c)) for c in changes(old, new)]


def _is_usage(change: Change) -> bool:
    return change.parts[:1] == ("llm_calls",) and change.parts[2:3] == ("usage",)


def _tokens(step: dict[str, Any]) -> tuple[int, int, int]:
    """A step's LLM calls, prompt tokens and completion tokens."""
    calls = step.get("llm_calls") or []
    usages = [c.get("usage") if isinstance(c.get("usage"), dict) else {} for c in calls]

    def total(name: str) -> int:
        return sum(u[name] for u in usages if isinstance(u.get(name), int))
    return len(calls), total("prompt_tokens"), total("completion_tokens")


def _usage_line(old: dict[str, Any], new: dict[str, Any]) -> str:
    (calls, prompt, completion), (now, prompt_now, completion_now) = _tokens(old), _tokens(new)
    counted = (f"{now} LLM call{'' if now == 1 else 's'}" if calls == now
               else f"{calls} -> {now} LLM calls")
    return f"usage: {counted}, tokens {prompt}+{completion} -> {prompt_now}+{completion_now}"


@dataclass
class _StepBlock:
    """A changed step: its label, its changes, and its usage changes with their summary."""

    label: str
    entries: list[_Entry]
    usage: list[_Entry]
    summary: str | None


_Item = _Entry | _StepBlock | Line


def _step_block(old: dict[str, Any], new: dict[str, Any], i: int, j: int, turn: int,
                team: bool) -> _StepBlock | None:
    place = _Place(turn, i + 1)
    entries = _entries(_without_index(old), _without_index(new), place)
    if not entries:
        return None
    usage = [_Entry(e.change, place, None) for e in entries if _is_usage(e.change)]
    entries = [e for e in entries if not _is_usage(e.change)]
    # a change begins at the LLM call, then the tool calls, then what the step made of them
    entries.sort(key=lambda e: _RANK.get(str(e.change.parts[0]) if e.change.parts else "", 3))
    notes = [new["agent"]] if team and isinstance(new.get("agent"), str) else []
    notes += [f"now step {j + 1}"] if i != j else []
    label = f"step {i + 1}" + (f" ({'; '.join(notes)})" if notes else "")
    return _StepBlock(label, entries, usage, _usage_line(old, new) if usage else None)


_RANK = {"input": 0, "llm_calls": 1, "tool_calls": 2}


def _steps(old: list[dict[str, Any]], new: list[dict[str, Any]], turn: int) -> list[_Item]:
    items: list[_Item] = []
    team = len({s.get("agent") for s in old + new} - {None}) > 1  # steps name their agent
    matcher = difflib.SequenceMatcher(a=[step_signature(s) for s in old],
                                      b=[step_signature(s) for s in new], autojunk=False)
    for tag, a0, a1, b0, b1 in matcher.get_opcodes():
        pairs = list(zip(range(a0, a1), range(b0, b1), strict=False)) if tag in ("equal", "replace") else []
        for i, j in pairs:
            block = _step_block(old[i], new[j], i, j, turn, team)
            if block is not None:
                items.append(block)
        if tag in ("replace", "delete"):
            items += [Line.of(f"step {i + 1}: dropped  - {_summary(old[i])}", "old")
                      for i in range(a0 + len(pairs), a1)]
        if tag in ("replace", "insert"):
            items += [Line.of(f"step {j + 1}: inserted + {_summary(new[j])}", "new")
                      for j in range(b0 + len(pairs), b1)]
    return items


def _without_index(step: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in step.items() if k != "index"}


def _by_name(header: dict[str, Any]) -> dict[str, Any]:
    """The trace header with its ``tools`` keyed by name (when names are unique), so a tool's
    change is named after the tool, not its position."""
    tools = header.get("tools")
    if isinstance(tools, list) and all(isinstance(t, dict) for t in tools):
        names = [t.get("name") for t in tools]
        if all(isinstance(n, str) for n in names) and len(set(names)) == len(names):
            header = {**header, "tools": {t["name"]: {k: v for k, v in t.items() if k != "name"}
                                          for t in tools}}
    return header


_TOKEN_TOTALS = ("prompt_tokens", "completion_tokens")


def _header(old: dict[str, Any], new: dict[str, Any]) -> list[_Item]:
    """The changes of the trace's header and totals, the two token totals as one line."""
    items: list[_Item] = []
    tokens_at = None
    for entry in _entries({k: v for k, v in old.items() if k not in ("turns", "tools")},
                          {k: v for k, v in new.items() if k not in ("turns", "tools")},
                          _Place()):
        parts = entry.change.parts
        if len(parts) == 2 and parts[0] == "totals" and parts[1] in _TOKEN_TOTALS:
            tokens_at = len(items) if tokens_at is None else tokens_at
        else:
            items.append(entry)
    if tokens_at is not None:
        def tokens(trace: dict[str, Any]) -> str:
            totals = trace.get("totals")
            found = totals if isinstance(totals, dict) else {}
            return "+".join(str(found.get(name)) for name in _TOKEN_TOTALS)
        items.insert(tokens_at, Line.of(f"totals: tokens {tokens(old)} -> {tokens(new)}"))
    return items


def _fold(items: list[_Item]) -> None:
    """Mark every change made before (in the order of ``items``) as a repeat of the first."""
    first: dict[tuple[Any, ...], _Entry] = {}
    for item in items:
        for entry in item.entries if isinstance(item, _StepBlock) else [item]:
            if not isinstance(entry, _Entry) or entry.key is None:
                continue
            primary = first.setdefault(entry.key, entry)
            if primary is not entry:
                entry.repeat = True
                primary.also.append(entry)


_TURN_PLACES = {"memory": "memory", "response": "response", "user": "user message"}
_STEP_PLACES = {"output": "step output", "input": "step input"}
_PLURALS = {"request": "requests", "reply": "replies", "step output": "outputs",
            "step input": "inputs"}


def _what(entry: _Entry) -> str:
    """The kind of place a change is in: ``request``, ``memory``... or its path."""
    parts, path = entry.change.parts, entry.change.path
    head = str(parts[0]) if parts else ""
    if entry.place.turn is None:
        return path
    if entry.place.step is None:
        return _TURN_PLACES.get(head, path)
    if head == "llm_calls" and len(parts) > 2 and parts[2] in ("messages", "response"):
        return "request" if parts[2] == "messages" else "reply"
    return _STEP_PLACES.get(head, path) if len(parts) == 1 else path


def _numbers(steps: list[int]) -> str:
    """``[2, 3, 4, 6]`` as ``2-4, 6``."""
    runs: list[list[int]] = []
    for step in steps:
        if runs and step == runs[-1][-1] + 1:
            runs[-1].append(step)
        else:
            runs.append([step])
    return ", ".join(str(r[0]) if len(r) == 1 else f"{r[0]}-{r[-1]}" for r in runs)


def _also(primary: _Entry, turns: int) -> str:
    """Where else ``primary``'s change shows, relative to where it is shown."""
    groups: dict[tuple[int | None, bool, str], list[int]] = {}
    for entry in primary.also:
        steps = groups.setdefault((entry.place.turn, entry.place.step is not None,
                                   _what(entry)), [])
        if entry.place.step is not None and entry.place.step not in steps:
            steps.append(entry.place.step)
    here = primary.place
    labels = []
    for (turn, in_step, what), steps in groups.items():
        if turn is None:
            labels.append(what)
            continue
        other_turn = turns > 1 and turn != here.turn
        prefix = f"turn {turn} " if other_turn else ""
        if not in_step:
            labels.append(prefix + what)
        elif not other_turn and steps == [here.step]:
            labels.append(what)
        elif not other_turn and what == "request" and here.step is not None and steps == [
                here.step + 1]:
            labels.append("next request")
        elif len(steps) == 1:
            labels.append(f"{prefix}step {steps[0]} {what.removeprefix('step ')}")
        else:
            labels.append(f"{_PLURALS.get(what, what)} of {prefix}steps {_numbers(steps)}")
    return "also in: " + ", ".join(labels)


def _shown(entry: _Entry, indent: str, turns: int) -> list[Line]:
    """A change's lines; the second says where else it shows (before a multi-line diff)."""
    lines = [indent + line for line in entry.change.marked()]
    if entry.also:
        lines.insert(1, Line.of(f"{indent}  {_also(entry, turns)}"))
    return lines


def _render(items: list[_Item], indent: str, turns: int, usage: bool) -> list[Line]:
    """``items`` as lines; ``usage``: a step's usage changes field by field, not folded."""
    lines: list[Line] = []
    for item in items:
        if isinstance(item, Line):
            lines.append(indent + item)
        elif isinstance(item, _Entry):
            lines += [] if item.repeat else _shown(item, indent, turns)
        else:
            fresh = [e for e in item.entries if not e.repeat] + (item.usage if usage else [])
            summary = None if usage else item.summary
            if not fresh:
                if summary is not None:
                    lines.append(Line.of(f"{indent}{item.label}: {summary}"))
                continue
            lines.append(Line.of(f"{indent}{item.label}: changed"))
            for entry in fresh:
                lines += _shown(entry, indent + "  ", turns)
            if summary is not None:
                lines.append(Line.of(f"{indent}  {summary}"))
    return lines


def _usage_alone(tools: list[_Entry], turns: list[tuple[Line, list[_Item] | None]],
                 header: list[_Item]) -> bool:
    """Whether token usage is all that changed (then it is the news, shown in full)."""
    if tools or any(items is None for _, items in turns):
        return False
    steps = [item for _, items in turns for item in items or []]
    return (all(isinstance(item, _StepBlock) and not item.entries for item in steps)
            and all(isinstance(item, Line) for item in header))


_SAME_CONTENT = (2, 3)
"""Trace formats that hold the same things (3 only writes repeated messages as references)."""


def trace_diff(old: dict[str, Any], new: dict[str, Any]) -> list[Line]:
    """How trace ``new`` differs from ``old``, as marked lines (empty when equal); see
    :func:`diff_traces`. Messages are compared as they read, references expanded
    (:mod:`agentkit.trace._read`); a reference that cannot be followed is a
    :class:`TraceError`."""
    if old == new:
        return []
    formats = old.get("format"), new.get("format")
    if formats[0] != formats[1] and not all(f in _SAME_CONTENT for f in formats):
        return [Line.of(f"trace format {old.get('format')} -> {new.get('format')}: the traces "
                        "were written by different agentkit versions, which keep different "
                        "things; write both with one agentkit to compare them step by step")]
    # the tools first: a changed description is the cause of the prompt changes
    tools = _entries(_by_name({"tools": old.get("tools", [])}),
                     _by_name({"tools": new.get("tools", [])}), _Place())
    old, new = expand_trace(old, "the old trace"), expand_trace(new, "the new trace")
    old_turns, new_turns = old.get("turns", []), new.get("turns", [])
    turns: list[tuple[Line, list[_Item] | None]] = []  # None: a turn inserted or dropped
    for index in range(max(len(old_turns), len(new_turns))):
        if index >= len(old_turns):
            turns.append((Line.of(f"turn {index + 1}: inserted + "
                                  f"{short(new_turns[index].get('user'))}", "new"), None))
            continue
        if index >= len(new_turns):
            turns.append((Line.of(f"turn {index + 1}: dropped - "
                                  f"{short(old_turns[index].get('user'))}", "old"), None))
            continue
        before, after = _listed(old_turns[index]), _listed(new_turns[index])
        if before == after:  # most turns of a long run: no need to walk them
            turns.append((Line.of(f"turn {index + 1}:"), []))
            continue
        rest = _entries({k: v for k, v in before.items() if k != "steps"},
                        {k: v for k, v in after.items() if k != "steps"}, _Place(index + 1))
        # the user's message begins what the turn's steps and memory repeat of it
        found: list[_Item] = [e for e in rest if e.change.parts[:1] == ("user",)]
        found += _steps(before.get("steps", []), after.get("steps", []), index + 1)
        found += [e for e in rest if e.change.parts[:1] != ("user",)]
        turns.append((Line.of(f"turn {index + 1} ({short(after.get('user'))}):"), found))
    header = _header(old, new)
    _fold([*tools, *(item for _, items in turns for item in items or []), *header])
    count, alone = len(turns), _usage_alone(tools, turns, header)
    lines = _render(list(tools), "", count, alone)
    for title, items in turns:
        body = _render(items or [], "    ", count, alone)
        if body or items is None:
            lines += [title, *body]
    return lines + _render(header, "", count, alone)


def _listed(turn: Any) -> Any:
    """A turn whose memory (a shared view, once expanded) is a list, as the diff walks it."""
    if isinstance(turn, dict) and isinstance(turn.get("memory"), Shared):
        return {**turn, "memory": list(turn["memory"])}
    return turn


def diff_traces(old: dict[str, Any], new: dict[str, Any], style: Style = PLAIN) -> list[str]:
    """Lines describing how trace ``new`` differs from ``old`` (empty when equal), in
    ``style`` (plain text unless told). Traces of two formats (written by different agentkit
    versions) differ in what they hold, not in what the agent did: that is the one line."""
    return render(trace_diff(old, new), style)
