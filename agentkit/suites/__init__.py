"""Public suites as scenario files: ``agentkit suite <name>`` turns a suite's cases into
ordinary scenarios that every command and agent type runs (docs/suites.md).

:data:`SUITES` names each suite's adapter module, imported only when that suite is asked
for (a suite's package is installed only by those who use it). An adapter exposes
``add_arguments(parser)`` (its options) and ``command(args, out) -> int`` (its exit code)."""

from __future__ import annotations

from importlib import import_module
from types import ModuleType

from agentkit.core.errors import BadInputError

__all__ = ["SUITES", "SuiteError", "adapter"]


class SuiteError(BadInputError):
    """A suite that cannot be written: an unknown suite or task, a suite's package or module
    that does not import, a module without the suite it should define."""


SUITES: dict[str, str] = {
    "agentdojo": "agentkit.suites.agentdojo",
    "bfcl": "agentkit.suites.bfcl",
}
"""Suite name -> the module of its adapter."""


def adapter(name: str) -> ModuleType:
    """The adapter module of suite ``name`` (a key of :data:`SUITES`)."""
    return import_module(SUITES[name])
