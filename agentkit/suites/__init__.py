"""Public benchmark suites turned into ordinary scenario files (``agentkit suite NAME``): each
adapter reads a suite's published data and writes scenarios every command and agent type
runs. An adapter module exposes ``add_arguments(parser)`` and ``command(args, out) -> int``;
it is imported only when its suite is asked for."""

from __future__ import annotations

from importlib import import_module
from types import ModuleType

__all__ = ["SUITES", "adapter"]

#: suite name -> the module of its adapter
SUITES: dict[str, str] = {
    "bfcl": "agentkit.suites.bfcl",
}


def adapter(name: str) -> ModuleType:
    """The adapter module of suite ``name`` (a key of :data:`SUITES`)."""
    return import_module(SUITES[name])
