"""ReActAgent: the runner over a ReActAgentWorker, chatted with in every mode (SPEC §4, §5).

Tests taking the ``ask`` fixture run four times: chat, achat, stream_chat, astream_chat.
"""

import pytest

from agentkit.agent import AgentRunner
from agentkit.agent.react import ReActAgent, ReActAgentWorker, ReActChatFormatter
from agentkit.agent.types import AgentChatResponse
from agentkit.core.events import (
    AgentChatEndEvent,
    AgentChatStartEvent,
    AgentStepEndEvent,
    AgentStepStartEvent,
)
from agentkit.core.sim import run_sync, simulation
from agentkit.instrumentation import collect_events
from agentkit.llms.mock import ScriptedLLM
from agentkit.llms.prompts import PromptTemplate
from agentkit.llms.types import ChatMessage, MessageRole
from agentkit.tools import KeywordObjectRetriever

ADD_2_3 = 'Thought: I add.\nAction: add\nAction Input: {"a": 2, "b": 3}'
MULTIPLY_5_4 = 'Thought: Now multiply.\nAction: multiply\nAction Input: {"a": 5, "b": 4}'
ANSWER_20 = "Thought: I can answer.\nAnswer: (2 + 3) * 4 = 20"
AGENT_EVENTS = (AgentChatStartEvent, AgentChatEndEvent, AgentStepStartEvent, AgentStepEndEvent)


def user(text: str) -> ChatMessage:
    return ChatMessage(role=MessageRole.USER, content=text)


def assistant(text: str) -> ChatMessage:
    return ChatMessage(role=MessageRole.ASSISTANT, content=text)


def test_from_tools_builds_an_agent_runner_over_a_react_worker(tools):
    agent = ReActAgent.from_tools(tools, llm=ScriptedLLM([]))

    assert isinstance(agent, AgentRunner)
    assert isinstance(agent.agent_worker, ReActAgentWorker)


def test_chat_answers_after_two_tool_calls(tools, ask):
    llm = ScriptedLLM([ADD_2_3, MULTIPLY_5_4, ANSWER_20])
    agent = ReActAgent.from_tools(tools, llm=llm)

    response = ask(agent, "What is (2 + 3) * 4?")

    assert response.response == "(2 + 3) * 4 = 20"
    assert str(response) == "(2 + 3) * 4 = 20"
    llm.assert_complete()


def test_response_sources_are_the_tool_outputs_in_call_order(tools, ask):
    agent = ReActAgent.from_tools(tools, llm=ScriptedLLM([ADD_2_3, MULTIPLY_5_4, ANSWER_20]))

    response = ask(agent, "What is (2 + 3) * 4?")

    assert [(s.tool_name, s.content) for s in response.sources] == [("add", "5"),
                                                                     ("multiply", "20")]


def test_memory_after_a_chat_is_history_plus_user_and_answer_without_reasoning(tools, ask):
    history = [user("hi"), assistant("hello")]
    agent = ReActAgent.from_tools(tools, llm=ScriptedLLM([ADD_2_3, MULTIPLY_5_4, ANSWER_20]),
                                  chat_history=history)

    ask(agent, "What is (2 + 3) * 4?")

    assert agent.chat_history == [*history, user("What is (2 + 3) * 4?"),
                                  assistant("(2 + 3) * 4 = 20")]


def test_second_chat_sees_the_first_turn(tools, ask):
    llm = ScriptedLLM([ADD_2_3, "Thought: t\nAnswer: 5", "Thought: t\nAnswer: You asked 2 + 3."])
    agent = ReActAgent.from_tools(tools, llm=llm)

    ask(agent, "What is 2 + 3?")
    ask(agent, "What did I ask?")

    assert llm.requests[2].messages[1:] == [user("What is 2 + 3?"), assistant("5"),
                                            user("What did I ask?")]


def test_chat_history_argument_replaces_the_memory(tools):
    llm = ScriptedLLM(["Thought: t\nAnswer: ok"])
    agent = ReActAgent.from_tools(tools, llm=llm, chat_history=[user("old")])

    run_sync(agent.achat("new", chat_history=[user("given"), assistant("noted")]))

    assert llm.requests[0].messages[1:] == [user("given"), assistant("noted"), user("new")]


def test_exceeding_max_iterations_raises_and_leaves_memory_untouched(tools, ask):
    history = [user("hi"), assistant("hello")]
    llm = ScriptedLLM([ADD_2_3, ADD_2_3])
    agent = ReActAgent.from_tools(tools, llm=llm, chat_history=history, max_iterations=4)

    with pytest.raises(ValueError, match=r"^Reached max iterations\.$"):
        ask(agent, "Loop forever")

    assert agent.chat_history == history
    assert llm.calls == 2


def test_the_default_max_iterations_allows_five_tool_calls(tools, ask):
    llm = ScriptedLLM([ADD_2_3] * 5)
    agent = ReActAgent.from_tools(tools, llm=llm)

    with pytest.raises(ValueError, match=r"^Reached max iterations\.$"):
        ask(agent, "Loop forever")

    assert llm.calls == 5


def test_a_failed_chat_reports_the_error_in_its_chat_end_event(tools):
    agent = ReActAgent.from_tools(tools, llm=ScriptedLLM([ADD_2_3]), max_iterations=1)

    with collect_events() as events, pytest.raises(ValueError):
        agent.chat("Loop forever")

    (end,) = [e for e in events if isinstance(e, AgentChatEndEvent)]
    assert end.error == "ValueError: Reached max iterations."


def test_a_chat_with_n_steps_emits_chat_start_n_step_pairs_and_chat_end(tools, ask):
    agent = ReActAgent.from_tools(tools, llm=ScriptedLLM([ADD_2_3, MULTIPLY_5_4, ANSWER_20]))

    with collect_events() as events:
        ask(agent, "What is (2 + 3) * 4?")

    agent_events = [type(e) for e in events if isinstance(e, AGENT_EVENTS)]
    assert agent_events == [AgentChatStartEvent,
                            *[AgentStepStartEvent, AgentStepEndEvent] * 3,
                            AgentChatEndEvent]


def test_achat_emits_the_same_events_and_answer_as_chat(tools):
    def run(use_async: bool) -> tuple[str, list[tuple[str, str | None, str | None, float]],
                                      list[list[ChatMessage]]]:
        with simulation(seed=7):
            llm = ScriptedLLM([ADD_2_3, MULTIPLY_5_4, ANSWER_20], latency=0.5)
            agent = ReActAgent.from_tools(tools, llm=llm)
            with collect_events() as events:
                response = (run_sync(agent.achat("What is (2 + 3) * 4?")) if use_async
                            else agent.chat("What is (2 + 3) * 4?"))
        trace = [(e.name, e.span_id, e.parent_id, e.time) for e in events]
        return response.response, trace, [r.messages for r in llm.requests]

    assert run(use_async=True) == run(use_async=False)


# ---------------------------------------------------------------- step-wise control
def test_a_task_can_be_run_step_by_step_and_finalized(tools):
    agent = ReActAgent.from_tools(tools, llm=ScriptedLLM([ADD_2_3, "Thought: t\nAnswer: 5"]))
    task = agent.create_task("What is 2 + 3?")

    first = agent.run_step(task.task_id)
    second = agent.run_step(task.task_id)
    response = agent.finalize_response(task.task_id)

    assert (first.is_last, second.is_last) == (False, True)
    assert agent.get_completed_steps(task.task_id) == [first, second]
    assert agent.get_upcoming_steps(task.task_id) == []
    assert isinstance(response, AgentChatResponse) and response.response == "5"
    assert [s.content for s in response.sources] == ["5"]
    assert agent.chat_history == [user("What is 2 + 3?"), assistant("5")]


def test_run_step_with_input_mid_task_adds_it_as_an_observation(tools):
    llm = ScriptedLLM([ADD_2_3, "Thought: t\nAnswer: 5, in French cinq"])
    agent = ReActAgent.from_tools(tools, llm=llm)
    task = agent.create_task("What is 2 + 3?")
    agent.run_step(task.task_id)

    agent.run_step(task.task_id, input="Answer in French too.")

    assert [(m.role, m.content) for m in llm.requests[1].messages[-3:]] == [
        (MessageRole.ASSISTANT, ADD_2_3),
        (MessageRole.USER, "Observation: 5"),
        (MessageRole.USER, "Observation: Answer in French too.")]
    assert agent.finalize_response(task.task_id).response == "5, in French cinq"


def test_run_step_input_mid_task_is_not_kept_in_memory(tools):
    agent = ReActAgent.from_tools(tools, llm=ScriptedLLM([ADD_2_3, "Thought: t\nAnswer: 5"]))
    task = agent.create_task("What is 2 + 3?")
    agent.run_step(task.task_id)
    agent.run_step(task.task_id, input="Be quick.")

    agent.finalize_response(task.task_id)

    assert agent.chat_history == [user("What is 2 + 3?"), assistant("5")]


def test_finalize_response_before_the_last_step_is_rejected(tools):
    agent = ReActAgent.from_tools(tools, llm=ScriptedLLM([ADD_2_3]))
    task = agent.create_task("What is 2 + 3?")
    agent.run_step(task.task_id)

    with pytest.raises(ValueError,
                       match=r"^finalize_response can only be called on the last step output$"):
        agent.finalize_response(task.task_id)


def test_async_step_wise_control_matches_the_sync_one(tools):
    agent = ReActAgent.from_tools(tools, llm=ScriptedLLM([ADD_2_3, "Thought: t\nAnswer: 5"]))
    task = agent.create_task("What is 2 + 3?")

    run_sync(agent.arun_step(task.task_id))
    last = run_sync(agent.arun_step(task.task_id, input="thanks"))

    assert last.is_last and agent.finalize_response(task.task_id).response == "5"


# ---------------------------------------------------------------- construction options
def test_from_tools_context_appears_in_the_system_message(tools, ask):
    llm = ScriptedLLM(["Thought: t\nAnswer: ok"])
    agent = ReActAgent.from_tools(tools, llm=llm, context="All numbers are in base 10.")

    ask(agent, "hi")

    system = llm.requests[0].messages[0]
    assert system.role == MessageRole.SYSTEM
    assert "All numbers are in base 10." in system.content
    assert "> Tool Name: add" in system.content


def test_context_and_react_chat_formatter_together_are_rejected(tools):
    with pytest.raises(ValueError, match=r"^Cannot provide both context and react_chat_formatter$"):
        ReActAgent.from_tools(tools, llm=ScriptedLLM([]), context="c",
                              react_chat_formatter=ReActChatFormatter.from_defaults())


def test_a_custom_formatter_is_used_for_the_llm_input(tools):
    llm = ScriptedLLM(["Thought: t\nAnswer: ok"])
    formatter = ReActChatFormatter(system_header="Only: {tool_names}")
    agent = ReActAgent.from_tools(tools, llm=llm, react_chat_formatter=formatter)

    agent.chat("hi")

    assert llm.requests[0].messages[0].content == "Only: add, multiply"


def test_from_tools_rejects_tools_and_tool_retriever_together(tools):
    with pytest.raises(ValueError, match=r"^Cannot specify both tools and tool_retriever$"):
        ReActAgent.from_tools(tools, tool_retriever=KeywordObjectRetriever(tools),
                              llm=ScriptedLLM([]))


def test_from_tools_with_a_tool_retriever_calls_the_retrieved_tool(tools, ask):
    llm = ScriptedLLM(['Thought: t\nAction: multiply\nAction Input: {"a": 6, "b": 7}',
                       "Thought: t\nAnswer: 42"])
    agent = ReActAgent.from_tools(tool_retriever=KeywordObjectRetriever(tools, top_k=1), llm=llm)

    response = ask(agent, "multiply 6 and 7")

    assert "> Tool Name: add" not in llm.requests[0].messages[0].content
    assert [s.content for s in response.sources] == ["42"]


def test_from_tools_needs_an_llm(tools):
    with pytest.raises(ValueError, match=r"ReActAgent\.from_tools needs an `llm`"):
        ReActAgent.from_tools(tools)


def test_from_tools_rejects_unknown_arguments(tools):
    with pytest.raises(TypeError, match=r"unexpected arguments: \['max_steps'\]"):
        ReActAgent.from_tools(tools, llm=ScriptedLLM([]), max_steps=3)


def test_get_prompts_exposes_the_system_prompt(tools):
    agent = ReActAgent.from_tools(tools, llm=ScriptedLLM([]), context="ctx")

    prompt = agent.get_prompts()["system_prompt"]

    assert isinstance(prompt, PromptTemplate)
    assert "{context}" in prompt.get_template() and "{tool_desc}" in prompt.get_template()


def test_update_prompts_changes_the_system_message_the_llm_sees(tools, ask):
    llm = ScriptedLLM(["Thought: t\nAnswer: ok"])
    agent = ReActAgent.from_tools(tools, llm=llm)

    agent.update_prompts({"system_prompt": PromptTemplate("Terse. Tools:\n{tool_desc}")})
    ask(agent, "hi")

    system = llm.requests[0].messages[0].content
    assert system.startswith("Terse. Tools:\n> Tool Name: add")
    assert agent.get_prompts()["system_prompt"].get_template() == "Terse. Tools:\n{tool_desc}"


def test_a_system_prompt_templates_partial_values_reach_the_model(tools, ask):
    # issue 38 D10: upstream 0.12 drops partial_format values (KeyError); agentkit keeps them
    llm = ScriptedLLM(["Thought: t\nAnswer: ok"])
    agent = ReActAgent.from_tools(tools, llm=llm)
    prompt = PromptTemplate("Be {dummy_var}. Tools: {tool_names}").partial_format(dummy_var="terse")
    agent.update_prompts({"system_prompt": prompt})
    ask(agent, "hi")
    assert llm.requests[0].messages[0].content == "Be terse. Tools: add, multiply"
    assert agent.get_prompts()["system_prompt"] == prompt
