"""The LLMCompiler plan parser: the wire format, references, and every kind of bad plan."""

import pytest

from agentkit.agent.llm_compiler import Plan, PlanParseError, parse_plan
from agentkit.agent.llm_compiler.plan import references, substitute

from .conftest import PLAN as EXAMPLE


def _task(plan: Plan, idx: int):
    return next(t for t in plan.tasks if t.idx == idx)


def test_the_reference_example_parses_into_tasks_with_args_and_dependencies():
    plan = parse_plan(EXAMPLE)

    assert [(t.idx, t.tool, t.args, t.deps) for t in plan.tasks] == [
        (1, "search", ("cheetah",), ()),
        (2, "search", ("greyhound",), ()),
        (3, "math", ("ratio of $1 to $2", ["$1", "$2"]), (1, 2)),
        (4, "join", (), (1, 2, 3)),
    ]


def test_a_thought_belongs_to_the_next_action():
    plan = parse_plan(EXAMPLE)

    assert [t.thought for t in plan.tasks] == [
        "look both up", None, None, "I can answer the question now."]


def test_each_task_knows_its_line_in_the_plan_text():
    assert [t.line for t in parse_plan(EXAMPLE).tasks] == [2, 3, 4, 6]


def test_braced_references_make_dependencies_too():
    plan = parse_plan('1. a("x")\n2. b("${1}!")\n3. join()')

    assert _task(plan, 2).deps == (1,)


def test_a_bare_reference_is_an_argument_of_its_own():
    plan = parse_plan('1. a(1)\n2. add($1, ${1}, 3)\n3. join()')

    assert _task(plan, 2).args == ("$1", "${1}", 3)
    assert _task(plan, 2).deps == (1,)


def test_a_dollar_inside_a_string_literal_stays_in_the_string():
    plan = parse_plan("1. a(1)\n2. b('cost: $1 (see \\'$1\\')')\n3. join()")

    assert _task(plan, 2).args == ("cost: $1 (see '$1')",)


def test_args_are_python_literals_of_any_shape():
    plan = parse_plan("1. f(1, -2.5, True, None, [1, 'a'], {'k': (1, 2)}, '''x''')\n2. join()")

    assert _task(plan, 1).args == (1, -2.5, True, None, [1, "a"], {"k": (1, 2)}, "x")


def test_a_single_list_argument_stays_one_argument():
    # LlamaIndex turned `f(["a", "b"])` into two arguments "a" and "b"
    assert _task(parse_plan('1. f(["a", "b"])\n2. join()'), 1).args == (["a", "b"],)


def test_no_arguments_are_an_empty_tuple():
    assert _task(parse_plan("1. now()\n2. join()"), 1).args == ()


def test_a_parenthesis_inside_a_string_argument_is_kept():
    assert _task(parse_plan('1. f("a) (b")\n2. join()'), 1).args == ("a) (b",)


def test_prose_and_code_fences_around_the_plan_are_ignored():
    plan = parse_plan('Here is my plan:\n```\n1. f(1)\n\n2. join()\n```\n<END_OF_PLAN>')

    assert [t.tool for t in plan.tasks] == ["f", "join"]


def test_ids_may_skip_numbers_as_long_as_they_increase():
    plan = parse_plan('1. f(1)\n5. g("$1")\n9. join()')

    assert [t.idx for t in plan.tasks] == [1, 5, 9]
    assert plan.join.deps == (1, 5)


def test_a_plan_of_join_alone_has_no_actions():
    plan = parse_plan("Thought: nothing to look up\n1. join()<END_OF_PLAN>")

    assert plan.actions == ()
    assert plan.join.thought == "nothing to look up"


def test_actions_after_join_are_ignored_with_a_note_naming_their_line():
    plan = parse_plan('1. f(1)\n2. join()<END_OF_PLAN>\n3. g(2)')

    assert [t.tool for t in plan.tasks] == ["f", "join"]
    assert plan.notes == ("line 3: `3. g(2)` comes after join() and was ignored",)


def test_arguments_given_to_join_are_ignored_with_a_note():
    plan = parse_plan('1. f(1)\n2. join("$1")')

    assert plan.join.args == ()
    assert plan.notes == ('line 2: the arguments of join() `"$1"` were ignored',)


# ----------------------------------------------------------------- whole-plan errors
@pytest.mark.parametrize("text", ["", "   \n\n", "I cannot make a plan for that."])
def test_a_plan_without_actions_is_an_error(text):
    with pytest.raises(PlanParseError, match="the plan has no actions"):
        parse_plan(text)


def test_a_plan_without_join_is_an_error_naming_its_last_action():
    with pytest.raises(PlanParseError, match=r"no join\(\) \(its last action is on line 2\)") as info:
        parse_plan('1. f(1)\n2. g(2)')

    assert info.value.line == 2


def test_a_numbered_line_that_is_not_an_action_is_an_error_naming_the_line():
    with pytest.raises(PlanParseError, match=r"line 2: `2\. look up the weather` is not an action"):
        parse_plan('1. f(1)\n2. look up the weather\n3. join()')


def test_a_comment_after_an_action_is_an_error():
    with pytest.raises(PlanParseError, match=r"line 1: .* is not an action"):
        parse_plan('1. f(1)  # first\n2. join()')


def test_ids_that_do_not_increase_are_an_error_naming_the_line():
    with pytest.raises(PlanParseError, match="line 3: task id 2 does not follow 2") as info:
        parse_plan('1. f(1)\n2. g(1)\n2. h(1)\n3. join()')

    assert info.value.line == 3


def test_a_plan_parse_error_is_a_value_error():
    assert issubclass(PlanParseError, ValueError)


# ----------------------------------------------------------------- task errors
def test_a_non_literal_argument_is_the_tasks_error_naming_task_line_and_argument():
    plan = parse_plan('1. search(Austin Powers)\n2. join()')

    assert _task(plan, 1).error.startswith(
        "task 1 (line 1): its arguments `Austin Powers` are not Python literals (invalid syntax")
    assert _task(plan, 1).error.endswith('quote text ("...") and refer to a result as $N')


def test_a_name_as_argument_is_not_a_literal():
    plan = parse_plan('1. f(1, os.system)\n2. join()')

    assert _task(plan, 1).error.startswith(
        "task 1 (line 1): argument 2 `os.system` is not a Python literal")


def test_a_keyword_argument_is_the_tasks_error():
    plan = parse_plan('1. weather(city="Paris")\n2. join()')

    assert _task(plan, 1).error == ("task 1 (line 1): keyword argument `city=`: write the "
                                    "arguments positionally, in the documented order")


def test_a_reference_to_a_missing_task_is_the_tasks_error():
    plan = parse_plan('1. f(1)\n2. g("$7")\n3. join()')

    assert _task(plan, 2).error == "task 2 (line 2): uses $7, but the plan has no task 7"
    assert _task(plan, 1).error is None


def test_a_forward_reference_is_the_tasks_error():
    plan = parse_plan('1. f("$2")\n2. g(1)\n3. join()')

    assert _task(plan, 1).error == ("task 1 (line 1): uses $2, but task 2 comes after it "
                                    "(line 2); a task can only use the results of tasks "
                                    "before it")


def test_a_cycle_is_named_as_one():
    plan = parse_plan('1. f("$2")\n2. g("$1")\n3. join()')

    assert _task(plan, 1).error == ("task 1 (line 1): uses $2 (line 2), which needs this "
                                    "task's result: a cycle ($1 -> $2 -> $1)")


def test_a_task_referring_to_itself_is_a_cycle():
    plan = parse_plan('1. f("$1")\n2. join()')

    assert _task(plan, 1).error == "task 1 (line 1): uses $1, its own result (a cycle)"


def test_a_task_with_an_error_keeps_only_its_valid_dependencies():
    plan = parse_plan('1. f(1)\n2. g("$1", "$9")\n3. join()')

    assert _task(plan, 2).deps == (1,)


# ----------------------------------------------------------------- references
def test_references_are_found_in_nested_strings_but_not_dict_keys():
    assert sorted(references(("$1", ["a $2", {"$3": "${4}"}], 5))) == [1, 2, 4]


def test_substitute_puts_the_output_object_where_a_whole_reference_stands():
    outputs = {1: [1, 2], 2: "70"}

    value = substitute(("$1", ["${2}", "ratio $1/$2"], {"k": " $2 "}),
                       whole=outputs.__getitem__, text=lambda n: str(outputs[n]))

    assert value == ([1, 2], ["70", "ratio [1, 2]/70"], {"k": "70"})


def test_substitute_never_evaluates_an_output():
    # LlamaIndex put outputs into the argument text and ran literal_eval on it again
    value = substitute(("$1",), whole=lambda n: "'), __import__('os'", text=str)

    assert value == ("'), __import__('os'",)
