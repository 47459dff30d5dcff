"""Chain-of-Abstraction chains: the ``[FUNC name(args) = yN]`` calls in a model's text.

:func:`parse_chain` reads every call of a text into a :class:`Chain`: the calls in text order
(FUNC #1, #2...), the placeholder each defines, the placeholders each reads, and the
*levels* to run them in (a call runs one level after the last call it reads from). It never
raises: a problem is attached to the call it concerns (``call.error``, a sentence naming the
FUNC, its line and column and what is wrong) so the rest of the chain can still run;
:meth:`Chain.check` turns any problem into :class:`ChainParseError` (a ``ValueError``).

Syntax. A call starts at ``[FUNC`` followed by whitespace; any other text is prose. Then
``name(arguments) = output]``. The argument list is read as Python/JSON literals (``ast``,
not a split on commas: commas inside strings, lists and objects stay put), positional or
``keyword=value``; ``true``/``false``/``null`` are JSON's. A placeholder is read where a whole
argument -- or a whole element of a list or object value -- is a defined output name, bare
(``y1``) or quoted exactly so (``"y1"``, ``'y1'``; a concatenation ``"y" "1"``, an escape or a
triple quote is text); a placeholder *inside* a longer string is text. Problems:

* a call that cannot be read (no name, no ``(``, an argument list that is not closed, no
  ``= output]``), arguments that are not literals or do not parse;
* a bare name that is no defined placeholder, or a quoted ``yN`` that no call defines
  (undefined placeholder);
* an output name defined a second time (the first definition is the one read);
* calls that depend on each other in a cycle.

Fixes over LlamaIndex (which split arguments on every comma and replaced placeholders as
substrings): :func:`replace_placeholders` works on whole tokens, so ``y1`` never touches
``y10`` and a quoted ``"y1"`` becomes ``"<output>"``, not ``""<output>""``.
"""

from __future__ import annotations

import ast
import bisect
import dataclasses
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentkit.agent._literals import parse_expression, string_literal_end

__all__ = [
    "Chain",
    "ChainCall",
    "ChainParseError",
    "Ref",
    "format_call",
    "parse_chain",
    "replace_placeholders",
    "MAX_NESTING",
]

MAX_NESTING = 50
"""How deep brackets may nest inside one argument list (deeper is an error, not a crash)."""

_MARKER = re.compile(r"\[FUNC(?=\s)")
_NAME = re.compile(r"[^\W\d]\w*")
_SPACE = re.compile(r"\s*")
_EQUALS = re.compile(r"\s*=\s*")
_CLOSE = re.compile(r"\s*\]")
_RECOVER_OUTPUT = re.compile(r"=\s*([^\W\d]\w*)\s*\]")
_PLACEHOLDER_SHAPE = re.compile(r"y\d+")
_NEWLINE = re.compile(r"\r\n|\r|\n")
_PAIRS = {"(": ")", "[": "]", "{": "}"}
_JSON_WORDS: dict[str, Any] = {"true": True, "false": False, "null": None}
_SNIPPET = 60


class ChainParseError(ValueError):
    """A chain with problems; the message names each FUNC (number, line, column) and what is
    wrong with it."""

    def __init__(self, problems: Sequence[str]) -> None:
        self.problems = list(problems)
        more = len(self.problems) - 1
        extra = f" (and {more} more problem{'s' if more > 1 else ''}: " + "; ".join(
            self.problems[1:]) + ")" if more else ""
        super().__init__(self.problems[0] + extra)


@dataclass(frozen=True, slots=True)
class Ref:
    """A placeholder used as an argument: stands for the output of the call defining it."""

    name: str


@dataclass(frozen=True, slots=True)
class ChainCall:
    """One ``[FUNC ...]`` of a chain. ``args``/``kwargs`` hold literals and :class:`Ref` s;
    ``error`` says why the call cannot run (``None`` when it can)."""

    index: int
    name: str
    source: str
    start: int
    end: int
    line: int
    column: int
    args: tuple[Any, ...] = ()
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    output: str | None = None
    inputs: tuple[str, ...] = ()
    error: str | None = None
    output_span: tuple[int, int] | None = None
    ref_spans: tuple[tuple[int, int, str], ...] = ()

    @property
    def where(self) -> str:
        """``FUNC #2 at line 1, column 30 (`[FUNC multiply(y1, 3) = y2]`)``."""
        snippet = " ".join(self.source.split())
        if len(snippet) > _SNIPPET:
            snippet = snippet[:_SNIPPET - 3] + "..."
        return f"FUNC #{self.index} at line {self.line}, column {self.column} (`{snippet}`)"

    def arguments(self, values: Mapping[str, Any]) -> tuple[list[Any], dict[str, Any]]:
        """The call's arguments with each placeholder replaced by its value in ``values``."""
        return ([_substitute(a, values) for a in self.args],
                {k: _substitute(v, values) for k, v in self.kwargs.items()})


@dataclass(frozen=True, slots=True)
class Chain:
    """The calls of a text, in text order, and the levels to run them in (lists of FUNC
    numbers; a call's level is one more than the highest level it reads from; calls caught in
    a cycle, and those reading from them, form one last level)."""

    text: str
    calls: tuple[ChainCall, ...] = ()
    levels: tuple[tuple[int, ...], ...] = ()

    def call(self, index: int) -> ChainCall:
        """FUNC #``index`` (1-based)."""
        return self.calls[index - 1]

    @property
    def problems(self) -> list[str]:
        """Every call's problem, in text order."""
        return [c.error for c in self.calls if c.error is not None]

    def check(self) -> Chain:
        """This chain, or :class:`ChainParseError` listing its problems."""
        if self.problems:
            raise ChainParseError(self.problems)
        return self

    def defining(self, placeholder: str) -> ChainCall | None:
        """The call whose output ``placeholder`` is (the first, if defined twice)."""
        return next((c for c in self.calls if c.output == placeholder), None)

    def label(self, index: int) -> str:
        """What a call is called in traces: its placeholder, or ``FUNC #n`` when it defines
        none (or repeats an earlier one)."""
        call = self.call(index)
        if call.output is not None and self.defining(call.output) is call:
            return call.output
        return f"FUNC #{index}"

    def fill(self, outputs: Mapping[int, str]) -> str:
        """The text with each call's output (``outputs`` by FUNC number) written as
        ``"<output>"`` where its placeholder stands: after the call's ``=``, where another
        call reads it, and in the prose (whole tokens only). A call with no ``= output`` gets
        its output appended after it."""
        values: dict[str, str] = {}
        for call in self.calls:
            if call.output is not None and self.defining(call.output) is call and (
                    call.index in outputs):
                values[call.output] = outputs[call.index]
        parts: list[str] = []
        position = 0
        for call in self.calls:
            parts.append(replace_placeholders(self.text[position:call.start], values))
            edits = [(s, e, _quoted(values[name])) for s, e, name in call.ref_spans
                     if name in values]
            if call.index in outputs:
                if call.output_span is not None:
                    edits.append((*call.output_span, _quoted(outputs[call.index])))
                else:
                    edits.append((call.end, call.end, f" = {_quoted(outputs[call.index])}"))
            cursor = call.start
            for start, end, replacement in sorted(edits):
                parts.append(self.text[cursor:start])
                parts.append(replacement)
                cursor = end
            parts.append(self.text[cursor:call.end])
            position = call.end
        parts.append(replace_placeholders(self.text[position:], values))
        return "".join(parts)

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready summary a trace shows: each call and the levels, by label."""
        level_of = {i: n for n, level in enumerate(self.levels) for i in level}
        calls = []
        for call in self.calls:
            item: dict[str, Any] = {"func": call.index, "source": call.source,
                                    "output": call.output, "inputs": list(call.inputs),
                                    "level": level_of.get(call.index)}
            if call.error is not None:
                item["error"] = call.error
            calls.append(item)
        return {"calls": calls,
                "levels": [[self.label(i) for i in level] for level in self.levels]}


def _substitute(value: Any, values: Mapping[str, Any]) -> Any:
    if isinstance(value, Ref):
        return values[value.name]
    if isinstance(value, list):
        return [_substitute(v, values) for v in value]
    if isinstance(value, dict):
        return {k: _substitute(v, values) for k, v in value.items()}
    return value


def _quoted(value: str) -> str:
    return f'"{value}"'


def replace_placeholders(text: str, values: Mapping[str, str]) -> str:
    """Write ``"<value>"`` where a placeholder of ``values`` stands in ``text`` as a whole
    token, bare or quoted (``y1``, ``"y1"``, ``'y1'``); ``y10`` and ``xy1`` are other tokens."""
    if not values:
        return text
    names = "|".join(re.escape(n) for n in sorted(values, key=len, reverse=True))
    pattern = re.compile(rf"(?<!\w)(?P<q>[\"']?)(?P<name>{names})(?P=q)(?!\w)")
    return pattern.sub(lambda m: _quoted(values[m.group("name")]), text)


def format_call(name: str, args: Sequence[Any] = (), output: str = "y1",
                kwargs: Mapping[str, Any] | None = None) -> str:
    """``[FUNC name(args) = output]`` with literal arguments (a :class:`Ref` is written
    bare): the text :func:`parse_chain` reads back into the same call."""
    parts = [_literal(a) for a in args]
    parts += [f"{k}={_literal(v)}" for k, v in (kwargs or {}).items()]
    return f"[FUNC {name}({', '.join(parts)}) = {output}]"


def _literal(value: Any) -> str:
    if isinstance(value, Ref):
        return value.name
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_literal(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_literal(k)}: {_literal(v)}" for k, v in value.items()) + "}"
    if isinstance(value, str):  # JSON's escapes, but astral characters written as such
        return "".join(f"\\u{ord(c):04x}" if 0xD800 <= ord(c) <= 0xDFFF else c
                       for c in json.dumps(value, ensure_ascii=False))
    if value is None or isinstance(value, (bool, int, float)):
        return repr(value)
    raise TypeError(f"cannot write {type(value).__name__} {value!r} as a chain literal")


# ---------------------------------------------------------------------------- parsing
@dataclass(frozen=True, slots=True)
class _Atom:
    """A bare name or a string literal in an argument list, resolved once every output is
    known (a defined placeholder becomes a Ref)."""

    text: str
    quoted: bool
    start: int
    end: int


class _Problem(Exception):
    """What is wrong with the call being read (internal; becomes the call's ``error``)."""


@dataclass(slots=True)
class _Draft:
    """A call as read, before placeholders are resolved."""

    index: int
    name: str
    start: int
    end: int
    args: list[Any] = field(default_factory=list)
    kwargs: dict[str, Any] = field(default_factory=dict)
    output: str | None = None
    output_span: tuple[int, int] | None = None
    problem: str | None = None


def parse_chain(text: str) -> Chain:
    """Read every ``[FUNC ...]`` of ``text`` into a :class:`Chain` (see the module docstring);
    never raises: problems are on the calls (:meth:`Chain.check` raises them)."""
    drafts: list[_Draft] = []
    lines = _Lines(text)
    position = 0
    while (marker := _MARKER.search(text, position)) is not None:
        draft = _read_call(text, marker.start(), len(drafts) + 1, lines)
        drafts.append(draft)
        position = max(draft.end, marker.end())
    return _resolve(text, drafts, lines)


class _Lines:
    """Line and column of any offset of a text, by binary search over where its lines start
    (counting line breaks from the start of the text for each call made parsing quadratic)."""

    def __init__(self, text: str) -> None:
        self._starts = [0, *(match.end() for match in _NEWLINE.finditer(text))]

    def line(self, position: int) -> int:
        return bisect.bisect_right(self._starts, position)

    def column(self, position: int) -> int:
        return position - self._starts[self.line(position) - 1] + 1


def _read_call(text: str, start: int, index: int, lines: _Lines) -> _Draft:
    """One call from its ``[FUNC``; a call with a problem ends where :func:`_recover` says."""
    draft = _Draft(index=index, name="", start=start, end=start)
    position = _SPACE.match(text, start + len("[FUNC")).end()  # type: ignore[union-attr]
    try:
        name = _NAME.match(text, position)
        if name is None:
            raise _Problem("expected a function name after `[FUNC`")
        draft.name = name.group()
        position = _SPACE.match(text, name.end()).end()  # type: ignore[union-attr]
        if not text.startswith("(", position):
            raise _Problem(f"expected `(` after the function name `{draft.name}`")
        close = _matching_paren(text, position, lines)
        draft.args, draft.kwargs = _read_arguments(text, position + 1, close)
        equals = _EQUALS.match(text, close + 1)
        if equals is None:
            raise _Problem("expected `= <placeholder>]` after the argument list")
        output = _NAME.match(text, equals.end())
        if output is None:
            raise _Problem("expected the output placeholder (a name like y1) after `=`")
        bracket = _CLOSE.match(text, output.end())
        if bracket is None:
            raise _Problem(f"expected `]` after the output placeholder `{output.group()}`")
        draft.output, draft.output_span = output.group(), output.span()
        draft.end = bracket.end()
    except _Problem as problem:
        _recover(text, draft)
        draft.problem = str(problem)
    return draft


def _recover(text: str, draft: _Draft) -> None:
    """Where a call that could not be read ends, and the placeholder it was meant to define:
    its ``= output]`` before the next call; else its first ``]`` on its line; else its line."""
    following = _MARKER.search(text, draft.start + 1)
    limit = following.start() if following is not None else len(text)
    draft.args, draft.kwargs = [], {}
    found = _RECOVER_OUTPUT.search(text, draft.start, limit)
    if found is not None:
        draft.output, draft.output_span = found.group(1), found.span(1)
        draft.end = found.end()
        return
    draft.output = draft.output_span = None
    line_end = _NEWLINE.search(text, draft.start, limit)
    end = line_end.start() if line_end is not None else limit
    bracket = text.find("]", draft.start, end)
    draft.end = bracket + 1 if bracket != -1 else end


def _matching_paren(text: str, open_at: int, lines: _Lines) -> int:
    """Index of the ``)`` closing the ``(`` at ``open_at``, skipping strings and nested
    brackets."""
    stack = [")"]
    position = open_at + 1
    while position < len(text):
        char = text[position]
        if char in "\"'":
            end = string_literal_end(text, position)
            if end is None:
                raise _Problem(f"the string opened at column {lines.column(position)} is "
                               "not closed")
            position = end
            continue
        if char in _PAIRS:
            if len(stack) >= MAX_NESTING:
                raise _Problem(f"the arguments nest brackets more than {MAX_NESTING} deep")
            stack.append(_PAIRS[char])
        elif char in ")]}":
            if char != stack[-1]:
                raise _Problem(f"`{char}` at column {lines.column(position)} does not close "
                               f"the bracket before it (expected `{stack[-1]}`)")
            stack.pop()
            if not stack:
                return position
        position += 1
    raise _Problem("the argument list is not closed (no matching `)`)")


def _read_arguments(text: str, start: int, end: int) -> tuple[list[Any], dict[str, Any]]:
    """The literals of the argument list ``text[start:end]`` (names and strings as atoms)."""
    source = "f(" + text[start:end] + ")"
    try:
        tree = parse_expression(source)
    except (SyntaxError, ValueError, MemoryError, RecursionError) as exc:
        reason = getattr(exc, "msg", None) or str(exc) or type(exc).__name__
        raise _Problem(f"cannot parse the arguments: {reason}") from None
    call = tree.body
    if not isinstance(call, ast.Call):  # the brackets are balanced, so this is f(...)
        raise _Problem("cannot parse the arguments")
    offsets = _Offsets(source, start - 2)
    args = [_value(node, offsets, f"argument {n}") for n, node in enumerate(call.args, 1)]
    kwargs: dict[str, Any] = {}
    for keyword in call.keywords:
        if keyword.arg is None:
            raise _Problem("`**` arguments are not literals")
        kwargs[keyword.arg] = _value(keyword.value, offsets, f"argument `{keyword.arg}`")
    return args, kwargs


class _Offsets:
    """Maps ``ast`` positions (line, UTF-8 byte column) in ``source`` to offsets in the text
    (``source`` starts at text offset ``base``)."""

    def __init__(self, source: str, base: int) -> None:
        self.source = source
        self.base = base
        self.lines: list[tuple[int, str]] = []
        position = 0
        for match in _NEWLINE.finditer(source):
            self.lines.append((position, source[position:match.start()]))
            position = match.end()
        self.lines.append((position, source[position:]))

    def __call__(self, line: int | None, byte_column: int | None) -> int:
        start, content = self.lines[(line or 1) - 1]
        column = len(content.encode("utf-8", "surrogatepass")[:byte_column or 0].decode(
            "utf-8", "surrogatepass"))
        return self.base + start + column


def _value(node: ast.expr, offsets: _Offsets, what: str) -> Any:
    """The literal ``node`` stands for; names and strings become atoms."""
    if isinstance(node, ast.Name):
        return _Atom(node.id, False, offsets(node.lineno, node.col_offset),
                     offsets(node.end_lineno, node.end_col_offset))
    if isinstance(node, ast.Constant):
        value = node.value
        if isinstance(value, str):
            start = offsets(node.lineno, node.col_offset)
            end = offsets(node.end_lineno, node.end_col_offset)
            written = offsets.source[start - offsets.base:end - offsets.base]
            if written not in (f'"{value}"', f"'{value}'"):
                return value  # concatenated, escaped or triple-quoted: text, never a placeholder
            return _Atom(value, True, start, end)
        if value is None or isinstance(value, (bool, int, float)):
            return value
        raise _Problem(f"{what} is a {type(value).__name__} literal; use a string, number, "
                       "boolean, null, list or object")
    if (isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd))
            and isinstance(node.operand, ast.Constant)
            and isinstance(node.operand.value, (int, float))
            and not isinstance(node.operand.value, bool)):
        number = node.operand.value
        return -number if isinstance(node.op, ast.USub) else number
    if isinstance(node, (ast.List, ast.Tuple)):
        return [_value(item, offsets, what) for item in node.elts]
    if isinstance(node, ast.Dict):
        result: dict[Any, Any] = {}
        for key, item in zip(node.keys, node.values, strict=True):
            if not (isinstance(key, ast.Constant)
                    and (key.value is None or isinstance(key.value, (str, bool, int, float)))):
                raise _Problem(f"{what} has a key that is not a string or number literal")
            result[key.value] = _value(item, offsets, what)
        return result
    snippet = ast.unparse(node)
    if len(snippet) > _SNIPPET:
        snippet = snippet[:_SNIPPET - 3] + "..."
    raise _Problem(f"{what} `{snippet}` is not a literal (write the value, or a placeholder "
                   "defined by another FUNC)")


# ---------------------------------------------------------------------------- resolving
def _resolve(text: str, drafts: list[_Draft], lines: _Lines) -> Chain:
    """Placeholders -> Refs, then duplicates, undefined inputs and cycles -> problems, then
    levels."""
    defining: dict[str, int] = {}
    for draft in drafts:
        if draft.output is not None:
            defining.setdefault(draft.output, draft.index)
    calls: list[ChainCall] = []
    depends: dict[int, set[int]] = {}
    for draft in drafts:
        problem = draft.problem
        if problem is None and draft.output is not None and defining[draft.output] != draft.index:
            problem = (f"placeholder {draft.output} is already defined by "
                       f"FUNC #{defining[draft.output]}")
        refs: list[tuple[int, int, str]] = []
        undefined: list[str] = []
        args = [_resolved(a, defining, refs, undefined) for a in draft.args]
        kwargs = {k: _resolved(v, defining, refs, undefined) for k, v in draft.kwargs.items()}
        if problem is None and undefined:
            problem = _undefined(undefined)
        inputs = tuple(dict.fromkeys(name for _, _, name in refs))
        depends[draft.index] = {defining[name] for name in inputs}
        call = ChainCall(index=draft.index, name=draft.name, source=text[draft.start:draft.end],
                         start=draft.start, end=draft.end, line=lines.line(draft.start),
                         column=lines.column(draft.start), args=tuple(args), kwargs=kwargs,
                         output=draft.output, inputs=inputs, output_span=draft.output_span,
                         ref_spans=tuple(refs))
        if problem is not None:
            call = _with_error(call, problem)
        calls.append(call)
    levels, stuck = _levels(depends)
    for index, cycle in _cycles(stuck, depends).items():
        call = calls[index - 1]
        if call.error is None:
            path = " -> ".join(calls[i - 1].output or f"FUNC #{i}" for i in cycle)
            calls[index - 1] = _with_error(call, f"is part of a dependency cycle: {path} "
                                                 "(each needs the next)")
    if stuck:
        levels.append(tuple(sorted(stuck)))
    return Chain(text=text, calls=tuple(calls), levels=tuple(levels))


def _with_error(call: ChainCall, problem: str) -> ChainCall:
    separator = " " if problem.startswith("is ") else ": "
    return dataclasses.replace(call, error=f"{call.where}{separator}{problem}")


def _undefined(names: list[str]) -> str:
    unique = list(dict.fromkeys(names))
    placeholders = [n for n in unique if _PLACEHOLDER_SHAPE.fullmatch(n)]
    others = [n for n in unique if n not in placeholders]
    if placeholders:
        listed = ", ".join(placeholders)
        return (f"input {listed} is not defined by any FUNC" if len(placeholders) == 1 else
                f"inputs {listed} are not defined by any FUNC")
    return (f"`{others[0]}` is neither a literal nor a placeholder defined by a FUNC (quote "
            f'strings: "{others[0]}")')


def _resolved(value: Any, defining: Mapping[str, int], refs: list[tuple[int, int, str]],
              undefined: list[str]) -> Any:
    if isinstance(value, _Atom):
        if value.text in defining:
            refs.append((value.start, value.end, value.text))
            return Ref(value.text)
        if not value.quoted:
            if value.text in _JSON_WORDS:
                return _JSON_WORDS[value.text]
            undefined.append(value.text)
        elif _PLACEHOLDER_SHAPE.fullmatch(value.text):
            undefined.append(value.text)
        return value.text
    if isinstance(value, list):
        return [_resolved(v, defining, refs, undefined) for v in value]
    if isinstance(value, dict):
        return {k: _resolved(v, defining, refs, undefined) for k, v in value.items()}
    return value


def _levels(depends: Mapping[int, set[int]]) -> tuple[list[tuple[int, ...]], set[int]]:
    """Levels of the calls that can be ordered, and the calls that cannot (in or behind a
    cycle)."""
    levels: list[tuple[int, ...]] = []
    placed: set[int] = set()
    waiting = set(depends)
    while True:
        ready = tuple(sorted(i for i in waiting if depends[i] <= placed))
        if not ready:
            return levels, waiting
        levels.append(ready)
        placed.update(ready)
        waiting.difference_update(ready)


def _cycles(stuck: set[int], depends: Mapping[int, set[int]]) -> dict[int, list[int]]:
    """For each stuck call on a cycle, the shortest cycle through it (a path of FUNC numbers
    from the call back to itself)."""
    found: dict[int, list[int]] = {}
    for start in sorted(stuck):
        path = _path_back(start, stuck, depends)
        if path is not None:
            found[start] = path
    return found


def _path_back(start: int, stuck: set[int], depends: Mapping[int, set[int]]
               ) -> list[int] | None:
    """The shortest path ``start -> ... -> start`` along "needs" edges, if there is one."""
    previous: dict[int, int] = {}
    frontier = [start]
    while frontier:
        following: list[int] = []
        for node in frontier:
            for needed in sorted(depends[node] & stuck):
                if needed == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(previous[path[-1]])
                    return [*reversed(path), start]
                if needed not in previous:
                    previous[needed] = node
                    following.append(needed)
        frontier = following
    return None
