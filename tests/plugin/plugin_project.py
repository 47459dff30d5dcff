"""What the plugin tests write into their inner pytester projects."""

from __future__ import annotations

import textwrap

import pytest

from tests.scenario_text import adding_scenario

CALC_TOOLS = '''
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b
'''

#: Two agent types, each answering "What is 2 + 3?" with one `add` call.
ADDING = """\
format: 1
name: adding
description: One tool call answers an arithmetic question.
tags: [arithmetic]
tools:
  - ref: calc_tools:add
turns:
  - user: What is 2 + 3?
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
    script:
      - tool_calls:
          - {name: add, args: {a: 2, b: 3}}
      - 2 + 3 = 5
"""


def ini(pytester: pytest.Pytester, *lines: str) -> None:
    """The inner project's ini file with these option lines (and pytest-asyncio configured,
    as the plugin tests' conftest does)."""
    pytester.makeini("\n".join(["[pytest]", "asyncio_default_fixture_loop_scope = function",
                                 *lines]) + "\n")


def write(pytester: pytest.Pytester, relative: str, text: str) -> None:
    """Write ``text`` (dedented) to ``relative`` inside the inner project."""
    target = pytester.path / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(textwrap.dedent(text), encoding="utf-8")


#: An inner conftest: while recording (``--record-mode`` other than none), a respx fake OpenAI
#: endpoint at ``FAKE_URL`` answers the `adding` question with one `add` call, then "2 + 3 = 5",
#: each after a few real milliseconds (as a live model, so recorded latencies are not zero).
#: The plugin's OpenAI backend (model, base URL from --agentkit-base-url) reaches it as is.
FAKE_URL = "http://fake-openai.test/v1"
FAKE_ENDPOINT_CONFTEST = f'''
import time

import pytest

from agentkit.llms.mock import tool_call
from mocks.openai_server import FakeOpenAIServer


@pytest.fixture(autouse=True)
def fake_endpoint(request):
    if request.config.getoption("record_mode") == "none":
        yield None
        return
    script = [tool_call("add", a=2, b=3), "2 + 3 = 5"]
    script = [lambda messages, tools, reply=reply: time.sleep(0.003) or reply for reply in script]
    with FakeOpenAIServer(script, base_url="{FAKE_URL}") as server:
        yield server
'''

#: `adding` with a recording for function_calling instead of a script.
RECORDED = adding_scenario("recorded", """\
expect:
  answer: {contains: "5"}
agents:
  function_calling:
    recording: cassettes/recorded.function_calling.yaml
""", tool="calc_tools:add")


def collected(pytester: pytest.Pytester, *args: str) -> list[str]:
    """The node ids a collection with ``args`` selects, from the session itself (not from
    pytest's report wording); the collection must succeed."""
    recorder = pytester.inline_run("--collect-only", *args)
    assert recorder.ret == pytest.ExitCode.OK, recorder.ret
    [finished] = recorder.getcalls("pytest_collection_finish")
    return [item.nodeid for item in finished.session.items]


def deselected(pytester: pytest.Pytester, *args: str) -> list[str]:
    """The node ids a collection with ``args`` deselects (``-k``, ``-m``)."""
    recorder = pytester.inline_run("--collect-only", *args)
    return [item.nodeid for call in recorder.getcalls("pytest_deselected") for item in call.items]


def failure_lines(result: pytest.RunResult, first: str) -> list[str]:
    """The lines of the failure report that starts with the line ``first``, up to the next
    separator line."""
    lines = result.stdout.lines
    start = lines.index(first)
    end = next((i for i in range(start + 1, len(lines))
                if lines[i].startswith(("___", "---", "==="))), len(lines))
    return lines[start:end]


#: A project's own agent type: function calling without parallel tool calls.
MY_AGENTS = '''
from agentkit.agent import FunctionCallingAgent


def build(context):
    return FunctionCallingAgent.from_tools(list(context.tools), llm=context.llm,
                                           allow_parallel_tool_calls=False, **context.params)
'''
