"""Module faces that import some of their names on first use (PEP 562).

A package face lists every public name in ``__all__``; the names that few users need (and
whose modules cost import time, or load heavy dependencies such as asyncio) are resolved by
the module's ``__getattr__`` when first asked for, then kept in the module as if imported
eagerly. ``from face import name``, ``dir(face)`` and ``from face import *`` behave as before;
type checkers see the names through an ``if TYPE_CHECKING:`` import of each beside the call.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from importlib import import_module
from typing import Any

__all__ = ["lazy_names"]


def lazy_names(face: str, names: Mapping[str, str]) -> tuple[Callable[[str], Any],
                                                            Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for module ``face``: each name of ``names`` is taken from the
    module it maps to on first access. Assign them at the end of the face's module::

        __getattr__, __dir__ = lazy_names(__name__, {"ParallelAgentRunner": "...parallel"})
    """
    namespace = sys.modules[face].__dict__

    def __getattr__(name: str) -> Any:
        home = names.get(name)
        if home is None:
            raise AttributeError(f"module {face!r} has no attribute {name!r}")
        value = getattr(import_module(home), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *names})

    return __getattr__, __dir__
