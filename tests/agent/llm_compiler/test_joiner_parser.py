"""The LLMCompiler joiner parser: Finish/Replan, balanced answers, and unreadable outputs."""

import pytest

from agentkit.agent.llm_compiler import JoinerOutput, JoinerParseError, parse_joiner_output


def test_finish_gives_the_answer_and_the_thought():
    output = parse_joiner_output("Thought: ratio computed.\nAction: Finish(1.71)")

    assert output == JoinerOutput(thought="ratio computed.", answer="1.71", is_replan=False)


def test_replan_asks_for_a_new_plan_with_its_reason():
    # LlamaIndex looked for "Replan" inside the parentheses and finished with "need data"
    output = parse_joiner_output("Thought: not enough.\nAction: Replan(need data)")

    assert output == JoinerOutput(thought="not enough.", answer="need data", is_replan=True)


def test_the_answer_is_the_balanced_parenthesis_content():
    # LlamaIndex cut at the first ")" and answered "f(x"
    assert parse_joiner_output("Action: Finish(f(x) = 3)").answer == "f(x) = 3"


def test_text_after_the_closing_parenthesis_is_ignored():
    assert parse_joiner_output("Action: Finish(5) and that is all").answer == "5"


def test_an_answer_may_span_lines():
    output = parse_joiner_output("Thought: two parts\nAction: Finish(first line\nsecond line)")

    assert output.answer == "first line\nsecond line"


def test_the_action_name_is_case_insensitive():
    assert parse_joiner_output("Action: finish(x)").answer == "x"
    assert parse_joiner_output("Action: REPLAN(x)").is_replan


def test_the_first_action_line_decides():
    output = parse_joiner_output("Action: Finish(a)\nAction: Replan(b)")

    assert (output.answer, output.is_replan) == ("a", False)


def test_the_thought_is_the_last_one_before_the_action_and_may_span_lines():
    output = parse_joiner_output("Thought: first\nThought: second\ncontinued\nAction: Finish(x)")

    assert output.thought == "second\ncontinued"


def test_no_thought_is_an_empty_thought():
    assert parse_joiner_output("Action: Finish(x)").thought == ""


def test_an_empty_answer_is_allowed():
    assert parse_joiner_output("Action: Finish()").answer == ""


def test_no_action_line_is_an_error():
    # LlamaIndex answered with the last line
    with pytest.raises(JoinerParseError, match="has no `Action:` line") as info:
        parse_joiner_output("Thought: I think the answer is 5.\n5")

    assert info.value.line is None


def test_an_unknown_action_is_an_error_naming_the_line():
    with pytest.raises(JoinerParseError, match=r"line 2: `Action: Answer\(5\)` is neither "
                                               r"Finish\(<answer>\) nor Replan\(<reason>\)"):
        parse_joiner_output("Thought: t\nAction: Answer(5)")


def test_an_action_without_parentheses_is_an_error():
    with pytest.raises(JoinerParseError, match=r"line 1: .*Finish needs its answer in "
                                               r"parentheses"):
        parse_joiner_output("Action: Finish 5")


def test_unbalanced_parentheses_are_an_error_naming_the_line():
    with pytest.raises(JoinerParseError, match=r"line 2: .*never closed \(unbalanced "
                                               r"parentheses\)") as info:
        parse_joiner_output("Thought: t\nAction: Finish(f(x) = 3")

    assert info.value.line == 2


def test_a_joiner_parse_error_is_a_value_error():
    assert issubclass(JoinerParseError, ValueError)
