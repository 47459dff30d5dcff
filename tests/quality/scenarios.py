"""Scenario files the suite-quality tests run: small worlds whose coverage and mutants are
known by construction."""

from __future__ import annotations

from pathlib import Path

#: `add` is called twice (ints, then floats), `multiply` never; the first `add` call fails.
ARITHMETIC = """\
format: 1
name: arithmetic
tools:
  - {ref: "mocks.tools:add", failures: [1], error: "adder timed out"}
  - ref: mocks.tools:multiply
turns:
  - user: What is 2 + 3?
expect:
  answer: {contains: "5"}
agents:
  function_calling:
    script:
      - tool_calls: [{name: add, args: {a: 2, b: 3}}]
      - tool_calls: [{name: add, args: {a: 2.0, b: 3.0}}]
      - "2 + 3 = 5"
"""

#: The weather of two cities, the answer quoting both; only the answer is checked.
WEATHER = """\
format: 1
name: weather_answer
tools:
  - ref: mocks.tools:weather
turns:
  - user: Weather in Paris and Tokyo?
expect:
  answer: {contains: "Paris"}
agents:
  function_calling:
    script:
      - tool_calls:
          - {name: weather, args: {city: Paris}}
          - {name: weather, args: {city: Tokyo}}
      - "Paris: 18°C, light rain. Tokyo: 24°C, sunny."
"""

#: The same world, with the tool calls and what they return checked: it kills what
#: WEATHER lets survive.
WEATHER_CHECKED = """\
format: 1
name: weather_checked
tools:
  - ref: mocks.tools:weather
turns:
  - user: Weather in Paris and Tokyo?
expect:
  answer: {contains: "Paris"}
  tool_calls:
    calls:
      - {name: weather, args: {city: Paris}, output: {contains: "18°C"}}
      - {name: weather, args: {city: Tokyo}, output: {contains: "24°C"}}
agents:
  function_calling:
    script:
      - tool_calls:
          - {name: weather, args: {city: Paris}}
          - {name: weather, args: {city: Tokyo}}
      - "Paris: 18°C, light rain. Tokyo: 24°C, sunny."
"""


def write(folder: Path, *texts: str) -> Path:
    """The scenario files ``texts`` in ``folder`` (named after each scenario); ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    for text in texts:
        name = text.split("name: ", 1)[1].split("\n", 1)[0]
        (folder / f"{name}.yaml").write_text(text, encoding="utf-8")
    return folder
