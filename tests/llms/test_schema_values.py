"""Example values from JSON schemas: one deterministic, valid value per schema kind."""

from __future__ import annotations

import datetime
import enum
from typing import Literal

import pytest
from pydantic import BaseModel, Field, TypeAdapter

from agentkit.llms.schema_values import example_arguments, example_value


@pytest.mark.parametrize("schema, value", [
    ({"type": "string"}, "text"),
    ({"type": "integer"}, 1),
    ({"type": "number"}, 1.5),
    ({"type": "boolean"}, True),
    ({"type": "null"}, None),
    ({}, "text"),
    ({"const": "fixed"}, "fixed"),
    ({"enum": ["red", "green"]}, "red"),
    ({"type": ["null", "integer"]}, 1),
    ({"anyOf": [{"type": "null"}, {"type": "boolean"}]}, True),
    ({"oneOf": [{"type": "integer"}, {"type": "string"}]}, 1),
    ({"type": "array", "items": {"type": "integer"}}, [1]),
    ({"type": "array", "items": {"type": "integer"}, "minItems": 3}, [1, 1, 1]),
    ({"type": "array", "maxItems": 0}, []),
    ({"type": "array", "prefixItems": [{"type": "string"}, {"type": "integer"}]}, ["text", 1]),
    ({"type": "object", "additionalProperties": {"type": "integer"}}, {"key": 1}),
    ({"type": "object"}, {}),
])
def test_each_schema_kind_gets_its_value(schema, value):
    assert example_value(schema) == value


@pytest.mark.parametrize("schema, value", [
    ({"type": "integer", "minimum": 5}, 5),
    ({"type": "integer", "maximum": -2}, -2),
    ({"type": "integer", "exclusiveMinimum": 1}, 2),
    ({"type": "integer", "minimum": 3, "multipleOf": 4}, 4),
    ({"type": "number", "exclusiveMaximum": 1.0}, 0.5),
    ({"type": "number", "minimum": 2.25}, 2.25),
])
def test_numbers_keep_within_their_bounds(schema, value):
    assert example_value(schema) == value


@pytest.mark.parametrize("schema, value", [
    ({"type": "string", "minLength": 8}, "cityxxxx"),
    ({"type": "string", "maxLength": 2}, "ci"),
    ({"type": "string", "format": "date"}, "2024-01-01"),
    ({"type": "string", "format": "date-time"}, "2024-01-01T00:00:00Z"),
    ({"type": "string", "format": "email"}, "user@example.com"),
    ({"type": "string", "format": "uuid"}, "00000000-0000-4000-8000-000000000000"),
])
def test_strings_are_named_after_their_property_and_keep_length_and_format(schema, value):
    assert example_value(schema, "city") == value


class Colour(enum.Enum):
    RED = "red"
    BLUE = "blue"


class Address(BaseModel):
    street: str
    number: int = Field(ge=1)


class Order(BaseModel):
    customer: str
    colour: Colour
    size: Literal["S", "M"]
    ship_to: Address
    quantity: int = Field(gt=0, le=10)
    notes: str | None = None
    tags: list[str] = []
    extras: dict[str, float] = {}
    on: datetime.date


def test_arguments_for_a_pydantic_model_schema_validate_against_the_model():
    arguments = example_arguments(Order.model_json_schema())

    assert Order.model_validate(arguments)  # every generated value is accepted
    assert arguments == {"customer": "customer", "colour": "red", "size": "S",
                         "ship_to": {"street": "street", "number": 1}, "quantity": 1,
                         "notes": "notes", "tags": ["tags"], "extras": {"key": 1.5},
                         "on": "2024-01-01"}


def test_the_same_schema_always_gives_the_same_arguments():
    schema = Order.model_json_schema()

    assert example_arguments(schema) == example_arguments(schema)


class Node(BaseModel):
    name: str
    child: Node | None = None
    children: list[Node] = []


def test_a_recursive_schema_stops_at_its_first_repetition():
    value = example_arguments(Node.model_json_schema())

    assert value == {"name": "name", "child": None, "children": []}
    assert TypeAdapter(Node).validate_python(value)


def test_a_schema_that_is_not_an_object_gives_no_arguments():
    assert example_arguments({"type": "string"}) == {}
