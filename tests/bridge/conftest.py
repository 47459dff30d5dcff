"""Shared helpers of the bridge tests: a bridge over a script, with a turn running."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import openai

from agentkit.bridge import Bridge, WireTurn, openai_clients
from agentkit.llms.mock import ScriptedLLM

ADD = {"type": "function", "function": {"name": "add", "description": "Add two integers.",
                                        "parameters": {"type": "object", "properties": {
                                            "a": {"type": "integer"}, "b": {"type": "integer"}},
                                            "required": ["a", "b"]}}}


def scripted_bridge(script: Sequence[Any], *, strict: bool = True,
                    **options: Any) -> tuple[Bridge, openai.OpenAI, openai.AsyncOpenAI]:
    """A bridge answering with ``script``, and SDK clients routed to it; the script's errors
    reach the client (its model does not retry them: the client's retries are the agent's)."""
    bridge = Bridge(ScriptedLLM(script, name="script", strict=strict, max_retries=0), **options)
    client, async_client = openai_clients(bridge)
    return bridge, client, async_client


@contextmanager
def turn(bridge: Bridge, user: str = "What is 2 + 3?") -> Iterator[WireTurn]:
    with bridge.wire.turn(user) as running:
        yield running


def ask(client: openai.OpenAI, *messages: dict[str, Any], **options: Any) -> Any:
    """One chat.completions call with ``messages`` (a user question by default)."""
    return client.chat.completions.create(
        model="m", messages=list(messages) or [{"role": "user", "content": "What is 2 + 3?"}],
        **options)
