"""LangGraph under the harness, beyond what every framework shares (tests/integrations/
test_frameworks.py): the built-in type is LangChain's ``create_agent`` (what LangGraph 1.0
recommends), and a user's graph of the deprecated ``create_react_agent`` still runs."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentkit.harness._agent_types import AGENT_TYPES
from agentkit.integrations.langgraph import langgraph_agent
from agentkit.scenario import register_agent_type, run_scenario
from tests.scenario_text import adding_scenario

pytestmark = pytest.mark.frameworks

ADDS = """\
expect:
  answer: {{contains: "5"}}
  tool_calls:
    calls: [{{name: add, args: {{a: 2, b: 3}}, output: {{equals: "5"}}}}]
agents:
  {agent}:
    script:
      - tool_calls: [{{name: add, args: {{a: 2, b: 3}}}}]
      - 2 + 3 = 5
"""


@pytest.fixture(autouse=True)
def _scoped_types() -> Iterator[None]:
    with AGENT_TYPES.scoped():
        yield


def _write(tmp_path: Path, text: str, name: str = "s.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_the_built_in_type_uses_no_api_langgraph_deprecated(tmp_path):
    from langgraph.warnings import LangGraphDeprecatedSinceV10

    path = _write(tmp_path, adding_scenario("adds", ADDS.format(agent="langgraph")))

    with warnings.catch_warnings():
        warnings.simplefilter("error", LangGraphDeprecatedSinceV10)
        result = run_scenario(path, "langgraph")

    assert result.passed, result.problems
    assert [call.name for turn in result.trace.turns for step in turn.steps
            for call in step.tool_calls] == ["add"]


def test_a_users_create_react_agent_graph_still_runs(tmp_path):
    from langchain_core.tools import tool
    from langgraph.warnings import LangGraphDeprecatedSinceV10

    from mocks.tools import add

    @langgraph_agent
    def old_graph(context):
        from langgraph.prebuilt import create_react_agent
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", LangGraphDeprecatedSinceV10)
            return create_react_agent(context.model, [tool(add)], name="adder")

    register_agent_type("old_graph", old_graph)
    path = _write(tmp_path, adding_scenario("adds", ADDS.format(agent="old_graph")))

    result = run_scenario(path, "old_graph")

    assert result.passed, result.problems
    (turn,) = result.trace.turns
    assert [step.details["agent"] for step in turn.steps] == ["adder", "adder"]
    assert [call.output for step in turn.steps for call in step.tool_calls] == ["5"]


# ---- the graph's nodes in the trace: a support graph whose answers are reviewed before they
# go out, and the same graph after someone routed the answer straight to the end
def _support_graph(model, *, review: bool = True):
    from typing import Annotated

    from langchain_core.messages import AIMessage
    from langchain_core.tools import tool
    from langgraph.graph import END, START, StateGraph
    from langgraph.graph.message import add_messages
    from langgraph.prebuilt import ToolNode
    from typing_extensions import TypedDict

    from mocks.tools import add

    # not a class: this module's annotations are strings, which a local class cannot resolve
    fields = {"messages": Annotated[list, add_messages], "reviewed": bool}
    state = TypedDict("state", fields, total=False)

    tools = [tool(add)]
    bound = model.bind_tools(tools)

    async def call_model(state):
        return {"messages": [await bound.ainvoke(state["messages"])]}

    def route(state):
        last = state["messages"][-1]
        if isinstance(last, AIMessage) and last.tool_calls:
            return "tools"
        return "review" if review else END

    def check(state):
        return {"reviewed": True}

    builder = StateGraph(state)
    builder.add_node("model", call_model)
    builder.add_node("tools", ToolNode(tools))
    builder.add_node("review", check)
    builder.add_edge(START, "model")
    builder.add_conditional_edges("model", route, ["tools", "review", END])
    builder.add_edge("tools", "model")
    builder.add_edge("review", END)
    return builder.compile(name="support")


REVIEWED = [{"node": "model", "changed": ["messages"], "to": ["tools"]},
            {"node": "tools", "changed": ["messages"], "to": ["model"]},
            {"node": "model", "changed": ["messages"], "to": ["review"]},
            {"node": "review", "changed": ["reviewed"], "to": ["__end__"]}]


def _graph_types() -> None:
    register_agent_type("reviewed", langgraph_agent(lambda context: _support_graph(
        context.model)))
    register_agent_type("unreviewed", langgraph_agent(lambda context: _support_graph(
        context.model, review=False)))


def test_each_node_that_ran_is_in_the_turn_with_the_keys_it_wrote_and_the_edge_taken(tmp_path):
    _graph_types()
    path = _write(tmp_path, adding_scenario("adds", ADDS.format(agent="reviewed")))

    result = run_scenario(path, "reviewed")

    assert result.passed, result.problems
    (turn,) = result.trace.to_dict()["turns"]
    assert turn["nodes"] == REVIEWED
    assert [step["agent"] for step in turn["steps"]] == ["support", "support"]


def test_a_graph_that_skips_a_node_differs_from_the_snapshot_of_the_one_that_ran_it(tmp_path):
    from agentkit.trace import compare_with_snapshot

    _graph_types()
    right = run_scenario(_write(tmp_path, adding_scenario("adds", ADDS.format(
        agent="reviewed"))), "reviewed")
    wrong = run_scenario(_write(tmp_path, adding_scenario("adds", ADDS.format(
        agent="unreviewed"))), "unreviewed")
    assert right.passed and wrong.passed, (right.problems, wrong.problems)
    # the same model calls and tool calls: only the nodes tell them apart
    (ran,), (skipped,) = right.trace.to_dict()["turns"], wrong.trace.to_dict()["turns"]
    assert ran["steps"] == skipped["steps"]
    snapshot = tmp_path / "reviewed.json"
    snapshot.write_text(right.trace.to_json())
    ours = wrong.trace.to_dict()
    ours["agent"] = "reviewed"

    state, diff, _ = compare_with_snapshot(ours, snapshot)

    assert state == "changed"
    assert any("review" in line for line in diff), diff
    assert [(node["node"], node["to"]) for node in skipped["nodes"]] == [
        ("model", ["tools"]), ("tools", ["model"]), ("model", ["__end__"])]


def test_the_nodes_of_a_recorded_run_replay_offline(tmp_path):
    from agentkit.harness._record import cassette_miss, record_scenario
    from agentkit.llms.mock import tool_call
    from mocks.openai_server import FakeOpenAIServer

    _graph_types()
    path = _write(tmp_path, adding_scenario("recorded", """\
expect:
  answer: {contains: "5"}
agents:
  reviewed:
    recording: cassettes/recorded.reviewed.yaml
"""))
    live = FakeOpenAIServer([tool_call("add", a=2, b=3), "2 + 3 = 5"]).llm("gpt-4o-mini")

    recording = record_scenario(path, "reviewed", live, "once")

    assert recording.ok and recording.written, recording.problems
    replay = run_scenario(path, "reviewed")
    assert replay.passed and cassette_miss(replay) is None, replay.problems
    assert replay.trace.to_dict()["turns"][0]["nodes"] == REVIEWED


def test_tool_calls_run_at_once_are_nodes_of_one_superstep_going_on_to_the_same_node(tmp_path):
    path = _write(tmp_path, adding_scenario("adds-twice", """\
agents:
  langgraph:
    script:
      - tool_calls: [{name: add, args: {a: 2, b: 3}}, {name: add, args: {a: 1, b: 1}}]
      - 5 and 2
"""))

    result = run_scenario(path, "langgraph")

    assert result.passed, result.problems
    (turn,) = result.trace.to_dict()["turns"]
    # create_agent sends each call to its own `tools` task: both go on to the model
    assert [(node["node"], node["to"]) for node in turn["nodes"]] == [
        ("model", ["tools"]), ("tools", ["model"]), ("tools", ["model"]),
        ("model", ["__end__"])]


# ---- a graph compiled with a checkpointer keeps the conversation itself
TWO_TURNS = """\
format: 1
name: remembers
turns:
  - user: What is 2 + 3?
  - user: And what did I ask?
agents:
  {agent}:
    script:
      - "5"
      - You asked what 2 + 3 is.
"""


def _saved_graph(saver, *, forgetful: bool = False):
    """A graph compiled with ``saver``; ``forgetful``: it sends the model only the last
    message (a trimming bug, hidden when the conversation is resent each turn)."""
    from langgraph.graph import END, START, MessagesState, StateGraph

    def build(model):
        async def call_model(state):
            said = state["messages"][-1:] if forgetful else state["messages"]
            return {"messages": [await model.ainvoke(said)]}

        builder = StateGraph(MessagesState)
        builder.add_node("model", call_model)
        builder.add_edge(START, "model")
        builder.add_edge("model", END)
        return builder.compile(checkpointer=saver, name="keeper")

    return build


def test_a_checkpointer_carries_the_conversation_across_the_turns_of_one_thread(tmp_path):
    from langgraph.checkpoint.memory import InMemorySaver

    saver = InMemorySaver()
    register_agent_type("keeper", langgraph_agent(lambda c: _saved_graph(saver)(c.model)))
    path = _write(tmp_path, TWO_TURNS.format(agent="keeper"))

    result = run_scenario(path, "keeper")

    assert result.passed, result.problems
    (thread,) = {saved.config["configurable"]["thread_id"] for saved in saver.list(None)}
    said = [(m.type, m.content) for m in saver.get_tuple(
        {"configurable": {"thread_id": thread}}).checkpoint["channel_values"]["messages"]]
    assert said == [("human", "What is 2 + 3?"), ("ai", "5"), ("human", "And what did I ask?"),
                    ("ai", "You asked what 2 + 3 is.")]
    second = result.trace.turns[1].llm_calls[0].messages
    assert [m["content"] for m in second] == ["What is 2 + 3?", "5", "And what did I ask?"]


def test_a_graph_that_loses_its_checkpointed_history_is_seen_in_the_trace(tmp_path):
    from langgraph.checkpoint.memory import InMemorySaver

    register_agent_type("forgetful", langgraph_agent(
        lambda c: _saved_graph(InMemorySaver(), forgetful=True)(c.model)))
    path = _write(tmp_path, TWO_TURNS.format(agent="forgetful"))

    result = run_scenario(path, "forgetful")

    # the harness sends only the new message, as production does: the bug is not hidden
    second = result.trace.turns[1].llm_calls[0].messages
    assert [m["content"] for m in second] == ["And what did I ask?"]


def _approving_graph(model, saver):
    """A graph whose ``approve`` node asks a human (``interrupt()``) whether to send the
    model's answer, and says what they said (docs/integrations.md)."""
    from langgraph.graph import END, START, MessagesState, StateGraph
    from langgraph.types import interrupt

    async def call_model(state):
        return {"messages": [await model.ainvoke(state["messages"])]}

    def approve(state):
        verdict = interrupt("Send this answer?")
        return {"messages": [("ai", f"(a human said: {verdict})")]}

    builder = StateGraph(MessagesState)
    builder.add_node("model", call_model)
    builder.add_node("approve", approve)
    builder.add_edge(START, "model")
    builder.add_edge("model", "approve")
    builder.add_edge("approve", END)
    return builder.compile(checkpointer=saver)


APPROVED = """\
format: 1
name: approved
turns:
  - user: What is 2 + 3?
    human: [send it]
agents:
  {agent}:
    script:
      - "5"
"""


def test_a_node_that_interrupts_is_resumed_with_the_turns_human_answer(tmp_path):
    from langgraph.checkpoint.memory import InMemorySaver

    register_agent_type("asks", langgraph_agent(
        lambda c: _approving_graph(c.model, InMemorySaver())))
    path = _write(tmp_path, APPROVED.format(agent="asks"))

    result = run_scenario(path, "asks")

    assert result.passed, result.problems
    (turn,) = result.trace.to_dict()["turns"]
    assert turn["response"] == "(a human said: send it)"
    assert turn["human"] == [{"request": "Send this answer?", "response": "send it"}]
    assert [(node["node"], node["to"]) for node in turn["nodes"]] == [
        ("model", ["approve"]), ("approve", ["__interrupt__"]), ("approve", ["__end__"])]


def test_a_graph_without_a_checkpointer_that_interrupts_fails_saying_it_needs_one(tmp_path):
    register_agent_type("asks", langgraph_agent(lambda c: _approving_graph(c.model, None)))
    path = _write(tmp_path, APPROVED.format(agent="asks"))

    result = run_scenario(path, "asks")

    assert not result.passed
    error = result.trace.turns[0].error or ""
    assert "interrupt('Send this answer?')" in error and "checkpointer" in error, error
