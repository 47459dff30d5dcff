"""Shared by the CLI tests: the scenario they run and what a command run returns."""

from __future__ import annotations

from dataclasses import dataclass

from tests.scenario_text import adding_scenario

FAKE_URL = "http://fake-openai.test/v1"

#: One `add` call answers the question; react runs a script, function_calling a recording.
ADDING = adding_scenario("adding", """\
expect:
  answer: {contains: "5"}
  tool_calls:
    calls:
      - {name: add, args: {a: 2, b: 3}}
agents:
  react:
    script:
      - |-
        Thought: I need to add 2 and 3.
        Action: add
        Action Input: {"a": 2, "b": 3}
      - |-
        Thought: I can answer without using any more tools.
        Answer: 2 + 3 = 5
  function_calling:
    recording: cassettes/adding.function_calling.yaml
""")


@dataclass
class Outcome:
    code: int
    out: str
    err: str
