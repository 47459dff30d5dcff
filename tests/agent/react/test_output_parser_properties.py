"""Properties of ReActOutputParser: it never fails in an unexpected way, and round-trips."""

from hypothesis import given, settings
from hypothesis import strategies as st

from agentkit.agent.react import ActionReasoningStep, BaseReasoningStep, ReActOutputParser

MARKERS = ["Thought:", "Action:", "Action Input:", "Answer:", "Observation:", "{", "}", "[",
           "]", "'", '"', ",", ":", "\\", "\n", " ", "(", "true", "None", "add", "1", "x"]

marker_text = st.lists(st.one_of(st.sampled_from(MARKERS), st.text(max_size=5)),
                       max_size=30).map("".join)

json_scalars = st.one_of(st.none(), st.booleans(), st.integers(),
                         st.floats(allow_nan=False, allow_infinity=False), st.text())
json_values = st.recursive(json_scalars,
                           lambda inner: st.lists(inner, max_size=4)
                           | st.dictionaries(st.text(), inner, max_size=4),
                           max_leaves=12)
json_objects = st.dictionaries(st.text(), json_values, max_size=5)
tool_names = st.text(min_size=1, max_size=20).filter(str.isidentifier)
thoughts = st.text(max_size=40).filter(lambda t: "Action:" not in t)


def parses_or_raises_value_error(text: str) -> None:
    try:
        step = ReActOutputParser().parse(text)
    except ValueError:
        return
    assert isinstance(step, BaseReasoningStep)


@settings(max_examples=300)
@given(st.text())
def test_arbitrary_text_yields_a_step_or_a_value_error(text):
    parses_or_raises_value_error(text)


@settings(max_examples=500)
@given(marker_text)
def test_text_built_from_markers_yields_a_step_or_a_value_error(text):
    parses_or_raises_value_error(text)


@settings(max_examples=300)
@given(st.text(max_size=20), st.text(max_size=20), marker_text)
def test_any_action_input_text_yields_a_step_or_a_value_error(thought, name, tail):
    parses_or_raises_value_error(f"Thought: {thought}\nAction: {name}\nAction Input: {tail}")


@settings(max_examples=300)
@given(thoughts, tool_names, json_objects)
def test_an_action_step_parses_back_to_the_same_action_and_input(thought, name, arguments):
    step = ActionReasoningStep(thought=thought, action=name, action_input=arguments)

    parsed = ReActOutputParser().parse(step.get_content())

    assert isinstance(parsed, ActionReasoningStep)
    assert (parsed.action, parsed.action_input) == (name, arguments)
