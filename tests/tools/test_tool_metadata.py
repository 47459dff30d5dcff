"""ToolMetadata: names, JSON schema, OpenAI tool format; the tool base classes."""

import pytest
from pydantic import BaseModel

from agentkit.core.sim import run_sync
from agentkit.tools import (
    AsyncBaseTool,
    BaseTool,
    BaseToolAsyncAdapter,
    FunctionTool,
    ToolMetadata,
    ToolOutput,
    adapt_to_async_tool,
)
from agentkit.tools.types import DefaultToolFnSchema


class Point(BaseModel):
    x: int
    y: int = 0


def test_default_schema_is_one_free_text_input():
    assert ToolMetadata(name="ask", description="d").fn_schema is DefaultToolFnSchema


def test_return_direct_defaults_to_false():
    assert ToolMetadata(name="ask", description="d").return_direct is False


def test_parameters_dict_is_the_json_schema_of_the_arguments():
    assert ToolMetadata(name="move", description="d", fn_schema=Point).get_parameters_dict() == {
        "type": "object",
        "properties": {"x": {"title": "X", "type": "integer"},
                       "y": {"title": "Y", "type": "integer", "default": 0}},
        "required": ["x"],
    }


def test_parameters_dict_keeps_nested_model_definitions():
    class Path(BaseModel):
        points: list[Point]

    schema = ToolMetadata(name="walk", description="d", fn_schema=Path).get_parameters_dict()
    assert schema["properties"]["points"]["items"] == {"$ref": "#/$defs/Point"} and "Point" in schema["$defs"]


def test_parameters_dict_without_a_schema_is_one_input_string():
    assert ToolMetadata(name="ask", description="d", fn_schema=None).get_parameters_dict() == {
        "type": "object",
        "properties": {"input": {"title": "input query string", "type": "string"}},
        "required": ["input"],
    }


def test_fn_schema_str_is_the_parameters_dict_as_json():
    metadata = ToolMetadata(name="move", description="d", fn_schema=Point)
    assert metadata.fn_schema_str.startswith('{"properties": {"x"')


def test_get_name_is_the_name():
    assert ToolMetadata(name="ask", description="d").get_name() == "ask"


def test_to_openai_tool_is_a_function_spec():
    metadata = ToolMetadata(name="move", description="Move a point.", fn_schema=Point)
    assert metadata.to_openai_tool() == {"type": "function", "function": {
        "name": "move", "description": "Move a point.", "parameters": metadata.get_parameters_dict()}}


def test_to_openai_tool_accepts_a_description_of_exactly_1024_characters():
    metadata = ToolMetadata(name="ask", description="x" * 1024)
    assert metadata.to_openai_tool()["function"]["description"] == "x" * 1024


def test_to_openai_tool_rejects_a_description_over_1024_characters():
    with pytest.raises(ValueError, match=r"Tool description exceeds maximum length of 1024 characters\. "
                                         r"Please shorten your description or move it to the prompt\."):
        ToolMetadata(name="ask", description="x" * 1025).to_openai_tool()


def test_to_openai_tool_may_skip_the_length_check():
    metadata = ToolMetadata(name="ask", description="x" * 2000)
    assert len(metadata.to_openai_tool(skip_length_check=True)["function"]["description"]) == 2000


@pytest.mark.parametrize("name", ["my tool", "1st", "add-numbers", "", "a.b"])
def test_an_invalid_tool_name_is_rejected_with_the_name(name):
    with pytest.raises(ValueError,
                       match=f"tool name {name!r} is not a valid identifier: use letters, digits"):
        ToolMetadata(name=name, description="d")


def test_a_non_string_tool_name_is_rejected():
    with pytest.raises(ValueError, match="tool name 3 is not a valid identifier"):
        ToolMetadata(name=3, description="d")


@pytest.mark.parametrize("name", ["add", "_private", "tool2", "snake_case_name"])
def test_identifier_tool_names_are_accepted(name):
    assert ToolMetadata(name=name, description="d").name == name


# ---------------------------------------------------------------- base classes


class Shout(BaseTool):
    """A sync-only tool."""

    @property
    def metadata(self) -> ToolMetadata:
        return ToolMetadata(name="shout", description="Shout the input.")

    def __call__(self, input: str) -> ToolOutput:
        return ToolOutput(content=input.upper(), tool_name="shout", raw_output=input.upper())


def test_adapt_to_async_tool_wraps_a_sync_only_tool():
    assert isinstance(adapt_to_async_tool(Shout()), BaseToolAsyncAdapter)


def test_adapted_tool_acall_calls_the_sync_tool():
    assert run_sync(adapt_to_async_tool(Shout()).acall("hey")).content == "HEY"


def test_adapted_tool_keeps_the_metadata():
    assert adapt_to_async_tool(Shout()).metadata.name == "shout"


def test_adapted_tool_call_calls_the_sync_tool():
    assert adapt_to_async_tool(Shout()).call("hey").content == "HEY"


def test_adapt_to_async_tool_returns_an_async_tool_unchanged():
    tool = FunctionTool.from_defaults(lambda: "x", name="x")
    assert adapt_to_async_tool(tool) is tool and isinstance(tool, AsyncBaseTool)


def test_the_schema_is_built_once_per_schema_class_and_handed_out_as_a_copy():
    from pydantic import BaseModel

    class Args(BaseModel):
        x: int

    builds = []
    original = Args.model_json_schema

    def counted(*args, **kwargs):
        builds.append(1)
        return original(*args, **kwargs)

    Args.model_json_schema = counted  # type: ignore[method-assign]
    first = ToolMetadata(name="t", description="d", fn_schema=Args)
    second = ToolMetadata(name="u", description="e", fn_schema=Args)
    for meta in (first, second, first):
        meta.fn_schema_str
        meta.get_parameters_dict()["properties"]["x"]["mutated"] = True

    assert len(builds) == 1
    assert "mutated" not in first.get_parameters_dict()["properties"]["x"]
