"""Issue 38 B8, a documented departure: in a module with ``from __future__ import
annotations`` LlamaIndex 0.12.42 describes ``subtract`` as ``subtract(a: 'int', b: 'int') ->
'int'`` (the annotations' strings); agentkit resolves them, so a tool reads the same to the
model whether or not its module postpones annotations (docs/departures.md)."""

from __future__ import annotations

from agentkit.tools import FunctionTool


def subtract(a: int, b: int) -> int:
    """Subtract b from a."""
    return a - b


def test_postponed_annotations_read_as_the_types_in_the_description():
    description = FunctionTool.from_defaults(subtract).metadata.description
    assert description == "subtract(a: int, b: int) -> int\nSubtract b from a."
