"""How a changed value is shown to a person: where it changed, and the changed words marked --
never the first hundred-odd characters of both sides, never two whole lines to compare by eye.

* Short one-line values read best side by side (``"add" -> "plus"``).
* A longer text -- a system prompt, a tool description, a tool's output, a recorded request's
  message -- is shown as a unified diff of its lines (a word changed in line 13 shows line 13
  with a line of context either side), or, for one long line, as excerpts around each changed
  stretch.
* A changed line that still mostly reads the same is shown **once**, prefixed ``~``, with its
  changed words marked in place: ``~the refund was [-approved-]{+rejected+} today``
  (``[-removed-]``, ``{+added+}``, as ``git diff --word-diff=plain``). A line rewritten beyond
  that is shown as the pair ``-old`` / ``+new``.

Each line of a diff is a :class:`Line` of marked :class:`Span`\\ s, so one diff is shown three
ways (a :class:`Style`): :data:`PLAIN` text with the markers above (logs, pytest, Markdown),
:data:`ANSI` colours on a terminal (removed words red and struck through, added words green and
underlined, no markers), :data:`HTML` elements with a class (``<del class="diff-del">``,
``<ins class="diff-ins">``; removed/added whole lines and the sides of ``old -> new`` in
``<span class="diff-old">``/``<span class="diff-new">``, which plain text leaves unmarked).

:func:`changes` lists every difference of two JSON-like values in document order (deepdiff finds
them), each rendered so; a path names the item of a list by its ``name`` where it has one
(``tool_calls[0] (refund).output``). Used by trace diffs (:mod:`agentkit.trace._diff`) and
cassette misses (:mod:`agentkit.recording`).
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from html import escape as _html_escape
from typing import Any, Literal

__all__ = ["SHORT", "ANSI", "HTML", "PLAIN", "Change", "Line", "Mark", "Span", "Style",
           "changes", "edits", "is_short", "render", "short", "text_diff", "value_diff"]

SHORT = 80
"""Values up to this many characters (as JSON, on one line) are shown whole, side by side."""

_CONTEXT_CHARS = 40
_MAX_LINE = 200
_MAX_EXCERPTS = 6
_SIMILAR = 0.5
"""A changed line is shown once with its words marked when at least this share of its words
is unchanged; below that it reads better as two lines."""
_MAX_PAIRINGS = 400
"""Removed × added lines of one hunk beyond which lines are not paired up (a rewrite)."""
_TOKEN = re.compile(r"\s+|\w+|[^\w\s]")
_WORD = re.compile(r"\w")

Mark = Literal["del", "ins", "old", "new"]
"""``del``/``ins``: words removed/added inside a changed line (marked in plain text too);
``old``/``new``: removed/added text whose place already says so (a ``-``/``+`` line, a side
of ``old -> new``), left unmarked in plain text."""


# ----------------------------------------------------------------------------- lines, styles
@dataclass(frozen=True)
class Span:
    """A stretch of a diff line's text, unmarked or marked as removed/added."""

    text: str
    mark: Mark | None = None


@dataclass(frozen=True)
class Line:
    """One line of a diff as marked spans; :meth:`render` shows it in a :class:`Style`
    (``str()`` is its plain text, markers included)."""

    spans: tuple[Span, ...] = ()

    @classmethod
    def of(cls, text: str, mark: Mark | None = None) -> Line:
        """A line of one span."""
        return cls((Span(text, mark),) if text else ())

    def __add__(self, other: Line | str) -> Line:
        return Line(self.spans + (other.spans if isinstance(other, Line) else Line.of(other).spans))

    def __radd__(self, other: str) -> Line:
        return Line.of(other) + self

    def render(self, style: Style) -> str:
        """The line as ``style`` shows it."""
        parts = []
        for span in self.spans:
            opening, closing = style.marks[span.mark] if span.mark is not None else ("", "")
            parts.append(f"{opening}{style.escape(span.text)}{closing}")
        return "".join(parts)

    def __str__(self) -> str:
        return self.render(PLAIN)


def _same(text: str) -> str:
    return text


@dataclass(frozen=True, eq=False)
class Style:
    """How marks are shown: what opens and closes each, and how text is escaped."""

    marks: Mapping[Mark, tuple[str, str]]
    escape: Callable[[str], str] = field(default=_same)


PLAIN = Style({"del": ("[-", "-]"), "ins": ("{+", "+}"), "old": ("", ""), "new": ("", "")})
"""Plain text: ``[-removed-]{+added+}`` inside a changed line, nothing else marked."""

ANSI = Style({"del": ("\x1b[31;9m", "\x1b[0m"), "ins": ("\x1b[32;4m", "\x1b[0m"),
              "old": ("\x1b[31m", "\x1b[0m"), "new": ("\x1b[32m", "\x1b[0m")})
"""Terminal colours: removed red (words also struck through), added green (words also
underlined), so the marks read without relying on colour alone."""

HTML = Style({"del": ('<del class="diff-del">', "</del>"),
              "ins": ('<ins class="diff-ins">', "</ins>"),
              "old": ('<span class="diff-old">', "</span>"),
              "new": ('<span class="diff-new">', "</span>")},
             _html_escape)
"""HTML for a ``<pre>``: text escaped, marks as elements with a class."""


def render(lines: Iterable[Line], style: Style = PLAIN) -> list[str]:
    """``lines`` as ``style`` shows them."""
    return [line.render(style) for line in lines]


# ----------------------------------------------------------------------------- words
def short(value: Any, limit: int = 160) -> str:
    """``value`` as one line of JSON, cut to ``limit`` characters (for summaries only)."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def is_short(value: Any) -> bool:
    """Whether ``value`` fits on one line side by side with another (see :data:`SHORT`)."""
    if isinstance(value, str) and "\n" in value:
        return False
    return len(json.dumps(value, ensure_ascii=False, default=str)) <= SHORT


_Op = tuple[str, int, int, int, int]
"""``("equal"|"change", a0, a1, b0, b1)``: words ``a[a0:a1]`` became ``b[b0:b1]``."""


def _opcodes(a: list[str], b: list[str]) -> list[_Op]:
    """How words ``a`` became ``b``, alternating equal and changed stretches."""
    # the words both texts begin and end with are matched as they are: the matcher,
    # quadratic in the words it is given, sees only the middle where they differ
    lo, shorter = 0, min(len(a), len(b))
    while lo < shorter and a[lo] == b[lo]:
        lo += 1
    hi = 0
    while hi < shorter - lo and a[-1 - hi] == b[-1 - hi]:
        hi += 1
    matcher = difflib.SequenceMatcher(None, a[lo:len(a) - hi], b[lo:len(b) - hi],
                                      autojunk=False)
    found = [("equal", 0, lo, 0, lo)]
    found += [(tag, a0 + lo, a1 + lo, b0 + lo, b1 + lo)
              for tag, a0, a1, b0, b1 in matcher.get_opcodes()]
    found.append(("equal", len(a) - hi, len(a), len(b) - hi, len(b)))
    ops: list[_Op] = []
    for opcode, a0, a1, b0, b1 in found:
        tag = "equal" if opcode == "equal" else "change"
        if a0 == a1 and b0 == b1:
            continue
        if ops and ops[-1][0] == tag:
            ops[-1] = (tag, ops[-1][1], a1, ops[-1][3], b1)
        else:
            ops.append((tag, a0, a1, b0, b1))
    return ops


def _joined(ops: list[_Op], a: list[str]) -> list[_Op]:
    """``ops`` with changes separated by blanks alone made one change."""
    joined: list[_Op] = []
    for index, op in enumerate(ops):
        blank = op[0] == "equal" and all(t.isspace() for t in a[op[1]:op[2]])
        if (blank and 0 < index < len(ops) - 1) or (op[0] == "change" and joined
                                                    and joined[-1][0] == "change"):
            joined[-1] = ("change", joined[-1][1], op[2], joined[-1][3], op[4])
        else:
            joined.append(op)
    return joined


def _word_aligned(ops: list[_Op], a: list[str], b: list[str]) -> list[_Op]:
    """``ops`` with each word added or removed between blanks marked with the blank before
    it rather than the one after (``a[- red-] fox``, not ``a [-red -]fox``)."""
    ops = list(ops)
    for index in range(1, len(ops) - 1):
        (_, p0, p1, q0, q1), (_, a0, a1, b0, b1), nxt = ops[index - 1], ops[index], ops[index + 1]
        moved = a[a0:a1] or b[b0:b1]
        if ((a0 == a1 or b0 == b1) and moved[-1].isspace() and p1 - p0 > 1
                and a[p1 - 1] == moved[-1]):
            ops[index - 1] = ("equal", p0, p1 - 1, q0, q1 - 1)
            ops[index] = ("change", a0 - 1, a1 - 1, b0 - 1, b1 - 1)
            ops[index + 1] = ("equal", nxt[1] - 1, nxt[2], nxt[3] - 1, nxt[4])
    return ops


class _Words:
    """Two texts cut into words (and runs of blanks and single punctuation marks) and how
    the words of one became those of the other: equal stretches and changed ones, where
    changes separated by blanks alone count as one (``[-big red-]{+small blue+}``)."""

    def __init__(self, old: str, new: str) -> None:
        self.a, self.b = _TOKEN.findall(old), _TOKEN.findall(new)
        self.ops = _word_aligned(_joined(_opcodes(self.a, self.b), self.a), self.a, self.b)

    def old(self, op: _Op) -> str:
        return "".join(self.a[op[1]:op[2]])

    def new(self, op: _Op) -> str:
        return "".join(self.b[op[3]:op[4]])

    def similar(self) -> bool:
        """Whether enough words are unchanged to read the change in place (see
        :data:`_SIMILAR`; blanks and punctuation do not count)."""
        def words(tokens: Sequence[str]) -> int:
            return sum(1 for token in tokens if _WORD.match(token))
        total = words(self.a) + words(self.b)
        kept = sum(words(self.a[op[1]:op[2]]) for op in self.ops if op[0] == "equal")
        return total == 0 or 2 * kept >= _SIMILAR * total

    def marked(self, ops: Sequence[_Op]) -> Line:
        """``ops`` as one line: unchanged words as they are, changed ones marked."""
        spans: list[Span] = []
        for op in ops:
            if op[0] == "equal":
                spans.append(Span(self.old(op)))
                continue
            removed, added = self.old(op), self.new(op)
            spans += [Span(removed, "del")] if removed else []
            spans += [Span(added, "ins")] if added else []
        return Line(tuple(spans))

    def sides(self) -> tuple[Line, Line]:
        """The old text with its removed words marked ``old``, the new with its added words
        marked ``new`` (whole texts marked when they are not similar)."""
        if not self.similar():
            return Line.of("".join(self.a), "old"), Line.of("".join(self.b), "new")
        before = [Span(self.old(op), None if op[0] == "equal" else "old") for op in self.ops]
        after = [Span(self.new(op), None if op[0] == "equal" else "new") for op in self.ops]
        return (Line(tuple(s for s in before if s.text)),
                Line(tuple(s for s in after if s.text)))


def edits(old: str, new: str) -> tuple[tuple[str, str], ...]:
    """What changed from text ``old`` to ``new``: each changed stretch of words, old and new
    (the same edit made to two texts gives the same value, whatever surrounds it)."""
    words = _Words(old, new)
    return tuple((words.old(op), words.new(op)) for op in words.ops if op[0] == "change")


# ----------------------------------------------------------------------------- texts
def _clip(line: str) -> str:
    """An unchanged context line, its middle elided if it is very long."""
    if len(line) <= _MAX_LINE:
        return line
    half = _MAX_LINE // 2 - 2
    return f"{line[:half]} … {line[-half:]}"


def _context(tokens: Iterable[str]) -> list[str]:
    """Whole tokens from the start of ``tokens`` up to about :data:`_CONTEXT_CHARS`."""
    kept: list[str] = []
    size = 0
    for token in tokens:
        if size + len(token) > _CONTEXT_CHARS:
            break
        kept.append(token)
        size += len(token)
    return kept


def _groups(words: _Words) -> list[list[int]]:
    """Indexes (into ``words.ops``) of each changed stretch and the unchanged words between
    close ones: one excerpt each."""
    groups: list[list[int]] = []
    for index, op in enumerate(words.ops):
        if op[0] != "change":
            continue
        if groups and len(words.old(words.ops[index - 1])) <= 2 * _CONTEXT_CHARS:
            groups[-1] += [index - 1, index]  # close changes share one excerpt
        else:
            groups.append([index])
    return groups


def _excerpts(old: str, new: str) -> list[Line]:
    """One long changed line as excerpts around each changed stretch: ``~`` lines with the
    words marked when the line still mostly reads the same, else ``-``/``+`` pairs."""
    words = _Words(old, new)
    similar = words.similar()
    groups = _groups(words)
    lines: list[Line] = []
    for group in groups[:_MAX_EXCERPTS]:
        first, last = words.ops[group[0]], words.ops[group[-1]]
        before, after = words.a[:first[1]], words.a[last[2]:]
        lead = "".join(reversed(_context(reversed(before))))
        tail = "".join(_context(after))
        lead = lead if len(lead) == len("".join(before)) else "…" + lead.lstrip()
        tail = tail if len(tail) == len("".join(after)) else tail.rstrip() + "…"
        if similar:
            lines.append("~" + lead + words.marked([words.ops[i] for i in group]) + tail)
        else:
            lines.append(Line.of(f"-{lead}{''.join(words.a[first[1]:last[2]])}{tail}", "old"))
            lines.append(Line.of(f"+{lead}{''.join(words.b[first[3]:last[4]])}{tail}", "new"))
    if len(groups) > _MAX_EXCERPTS:
        lines.append(Line.of(f" (and {len(groups) - _MAX_EXCERPTS} more changed stretches)"))
    return lines


def _changed_line(old: str, new: str) -> list[Line] | None:
    """A changed line of a multi-line text shown once with its words marked (excerpts of it
    when it is very long); None when it does not read the same any more."""
    words = _Words(old, new)
    if not words.similar():
        return None
    if max(len(old), len(new)) > _MAX_LINE:
        return _excerpts(old, new)
    return ["~" + words.marked(words.ops)]


def _replaced(old: list[str], new: list[str]) -> list[Line]:
    """Removed lines ``old`` and the added lines ``new`` in their place: each removed line
    that an added one (in order) still resembles shown once as a ``~`` line, the rest as
    ``-``/``+`` lines in the order of the new text."""
    pairable = len(old) * len(new) <= _MAX_PAIRINGS
    lines: list[Line] = []
    j = 0
    for line in old:
        pair = None
        for k in range(j, len(new) if pairable else 0):
            pair = _changed_line(line, new[k])
            if pair is not None:
                lines += [Line.of(f"+{added}", "new") for added in new[j:k]]
                lines += pair
                j = k + 1
                break
        if pair is None:
            lines.append(Line.of(f"-{line}", "old"))
    lines += [Line.of(f"+{added}", "new") for added in new[j:]]
    return lines


def _range(start: int, stop: int) -> str:
    """A hunk's line range as unified diffs write it: first line (1-based), count if not 1."""
    size = stop - start
    if size == 1:
        return str(start + 1)
    return f"{start + 1 if size else start},{size}"


def text_diff(old: str, new: str, *, context: int = 1) -> list[Line]:
    """Lines showing how text ``new`` differs from ``old``: a unified diff (``@@`` hunks,
    `` `` unchanged lines, ``context`` of them around each change, ``~`` changed lines with
    their words marked, ``-``/``+`` removed and added lines) for multi-line text, excerpts
    around each change for one long line."""
    old_lines, new_lines = old.split("\n"), new.split("\n")
    if len(old_lines) == 1 and len(new_lines) == 1:
        return _excerpts(old, new)
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    lines: list[Line] = []
    for group in matcher.get_grouped_opcodes(context):
        a_range = _range(group[0][1], group[-1][2])
        b_range = _range(group[0][3], group[-1][4])
        lines.append(Line.of(f"@@ -{a_range} +{b_range} @@"))
        for tag, a0, a1, b0, b1 in group:
            if tag == "equal":
                lines += [Line.of(" " + _clip(line)) for line in old_lines[a0:a1]]
            else:
                lines += _replaced(old_lines[a0:a1], new_lines[b0:b1])
    return lines


def _as_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False,
                                                            default=str)


def value_diff(old: Any, new: Any) -> list[Line]:
    """How value ``old`` became ``new``: one line ``old -> new`` when both are short (the
    changed words of two texts marked for colour, other values marked whole), else
    :func:`text_diff` of their texts (strings as they are, anything else as indented JSON)."""
    if (is_short(old) and is_short(new)) or isinstance(old, str) != isinstance(new, str):
        if isinstance(old, str) and isinstance(new, str):
            before, after = _Words(short(old), short(new)).sides()
        else:  # a number or a structure changed as a whole
            before, after = Line.of(short(old), "old"), Line.of(short(new), "new")
        return [before + " -> " + after]
    return text_diff(_as_text(old), _as_text(new))


# ----------------------------------------------------------------------------- values
_KINDS: dict[str, Literal["changed", "added", "removed"]] = {
    "values_changed": "changed", "type_changes": "changed",
    "dictionary_item_added": "added", "iterable_item_added": "added",
    "dictionary_item_removed": "removed", "iterable_item_removed": "removed"}


def _name(value: Any) -> str | None:
    name = value.get("name") if isinstance(value, dict) else None
    return name if isinstance(name, str) and name else None


def _item(container: Any, part: Any) -> Any:
    try:
        return container[part]
    except (KeyError, IndexError, TypeError):
        return None


def _path(parts: Sequence[Any], old: Any, new: Any) -> str:
    """``parts`` as a path (``tool_calls[0].output``), each list item that has a ``name`` named
    after it (``tool_calls[0] (refund).output``; ``(add -> plus)`` when the name changed)."""
    text = ""
    for index, part in enumerate(parts):
        old, new = _item(old, part), _item(new, part)
        if not isinstance(part, int):
            text += f".{part}" if text else str(part)
            continue
        text += f"[{part}]"
        names = list(dict.fromkeys(n for n in (_name(old), _name(new)) if n is not None))
        if len(names) == 1:
            text += f" ({names[0]})"
        elif names and tuple(parts[index + 1:]) != ("name",):  # else the change says it
            text += f" ({names[0]} -> {names[1]})"
    return text or "(root)"


@dataclass(frozen=True)
class Change:
    """One difference between two values: what happened where (``messages[0].content``)."""

    kind: Literal["changed", "added", "removed"]
    path: str
    old: Any
    new: Any
    order: tuple[tuple[int, Any], ...]
    """Sort key: document order, list indexes numerically (``[2]`` before ``[10]``)."""
    parts: tuple[Any, ...] = ()
    """The path as keys and list indexes."""

    def marked(self) -> list[Line]:
        """``path: old -> new`` on one line when short, else ``path:`` and an indented diff;
        the changed words marked."""
        if self.kind == "added":
            return [Line.of(f"{self.path}: added ") + Line.of(short(self.new), "new")]
        if self.kind == "removed":
            return [Line.of(f"{self.path}: removed ") + Line.of(short(self.old), "old")]
        shown = value_diff(self.old, self.new)
        if is_short(self.old) and is_short(self.new):
            return [f"{self.path}: " + shown[0]]
        return [Line.of(f"{self.path}:"), *("  " + line for line in shown)]

    def lines(self) -> list[str]:
        """:meth:`marked` as plain text."""
        return render(self.marked())


def changes(old: Any, new: Any) -> list[Change]:
    """Every difference between JSON-like values ``old`` and ``new``, in document order."""
    from deepdiff import DeepDiff  # deferred: only a failing comparison pays for importing it

    diff = DeepDiff(old, new, view="tree", verbose_level=2)
    found = []
    for name, kind in _KINDS.items():
        for level in diff.get(name, []):
            parts = level.path(output_format="list")
            order = tuple((0, p) if isinstance(p, int) else (1, str(p)) for p in parts)
            found.append(Change(kind, _path(parts, old, new),
                                level.t1 if kind != "added" else None,
                                level.t2 if kind != "removed" else None, order, tuple(parts)))
    return sorted(found, key=lambda c: c.order)
