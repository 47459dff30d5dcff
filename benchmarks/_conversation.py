"""The scripted conversations every benchmark runs, shared by the agentkit and LlamaIndex sides.

Plain Python only (no agentkit, no llama_index import), so both interpreters load the same
tool, the same user messages and the same model texts byte for byte.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable

CITIES = ("Paris", "Lagos", "Lima", "Osaka", "Quito", "Perth", "Oslo", "Cairo", "Dhaka", "Turin")

TOOL_NAME = "lookup_population"

#: Rows of the throughput table: (key, label, agent kind, tool calls per chat).
SCENARIOS = (
    ("react_1", "ReAct, 1 tool call", "react", 1),
    ("react_10", "ReAct, 10 sequential tool calls", "react", 10),
    ("fc_1", "function calling, 1 tool call", "function_calling", 1),
)

#: Tool calls per chat of the cost-per-step sweep (ReAct). The cost of a step is what a chat
#: with n tool calls takes beyond one that answers at once (0 calls), over n: it stays flat
#: when a step does not cost more for the steps taken before it. The 1- and 10-call chats
#: are the table's rows above; the others are measured for the sweep only.
SWEEP_CALLS = (1, 5, 10, 15)
SWEEP_EXTRA = tuple((f"react_{calls}", f"ReAct, {calls} sequential tool calls", "react", calls)
                    for calls in (0, *SWEEP_CALLS)
                    if not any(kind == "react" and n == calls for _k, _l, kind, n in SCENARIOS))

#: Rows of the workflow table (bench_workflows.py): (key, label, tool calls per run). A run
#: is one ``AgentWorkflow`` run of a ``FunctionAgent``, one tool call per model reply.
WORKFLOW_SCENARIOS = (
    ("workflow_fc_1", "AgentWorkflow + FunctionAgent, 1 tool call", 1),
    ("workflow_fc_10", "AgentWorkflow + FunctionAgent, 10 tool calls", 10),
)

#: Enough for the 15-call chat on both stacks, which count reasoning steps (an action and
#: its observation are two: 31 there); both default to 10.
MAX_ITERATIONS = 40

#: The long conversation's answer: about 40 words, so memory trimming starts within ~50 chats.
LONG_ANSWER = (
    "Paris has about five million people according to the lookup tool, which counts one "
    "million residents per letter of the city name. The figure is a rough estimate, so check "
    "an official census before you rely on it for planning, budgeting or any published report."
)


def lookup_population(city: str) -> str:
    """Look up the population of a city."""
    return f"{city} has {len(city)} million people."


def user_message(chat: int) -> str:
    return f"Question {chat}: how many people live in these cities?"


def action_text(call: int) -> str:
    """The ReAct model text of tool call ``call`` (0-based) of a chat."""
    city = CITIES[call % len(CITIES)]
    return (f"Thought: I need the population of {city}.\nAction: {TOOL_NAME}\n"
            f'Action Input: {{"city": "{city}"}}')


def answer(calls: int) -> str:
    if not calls:
        return "I can answer that without looking anything up."
    return "The populations are: " + "; ".join(
        lookup_population(CITIES[i % len(CITIES)]) for i in range(calls))


def react_script(calls: int, final_answer: str | None = None) -> list[str]:
    """The model texts of one ReAct chat: ``calls`` actions, then the answer."""
    text = final_answer if final_answer is not None else answer(calls)
    return [action_text(i) for i in range(calls)] + [
        f"Thought: I can answer without using any more tools.\nAnswer: {text}"]


def tool_call_arguments(calls: int) -> list[dict[str, str]]:
    """The function-calling model's tool-call arguments, one reply per call."""
    return [{"city": CITIES[i % len(CITIES)]} for i in range(calls)]


def transcript_digest(turns: Iterable[tuple[str, str, list[str]]]) -> str:
    """A short hash of (user message, answer, tool outputs) per chat: equal on both sides
    exactly when they held the same conversation."""
    digest = hashlib.sha256()
    for user, reply, observations in turns:
        digest.update(json.dumps([user, reply, observations]).encode())
    return digest.hexdigest()[:12]
