"""A plain openai-SDK tool-calling agent, no framework: what "my agent" looks like to agentkit.

:class:`ToolLoopAgent` is ordinary application code, and this module imports nothing of
agentkit. It sends the conversation and its tool schemas to ``chat.completions``, runs the
tools the model asks for (several at once when the model asks for several), sends their results
back, and stops when the model answers in text. ``examples/openai_sdk_agent.py`` declares it
as an agentkit agent type, tested through the bridge.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

import openai

_POPULATION = {"paris": 2_102_650, "tokyo": 13_960_236, "lima": 10_004_000,
               "nairobi": 4_397_073}


def population(city: str) -> int:
    """The population of a city."""
    try:
        return _POPULATION[city.strip().lower()]
    except KeyError:
        raise ValueError(f"unknown city: {city}") from None


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


SCHEMAS: list[dict[str, Any]] = [
    {"type": "function", "function": {
        "name": "population", "description": "The population of a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                       "required": ["city"]}}},
    {"type": "function", "function": {
        "name": "add", "description": "Add two integers.",
        "parameters": {"type": "object", "properties": {"a": {"type": "integer"},
                                                        "b": {"type": "integer"}},
                       "required": ["a", "b"]}}},
]
"""The tools as the model is told about them, written by hand as the OpenAI docs show."""

TOOLS: dict[str, Callable[..., Any]] = {"population": population, "add": add}


class ToolLoopAgent:
    """Chat with a model that may call ``tools``; the conversation carries over between chats.

    ``first_tool_choice`` forces that tool on the first model call of a chat (small models call
    tools reliably only when told to); the last of ``max_rounds`` model calls offers no tool
    choice (``tool_choice="none"``), so a chat always ends in a text answer."""

    def __init__(self, client: openai.OpenAI, model: str, *,
                 tools: dict[str, Callable[..., Any]] | None = None,
                 schemas: Sequence[dict[str, Any]] = SCHEMAS, system: str | None = None,
                 max_rounds: int = 10, first_tool_choice: str | None = None) -> None:
        self.client = client
        self.model = model
        self.tools = tools if tools is not None else TOOLS
        self.schemas = list(schemas)
        self.max_rounds = max_rounds
        self.first_tool_choice = first_tool_choice
        self.messages: list[dict[str, Any]] = (
            [{"role": "system", "content": system}] if system else [])

    def chat(self, message: str) -> str:
        self.messages.append({"role": "user", "content": message})
        for round_ in range(self.max_rounds):
            reply = self.client.chat.completions.create(
                model=self.model, messages=self.messages, tools=self.schemas,
                tool_choice=self._tool_choice(round_)).choices[0].message
            calls = reply.tool_calls or []
            self.messages.append({"role": "assistant", "content": reply.content or "",
                                  **({"tool_calls": [call.model_dump() for call in calls]}
                                     if calls else {})})
            if not calls:
                return reply.content or ""
            for call in calls:
                self.messages.append({"role": "tool", "tool_call_id": call.id,
                                      "content": self._run(call.function.name,
                                                           call.function.arguments)})
        return ""

    def _tool_choice(self, round_: int) -> Any:
        if round_ == self.max_rounds - 1:
            return "none"
        if round_ == 0 and self.first_tool_choice:
            return {"type": "function", "function": {"name": self.first_tool_choice}}
        return "auto"

    def _run(self, name: str, arguments: str) -> str:
        """A tool's result as text; a failure is an ``Error: ...`` text the model can read."""
        try:
            return str(self.tools[name](**json.loads(arguments or "{}")))
        except Exception as exc:  # noqa: BLE001 (a failing tool is something the model hears of)
            return f"Error: {type(exc).__name__}: {exc}"
