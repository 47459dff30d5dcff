"""Each bundled renderer writes its agent type's wire format: what it renders parses with that
type's own parser into the trajectory's calls and answer."""

from __future__ import annotations

from typing import Any

import pytest

from agentkit.agent.coa import parse_chain
from agentkit.agent.coa.chain import Ref as ChainRef
from agentkit.agent.llm_compiler import parse_joiner_output, parse_plan
from agentkit.agent.react import ReActOutputParser
from agentkit.agent.react.types import ActionReasoningStep, ResponseReasoningStep
from agentkit.harness._agent_types import trajectory_renderer
from agentkit.harness._families.coa import render_coa
from agentkit.harness._families.function_calling import render_tool_calls
from agentkit.harness._families.llm_compiler import render_llm_compiler
from agentkit.harness._families.react import render_react
from agentkit.llms.mock import ScriptedResponse
from agentkit.scenario._trajectory import (
    RenderContext,
    TrajectoryError,
    TrajectoryStep,
    compile_trajectory,
)
from agentkit.scenario._trajectory_run import (
    ObservedCall,
    TrajectoryDeviationError,
    TrajectoryOutputs,
)
from agentkit.tools import FunctionTool
from mocks import tools as world


def search(query: str, limit: int = 10, lang: str = "en") -> str:
    """Search the web."""
    return f"{limit} results for {query} in {lang}"


TOOLS = (FunctionTool.from_defaults(world.population), FunctionTool.from_defaults(world.add),
         FunctionTool.from_defaults(search))
STEPS = [
    {"call": "population", "args": {"city": "Paris"}, "thought": "Paris first."},
    {"parallel": [{"call": "population", "args": {"city": "Tokyo"}},
                  {"call": "population", "args": {"city": "Lima"}}]},
    {"call": "add", "args": {"b": "$2", "a": "$1"}},
    {"answer": "Together: {$4} (Lima: {$3}).", "thought": "Done."},
]
OUTPUTS = {1: 2102650, 2: 13960236, 3: 10004000, 4: 16062886}


class _Outputs:
    """Outputs as if every call had been made (``made`` limits which)."""

    def __init__(self, made: int = 4) -> None:
        self.made = made

    def value(self, number: int) -> Any:
        if number > self.made:
            raise TrajectoryDeviationError(f"call {number} not made")
        return OUTPUTS[number]

    def text(self, number: int) -> str:
        return str(self.value(number))


def _context(steps: list[dict[str, Any]] = STEPS, outputs: Any = None,
             agent_type: str = "test") -> RenderContext:
    trajectory = compile_trajectory([TrajectoryStep.model_validate(s) for s in steps], TOOLS)
    return RenderContext(agent_type=agent_type, trajectory=trajectory, tools=TOOLS,
                         outputs=outputs or _Outputs())


def _resolved(item: Any) -> Any:
    """A script item as the LLM sees it when it is called."""
    return item([], None) if callable(item) else item


# ----------------------------------------------------------------- ReAct
def test_react_renders_one_action_per_call_then_the_answer_that_its_parser_reads():
    parser = ReActOutputParser()
    steps = [parser.parse(_resolved(item)) for item in render_react(_context())]

    actions = [(s.action, s.action_input) for s in steps if isinstance(s, ActionReasoningStep)]
    assert actions == [("population", {"city": "Paris"}), ("population", {"city": "Tokyo"}),
                       ("population", {"city": "Lima"}), ("add", {"b": 13960236, "a": 2102650})]
    assert isinstance(steps[-1], ResponseReasoningStep)
    assert steps[-1].response == "Together: 16062886 (Lima: 10004000)."


def test_react_writes_the_given_thoughts_and_fills_in_the_missing_ones():
    items = render_react(_context())

    thoughts = [ReActOutputParser().parse(_resolved(i)).thought for i in items]
    assert thoughts == ["Paris first.", "I need to use population.", "I need to use population.",
                        "I need to use add.", "Done."]


def test_a_react_action_that_uses_an_output_is_rendered_when_the_llm_asks_for_it():
    items = render_react(_context(outputs=_Outputs(made=1)))

    assert isinstance(items[0], str)
    assert callable(items[3])
    with pytest.raises(TrajectoryDeviationError):
        items[3]([], None)


# ----------------------------------------------------------------- tool calls
def test_tool_calls_render_one_reply_per_step_with_a_groups_calls_together():
    items = [_resolved(i) for i in render_tool_calls(_context())]

    replies = [[(c.tool_name, c.tool_kwargs) for c in item.tool_calls] for item in items[:-1]]
    assert all(isinstance(item, ScriptedResponse) for item in items[:-1])
    assert replies == [[("population", {"city": "Paris"})],
                       [("population", {"city": "Tokyo"}), ("population", {"city": "Lima"})],
                       [("add", {"b": 13960236, "a": 2102650})]]
    assert items[-1] == "Together: 16062886 (Lima: 10004000)."


# ----------------------------------------------------------------- LLMCompiler
def test_llm_compiler_renders_one_plan_that_parse_plan_reads_with_the_dependencies():
    plan_text, _ = render_llm_compiler(_context())
    plan = parse_plan(plan_text)

    assert [(t.idx, t.tool, t.args, t.deps) for t in plan.actions] == [
        (1, "population", ("Paris",), ()), (2, "population", ("Tokyo",), ()),
        (3, "population", ("Lima",), ()), (4, "add", ("$1", "$2"), (1, 2))]
    assert (plan.join.idx, plan.join.deps) == (5, (1, 2, 3, 4))
    assert plan.actions[0].thought == "Paris first."


def test_llm_compiler_writes_positional_arguments_in_schema_order():
    plan_text, _ = render_llm_compiler(_context())

    assert "4. add($1, $2)" in plan_text.splitlines()


def test_llm_compiler_renders_the_joiners_finish_with_the_answer():
    _, joiner = render_llm_compiler(_context())
    decision = parse_joiner_output(_resolved(joiner))

    assert (decision.answer, decision.thought, decision.is_replan) == (
        "Together: 16062886 (Lima: 10004000).", "Done.", False)


def test_llm_compiler_cannot_skip_a_parameter_before_one_it_gives():
    steps = [{"call": "search", "args": {"query": "tea", "lang": "fr"}}, {"answer": "x"}]

    with pytest.raises(TrajectoryError) as info:
        render_llm_compiler(_context(steps))

    assert info.value.problems == [(("trajectory", 0, "args"), "llm_compiler plans pass "
                                    "arguments by position (query, limit, lang): give every "
                                    "parameter up to the last one you give")]


def test_llm_compiler_may_leave_out_trailing_parameters():
    steps = [{"call": "search", "args": {"query": "tea"}}, {"answer": "x"}]
    plan_text, _ = render_llm_compiler(_context(steps))

    assert parse_plan(plan_text).actions[0].args == ("tea",)


def test_llm_compiler_cannot_carry_an_answer_with_unbalanced_parentheses():
    steps = [{"answer": "a :) b"}]

    with pytest.raises(TrajectoryError) as info:
        render_llm_compiler(_context(steps))

    assert info.value.problems[0][0] == ("trajectory", 0, "answer")
    assert "unbalanced parentheses" in info.value.problems[0][1]


# ----------------------------------------------------------------- CoA
def test_coa_renders_a_chain_that_parse_chain_reads_with_placeholders():
    chain_text, _ = render_coa(_context())
    chain = parse_chain(chain_text).check()

    assert [(c.name, c.args, c.output) for c in chain.calls] == [
        ("population", ("Paris",), "y1"), ("population", ("Tokyo",), "y2"),
        ("population", ("Lima",), "y3"), ("add", (ChainRef("y1"), ChainRef("y2")), "y4")]
    assert chain.levels == ((1, 2, 3), (4,))


def test_coa_writes_keyword_arguments_when_they_are_not_the_first_parameters():
    steps = [{"call": "search", "args": {"query": "tea", "lang": "fr"}}, {"answer": "x"}]
    chain_text, _ = render_coa(_context(steps))

    assert parse_chain(chain_text).check().call(1).kwargs == {"query": "tea", "lang": "fr"}


def test_coa_renders_the_refine_reply_as_the_answer():
    _, refine = render_coa(_context())

    assert _resolved(refine) == "Together: 16062886 (Lima: 10004000)."


def test_coa_answers_directly_when_the_trajectory_makes_no_call():
    items = render_coa(_context([{"answer": "No tools needed."}]))

    assert items == ["No tools needed."]
    assert parse_chain(items[0]).calls == ()


# ----------------------------------------------------------------- what a renderer gets
def _search(args: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"call": "search", "args": args}, {"answer": "found"}]


def test_positional_arguments_are_in_schema_order():
    context = _context(_search({"lang": "fr", "query": "cats", "limit": 3}))

    assert context.positional(context.trajectory.calls[0]) == ["cats", 3, "fr"]


def test_positional_arguments_may_leave_out_trailing_parameters_only():
    trailing = _context(_search({"query": "cats"}))
    gap = _context(_search({"query": "cats", "lang": "fr"}))

    assert trailing.positional(trailing.trajectory.calls[0]) == ["cats"]
    assert gap.positional(gap.trajectory.calls[0]) is None


def test_the_answer_item_fills_in_outputs_when_the_llm_asks_for_it():
    fixed, filled = _context([{"answer": "42"}]), _context(outputs=_Outputs(made=3))

    assert fixed.answer_item() == "42"
    with pytest.raises(TrajectoryDeviationError):  # call 4 is not made yet
        filled.answer_item()([], None)


# ----------------------------------------------------------------- every bundled type
@pytest.mark.parametrize("agent_type, renderer", [
    ("react", render_react), ("react_multimodal", render_react), ("react_agent", render_react),
    ("function_calling", render_tool_calls), ("function_agent", render_tool_calls),
    ("llm_compiler", render_llm_compiler), ("coa", render_coa)])
def test_each_bundled_agent_type_has_its_formats_renderer(agent_type, renderer):
    assert trajectory_renderer(agent_type) is renderer


@pytest.mark.parametrize("renderer, replies", [(render_react, 1), (render_tool_calls, 1),
                                               (render_llm_compiler, 2), (render_coa, 1)])
def test_a_trajectory_without_calls_renders_just_the_answer(renderer, replies):
    assert len(renderer(_context([{"answer": "42"}]))) == replies


def test_a_reply_that_needs_no_output_is_rendered_at_once():
    assert all(not callable(item) for item in render_tool_calls(_context(
        [{"call": "add", "args": {"a": 1, "b": 2}}, {"answer": "3"}])))


def test_matched_outputs_feed_the_rendered_values():
    context = _context()
    outputs = TrajectoryOutputs(context.trajectory)
    for city, people in [("Paris", 2102650), ("Tokyo", 13960236)]:
        outputs.add(ObservedCall("population", {"city": city}, str(people), people))
    items = render_tool_calls(RenderContext(agent_type="function_calling",
                                            trajectory=context.trajectory, tools=TOOLS,
                                            outputs=outputs))

    assert items[2]([], None).tool_calls[0].tool_kwargs == {"b": 13960236, "a": 2102650}
