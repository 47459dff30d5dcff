"""Two agents as they run in production, each on its vendor's official SDK and wire, importing
nothing of agentkit: an OpenAI Agents SDK agent on the SDK's default model (the Responses API)
and a tool loop over Anthropic's SDK (the Messages API). Each finds its server as the SDKs do,
in the environment (``OPENAI_BASE_URL`` / ``OPENAI_API_KEY``, ``ANTHROPIC_BASE_URL`` /
``ANTHROPIC_API_KEY``), so pointing it at ``agentkit serve`` is all it takes to test it::

    python support_agents.py openai "What is 2 + 3? Use the add tool."
    python support_agents.py anthropic "What is 2 + 3? Use the add tool."

Both force the ``add`` tool on their first model call (a small model calls tools reliably only
when told to) and answer in text on the next.
"""

from __future__ import annotations

import sys
from typing import Any


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


INSTRUCTIONS = "You are a calculator. Use the add tool, then give the result in one sentence."


def sdk_agent() -> Any:
    """The Agents SDK agent: its model is the SDK's default, spoken over the Responses API."""
    from agents import Agent, ModelSettings, function_tool

    return Agent(name="Calculator", instructions=INSTRUCTIONS, tools=[function_tool(add)],
                 model_settings=ModelSettings(tool_choice="add"))


def ask_sdk_agent(question: str) -> str:
    from agents import Runner

    return str(Runner.run_sync(sdk_agent(), question).final_output)


ADD_TOOL = {"name": "add", "description": "Add two integers.",
            "input_schema": {"type": "object", "properties": {"a": {"type": "integer"},
                                                              "b": {"type": "integer"}},
                             "required": ["a", "b"]}}


class ClaudeCalculator:
    """A tool loop on Anthropic's Messages API: the first call must use ``add``, the tool runs,
    and the answer is streamed from the second call, which may use no tool."""

    def __init__(self, client: Any, model: str = "claude-haiku-4-5") -> None:
        self.client = client
        self.model = model

    def chat(self, question: str) -> str:
        messages: list[dict[str, Any]] = [{"role": "user", "content": question}]
        first = self.client.messages.create(
            model=self.model, max_tokens=200, system=INSTRUCTIONS, messages=messages,
            tools=[ADD_TOOL], tool_choice={"type": "tool", "name": "add"})
        uses = [block for block in first.content if block.type == "tool_use"]
        messages += [{"role": "assistant", "content": [b.model_dump(exclude_none=True)
                                                       for b in first.content]},
                     {"role": "user", "content": [
                         {"type": "tool_result", "tool_use_id": use.id,
                          "content": str(add(**use.input))} for use in uses]}]
        with self.client.messages.stream(
                model=self.model, max_tokens=200, system=INSTRUCTIONS, messages=messages,
                tools=[ADD_TOOL], tool_choice={"type": "none"}) as stream:
            return str(stream.get_final_text())


def ask_claude_calculator(question: str) -> str:
    import anthropic

    return ClaudeCalculator(anthropic.Anthropic(max_retries=0)).chat(question)


if __name__ == "__main__":
    which, question = sys.argv[1], sys.argv[2]
    print(ask_sdk_agent(question) if which == "openai" else ask_claude_calculator(question))
