"""Scenario files for tests, written as text: the header most of them share."""

from __future__ import annotations

__all__ = ["adding_scenario"]


def adding_scenario(name: str, rest: str, *, tool: str = "mocks.tools:add") -> str:
    """A scenario file named ``name`` with the ``add`` tool (``tool``, its import ref) and the
    one turn "What is 2 + 3?", followed by ``rest`` (its ``expect:``, ``agents:``, ...)."""
    return f"""\
format: 1
name: {name}
tools:
  - ref: {tool}
turns:
  - user: What is 2 + 3?
""" + rest
