"""Properties of ReActOutputParser: it never fails in an unexpected way, and round-trips."""

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentkit.agent.react import ActionReasoningStep, BaseReasoningStep, ReActOutputParser
from agentkit.agent.react.output_parser import _outermost_braces, parse_action_input

MARKERS = ["Thought:", "Action:", "Action Input:", "Answer:", "Observation:", "{", "}", "[",
           "]", "'", '"', ",", ":", "\\", "\n", " ", "(", "true", "None", "add", "1", "x", "//",
           "/*", "*/", "#"]

marker_text = st.lists(st.one_of(st.sampled_from(MARKERS), st.text(max_size=5)),
                       max_size=30).map("".join)
any_text = st.one_of(st.text(), marker_text)

json_scalars = st.one_of(st.none(), st.booleans(), st.integers(),
                         st.floats(allow_nan=False, allow_infinity=False), st.text())
json_values = st.recursive(json_scalars,
                           lambda inner: st.lists(inner, max_size=4)
                           | st.dictionaries(st.text(), inner, max_size=4),
                           max_leaves=12)
json_objects = st.dictionaries(st.text(), json_values, max_size=5)
tool_names = st.text(min_size=1, max_size=20).filter(str.isidentifier)
# a thought holding a decision marker would be read as that decision
thoughts = st.text(max_size=40).filter(lambda t: "Action:" not in t and "Answer:" not in t)


def parses_or_could_not_parse(text: str) -> BaseReasoningStep | None:
    """The parsed step, or None after a documented error (``Could not parse output: ...``,
    or upstream's ``Could not extract tool use from input text: ...``)."""
    try:
        step = ReActOutputParser().parse(text)
    except ValueError as exc:
        assert str(exc).startswith(("Could not parse output: ",
                                    "Could not extract tool use from input text: "))
        return None
    assert isinstance(step, BaseReasoningStep)
    return step


@pytest.mark.slow  # property test at full size
@settings(max_examples=800)
@given(any_text)
def test_any_text_yields_a_step_or_could_not_parse_output(text):
    parses_or_could_not_parse(text)


@pytest.mark.slow  # property test at full size
@settings(max_examples=800)
@given(any_text)
def test_any_action_input_is_a_dict_or_could_not_parse_output(text):
    step = parses_or_could_not_parse(f"Thought: t\nAction: add\nAction Input: {text}")

    if step is not None:
        assert isinstance(step, ActionReasoningStep)
        assert isinstance(step.action_input, dict)


@pytest.mark.slow  # property test at full size
@settings(max_examples=300)
@given(thoughts, tool_names, json_objects)
def test_an_action_step_parses_back_to_the_same_action_and_input(thought, name, arguments):
    step = ActionReasoningStep(thought=thought, action=name, action_input=arguments)

    parsed = ReActOutputParser().parse(step.get_content())

    assert isinstance(parsed, ActionReasoningStep)
    assert (parsed.action, parsed.action_input) == (name, arguments)


repair_bait = st.text(alphabet=",]}[{ \"'ab:\\", max_size=12)
flat_objects = st.dictionaries(st.text(max_size=5), st.one_of(repair_bait, st.integers()),
                               min_size=1, max_size=4)


@pytest.mark.slow  # property test at full size
@settings(max_examples=300)
@given(flat_objects)
def test_trailing_comma_repair_never_touches_string_contents(arguments):
    with_trailing_comma = json.dumps(arguments)[:-1] + ",}"

    assert parse_action_input(with_trailing_comma) == arguments


comment_bodies = st.text(alphabet="{}[]\"',:/*# ab", max_size=8)
comment_bait = st.text(alphabet="/*#{}\"' ab", max_size=10)
commented_objects = st.dictionaries(st.text(max_size=5), st.one_of(comment_bait, st.integers()),
                                    min_size=1, max_size=4)


@pytest.mark.slow  # property test at full size
@settings(max_examples=300)
@given(commented_objects, comment_bodies)
def test_comments_between_tokens_are_ignored_and_string_contents_kept(arguments, body):
    inner = body
    while "*/" in inner:  # one pass can leave a new `*/` (`**//` -> `*/`)
        inner = inner.replace("*/", "")
    block = "/* " + inner + " */"
    line = "// " + body + "\n"
    members = [f"{block} {json.dumps(key)}: {line}{json.dumps(value)} {block}"
               for key, value in arguments.items()]

    assert parse_action_input("{" + f", {line}".join(members) + "}") == arguments



@pytest.mark.slow  # property test at full size
@settings(max_examples=300)
@given(json_objects, any_text)
def test_a_json_action_input_reads_as_the_lenient_reader_reads_its_outermost_braces(arguments,
                                                                                  after):
    written = f"{json.dumps(arguments)}{after}"

    step = ReActOutputParser().parse(f"Thought: t\nAction: add\nAction Input: {written}")

    assert isinstance(step, ActionReasoningStep)
    assert step.action_input == parse_action_input(_outermost_braces(written)) == arguments
