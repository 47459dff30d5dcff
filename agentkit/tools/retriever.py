"""Choosing tools per query: :class:`ObjectRetriever` and a keyword retriever for tests."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

__all__ = ["ObjectRetriever", "KeywordObjectRetriever"]

T = TypeVar("T")

_WORD = re.compile(r"[a-z0-9]+")


class ObjectRetriever(Generic[T]):
    """Returns the objects (usually tools) relevant to a query. Subclasses implement ``retrieve``."""

    def retrieve(self, query: str) -> list[T]:
        raise NotImplementedError

    async def aretrieve(self, query: str) -> list[T]:
        return self.retrieve(query)


def _tool_text(obj: object) -> str:
    metadata = getattr(obj, "metadata", None)
    if metadata is not None:
        return f"{metadata.name.replace('_', ' ')} {metadata.description}"
    return str(obj)


class KeywordObjectRetriever(ObjectRetriever[T]):
    """Ranks objects by how many distinct query words occur in their text.

    The text of a tool is its name (underscores as spaces) and description. Objects sharing
    no word with the query are left out; ties keep the given order; at most ``top_k`` return.
    """

    def __init__(self, objects: Sequence[T], top_k: int = 2,
                 text_fn: Callable[[T], str] = _tool_text) -> None:
        if top_k < 1:
            raise ValueError(f"top_k must be at least 1, got {top_k}")
        self.objects = list(objects)
        self.top_k = top_k
        self._words = [set(_WORD.findall(text_fn(obj).lower())) for obj in self.objects]

    def retrieve(self, query: str) -> list[T]:
        wanted = set(_WORD.findall(query.lower()))
        scored = [(len(wanted & words), index) for index, words in enumerate(self._words)]
        ranked = sorted((s for s in scored if s[0] > 0), key=lambda s: (-s[0], s[1]))
        return [self.objects[index] for _, index in ranked[: self.top_k]]
