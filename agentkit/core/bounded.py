"""A process-wide store of what was worked out once -- a request read, a message parsed, a
key put together -- kept so that the same input, met again (a conversation replayed), is
not worked out again.

Bounded by how many things it keeps and, optionally, by their total size: when one more
would pass a bound the store is emptied and starts over (what it keeps is only a shortcut:
whoever needs a thing keeps it too, so emptying changes nothing anyone holds); a thing over
a sixteenth of the size bound is not kept at all (an image, a huge body).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Generic, TypeVar

__all__ = ["BoundedStore"]

K = TypeVar("K")
V = TypeVar("V")


class BoundedStore(Generic[K, V]):
    """At most ``count`` things and, with ``size``, at most ``size`` units of them (the
    units the caller gives :meth:`put`: bytes, characters)."""

    __slots__ = ("_kept", "count", "get", "size", "used")

    def __init__(self, count: int, size: int | None = None) -> None:
        self._kept: dict[K, V] = {}
        self.count = count
        self.size = size
        self.used = 0
        # the dict's own method: a look-up on a hot path costs no Python frame
        self.get = self._kept.get

    def put(self, key: K, value: V, size: int = 0) -> None:
        """Keep ``value`` as ``key``'s (of ``size`` units), emptying the store first when it
        is full; not kept when it is over a sixteenth of the size bound."""
        bound = self.size
        if bound is not None and size > bound // 16:
            return
        if len(self._kept) >= self.count or (bound is not None and self.used + size > bound):
            self.clear()
        self._kept[key] = value
        self.used += size

    def emptied(self) -> BoundedStore[K, V]:
        """A new, empty store of the same bounds (a test's own, in place of the process's)."""
        return BoundedStore(self.count, self.size)

    def clear(self) -> None:
        self._kept.clear()
        self.used = 0

    def __len__(self) -> int:
        return len(self._kept)

    def __iter__(self) -> Iterator[K]:
        return iter(self._kept)

    def __contains__(self, key: object) -> bool:
        return key in self._kept
