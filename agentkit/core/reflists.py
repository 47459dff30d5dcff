"""Lists of JSON objects written so that each object is written once.

A long conversation repeats itself: every LLM request sends the memory window again, and the
memory after a turn is the memory before it plus the turn's messages. Written out in full, a
record of N turns grows with N². Here a list is written as *segments*: an object written for
the first time is written as itself, and a run of objects that an earlier list holds in the
same order is one reference to it::

    {"ref": "/turns/3/memory", "start": 0, "count": 40}

-- ``count`` objects of the list at that JSON pointer (as read, references expanded), from
``start``. A reference points only backwards (to a list written before), so a reader expands
lists in the order they are written (:class:`ListReader`).

In memory both sides keep lists of one conversation as :class:`Shared` views of one buffer,
so N turns of memory hold N messages, not N²: :meth:`Shared.extended` appends to the buffer it
shares when it can.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from itertools import islice
from typing import Any, Generic, TypeVar, overload

__all__ = ["Shared", "ListWriter", "ListReader", "ListRefError", "is_ref"]

T = TypeVar("T")

_REF_KEYS = frozenset({"ref", "start", "count"})


class ListRefError(ValueError):
    """A list whose references cannot be followed; ``pointer`` is the list, ``index`` the
    segment, and the message says what is wrong."""

    def __init__(self, pointer: str, index: int, problem: str) -> None:
        super().__init__(f"{pointer}/{index}: {problem}")
        self.pointer = pointer
        self.index = index
        self.problem = problem


def is_ref(item: Any) -> bool:
    """Whether a segment is a reference (an object with exactly ``ref``, ``start``, ``count``)."""
    return isinstance(item, dict) and item.keys() == _REF_KEYS


class Shared(Sequence[T], Generic[T]):
    """The first ``len(self)`` items of a buffer that only grows: successive memories of one
    conversation share one buffer, each a longer prefix of it."""

    __slots__ = ("_buffer", "_length")

    def __init__(self, items: Iterable[T] = ()) -> None:
        self._buffer: list[T] = list(items)
        self._length = len(self._buffer)

    @classmethod
    def _view(cls, buffer: list[T], length: int) -> Shared[T]:
        view: Shared[T] = cls.__new__(cls)
        view._buffer, view._length = buffer, length
        return view

    def extended(self, more: Iterable[T]) -> Shared[T]:
        """This list followed by ``more``: in the same buffer when no longer view of it exists
        (the usual case: each turn's memory extends the last), else in a copy."""
        buffer = self._buffer if len(self._buffer) == self._length else self._buffer[:self._length]
        buffer.extend(more)
        return Shared._view(buffer, len(buffer))

    def extends(self, other: Shared[Any]) -> bool:
        """Whether ``other`` is a prefix of this list held in the same buffer."""
        return other._buffer is self._buffer and other._length <= self._length

    def __len__(self) -> int:
        return self._length

    @overload
    def __getitem__(self, index: int) -> T: ...

    @overload
    def __getitem__(self, index: slice) -> list[T]: ...

    def __getitem__(self, index: int | slice) -> T | list[T]:
        if isinstance(index, slice):
            return self._buffer[:self._length][index] if self._length != len(self._buffer) \
                else self._buffer[index]
        if index < 0:
            index += self._length
        if not 0 <= index < self._length:
            raise IndexError("Shared index out of range")
        return self._buffer[index]

    def __iter__(self) -> Iterator[T]:
        return islice(self._buffer, self._length)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Shared):
            if other._buffer is self._buffer:
                return other._length == self._length
            return len(other) == self._length and list(self) == list(other)
        if isinstance(other, list):
            return len(other) == self._length and list(self) == other
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable buffer: as a list, not hashable

    def __repr__(self) -> str:
        return f"Shared({list(self)!r})"


class ListWriter:
    """Writes the lists of one document in order, each object once (module docstring).

    Objects are recognised by identity: the caller gives equal objects as one object (a trace
    interns its messages). A :class:`Shared` list that extends the last list written from its
    buffer starts with one reference to that list, so writing it costs what it adds."""

    def __init__(self) -> None:
        self._seen: dict[int, tuple[str, int, Sequence[Any]]] = {}
        self._tips: dict[int, tuple[str, Shared[Any]]] = {}

    def write(self, pointer: str, items: Sequence[Any]) -> list[Any]:
        """The segments of ``items``, the list at JSON pointer ``pointer``."""
        segments: list[Any] = []
        start = 0
        if isinstance(items, Shared):
            buffer = id(items._buffer)
            tip = self._tips.get(buffer)
            if tip is not None and len(tip[1]) and items.extends(tip[1]):
                start = len(tip[1])
                segments.append({"ref": tip[0], "start": 0, "count": start})
            self._tips[buffer] = (pointer, items)
        index = start
        while index < len(items):
            found = self._seen.get(id(items[index]))
            if found is None:
                segments.append(items[index])
                index += 1
                continue
            where, at, source = found
            run = 1
            while (index + run < len(items) and at + run < len(source)
                   and source[at + run] is items[index + run]):
                run += 1
            segments.append({"ref": where, "start": at, "count": run})
            index += run
        for place in range(start, len(items)):
            self._seen[id(items[place])] = (pointer, place, items)
        return segments


class ListReader:
    """Reads the lists of one document in the order they were written, following references
    (module docstring); every list read is kept, as a :class:`Shared` view, for later ones."""

    def __init__(self) -> None:
        self._lists: dict[str, Shared[Any]] = {}

    def read(self, pointer: str, segments: Any) -> Shared[Any]:
        """The items of the list at ``pointer`` written as ``segments``; a reference that
        cannot be followed is a :class:`ListRefError`."""
        if not isinstance(segments, list):
            raise ListRefError(pointer, 0, f"a list was expected, not {type(segments).__name__}")
        base: Shared[Any] | None = None
        items: list[Any] = []
        for index, segment in enumerate(segments):
            if not is_ref(segment):
                items.append(segment)
                continue
            target = self._target(pointer, index, segment)
            start, count = segment["start"], segment["count"]
            if index == 0 and start == 0 and count == len(target):
                base = target  # the whole of an earlier list, extended: share its buffer
            else:
                items.extend(target[start:start + count])
        view = base.extended(items) if base is not None else Shared(items)
        self._lists[pointer] = view
        return view

    def _target(self, pointer: str, index: int, segment: dict[str, Any]) -> Shared[Any]:
        ref, start, count = segment["ref"], segment["start"], segment["count"]
        target = self._lists.get(ref) if isinstance(ref, str) else None
        if target is None:
            raise ListRefError(pointer, index, f"`ref` {ref!r} is not a list written before this "
                               "one")
        if not (type(start) is int and type(count) is int and start >= 0 and count >= 1
                and start + count <= len(target)):
            raise ListRefError(pointer, index, f"`start` {start!r} and `count` {count!r} are not "
                               f"a run of the {len(target)} items of {ref}")
        return target
