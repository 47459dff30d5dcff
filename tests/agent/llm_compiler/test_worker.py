"""LLMCompilerAgentWorker: planner and joiner calls, replans, errors as observations, memory,
chat modes, events (SPEC section 7 and its Fixes)."""

import asyncio

import pytest

from agentkit.agent.llm_compiler import (
    JoinerDecisionEvent,
    LLMCompilerAgentWorker,
    PlanEvent,
    PlanTaskEvent,
)
from agentkit.core.sim import UnmodelledLatencyWarning, run_sync
from agentkit.instrumentation import ToolCallEndEvent, collect_events
from agentkit.llms.mock import ScriptedLLM
from agentkit.llms.prompts import PromptTemplate
from agentkit.llms.types import LLMMetadata, MessageRole
from agentkit.tools import FunctionTool, KeywordObjectRetriever

from .conftest import FINISH, PLAN, TOOLS

REPLAN = "Thought: something is missing.\nAction: Replan(need the falcon too)"


def _contents(messages):
    return [(m.role, m.content) for m in messages]


def test_a_plan_runs_and_the_joiner_answers_in_every_chat_mode(make_agent, ask):
    agent, llm = make_agent([PLAN, FINISH])

    response = ask(agent, "ratio of cheetah to greyhound?")

    assert str(response) == "1.71"
    assert llm.calls == 2
    assert [s.content for s in response.sources] == ["120", "70", "ratio of 120 to 70 = 1.71"]


def test_the_stream_hands_out_the_final_answer_as_one_chunk(make_agent):
    agent, _ = make_agent([PLAN, FINISH])

    stream = agent.stream_chat("ratio?")

    assert list(stream.response_gen) == ["1.71"]


def test_the_planner_gets_the_tools_and_join_as_numbered_actions_and_the_question(make_agent):
    agent, llm = make_agent([PLAN, FINISH])

    agent.chat("ratio?")

    system, user = llm.requests[0].messages
    assert (system.role, user.role) == (MessageRole.SYSTEM, MessageRole.USER)
    assert user.content == "Question: ratio?"
    assert "from the following 4 types:\n1. Tool Name: search\n" in system.content
    assert "\n3. Tool Name: explode\n" in system.content
    assert "\n4. join():\n" in system.content
    assert "Guidelines:" in system.content and "<END_OF_PLAN>" in system.content
    assert "Previous Plan" not in system.content


def test_the_joiner_is_one_user_message_with_the_question_and_each_tasks_observation(make_agent):
    agent, llm = make_agent([PLAN, FINISH])

    agent.chat("ratio?")

    (message,) = llm.requests[1].messages
    assert message.role == MessageRole.USER
    assert message.content.endswith(
        "Question: ratio?\n\nThought: look both up\nsearch('cheetah')\nObservation: 120\n"
        "search('greyhound')\nObservation: 70\n"
        "math('ratio of 120 to 70', [120, 70])\nObservation: ratio of 120 to 70 = 1.71\n")
    assert "Finish(" in message.content and "Replan(" in message.content


class CompletionLLM(ScriptedLLM):
    """A scripted model that is not a chat model."""

    @property
    def metadata(self) -> LLMMetadata:
        return LLMMetadata(model_name="completion", is_chat_model=False)


def test_the_joiner_of_a_non_chat_model_is_a_completion_call():
    llm = CompletionLLM([PLAN, FINISH])
    agent = LLMCompilerAgentWorker.from_tools(TOOLS, llm=llm).as_agent()

    assert str(agent.chat("ratio?")) == "1.71"
    assert [r.kind for r in llm.requests] == ["chat", "complete"]
    assert llm.requests[1].prompt.startswith("Answer a question from the results of a plan")


def test_a_whole_reference_gets_the_output_object_and_a_partial_one_its_text(make_agent):
    agent, _ = make_agent([PLAN, FINISH])

    with collect_events() as events:
        agent.chat("ratio?")

    math_call = next(e for e in events if isinstance(e, ToolCallEndEvent)
                     and e.tool_name == "math")
    assert math_call.arguments == {"problem": "ratio of 120 to 70", "values": [120, 70]}


def test_an_output_that_looks_like_code_is_passed_on_as_text_never_evaluated(make_agent):
    def echo(text: str) -> str:
        """Echo."""
        return text

    plan = "1. echo(\"'), __import__('os'\")\n2. echo($1)\n3. join()"
    agent, _ = make_agent([plan, FINISH], tools=[FunctionTool.from_defaults(echo)])

    response = agent.chat("q")

    assert [s.content for s in response.sources] == ["'), __import__('os'"] * 2


def test_an_unknown_tool_is_an_error_observation_and_its_dependents_do_not_run(make_agent):
    plan = '1. teleport("Mars")\n2. search("cheetah")\n3. math("x", ["$1", "$2"])\n4. join()'
    agent, llm = make_agent([plan, FINISH])

    response = agent.chat("q")

    assert [(s.content, s.is_error) for s in response.sources] == [
        ("Error: No such tool named `teleport`.", True), ("120", False),
        ("Error: not run: its input $1 (teleport) failed", True)]
    assert "teleport('Mars')\nObservation: Error: No such tool named `teleport`." in (
        llm.requests[1].messages[0].content)


def test_a_raising_tool_is_an_error_observation_and_its_dependent_gets_one_instead_of_running(
        make_agent):
    plan = ('1. explode("boom")\n2. search("cheetah")\n3. search($1)\n'
            '4. math("r", ["$1", "$2"])\n5. join()')
    agent, _ = make_agent([plan, FINISH])

    response = agent.chat("q")

    assert [(s.content, s.is_error) for s in response.sources] == [
        ("Error: boom", True), ("120", False),
        ("Error: not run: its input $1 (explode) failed", True),
        ("Error: not run: its input $1 (explode) failed", True)]


def test_a_task_whose_inputs_failed_says_which_ones(make_agent):
    plan = '1. explode("a")\n2. explode("b")\n3. math("r", ["$1", "$2"])\n4. join()'
    agent, _ = make_agent([plan, FINISH])

    response = agent.chat("q")

    assert response.sources[2].content == (
        "Error: not run: its inputs $1 (explode) and $2 (explode) failed")


def test_a_task_with_bad_arguments_is_an_error_observation_naming_task_and_line(make_agent):
    plan = '1. search(cheetah)\n2. join()'
    agent, _ = make_agent([plan, FINISH])

    with collect_events() as events:
        response = agent.chat("q")

    assert response.sources[0].is_error
    assert response.sources[0].content.startswith(
        "Error: task 1 (line 1): argument 1 `cheetah` is not a Python literal")
    assert [e.tool_name for e in events if isinstance(e, ToolCallEndEvent)] == ["search"]


def test_too_many_arguments_are_an_error_observation(make_agent):
    agent, _ = make_agent(['1. search("a", "b")\n2. join()', FINISH])

    response = agent.chat("q")

    assert response.sources[0].content == (
        "Error: search() takes 1 argument(s) (animal) but 2 were given")


def test_memory_keeps_the_user_message_and_the_answer_text(make_agent):
    agent, _ = make_agent([PLAN, FINISH, PLAN, "Action: Finish(again 1.71)"])

    agent.chat("ratio?")
    agent.chat("and again?")

    assert _contents(agent.chat_history) == [
        (MessageRole.USER, "ratio?"), (MessageRole.ASSISTANT, "1.71"),
        (MessageRole.USER, "and again?"), (MessageRole.ASSISTANT, "again 1.71")]


def test_replan_runs_a_new_plan_that_sees_the_previous_round(make_agent):
    second = '1. search("greyhound")\n2. join()<END_OF_PLAN>'
    agent, llm = make_agent([PLAN, REPLAN, second, "Action: Finish(done)"])

    response = agent.chat("ratio?")

    assert str(response) == "done"
    assert llm.calls == 4
    system, user = llm.requests[2].messages
    assert "Previous Plan" in system.content
    assert user.content == (
        "Question: ratio?\nPrevious Plan:\n\n"
        "Thought: look both up\n1. search('cheetah')\nObservation: 120\n\n"
        "2. search('greyhound')\nObservation: 70\n\n"
        "3. math('ratio of 120 to 70', [120, 70])\nObservation: ratio of 120 to 70 = 1.71\n\n"
        "Thought: something is missing.\nAction: Replan(need the falcon too)\n\n"
        "Current Plan:\n\n\n")


def test_each_round_is_one_step_and_sources_gather_every_round(make_agent):
    agent, _ = make_agent([PLAN, REPLAN, '1. search("cheetah")\n2. join()', FINISH])
    task = agent.create_task("ratio?")

    first = agent.run_step(task.task_id)
    second = agent.run_step(task.task_id)

    assert (first.is_last, str(first.output)) == (False, "need the falcon too")
    assert second.is_last
    assert len(agent.finalize_response(task.task_id).sources) == 4


def test_every_later_round_lists_all_earlier_rounds(make_agent):
    join_only = "1. join()"
    agent, llm = make_agent([join_only, REPLAN, join_only, REPLAN, join_only, FINISH])

    agent.chat("q")

    assert llm.requests[4].messages[1].content.count("Previous Plan:") == 2


@pytest.mark.parametrize("max_replans", [0, 1, 3])
def test_max_replans_n_allows_n_plus_1_rounds_and_the_last_output_is_final(make_agent,
                                                                           max_replans):
    script = ["1. join()", REPLAN] * (max_replans + 1)
    agent, llm = make_agent(script, max_replans=max_replans)

    response = agent.chat("q")

    assert llm.calls == 2 * (max_replans + 1)
    assert str(response) == "need the falcon too"
    assert _contents(agent.chat_history)[-1] == (MessageRole.ASSISTANT, "need the falcon too")


def test_the_default_is_three_replans():
    worker = LLMCompilerAgentWorker(TOOLS, llm=ScriptedLLM([]))

    assert worker.max_replans == 3


def test_max_replans_must_not_be_negative():
    with pytest.raises(ValueError, match="max_replans must be an integer >= 0, got -1"):
        LLMCompilerAgentWorker(TOOLS, llm=ScriptedLLM([]), max_replans=-1)


def test_a_plan_that_cannot_be_parsed_replans_with_the_error_as_context(make_agent):
    agent, llm = make_agent(["I would search for it.", "1. join()", FINISH])

    response = agent.chat("q")

    assert str(response) == "1.71"
    user = llm.requests[1].messages[1].content
    assert user.startswith("Question: q\nPrevious Plan:\n\nI would search for it.\n\n"
                           "Thought: This plan could not be run: the plan has no actions")


def test_a_plan_that_cannot_be_parsed_in_the_last_round_answers_with_the_error(make_agent):
    agent, llm = make_agent(["1. search('cheetah')"], max_replans=0)

    response = agent.chat("q")

    assert str(response) == ("Error: the plan could not be used: the plan has no join() (its "
                             "last action is on line 1): a plan must end with `N. join()`; "
                             "was it cut off?")
    assert llm.calls == 1
    assert agent.chat_history[-1].content == str(response)


def test_an_unreadable_joiner_output_replans(make_agent):
    agent, llm = make_agent(["1. join()", "I think it is 5", "1. join()", FINISH])

    assert str(agent.chat("q")) == "1.71"
    assert "the joiner's answer could not be read: the joiner's output has no `Action:` line" in (
        llm.requests[2].messages[1].content)


def test_an_unreadable_joiner_output_in_the_last_round_is_the_answer(make_agent):
    agent, _ = make_agent(["1. join()", "  It is 5 (probably  "], max_replans=0)

    assert str(agent.chat("q")) == "It is 5 (probably"


def test_zero_tools_work_with_a_plan_of_join_alone(make_agent):
    agent, llm = make_agent(["Thought: nothing to call\n1. join()<END_OF_PLAN>",
                             "Thought: I know it.\nAction: Finish(42)"], tools=[])

    assert str(agent.chat("q")) == "42"
    assert "following 1 types:\n1. join():" in llm.requests[0].messages[0].content
    assert llm.requests[1].messages[0].content.endswith("Question: q\n\n\n")


def test_actions_after_join_are_not_run_and_a_note_says_so(make_agent):
    plan = '1. search("cheetah")\n2. join()<END_OF_PLAN>\n3. search("greyhound")'
    agent, _ = make_agent([plan, FINISH])

    with collect_events() as events:
        response = agent.chat("q")

    assert [s.content for s in response.sources] == ["120"]
    (plan_event,) = [e for e in events if isinstance(e, PlanEvent)]
    assert plan_event.notes == [
        'line 3: `3. search("greyhound")` comes after join() and was ignored']


def test_run_step_works_inside_a_running_event_loop(make_agent):
    agent, _ = make_agent([PLAN, FINISH])

    async def inside_a_loop():
        task = agent.create_task("ratio?")
        output = agent.run_step(task.task_id)
        return output, agent.finalize_response(task.task_id)

    output, response = run_sync(inside_a_loop())

    assert output.is_last and str(response) == "1.71"


def test_the_worker_runs_a_step_in_an_asyncio_run_loop(make_agent):
    agent, _ = make_agent([PLAN, FINISH])

    async def main():
        return await agent.achat("ratio?")

    with pytest.warns(UnmodelledLatencyWarning):  # its latency cannot overlap there
        assert str(asyncio.run(main())) == "1.71"


def test_stop_sequences_go_to_the_planner_call(make_agent):
    agent, llm = make_agent([PLAN, FINISH], stop=["<END_OF_PLAN>"])

    agent.chat("q")

    assert llm.requests[0].kwargs == {"stop": ["<END_OF_PLAN>"]}
    assert llm.requests[1].kwargs == {}


def test_the_planner_example_can_be_replaced_or_left_out(make_agent):
    agent, llm = make_agent(["1. join()", FINISH],
                            planner_example="Question: mine\n1. join()<END_OF_PLAN>")
    agent.chat("q")
    bare, bare_llm = make_agent(["1. join()", FINISH], planner_example="")
    bare.chat("q")

    assert llm.requests[0].messages[0].content.endswith("Question: mine\n1. join()<END_OF_PLAN>\n")
    assert "Examples of plans" not in bare_llm.requests[0].messages[0].content


def test_the_joiner_prompt_can_be_replaced(make_agent):
    agent, llm = make_agent(["1. join()", FINISH])
    agent.agent_worker.update_prompts({"joiner_prompt": "Q={query_str} C={context_str}"})

    agent.chat("q")

    assert llm.requests[1].messages[0].content == "Q=q C="
    assert agent.agent_worker.get_prompts() == {
        "joiner_prompt": PromptTemplate("Q={query_str} C={context_str}")}


def test_a_tool_retriever_picks_the_tools_the_planner_is_offered():
    llm = ScriptedLLM(["1. join()", FINISH])
    worker = LLMCompilerAgentWorker.from_tools(
        tool_retriever=KeywordObjectRetriever(TOOLS, top_k=1), llm=llm)

    worker.as_agent().chat("what is the top speed of a cheetah")

    system = llm.requests[0].messages[0].content
    assert "Tool Name: search" in system and "Tool Name: math" not in system


def test_a_tool_named_join_is_refused():
    join = FunctionTool.from_defaults(lambda: None, name="join", description="d")

    with pytest.raises(ValueError, match="a tool is named `join`"):
        LLMCompilerAgentWorker.from_tools([join], llm=ScriptedLLM([]))


def test_from_tools_refuses_unknown_options():
    with pytest.raises(TypeError, match=r"unexpected arguments: \['max_iterations'\]"):
        LLMCompilerAgentWorker.from_tools(TOOLS, llm=ScriptedLLM([]), max_iterations=3)


def test_an_llm_is_required():
    with pytest.raises(ValueError, match="needs an `llm`"):
        LLMCompilerAgentWorker.from_tools(TOOLS)


def test_verbose_prints_the_plan_and_the_decision(make_agent, capsys):
    agent, _ = make_agent([PLAN, FINISH], verbose=True)

    agent.chat("q")

    printed = capsys.readouterr().out
    assert "> Plan: Thought: look both up" in printed
    assert "> Thought: ratio computed.\n> Answer: 1.71" in printed


# ----------------------------------------------------------------- events
def test_the_plan_event_carries_the_tasks_and_their_call_ids(make_agent):
    agent, _ = make_agent([PLAN, FINISH])

    with collect_events() as events:
        agent.chat("q")

    (plan,) = [e for e in events if isinstance(e, PlanEvent)]
    calls = [e.tool_id for e in events if isinstance(e, ToolCallEndEvent)]
    assert [t.tool for t in plan.tasks] == ["search", "search", "math", "join"]
    assert sorted(plan.call_ids.values()) == sorted(calls)
    assert (plan.round, plan.error) == (1, None)


def test_a_plan_event_carries_the_parse_error(make_agent):
    agent, _ = make_agent(["no plan"], max_replans=0)

    with collect_events() as events:
        agent.chat("q")

    (plan,) = [e for e in events if isinstance(e, PlanEvent)]
    assert plan.tasks == [] and plan.error.startswith("the plan has no actions")
    assert not [e for e in events if isinstance(e, JoinerDecisionEvent)]


def test_task_events_carry_outcome_and_times_since_the_plan_began(make_agent):
    plan = '1. search("cheetah")\n2. explode("x")\n3. search($2)\n4. join()'
    agent, _ = make_agent([plan, FINISH])

    with collect_events() as events:
        agent.chat("q")

    assert sorted((e.task_id, e.outcome, e.start, e.end) for e in events
                  if isinstance(e, PlanTaskEvent)) == [
        (1, "ok", 0.0, 0.1), (2, "error", 0.0, 0.0), (3, "not_run", 0.0, 0.0)]


def test_joiner_decisions_say_replan_then_forced_final(make_agent):
    agent, _ = make_agent(["1. join()", REPLAN, "1. join()", REPLAN], max_replans=1)

    with collect_events() as events:
        agent.chat("q")

    decisions = [(e.round, e.is_replan, e.final, e.forced) for e in events
                 if isinstance(e, JoinerDecisionEvent)]
    assert decisions == [(1, True, False, False), (2, True, True, True)]


def test_a_failing_llm_call_leaves_memory_as_it_was(make_agent):
    from agentkit.llms.errors import ServerError

    # the call fails: its error outlasts the model's 3 retries
    agent, _ = make_agent([PLAN, FINISH, PLAN, *[ServerError("down")] * 4, PLAN, FINISH])
    agent.chat("first")
    before = _contents(agent.chat_history)

    with pytest.raises(ServerError):
        agent.chat("second")

    assert _contents(agent.chat_history) == before
    assert str(agent.chat("third")) == "1.71"
