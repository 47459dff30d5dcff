"""FunctionTool: schema and description from a function; sync and async; argument checking."""

from typing import Any, Generic, TypeVar

import pytest
from pydantic import BaseModel, Field

from agentkit.core.sim import asleep, now, run_sync
from agentkit.tools import FunctionTool, ToolArgumentsError, ToolMetadata, ToolOutput

T = TypeVar("T")


class Context(Generic[T]):
    """Stands in for the workflow Context (matched by class name)."""

    def __init__(self, state: dict[str, Any]) -> None:
        self.state = state


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


async def async_add(a: int, b: int) -> int:
    """Add two integers, slowly."""
    await asleep(1.0)
    return a + b


def no_doc(x: str) -> str:
    return x


def remember(ctx: Context, key: str) -> str:
    """Store a key in the workflow state."""
    ctx.state["key"] = key
    return f"stored {key}"


def greet(name: str, greeting: str = "Hello") -> str:
    """Greet someone.

    Args:
        name: who to greet
        greeting: the word to greet with
    """
    return f"{greeting}, {name}!"


# ---------------------------------------------------------------- metadata from the function


def test_default_name_is_the_function_name():
    assert FunctionTool.from_defaults(add).metadata.name == "add"


def test_default_description_starts_with_the_signature_line_then_the_docstring():
    assert FunctionTool.from_defaults(add).metadata.description == (
        "add(a: int, b: int) -> int\nAdd two integers.")


def test_default_description_of_an_undocumented_function_is_its_signature():
    assert FunctionTool.from_defaults(no_doc).metadata.description == "no_doc(x: str) -> str"


def test_default_description_uses_the_given_name():
    assert FunctionTool.from_defaults(add, name="plus").metadata.description.startswith(
        "plus(a: int, b: int) -> int")


def test_given_name_and_description_are_used():
    metadata = FunctionTool.from_defaults(add, name="plus", description="Sum.").metadata
    assert (metadata.name, metadata.description) == ("plus", "Sum.")


def test_schema_lists_the_parameters_with_their_types():
    schema = FunctionTool.from_defaults(add).metadata.get_parameters_dict()
    assert (schema["properties"]["a"]["type"], schema["properties"]["b"]["type"], schema["required"]) == (
        "integer", "integer", ["a", "b"])


def test_schema_takes_parameter_descriptions_from_the_docstring():
    properties = FunctionTool.from_defaults(greet).metadata.get_parameters_dict()["properties"]
    assert (properties["name"]["description"], properties["greeting"]["description"]) == (
        "who to greet", "the word to greet with")


def test_schema_takes_sphinx_style_parameter_descriptions():
    def scale(x: float, factor: float) -> float:
        """Scale a number.

        :param x: the number
        :param float factor: how much
        """
        return x * factor

    properties = FunctionTool.from_defaults(scale).metadata.get_parameters_dict()["properties"]
    assert (properties["x"]["description"], properties["factor"]["description"]) == ("the number", "how much")


def test_schema_marks_parameters_with_defaults_optional():
    schema = FunctionTool.from_defaults(greet).metadata.get_parameters_dict()
    assert (schema["required"], schema["properties"]["greeting"]["default"]) == (["name"], "Hello")


def test_pydantic_field_defaults_become_schema_fields():
    def search(query: str = Field(description="what to look for")) -> str:
        return query

    schema = FunctionTool.from_defaults(search).metadata.get_parameters_dict()
    assert (schema["properties"]["query"]["description"], schema["required"]) == (
        "what to look for", ["query"])


def test_an_explicit_fn_schema_is_used():
    class Args(BaseModel):
        a: int
        b: int

    assert FunctionTool.from_defaults(add, fn_schema=Args).metadata.fn_schema is Args


def test_return_direct_is_recorded_in_the_metadata():
    assert FunctionTool.from_defaults(add, return_direct=True).metadata.return_direct is True


def test_tool_metadata_may_be_given_whole():
    metadata = ToolMetadata(name="adder", description="adds")
    assert FunctionTool.from_defaults(add, tool_metadata=metadata).metadata is metadata


def test_a_lambda_needs_a_name():
    with pytest.raises(ValueError, match="tool name '<lambda>' is not a valid identifier"):
        FunctionTool.from_defaults(lambda x: x)


def test_from_defaults_without_a_function_is_an_error():
    with pytest.raises(ValueError, match=r"FunctionTool\.from_defaults needs `fn` or `async_fn`"):
        FunctionTool.from_defaults()


def test_constructor_without_a_function_is_an_error():
    with pytest.raises(ValueError, match="FunctionTool needs `fn` or `async_fn`"):
        FunctionTool(metadata=ToolMetadata(name="x", description="x"))


def test_constructor_without_metadata_is_an_error():
    with pytest.raises(ValueError, match="FunctionTool needs `metadata`"):
        FunctionTool(add)


def test_string_annotations_are_resolved_in_the_signature_line():
    def double(n: "int") -> "int":
        return 2 * n

    assert FunctionTool.from_defaults(double).metadata.description == "double(n: int) -> int"


# ---------------------------------------------------------------- calling


def test_sync_function_works_with_call():
    assert FunctionTool.from_defaults(add).call(a=1, b=2).raw_output == 3


def test_sync_function_works_with_acall():
    assert run_sync(FunctionTool.from_defaults(add).acall(a=1, b=2)).raw_output == 3


def test_async_function_works_with_acall():
    assert run_sync(FunctionTool.from_defaults(async_fn=async_add).acall(a=1, b=2)).raw_output == 3


def test_async_function_works_with_call():
    assert FunctionTool.from_defaults(async_fn=async_add).call(a=1, b=2).raw_output == 3


def test_async_function_given_as_fn_works_with_both_calls():
    tool = FunctionTool.from_defaults(async_add)
    assert (tool.call(a=1, b=2).raw_output, run_sync(tool.acall(a=2, b=2)).raw_output) == (3, 4)


def test_async_function_latency_is_simulated():
    FunctionTool.from_defaults(async_add).call(a=1, b=2)
    assert now() == 1.0


def test_async_tool_called_sync_from_inside_a_running_loop_works():
    tool = FunctionTool.from_defaults(async_add)

    async def inside() -> int:
        return tool.call(a=2, b=5).raw_output

    assert run_sync(inside()) == 7


def test_sync_and_async_functions_may_both_be_given():
    async def shouted(a: int, b: int) -> str:
        return f"ASYNC {a + b}"

    tool = FunctionTool.from_defaults(add, async_fn=shouted)
    assert (tool.call(a=1, b=1).content, run_sync(tool.acall(a=1, b=1)).content) == ("2", "ASYNC 2")


def test_positional_arguments_are_passed_through():
    assert FunctionTool.from_defaults(add).call(4, 5).raw_output == 9


def test_calling_the_tool_is_call():
    assert FunctionTool.from_defaults(add)(a=2, b=2).raw_output == 4


def test_string_numbers_are_coerced_to_the_annotated_type():
    assert FunctionTool.from_defaults(add).call(a="2", b="3").raw_output == 5


def test_partial_params_are_filled_in_and_left_out_of_the_schema():
    tool = FunctionTool.from_defaults(greet, partial_params={"greeting": "Hi"})
    properties = tool.metadata.get_parameters_dict()["properties"]
    assert (tool.call(name="Ada").content, "greeting" in properties) == ("Hi, Ada!", False)


# ---------------------------------------------------------------- outputs


def test_output_content_is_the_string_of_the_result():
    output = FunctionTool.from_defaults(add).call(a=1, b=2)
    assert (output.content, str(output), output.raw_output) == ("3", "3", 3)


def test_output_names_the_tool():
    assert FunctionTool.from_defaults(add, name="plus").call(a=1, b=2).tool_name == "plus"


def test_output_raw_input_holds_args_and_kwargs():
    output = FunctionTool.from_defaults(add).call(1, b=2)
    assert output.raw_input == {"args": (1,), "kwargs": {"b": 2}}


def test_output_is_not_an_error():
    assert FunctionTool.from_defaults(add).call(a=1, b=2).is_error is False


def test_a_function_returning_a_tool_output_returns_it_unchanged():
    made = ToolOutput(content="custom", tool_name="made", raw_output=None)
    assert FunctionTool.from_defaults(lambda: made, name="make").call() is made


# ---------------------------------------------------------------- Context injection


def test_context_parameter_is_not_in_the_schema():
    properties = FunctionTool.from_defaults(remember).metadata.get_parameters_dict()["properties"]
    assert list(properties) == ["key"]


def test_context_parameter_is_not_in_the_description():
    assert FunctionTool.from_defaults(remember).metadata.description.startswith("remember(key: str) -> str")


def test_context_is_injected_through_ctx():
    ctx = Context({})
    FunctionTool.from_defaults(remember).call(ctx=ctx, key="k1")
    assert ctx.state == {"key": "k1"}


def test_context_is_injected_through_ctx_in_acall():
    ctx = Context({})
    run_sync(FunctionTool.from_defaults(remember).acall(ctx=ctx, key="k2"))
    assert ctx.state == {"key": "k2"}


def test_context_is_injected_whatever_the_parameter_is_called():
    def note(text: str, workflow_ctx: "Context[dict]") -> str:
        workflow_ctx.state["text"] = text
        return "ok"

    ctx = Context({})
    FunctionTool.from_defaults(note).call(text="hi", ctx=ctx)
    assert ctx.state == {"text": "hi"}


def test_context_is_not_in_the_output_raw_input():
    output = FunctionTool.from_defaults(remember).call(ctx=Context({}), key="k")
    assert output.raw_input == {"args": (), "kwargs": {"key": "k"}}


def test_a_tool_needing_a_context_called_without_one_says_so():
    with pytest.raises(ValueError,
                       match=r"tool `remember` needs a workflow Context: call it with ctx=\.\.\."):
        FunctionTool.from_defaults(remember).call(key="k")


def test_a_plain_parameter_named_ctx_is_an_ordinary_argument():
    def shift(ctx: int, by: int) -> int:
        return ctx + by

    tool = FunctionTool.from_defaults(shift)
    properties = tool.metadata.get_parameters_dict()["properties"]
    assert ("ctx" in properties, tool.call(ctx=1, by=2).raw_output) == (True, 3)


# ---------------------------------------------------------------- bad arguments


def test_a_missing_argument_is_a_tool_arguments_error():
    with pytest.raises(ToolArgumentsError,
                       match="invalid arguments for tool `add`: missing required argument `b`"):
        FunctionTool.from_defaults(add).call(a=1)


def test_no_arguments_at_all_name_every_missing_one():
    with pytest.raises(ToolArgumentsError, match=(
            "invalid arguments for tool `add`: missing required argument `a`; "
            "missing required argument `b`")):
        FunctionTool.from_defaults(add).call()


def test_an_unknown_argument_is_a_tool_arguments_error():
    with pytest.raises(ToolArgumentsError,
                       match=r"invalid arguments for tool `add`: unexpected argument\(s\) `c`"):
        FunctionTool.from_defaults(add).call(a=1, b=2, c=3)


def test_a_wrong_type_is_a_tool_arguments_error_naming_the_argument_and_value():
    with pytest.raises(ToolArgumentsError,
                       match=r"^invalid arguments for tool `add`: `a`: .+ \(got 'one'\)$"):
        FunctionTool.from_defaults(add).call(a="one", b=2)


def test_bad_arguments_in_acall_are_a_tool_arguments_error():
    with pytest.raises(ToolArgumentsError, match="missing required argument `b`"):
        run_sync(FunctionTool.from_defaults(async_add).acall(a=1))


def test_tool_arguments_error_is_a_value_error():
    assert issubclass(ToolArgumentsError, ValueError)


def test_a_function_taking_any_kwargs_accepts_unknown_arguments():
    def collect(**fields: Any) -> str:
        return ",".join(sorted(fields))

    assert FunctionTool.from_defaults(collect).call(x=1, y=2).content == "x,y"


def test_the_function_is_not_called_when_arguments_are_bad():
    calls = []

    def record(a: int) -> int:
        calls.append(a)
        return a

    with pytest.raises(ToolArgumentsError):
        FunctionTool.from_defaults(record).call(a="not a number")
    assert calls == []


# ---------------------------------------------------------------- Python's wording, context
def _python_message(fn, **kwargs) -> str | None:
    with pytest.raises(ToolArgumentsError) as info:
        FunctionTool.from_defaults(fn).call(**kwargs)
    return info.value.python_message


def test_a_missing_argument_has_pythons_message_too():
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    assert _python_message(add, a=1) == "add() missing 1 required positional argument: 'b'"
    assert _python_message(add) == "add() missing 2 required positional arguments: 'a' and 'b'"


def test_three_missing_arguments_are_listed_as_python_lists_them():
    def f(a: int, b: int, c: int) -> int:
        """F."""
        return a

    assert _python_message(f) == "f() missing 3 required positional arguments: 'a', 'b', and 'c'"


def test_missing_keyword_only_arguments_are_named_so():
    def g(*, x: int) -> int:
        """G."""
        return x

    assert _python_message(g) == "g() missing 1 required keyword-only argument: 'x'"


def test_an_unexpected_argument_has_pythons_message_too():
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    assert _python_message(add, a=1, b=2, c=3) == "add() got an unexpected keyword argument 'c'"


def test_a_wrong_type_has_no_python_message():
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    assert _python_message(add, a="x", b=2) is None


def test_a_tool_with_a_context_parameter_says_so():
    from agentkit.workflow import Context

    def uses(ctx: Context, n: int) -> int:
        """Uses the context."""
        return n

    tool = FunctionTool.from_defaults(uses)
    assert tool.requires_context and tool.ctx_param_name == "ctx"
    assert not FunctionTool.from_defaults(lambda n: n, name="plain").requires_context
