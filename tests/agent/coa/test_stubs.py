"""Function stubs for the CoA reasoning prompt, from tool schemas (agentkit.agent.coa.stubs)."""

from typing import Optional

from agentkit.agent.coa import function_stub, tool_stubs
from agentkit.tools import FunctionTool


def add(a: int, b: float) -> float:
    """Add two numbers."""
    return a + b


def search(query: str, limit: Optional[int] = None, tags: list[str] | None = None,  # noqa: UP045 (both spellings)
           exact: bool = False) -> str:
    """Search the web.

    Returns the best page."""
    return query


def test_a_stub_has_json_schema_types_and_the_description_without_the_signature():
    assert tool_stubs([FunctionTool.from_defaults(add)]) == (
        'def add(a: integer, b: number):\n   """Add two numbers."""\n    ...')


def test_arguments_that_are_not_required_are_optional_with_none():
    assert tool_stubs([FunctionTool.from_defaults(search)]).splitlines()[0] == (
        "def search(query: string, limit: Optional[integer] = None, "
        "tags: Optional[array] = None, exact: Optional[boolean] = None):")


def test_a_multi_line_description_is_kept_whole():
    assert '"""Search the web.\n\nReturns the best page."""' in tool_stubs(
        [FunctionTool.from_defaults(search)])


def test_stubs_of_several_tools_follow_each_other():
    stubs = tool_stubs([FunctionTool.from_defaults(add), FunctionTool.from_defaults(search)])

    assert stubs.startswith("def add(") and "    ...\ndef search(" in stubs


def test_a_description_not_starting_with_the_signature_is_kept():
    tool = FunctionTool.from_defaults(add, description="Adds.")

    assert '"""Adds."""' in tool_stubs([tool])


def test_a_union_of_types_and_an_untyped_argument():
    schema = {"properties": {"x": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
                             "y": {}, "z": {"type": ["number", "null"]}},
              "required": ["x", "y", "z"]}

    assert function_stub("f", schema).splitlines()[0] == (
        "def f(x: Union[integer, string], y: Any, z: number):")


def test_a_tool_without_parameters_has_an_empty_signature():
    def now() -> str:
        """The time."""
        return "noon"

    assert tool_stubs([FunctionTool.from_defaults(now)]) == (
        'def now():\n   """The time."""\n    ...')
