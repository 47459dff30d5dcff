"""ReAct ``chat`` and ``stream_chat`` make one parser decision for every model text (issue 11,
item 5): the same answer, the same tool calls, the same messages to the model, the same memory."""

import itertools
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentkit.agent.react import ActionReasoningStep, ReActAgent, ReActOutputParser
from agentkit.agent.react.output_parser import first_marker
from agentkit.llms.mock import ScriptedLLM, ScriptedResponse
from agentkit.tools import FunctionTool


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


FRAGMENTS = [
    "Thought: I need a tool.\n", "Thought: I know it.\n", "Thought:", "Thought: the Answer: is 5\n",
    "Action: add\n", "Action: nope\n", "Action: add(", "Action:\n", "Action",
    'Action Input: {"a": 2, "b": 3}\n', "Action Input: {'a': 1, 'b': 2,}\n",
    'Action Input: {"a": 1}\n', "Action Input: {broken\n", "Action Input:",
    "Answer: 5", "Answer: use the Action: menu, then 5", "Answer:", "Answer: the Thought: is mine\n",
    "Observation: 7\n", "Sure!\n", "Let me think.\n", "Ans", "wer: ", "Act", "ion: ", "\n", " ",
    "{", "}", "'", '"', ",",
]

model_texts = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=6)),
                       max_size=8).map("".join)


@st.composite
def chunked(draw: Any, texts: st.SearchStrategy[str]) -> list[str]:
    """A model text cut into stream chunks at arbitrary places (a marker may be split)."""
    text = draw(texts)
    cuts = sorted(set(draw(st.lists(st.integers(0, len(text)), max_size=6))))
    edges = [0, *cuts, len(text)]
    return [text[start:end] for start, end in itertools.pairwise(edges)] or [""]


def _run(chunks: list[str], streamed: bool) -> tuple[Any, ...]:
    first = ScriptedResponse(text="".join(chunks), chunks=chunks)
    llm = ScriptedLLM([first, "Thought: done\nAnswer: fin"], strict=False)
    agent = ReActAgent.from_tools([FunctionTool.from_defaults(add)], llm=llm)
    if streamed:
        response = agent.stream_chat("What is 2 + 3?")
        for _ in response.response_gen:
            pass
    else:
        response = agent.chat("What is 2 + 3?")
    sources = [(s.tool_name, s.content, s.is_error) for s in response.sources]
    return (response.response, sources, [r.messages for r in llm.requests], agent.chat_history)


@pytest.mark.slow  # property test at full size
@settings(max_examples=400, deadline=None)
@given(chunked(model_texts))
def test_chat_and_stream_chat_agree_on_every_model_text(chunks):
    assert _run(chunks, streamed=True) == _run(chunks, streamed=False)


@pytest.mark.slow  # property test at full size
@settings(max_examples=400)
@given(model_texts, st.text(max_size=20))
def test_a_decision_made_on_a_prefix_holds_for_every_continuation(prefix, rest):
    decision = first_marker(prefix)

    if decision is not None:
        assert first_marker(prefix + rest) == decision


def _parsed_kind(text: str) -> str:
    try:
        step = ReActOutputParser().parse(text)
    except ValueError:
        return "error"
    return "action" if isinstance(step, ActionReasoningStep) else "answer"


@pytest.mark.slow  # property test at full size
@settings(max_examples=300)
@given(model_texts)
def test_the_parser_follows_the_first_marker(text):
    expected = {"answer": {"answer"}, "action": {"action", "error"},
                None: {"error"} if "Thought:" in text else {"answer"}}

    assert _parsed_kind(text) in expected[first_marker(text)]
