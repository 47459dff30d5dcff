"""docs/reference/agent-stack.md shows what the mock LLMs do: its model-function example runs
as the page says, and its table of what the harness asks of a double names the protocol's
members."""

from __future__ import annotations

import re
import typing

from agentkit.core.sim import simulation
from agentkit.llms.mock import ModelDouble
from tests.docs.pages import DOCS, fenced, section

PAGE = DOCS / "reference" / "agent-stack.md"


def test_the_model_function_example_answers_a_react_agent() -> None:
    text = section(PAGE, "Mock LLMs").split("### A model function", 1)[1].split("\n### ", 1)[0]
    [example] = fenced(text, "python")
    namespace: dict[str, typing.Any] = {}
    exec(compile(example, str(PAGE), "exec"), namespace)

    with simulation(seed=0):
        assert str(namespace["agent"].chat("go")) == "done"


def test_the_double_table_names_each_member_of_the_protocol() -> None:
    text = section(PAGE, "Mock LLMs").split("### What the harness asks of a double", 1)[1]
    documented = set(re.findall(r"^\| `(\w+)", text, flags=re.M))
    members = {name for name in vars(ModelDouble) if not name.startswith("_")}

    assert documented == members == {"leftovers", "excuse", "excused"}
