"""Properties of the LLMCompiler parsers: any text gives a parsed structure or the documented
error naming what and where, never another exception; valid plans and joiner outputs
round-trip."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentkit.agent.llm_compiler import (
    JoinerOutput,
    JoinerParseError,
    Plan,
    PlanParseError,
    parse_joiner_output,
    parse_plan,
)

PLAN_MARKERS = ["Thought:", "1. ", "2. ", "3.", "10. ", "join()", "join(", "<END_OF_PLAN>",
                "search(", "f(", ")", "(", "$1", "${2}", "$", "{", "}", "[", "]", '"', "'",
                ",", "=", "#", "\n", " ", "\\", "x", "0", "'''", "*", "lambda"]
JOINER_MARKERS = ["Thought:", "Action:", "Finish", "finish", "Replan", "REPLAN", "(", ")",
                  "\n", " ", "x", ":", "Action: Finish(", "Action: Replan("]


def _marker_text(markers):
    return st.lists(st.one_of(st.sampled_from(markers), st.text(max_size=4)),
                    max_size=40).map("".join)


plan_texts = st.one_of(st.text(), _marker_text(PLAN_MARKERS))
joiner_texts = st.one_of(st.text(), _marker_text(JOINER_MARKERS))


def _check_plan(plan: Plan, text: str) -> None:
    lines = len(text.splitlines())
    assert plan.tasks and plan.join.is_join
    ids = [t.idx for t in plan.tasks]
    assert ids == sorted(set(ids))
    assert plan.join.deps == tuple(ids[:-1])
    for task in plan.tasks:
        assert 1 <= task.line <= lines
        assert all(dep in ids and dep < task.idx for dep in task.deps)
        if task.error is not None:
            assert task.error.startswith(f"task {task.idx} (line {task.line}): ")


@pytest.mark.slow  # property test at full size
@settings(max_examples=1000)
@given(plan_texts)
def test_any_text_is_a_plan_or_a_plan_parse_error_naming_where(text):
    try:
        plan = parse_plan(text)
    except PlanParseError as exc:
        assert str(exc)
        if exc.line is not None:
            assert str(exc).startswith(f"line {exc.line}: ") or f"line {exc.line}" in str(exc)
            assert 1 <= exc.line <= len(text.splitlines())
        return
    _check_plan(plan, text)


@pytest.mark.slow  # property test at full size
@settings(max_examples=500)
@given(st.lists(st.text(max_size=30), max_size=6))
def test_any_argument_text_in_an_action_is_parsed_or_is_the_tasks_error(arguments):
    text = "".join(f"{n}. f({a.splitlines()[0] if a.splitlines() else ''})\n"
                   for n, a in enumerate(arguments, 1)) + f"{len(arguments) + 1}. join()"
    try:
        plan = parse_plan(text)
    except PlanParseError as exc:  # e.g. an argument text ending the line early
        assert str(exc).startswith("line ")
        return
    _check_plan(plan, text)


scalars = st.one_of(st.none(), st.booleans(), st.integers(),
                    st.floats(allow_nan=False, allow_infinity=False),
                    st.text(max_size=8).filter(lambda s: "$" not in s))
literals = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3)
                        | st.tuples(inner, inner)
                        | st.dictionaries(st.text(max_size=4), inner, max_size=3),
                        max_leaves=8)
tool_names = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,10}", fullmatch=True).filter(
    lambda name: name != "join")
thoughts = st.text(st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")),
                   max_size=30).map(str.strip).filter(lambda t: "<END_OF_PLAN>" not in t)


@st.composite
def plans(draw):
    """(text, expected tasks) of a valid plan: literal args and references to earlier tasks."""
    count = draw(st.integers(0, 6))
    lines, expected = [], []
    for idx in range(1, count + 1):
        refs = draw(st.lists(st.integers(1, idx - 1), max_size=2)) if idx > 1 else []
        args = draw(st.lists(literals, max_size=3)) + [f"${ref}" for ref in refs]
        args = draw(st.permutations(args))
        thought = draw(thoughts)
        if thought:
            lines.append(f"Thought: {thought}")
        name = draw(tool_names)
        lines.append(f"{idx}. {name}({', '.join(repr(a) for a in args)})")
        expected.append((idx, name, tuple(args), tuple(sorted(set(refs))), thought or None))
    lines.append(f"{count + 1}. join()<END_OF_PLAN>")
    return "\n".join(lines), expected


@pytest.mark.slow  # property test at full size
@settings(max_examples=300)
@given(plans())
def test_a_valid_plan_parses_back_to_its_tasks(plan_and_tasks):
    text, expected = plan_and_tasks

    plan = parse_plan(text)

    assert [(t.idx, t.tool, t.args, t.deps, t.thought) for t in plan.actions] == expected
    assert all(t.error is None for t in plan.tasks)


@pytest.mark.slow  # property test at full size
@settings(max_examples=1000)
@given(joiner_texts)
def test_any_text_is_a_joiner_output_or_a_joiner_parse_error_naming_the_line(text):
    try:
        output = parse_joiner_output(text)
    except JoinerParseError as exc:
        assert str(exc)
        if exc.line is not None:
            assert str(exc).startswith(f"line {exc.line}: ")
            assert text.split("\n")[exc.line - 1].lstrip(" \t").startswith("Action:")
        return
    assert isinstance(output, JoinerOutput)
    assert output.answer == output.answer.strip()


flat = st.text(st.characters(blacklist_characters="()", blacklist_categories=("Cs",)),
               max_size=10)
balanced = st.recursive(flat, lambda inner: st.tuples(inner, inner, inner).map(
    lambda parts: f"{parts[0]}({parts[1]}){parts[2]}"), max_leaves=6)
one_line = st.text(st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")),
                   max_size=20).filter(lambda t: "Action:" not in t)


@pytest.mark.slow  # property test at full size
@settings(max_examples=500)
@given(one_line, st.sampled_from(["Finish", "Replan", "finish"]), balanced)
def test_a_joiner_output_parses_back_to_its_thought_and_balanced_content(thought, action, content):
    output = parse_joiner_output(f"Thought: {thought}\nAction: {action}({content})")

    assert output == JoinerOutput(thought=thought.strip(), answer=content.strip(),
                                  is_replan=action == "Replan")


@pytest.mark.slow  # a property test at full size
@settings(max_examples=300)
@given(st.integers(1, 5), flat, st.integers(0, 3))
def test_an_unclosed_parenthesis_is_an_error_naming_the_action_line(extra, content, before):
    text = "\n" * before + f"Action: Finish({'(' * extra}{content}"

    try:
        parse_joiner_output(text)
    except JoinerParseError as exc:
        assert exc.line == before + 1
        assert "never closed" in str(exc)
    else:
        raise AssertionError("an unbalanced answer was accepted")
