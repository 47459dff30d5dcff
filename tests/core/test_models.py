"""agentkit's pydantic base: ``replaced``, the shallow copy with fields replaced."""

from typing import Any

from pydantic import BaseModel, ConfigDict, PrivateAttr

from agentkit.core.models import replaced
from agentkit.llms.types import ToolOutput


def test_replaced_is_model_copy_with_an_update():
    output = ToolOutput(content="x", tool_name="t", raw_input={"args": (), "kwargs": {"a": 1}},
                        raw_output="x")
    update = {"raw_input": {"args": (1,), "kwargs": {}}}

    made, expected = replaced(output, update), output.model_copy(update=update)

    assert type(made) is ToolOutput and made is not output
    assert list(made.__dict__.items()) == list(expected.__dict__.items())
    assert made.model_fields_set == expected.model_fields_set == output.model_fields_set | {
        "raw_input"}
    assert made.model_fields_set is not output.model_fields_set  # its own, as pydantic's
    assert output.raw_input == {"args": (), "kwargs": {"a": 1}}  # the original untouched


class _Extra(BaseModel):
    model_config = ConfigDict(extra="allow")
    name: str


class _Private(BaseModel):
    name: str
    _seen: list[Any] = PrivateAttr(default_factory=list)


def test_replaced_leaves_extra_fields_and_private_attributes_to_pydantic():
    extra = _Extra(name="a", more=1)
    private = _Private(name="a")
    private._seen.append(1)

    assert replaced(extra, {"name": "b"}).model_dump() == {"name": "b", "more": 1}
    copied = replaced(private, {"name": "b"})
    assert (copied.name, copied._seen) == ("b", [1])
