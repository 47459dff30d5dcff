"""Load YAML that came from anywhere: safe tags only, bounded depth, bounded alias expansion.

Every YAML file agentkit reads (scenarios, cassettes) goes through :func:`parse_yaml`:

* the safe loader (plain data only), the C one (libyaml) when PyYAML has it -- a large
  cassette loads several times faster; a value its tag cannot read (``!!float name``,
  ``!!timestamp soon``) is an error at its line, like any other;
* nesting deeper than :data:`MAX_DEPTH` is an error before anything is built (libyaml's
  composer recurses in C: a file of 100,000 ``[`` crashes the interpreter);
* aliases may add at most :data:`MAX_ALIAS_NODES` nodes once expanded (a 383-byte "billion
  laughs" file otherwise expands to hundreds of millions of nodes when a consumer walks it),
  and an alias inside the node it names (``tags: &a [*a]``) is an error, not a structure that
  contains itself.

A problem is a :class:`YamlError` with the 1-based line (and column) where it is.

Plain data without anchors -- every cassette and trace agentkit writes, most scenarios -- is
built in one pass over the parser's events, the limits checked on the way; line numbers are
found only when something asks for them (an error message). Anything else, and any problem,
takes the careful path (:func:`_checked`), which loads it or reports exactly what is wrong.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from typing import Any

import yaml

from agentkit.core.parsecache import MISSING, PARSE_CACHE, text_key

__all__ = ["YamlError", "YamlLocations", "parse_yaml", "depth_error", "MAX_DEPTH",
           "MAX_ALIAS_NODES", "LOADER"]

MAX_DEPTH = 100
MAX_ALIAS_NODES = 10_000
#: The safe loader used: libyaml's when available.
LOADER: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

Path_ = tuple[str | int, ...]


class YamlError(ValueError):
    """A YAML text that cannot be loaded; ``line``/``column`` (1-based) say where, if known."""

    def __init__(self, problem: str, line: int | None = None, column: int | None = None, *,
                 fix: str | None = None) -> None:
        super().__init__(problem)
        self.problem = problem
        self.line = line
        self.column = column
        self.fix = fix

    @property
    def where(self) -> str:
        """``:line:column`` (or ``:line``, or nothing) to append to a file name."""
        if self.line is None:
            return ""
        return f":{self.line}" + (f":{self.column}" if self.column is not None else "")


class YamlLocations:
    """Line numbers (1-based) of every key and value in a YAML document, by path.

    Found from the composed document when first asked for (they serve error messages, which
    most loads never write); ``duplicates=False`` says the builder saw no duplicate key, so
    asking for :attr:`duplicates` walks nothing."""

    def __init__(self, node: yaml.Node | None, *, text: str | None = None,
                 duplicates: bool | None = None) -> None:
        self._node = node
        self._text = text  # composed when first asked, if no node is given
        self._values: dict[Path_, int] = {}
        self._keys: dict[Path_, int] = {}
        self._duplicates: list[tuple[Path_, int, int]] = []  # (path, line, first line)
        self._no_duplicates = duplicates is False

    def _walked(self) -> None:
        if self._text is not None:
            text, self._text = self._text, None
            self._node = yaml.compose(text, Loader=LOADER)
        if self._node is not None:
            node, self._node = self._node, None
            self._walk(node, ())

    @property
    def values(self) -> dict[Path_, int]:
        """The line of each value, by path."""
        self._walked()
        return self._values

    @property
    def keys(self) -> dict[Path_, int]:
        """The line of each mapping key, by the path of its value."""
        self._walked()
        return self._keys

    @property
    def duplicates(self) -> list[tuple[Path_, int, int]]:
        """Each key a mapping has twice after its first: its path, line and the first's line."""
        if self._no_duplicates:
            return []
        self._walked()
        return self._duplicates

    def _walk(self, node: yaml.Node, path: Path_) -> None:
        self._values[path] = node.start_mark.line + 1
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                child = (*path, str(key.value))
                line = key.start_mark.line + 1
                if child in self._keys:
                    self._duplicates.append((child, line, self._keys[child]))
                    continue
                self._keys[child] = line
                self._walk(value, child)
        elif isinstance(node, yaml.SequenceNode):
            for index, item in enumerate(node.value):
                self._walk(item, (*path, index))

    def line(self, path: Path_, *, key: bool = False) -> int:
        """The line of ``path`` (its key's line if ``key``), or of its nearest ancestor."""
        values = self.values
        while path:
            found = (self._keys if key else values).get(path) or values.get(path)
            if found:
                return found
            path = path[:-1]
        return values.get((), 1)


_TAG_PREFIX = "tag:yaml.org,2002:"


class _Constructor(LOADER):  # type: ignore[misc]
    """The safe loader's constructor, with PyYAML's raw exceptions for a value its tag cannot
    read (``ValueError`` for ``!!float name``, ``KeyError`` for ``!!bool maybe``,
    ``AttributeError`` for ``!!timestamp soon``) turned into errors at the value's line."""

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        try:
            return super().construct_object(node, deep)
        except yaml.YAMLError:
            raise
        except Exception:  # noqa: BLE001 (converting plain data failed: the value does not fit its tag)
            tag = str(node.tag).replace(_TAG_PREFIX, "!!")
            shown = (repr(node.value[:60]) if isinstance(node, yaml.ScalarNode)
                     else "this value")
            problem = f"{shown} is not a valid {tag} value"
            digits = len(str(node.value).lstrip("+-").lstrip("0")) if tag == "!!int" else 0
            if digits > sys.get_int_max_str_digits():
                problem = (f"an integer of {digits:,} digits, more than the "
                           f"{sys.get_int_max_str_digits():,} agentkit reads; shorten it, or "
                           "quote it to make it a string")
            raise yaml.constructor.ConstructorError(None, None, problem,
                                                    node.start_mark) from None


_STR, _INT, _FLOAT, _BOOL, _NULL, _SEQ, _MAP, _MERGE = (
    _TAG_PREFIX + name for name in ("str", "int", "float", "bool", "null", "seq", "map", "merge"))
_PLAIN_INT = re.compile(r"[-+]?(?:0|[1-9][0-9]*)\Z")
_PLAIN_FLOAT = re.compile(r"[-+]?(?:[0-9]+\.[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?\Z")
_BOOLS: dict[str, bool] = yaml.constructor.SafeConstructor.bool_values


class _NotPlain(Exception):
    """A node the fast builder leaves to PyYAML's constructor."""


def _plain_int(text: str) -> int:
    """A plain integer's value; one longer than Python converts (4,300 digits) is left to
    PyYAML's constructor, whose error then names its line."""
    try:
        return int(text)
    except ValueError:
        raise _NotPlain from None


def _construct(node: yaml.Node) -> Any:
    """The document's data: plain strings, numbers, lists and mappings are built directly (a
    cassette is nothing else, and PyYAML's generic constructor takes most of a load's time);
    any other tag, a merge key or an unhashable key hands the whole document to
    :class:`_Constructor`, which builds it or says what is wrong where."""
    built: dict[int, Any] = {}  # id(node) -> its value: an alias is the same object, as in PyYAML

    def build(node: yaml.Node) -> Any:
        if id(node) in built:
            return built[id(node)]
        tag = node.tag
        value: Any
        if isinstance(node, yaml.ScalarNode):
            text = node.value
            if tag == _STR:
                value = text
            elif tag == _INT and _PLAIN_INT.match(text):
                value = _plain_int(text)
            elif tag == _FLOAT and _PLAIN_FLOAT.match(text):
                value = float(text)
            elif tag == _NULL:
                value = None
            elif tag == _BOOL and text.lower() in _BOOLS:
                value = _BOOLS[text.lower()]
            else:
                raise _NotPlain
        elif tag == _SEQ and isinstance(node, yaml.SequenceNode):
            value = [build(item) for item in node.value]
        elif tag == _MAP and isinstance(node, yaml.MappingNode):
            value = {}
            for key_node, value_node in node.value:
                if key_node.tag == _MERGE:
                    raise _NotPlain
                key = build(key_node)
                try:
                    value[key] = build(value_node)
                except TypeError:  # an unhashable key: PyYAML's error says where
                    raise _NotPlain from None
        else:
            raise _NotPlain
        built[id(node)] = value
        return value

    try:
        return build(node)  # depth is bounded by MAX_DEPTH (checked first): recursion is safe
    except _NotPlain:
        return _Constructor("").construct_document(node)


def _error_from(exc: yaml.YAMLError, text: str) -> YamlError:
    if isinstance(exc, yaml.reader.ReaderError):  # a character YAML does not allow
        before = text[:exc.position]
        line = before.count("\n") + 1
        char = exc.character
        shown = f"#x{char:04x}" if isinstance(char, int) else repr(char)
        return YamlError(f"character {shown} is not allowed in YAML ({exc.reason})",
                         line, len(before) - (before.rfind("\n") + 1) + 1)
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    problem = getattr(exc, "problem", None) or str(exc)
    context, context_mark = getattr(exc, "context", None), getattr(exc, "context_mark", None)
    if context and context_mark is not None and context_mark is not mark:
        problem += f" ({context} at line {context_mark.line + 1})"
    if mark is None:
        return YamlError(str(problem), fix=_SYNTAX_FIX)
    lines = _LINE_BREAK.split(text)
    if mark.line >= len(lines):  # libyaml puts the end of a last line without a newline after it
        return YamlError(str(problem), len(lines), len(lines[-1]) + 1, fix=_SYNTAX_FIX)
    return YamlError(str(problem), mark.line + 1, mark.column + 1, fix=_SYNTAX_FIX)


#: What YAML counts as a line break.
_LINE_BREAK = re.compile("\r\n|[\r\n\x85\u2028\u2029]")


_SYNTAX_FIX = ("check the indentation and quoting there (quote strings containing ': ' or '#', "
               "close every bracket and quote)")


def depth_error(line: int | None, column: int | None = None, *,
                limit: int = MAX_DEPTH) -> YamlError:
    """agentkit's error for data nested deeper than ``limit`` (YAML or JSON)."""
    return YamlError(f"nested more than {limit} levels deep, the most agentkit reads",
                     line, column, fix=f"flatten the data there to at most {limit} levels "
                     "of nested lists and mappings (deeper data is almost always a generated or "
                     "hostile file)")


def _check_shape(text: str) -> None:
    """Depth and alias expansion, from the parser's events (no recursion, nothing built)."""
    try:
        _check_events(yaml.parse(text, Loader=LOADER))
    except yaml.scanner.ScannerError:
        if LOADER is yaml.SafeLoader:
            raise
        # libyaml 0.2.5+ (in PyYAML 6.0.4's wheels) stops nesting past 1,000 levels with a
        # scanner error of its own, raised while it scans ahead of the events counted here;
        # the pure-Python parser has no such limit and keeps no recursion, so it reaches
        # agentkit's limit first -- or, for a real syntax error, lets libyaml's error stand
        # (only scanner errors take this slower path: libyaml's depth error is one)
        _check_events(yaml.parse(text, Loader=yaml.SafeLoader))
        raise


def _check_events(events: Iterator[yaml.Event]) -> None:
    sizes: dict[str, int] = {}  # anchor -> its node's size with aliases expanded
    open_: list[tuple[str | None, int]] = []  # (anchor, size so far) of each open collection
    added = 0
    for event in events:
        assert event.start_mark is not None  # the parser marks every event
        line = event.start_mark.line + 1
        if isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
            if len(open_) >= MAX_DEPTH:
                raise depth_error(line, event.start_mark.column + 1)
            open_.append((event.anchor, 1))
            continue
        if isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
            anchor, size = open_.pop()
        elif isinstance(event, yaml.ScalarEvent):
            anchor, size = event.anchor, 1
        elif isinstance(event, yaml.AliasEvent):
            if any(name == event.anchor for name, _ in open_):
                raise YamlError(f"the alias *{event.anchor} is inside the node &{event.anchor} "
                                "it refers to (a structure that contains itself)", line)
            anchor, size = None, sizes.get(str(event.anchor), 1)
            added += size
            if added > MAX_ALIAS_NODES:
                raise YamlError(f"aliases expand to more than {MAX_ALIAS_NODES:,} nodes (an "
                                "alias bomb?); write the repeated parts out", line)
        else:
            continue
        if anchor is not None:
            sizes[anchor] = size
        if open_:
            name, total = open_[-1]
            open_[-1] = (name, total + size)


_MAP_START, _MAP_END, _SEQ_START, _SEQ_END = (
    yaml.MappingStartEvent, yaml.MappingEndEvent, yaml.SequenceStartEvent, yaml.SequenceEndEvent)
_NO_KEY = object()  # a mapping's frame between a value and the next key
#: The tag YAML's implicit typing gives a short plain scalar, by its text (a pure function of
#: it: every file repeats the same keys and flags, and PyYAML's resolver is Python).
_PLAIN_TAGS: dict[str, str] = {}
_PLAIN_TAGS_KEPT = 4096  # texts, of at most 64 characters each


def _plain_data(text: str) -> tuple[Any, YamlLocations] | None:
    """The data of ``text`` in one pass over the parser's events, when it is plain data
    (strings, numbers, booleans, nulls, lists, mappings of scalar keys) without anchors,
    aliases or repeated keys, nested at most :data:`MAX_DEPTH` deep -- what agentkit writes,
    and what most files are. None for anything else, or any error: the careful path
    (:func:`parse_yaml`) then loads it or says exactly what is wrong, where. The parser's
    events are produced without recursion, so no depth of nesting can crash this."""
    loader = LOADER(text)
    try:
        return _build_plain(loader), YamlLocations(None, text=text, duplicates=False)
    except (yaml.YAMLError, _NotPlain, TypeError):  # TypeError: an unhashable key
        return None
    finally:
        loader.dispose()


def _build_plain(loader: Any) -> Any:
    get_event, resolve = loader.get_event, loader.resolve
    tags = _PLAIN_TAGS
    frames: list[tuple[Any, bool]] = []  # the enclosing collections (as top, is_map)
    top: Any = None  # the open collection: a list, or [dict, its pending key]
    is_map = False
    document: Any = None
    documents = 0
    while True:
        event = get_event()
        kind = type(event)
        if kind is yaml.ScalarEvent:
            value = _plain_scalar(event, resolve, tags)
        elif kind is _MAP_START or kind is _SEQ_START:
            if event.anchor is not None or len(frames) >= MAX_DEPTH or (
                    event.tag not in (None, "!", _MAP if kind is _MAP_START else _SEQ)) or (
                    is_map and top[1] is _NO_KEY):  # a collection as a key
                raise _NotPlain
            frames.append((top, is_map))
            top, is_map = ([{}, _NO_KEY] if kind is _MAP_START else []), kind is _MAP_START
            continue
        elif kind is _MAP_END or kind is _SEQ_END:
            value = top[0] if is_map else top
            top, is_map = frames.pop()
        elif kind is yaml.StreamEndEvent:
            return document
        elif kind is yaml.AliasEvent:
            raise _NotPlain
        else:  # stream and document starts and ends
            if kind is yaml.DocumentStartEvent:
                documents += 1
                if documents > 1:
                    raise _NotPlain  # a second document: the careful path's error
            continue
        if top is None:
            document = value
        elif not is_map:
            top.append(value)
        elif top[1] is _NO_KEY:
            if value in top[0]:
                raise _NotPlain  # a repeated key: the careful path reports where
            top[1] = value
        else:
            top[0][top[1]] = value
            top[1] = _NO_KEY


def _plain_scalar(event: Any, resolve: Any, tags: dict[str, str]) -> Any:
    """The value of a scalar event of plain data (YAML's implicit typing of a plain scalar,
    ``tags`` remembering what recurring texts resolved to); :class:`_NotPlain` for an anchor
    or a tag the careful path must build."""
    if event.anchor is not None:
        raise _NotPlain
    text, tag = event.value, event.tag
    if tag is None or tag == "!":
        if event.implicit[0]:  # a plain scalar: YAML's implicit typing
            tag = tags.get(text)
            if tag is None:
                tag = resolve(yaml.ScalarNode, text, event.implicit)
                if len(text) <= 64 and len(tags) < _PLAIN_TAGS_KEPT:
                    tags[text] = tag
        else:
            tag = _STR
    if tag == _STR:
        return text
    if tag == _INT and _PLAIN_INT.match(text):
        return _plain_int(text)
    if tag == _NULL:
        return None
    if tag == _BOOL and text.lower() in _BOOLS:
        return _BOOLS[text.lower()]
    if tag == _FLOAT and _PLAIN_FLOAT.match(text):
        return float(text)
    raise _NotPlain


def parse_yaml(text: str) -> tuple[Any, YamlLocations]:
    """The data of one YAML document and where each part of it is; :class:`YamlError` if it is
    not valid YAML or breaks the limits above. Plain data is remembered by the text's content
    hash (:mod:`agentkit.core.parsecache`): the same text again is not parsed again."""
    key = text_key(text)
    data = PARSE_CACHE.get(key)
    if data is not MISSING:
        return data, YamlLocations(None, text=text, duplicates=False)
    plain = _plain_data(text)
    if plain is None:
        return _checked(text)
    PARSE_CACHE.put(key, plain[0])
    return plain


def _checked(text: str) -> tuple[Any, YamlLocations]:
    """:func:`parse_yaml` the careful way: the depth and alias checks over the parser's events
    first, then libyaml's composer, then the data built (by PyYAML's constructor for any
    other than plain data); every problem a :class:`YamlError` at its line."""
    try:
        _check_shape(text)
        node = yaml.compose(text, Loader=LOADER)
        if node is None:
            return None, YamlLocations(None)
        data = _construct(node)
    except yaml.YAMLError as exc:
        raise _error_from(exc, text) from None
    return data, YamlLocations(node)
