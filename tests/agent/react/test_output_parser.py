"""ReActOutputParser: what a model's text turns into (SPEC §5, parser rules)."""

import pytest

from agentkit.agent.react import (
    ActionReasoningStep,
    ReActOutputParser,
    ResponseReasoningStep,
)
from agentkit.agent.react.output_parser import IMPLICIT_THOUGHT, parse_action_input


@pytest.fixture
def parser() -> ReActOutputParser:
    return ReActOutputParser()


def action(text: str) -> ActionReasoningStep:
    step = ReActOutputParser().parse(text)
    assert isinstance(step, ActionReasoningStep)
    return step


def test_text_without_thought_or_action_is_an_implicit_answer_of_the_whole_text(parser):
    step = parser.parse("  Paris is the capital of France.\nIt is large.  ")

    assert isinstance(step, ResponseReasoningStep)
    assert step.response == "Paris is the capital of France.\nIt is large."
    assert step.thought == IMPLICIT_THOUGHT
    assert step.is_done


def test_answer_marker_without_thought_returns_only_the_text_after_it(parser):
    step = parser.parse("Answer: 42")

    assert isinstance(step, ResponseReasoningStep)
    assert step.response == "42"


def test_thought_then_answer_gives_the_thought_and_the_answer_to_the_end_of_text(parser):
    step = parser.parse("Thought: I know this.\nAnswer: It is 42.\nTruly.  \n")

    assert isinstance(step, ResponseReasoningStep)
    assert step.thought == "I know this."
    assert step.response == "It is 42.\nTruly."


def test_answer_step_remembers_that_it_was_streamed(parser):
    assert parser.parse("Thought: done\nAnswer: 1", is_streaming=True).is_streaming
    assert parser.parse("just text", is_streaming=True).is_streaming


def test_thought_action_and_input_parse_to_an_action_step(parser):
    step = parser.parse('Thought: I should add.\nAction: add\nAction Input: {"a": 2, "b": 3}')

    assert step == ActionReasoningStep(thought="I should add.", action="add",
                                       action_input={"a": 2, "b": 3})
    assert not step.is_done


def test_action_without_thought_is_still_an_action():
    step = action('Action: add\nAction Input: {"a": 1, "b": 2}')

    assert (step.action, step.action_input) == ("add", {"a": 1, "b": 2})


def test_an_action_wins_over_an_answer_after_it(parser):
    step = parser.parse('Thought: t\nAction: add\nAction Input: {"a": 1, "b": 2}\nAnswer: 3')

    assert isinstance(step, ActionReasoningStep)
    assert step.action == "add"


def test_an_answer_runs_to_the_end_of_the_text_action_marker_included(parser):
    step = parser.parse("Thought: easy\nAnswer: use the Action: menu, then 5")

    assert isinstance(step, ResponseReasoningStep)
    assert (step.thought, step.response) == ("easy", "use the Action: menu, then 5")


def test_a_preamble_before_thought_and_action_is_still_an_action(parser):
    step = parser.parse('Sure!\nThought: I add.\nAction: add\nAction Input: {"a": 1, "b": 2}')

    assert isinstance(step, ActionReasoningStep)
    assert (step.thought, step.action) == ("I add.", "add")


def test_action_name_ends_at_whitespace():
    assert action('Thought: t\nAction: add now\nAction Input: {"a": 1}').action == "add"


def test_action_name_ends_at_an_opening_parenthesis():
    assert action('Thought: t\nAction: add(a, b)\nAction Input: {"a": 1}').action == "add"


def test_action_name_loses_surrounding_backticks():
    assert action('Thought: t\nAction: `add`\nAction Input: {"a": 1}').action == "add"


def test_action_input_accepts_single_quotes():
    assert action("Thought: t\nAction: f\nAction Input: {'q': 'x'}").action_input == {"q": "x"}


def test_action_input_accepts_trailing_commas():
    step = action('Thought: t\nAction: f\nAction Input: {"a": [1, 2,], "b": 3,}')

    assert step.action_input == {"a": [1, 2], "b": 3}


def test_the_trailing_comma_repair_keeps_string_contents():
    step = action('Thought: t\nAction: f\nAction Input: {"msg": "items: [a, b,]", "n": 1,}')

    assert step.action_input == {"msg": "items: [a, b,]", "n": 1}


def test_action_input_reads_json_true_false_null():
    step = action('Thought: t\nAction: f\nAction Input: {"a": true, "b": false, "c": null}')

    assert step.action_input == {"a": True, "b": False, "c": None}


def test_action_input_reads_python_true_false_none():
    step = action('Thought: t\nAction: f\nAction Input: {"a": True, "b": False, "c": None}')

    assert step.action_input == {"a": True, "b": False, "c": None}


def test_action_input_reads_json_literals_inside_a_single_quoted_object():
    step = action("Thought: t\nAction: f\nAction Input: {'a': true, 'b': null, 'c': 'true',}")

    assert step.action_input == {"a": True, "b": None, "c": "true"}


def test_action_input_ignores_trailing_prose():
    step = action('Thought: t\nAction: f\nAction Input: {"a": 1} and then I will wait.')

    assert step.action_input == {"a": 1}


def test_action_input_ignores_a_hallucinated_observation_after_it():
    step = action('Thought: t\nAction: f\nAction Input: {"a": 1}\nObservation: {"b": 2}')

    assert step.action_input == {"a": 1}


def test_action_input_keeps_nested_objects():
    step = action('Thought: t\nAction: f\nAction Input: {"a": {"b": {"c": [1, {"d": 2}]}}}')

    assert step.action_input == {"a": {"b": {"c": [1, {"d": 2}]}}}


def test_action_input_keeps_braces_inside_strings():
    step = action('Thought: t\nAction: f\nAction Input: {"code": "if x { y } }", "b": "{"} done')

    assert step.action_input == {"code": "if x { y } }", "b": "{"}


def test_action_input_keeps_quotes_and_escapes_inside_strings():
    step = action('Thought: t\nAction: f\nAction Input: {"q": "it\'s \\"quoted\\" \\\\"}')

    assert step.action_input == {"q": "it's \"quoted\" \\"}


def test_action_input_ignores_a_block_comment():
    step = action("Thought: t\nAction: tool\nAction Input: {'a': 1 /* c */}")

    assert step.action_input == {"a": 1}


def test_action_input_ignores_line_comments():
    step = action('Thought: t\nAction: f\nAction Input: {"a": 1, // first\n "b": 2 // second\n}')

    assert step.action_input == {"a": 1, "b": 2}


def test_action_input_ignores_hash_comments():
    step = action('Thought: t\nAction: f\nAction Input: {"a": 1, # first\n "b": true}')

    assert step.action_input == {"a": 1, "b": True}


def test_comments_may_hold_quotes_and_braces():
    step = action('Thought: t\nAction: f\nAction Input: {"a": 1 /* it\'s } */, "b": 2} // {')

    assert step.action_input == {"a": 1, "b": 2}


def test_comment_markers_inside_strings_are_kept():
    step = action('Thought: t\nAction: f\nAction Input: {"url": "http://x.org/*", "c": "// #"}')

    assert step.action_input == {"url": "http://x.org/*", "c": "// #"}


def test_an_unclosed_block_comment_is_a_parse_error():
    with pytest.raises(ValueError, match="the Action Input is not a JSON object"):
        ReActOutputParser().parse('Thought: t\nAction: f\nAction Input: {"a": 1 /* open}')


def test_action_input_may_start_on_the_next_line():
    step = action('Thought: t\nAction: f\nAction Input:\n```json\n{"a": 1}\n```')

    assert step.action_input == {"a": 1}


def test_multiline_thought_is_kept_whole():
    step = action('Thought: first line\nsecond line\nAction: f\nAction Input: {}')

    assert step.thought == "first line\nsecond line"
    assert step.action_input == {}


def test_thought_without_action_or_answer_is_a_parse_error(parser):
    with pytest.raises(ValueError) as info:
        parser.parse("Thought: I am still thinking about it.")

    message = str(info.value)
    assert message.startswith("Could not parse output:")
    assert "neither an 'Action:' nor an 'Answer:'" in message
    assert "I am still thinking about it." in message


def test_action_without_action_input_is_upstreams_parse_error(parser):
    # issue 38 B7: llama-index-core 0.12.42's ReActOutputParser raises exactly this text,
    # which a workflow ReActAgent shows the model in its retry message
    with pytest.raises(ValueError) as info:
        parser.parse("Thought: t\nAction: add\n")
    assert str(info.value) == "Could not extract tool use from input text: Thought: t\nAction: add\n"


def test_action_without_a_tool_name_is_a_parse_error(parser):
    with pytest.raises(ValueError, match=r"^Could not parse output: 'Action:' is not followed "
                                         r"by a tool name"):
        parser.parse('Thought: t\nAction: \nAction Input: {"a": 1}')


def test_action_input_that_is_a_list_is_a_parse_error(parser):
    with pytest.raises(ValueError, match=r"^Could not parse output: 'Action Input:' is not "
                                         r"followed by a \{\.\.\.\} object"):
        parser.parse("Thought: t\nAction: add\nAction Input: [1, 2]")


def test_action_input_that_is_a_plain_string_is_a_parse_error(parser):
    with pytest.raises(ValueError, match=r"is not followed by a \{\.\.\.\} object"):
        parser.parse('Thought: t\nAction: search\nAction Input: "weather in Paris"')


def test_action_input_in_braces_that_is_not_an_object_is_a_parse_error(parser):
    with pytest.raises(ValueError, match=r"^Could not parse output: the Action Input is not a "
                                         r"JSON object: \{1, 2\}"):
        parser.parse("Thought: t\nAction: add\nAction Input: {1, 2}")


def test_unreadable_action_input_is_a_parse_error_quoting_it(parser):
    with pytest.raises(ValueError, match=r"the Action Input is not a JSON object: "
                                         r"\{a: = b\}"):
        parser.parse("Thought: t\nAction: add\nAction Input: {a: = b}")


def test_parse_error_quotes_the_whole_output(parser):
    text = "Thought: t\nAction: add\nAction Input: nothing"

    with pytest.raises(ValueError) as info:
        parser.parse(text)

    assert str(info.value).endswith(f"Output was:\n{text}")


def test_non_text_output_is_a_parse_error_naming_its_type(parser):
    with pytest.raises(ValueError, match=r"^Could not parse output: expected text, got NoneType"):
        parser.parse(None)  # type: ignore[arg-type]


def test_parse_action_input_converts_keys_to_strings():
    assert parse_action_input("{1: 'a'}") == {"1": "a"}


def test_parse_action_input_rejects_a_non_object():
    with pytest.raises(ValueError, match=r"^not a JSON object: \[1\]"):
        parse_action_input("[1]")


def test_format_leaves_output_unchanged(parser):
    assert parser.format("Thought: x") == "Thought: x"


def test_action_step_replays_its_input_as_json():
    # issue 38 B1, a documented departure: upstream 0.12.42 replays the Python repr
    # ("{'a': True, 'b': None}"), contradicting the JSON its own header asks the model for
    step = ActionReasoningStep(thought="t", action="f", action_input={"a": True, "b": None})

    assert step.get_content() == 'Thought: t\nAction: f\nAction Input: {"a": true, "b": null}'


def test_action_input_with_html_entity_quotes_is_read():
    step = ReActOutputParser().parse(
        'Thought: add.\nAction: add\nAction Input: {&#34;a&#34;: 2, &quot;b&quot;: 3}')
    assert step.action_input == {"a": 2, "b": 3}
