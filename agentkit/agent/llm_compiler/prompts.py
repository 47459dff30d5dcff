"""The LLMCompiler prompts: the planner's system prompt (tools + ``join``), its few-shot
example, the replan context and the joiner's prompt.

The prose is ours; the markers are the wire format models, mocks and recordings depend on:
numbered ``Tool Name:``/``Tool Description:``/``Tool Args:`` blocks, ``join():``,
``Guidelines:``, ``<END_OF_PLAN>``, ``Question:``, ``Previous Plan:``/``Current Plan:``,
``Thought:``, ``Observation:`` and ``Action: Finish(...)``/``Action: Replan(...)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = [
    "END_OF_PLAN",
    "JOIN_DESCRIPTION",
    "PLANNER_EXAMPLE_PROMPT",
    "JOINER_PROMPT",
    "planner_system_prompt",
    "planner_user_prompt",
]

END_OF_PLAN = "<END_OF_PLAN>"

JOIN_DESCRIPTION = (
    "join():\n"
    " - Gathers the results of the actions before it and hands them to the one who answers.\n"
    " - It is always the last action of a plan. Use it when the results will answer the\n"
    "   question, and also when they cannot yet: a new plan can then be made with them.\n"
)

PLANNER_EXAMPLE_PROMPT = (
    "Question: Which city has more people, Paris or Rome, and by how many?\n"
    "Thought: Both populations can be looked up at the same time.\n"
    '1. population("Paris")\n'
    '2. population("Rome")\n'
    "Thought: Then subtract the smaller from the larger.\n"
    '3. subtract("$1", "$2")\n'
    f"4. join(){END_OF_PLAN}\n"
    "###\n"
    "\n"
    "Question: What is the weather in the capitals of Peru and Kenya?\n"
    'Thought: Find both capitals at once, then the weather in each.\n'
    '1. capital("Peru")\n'
    '2. capital("Kenya")\n'
    '3. weather("$1")\n'
    '4. weather("$2")\n'
    f"5. join(){END_OF_PLAN}\n"
    "###\n"
)

_GUIDELINES = (
    "Guidelines:\n"
    " - Each action above has a name, a description and its arguments' schema.\n"
    "    - Give every argument its documented type.\n"
    "    - Write arguments as Python literals, positionally, in the documented order; never\n"
    "      as name=value.\n"
    " - Use only the actions listed above; never invent one.\n"
    " - Number the actions 1, 2, 3... Each number is the action's id.\n"
    " - An argument may be the result of an earlier action: write $id (or ${id}) for it, on\n"
    '   its own ("$1") or inside a text ("the ratio of $1 to $2").\n'
    " - Run as much as possible at once: an action should wait only for the results it uses.\n"
    " - A line starting with \"Thought:\" explains the action that follows it.\n"
    " - No comments (#) after an action.\n"
    f" - End every plan with join() as its last action, then say '{END_OF_PLAN}'.\n"
    " - If the actions cannot answer the question, plan join() alone.\n"
)

_REPLAN_GUIDELINES = (
    ' - The "Previous Plan" sections show the plans already run, each action\'s result\n'
    '   (Observation) and what was concluded (Thought). Build the "Current Plan" on them.\n'
    ' - Start the Current Plan with a "Thought" saying what it will do differently.\n'
    " - Never repeat an action that already ran: its result is in the Previous Plan.\n"
)


def _tool_block(number: int, tool: Any) -> str:
    meta = tool.metadata
    return (f"{number}. Tool Name: {meta.name}\n"
            f"Tool Description: {meta.description}\n"
            f"Tool Args: {meta.fn_schema_str}\n")


def planner_system_prompt(tools: Sequence[Any], *, is_replan: bool = False,
                          example: str | None = PLANNER_EXAMPLE_PROMPT) -> str:
    """The planner's system prompt: the tools and ``join`` as numbered actions, the guidelines
    (with the ``Previous Plan`` ones when replanning) and the few-shot example."""
    parts = ["Given a user query, create a plan to solve it with the utmost "
             f"parallelizability. Each plan should comprise an action from the following "
             f"{len(tools) + 1} types:\n"]
    parts += [_tool_block(number, tool) + "\n" for number, tool in enumerate(tools, 1)]
    parts.append(f"{len(tools) + 1}. {JOIN_DESCRIPTION}\n")
    parts.append(_GUIDELINES)
    if is_replan:
        parts.append(_REPLAN_GUIDELINES)
    if example:
        parts.append(f"\nExamples of plans for other questions and tools:\n{example}\n")
    return "".join(parts)


def planner_user_prompt(question: str, contexts: Sequence[str]) -> str:
    """``Question: <input>``; a replan adds each earlier round as a ``Previous Plan`` and
    opens the ``Current Plan``."""
    if not contexts:
        return f"Question: {question}"
    previous = "".join(f"Previous Plan:\n\n{context}\n\n" for context in contexts)
    return f"Question: {question}\n{previous}Current Plan:\n\n\n"


JOINER_PROMPT = (
    "Answer a question from the results of a plan that was run for it. Each action of the\n"
    "plan is shown with its result (Observation); an Observation starting with \"Error:\"\n"
    "means the action failed or could not run.\n"
    "First write one or two sentences of reasoning about the results (Thought), then exactly\n"
    "one Action:\n"
    " (1) Finish(<answer>): the results answer the question; <answer> is the answer, as\n"
    "     short as the question allows (a number, a name, a sentence).\n"
    " (2) Replan(<reason>): the results do not answer it yet (missing data, a failed\n"
    "     action); <reason> says what is missing, and a new plan will be made.\n"
    "\n"
    "Examples:\n"
    "\n"
    "Question: Which city has more people, Paris or Rome, and by how many?\n"
    "population('Paris')\n"
    "Observation: 2102650\n"
    "population('Rome')\n"
    "Observation: 2748109\n"
    "subtract(2748109, 2102650)\n"
    "Observation: 645459\n"
    "Thought: Rome has 645459 more people than Paris.\n"
    "Action: Finish(Rome, by 645459 people)\n"
    "###\n"
    "\n"
    "Question: What is the weather in the capital of Peru?\n"
    "capital('Peru')\n"
    "Observation: Error: the service is unavailable\n"
    "weather('$1')\n"
    "Observation: Error: not run: its input $1 (capital) failed\n"
    "Thought: The capital could not be found, so the weather is unknown.\n"
    "Action: Replan(the capital of Peru is still needed)\n"
    "###\n"
    "\n"
    "Question: {query_str}\n"
    "\n"
    "{context_str}\n"
)
"""The joiner's prompt (a :class:`~agentkit.llms.prompts.PromptTemplate` text with
``{query_str}`` and ``{context_str}``)."""
