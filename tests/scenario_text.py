"""Scenario files for tests, written as text: the header most of them share."""

from __future__ import annotations

__all__ = ["FUNCTION_CALLING_AGENT", "WRONG_ANSWER_AGENT", "adding_scenario"]


def adding_scenario(name: str, rest: str, *, tool: str = "mocks.tools:add") -> str:
    """A scenario file named ``name`` with the ``add`` tool (``tool``, its import ref) and the
    one turn "What is 2 + 3?", followed by ``rest`` (its ``expect:``, ``agents:``, ...)."""
    return f"""\
format: 1
name: {name}
tools:
  - ref: {tool}
turns:
  - user: What is 2 + 3?
""" + rest


#: A user's agent module (``build(context)``): a function-calling agent over the scenario's tools.
FUNCTION_CALLING_AGENT = '''
from agentkit.agent import FunctionCallingAgent


def build(context):
    return FunctionCallingAgent.from_tools(list(context.tools), llm=context.llm,
                                           allow_parallel_tool_calls=False)
'''

#: That module after a change that sends the same requests but reports another answer than
#: the model's ("about 4"): a bug in the user's own code.
WRONG_ANSWER_AGENT = FUNCTION_CALLING_AGENT + '''

class _Rounded:
    def __init__(self, agent):
        self._agent = agent

    def chat(self, message, **kwargs):
        response = self._agent.chat(message, **kwargs)
        response.response = "about 4"
        return response

    def __getattr__(self, name):
        return getattr(self._agent, name)


_build = build


def build(context):
    return _Rounded(_build(context))
'''
