"""ReActAgent (REFERENCE W2, W3, W8, W14): transcript memory, retries, prompts."""

from __future__ import annotations

from agentkit.agent.workflow import AgentInput, AgentOutput, ReActAgent
from agentkit.core.ids import use_ids
from agentkit.core.sim import run_sync
from agentkit.llms.mock import ScriptedLLM
from agentkit.llms.prompts import PromptTemplate
from agentkit.memory import ChatMemoryBuffer

from .helpers import REACT_ADD, REACT_DONE, add, roles, run_collect


def _agent(script: list, **kwargs) -> tuple[ReActAgent, ScriptedLLM]:
    llm = ScriptedLLM(script, function_calling=False)
    return ReActAgent(tools=[add], llm=llm, **kwargs), llm


def test_the_response_is_the_answer_without_its_marker() -> None:
    agent, _ = _agent([REACT_ADD, REACT_DONE])
    assert str(agent.run_sync(user_msg="What is 5 + 3?")) == "The sum is 8"


def test_memory_holds_the_user_message_and_the_whole_transcript_as_one_message() -> None:
    agent, _ = _agent([REACT_ADD, REACT_DONE])
    memory = ChatMemoryBuffer.from_defaults()
    agent.run_sync(user_msg="What is 5 + 3?", memory=memory)
    assert roles(memory.get_all()) == [
        ("user", "What is 5 + 3?"),
        ("assistant", 'Thought: I need to add.\nAction: add\nAction Input: {"a": 5, "b": 3}\n'
                      "Observation: 8\nThought: I can answer.\nAnswer: The sum is 8")]


def test_the_scratchpad_is_cleared_after_the_run() -> None:
    agent, _ = _agent([REACT_ADD, REACT_DONE])

    async def go() -> list:
        handler = agent.run(user_msg="What is 5 + 3?")
        await handler
        return await handler.ctx.store.get("current_reasoning")

    assert run_sync(go()) == []


def test_the_system_prompt_is_the_header_context() -> None:
    agent, llm = _agent([REACT_DONE], system_prompt="Always be polite.")
    agent.run_sync(user_msg="hi")
    messages = llm.requests[0].messages
    assert messages[0].role.value == "system"
    assert "## Context" in messages[0].content and "Always be polite." in messages[0].content
    assert [m.content for m in messages[1:]] == ["hi"]


def test_an_unparseable_output_is_retried_with_the_error_message() -> None:
    bad = "Thought: I will add.\nAction: add"
    agent, _ = _agent([bad, REACT_ADD, REACT_DONE])
    result, events, _ = run_sync(run_collect(agent, user_msg="What is 5 + 3?"))
    outputs = [e for e in events if isinstance(e, AgentOutput)]
    retry = outputs[0].retry_messages
    assert [m.role.value for m in retry] == ["assistant", "user"]
    assert retry[0].content == bad
    # upstream 0.12.42's text, word for word (issue 38 B7)
    assert retry[1].content.startswith(
        "Error while parsing the output: Could not extract tool use from input text: "
        "Thought: I will add.\nAction: add\n\n")
    assert "The output should be in one of the following formats:\n1. To call a tool:" in (
        retry[1].content)
    second_input = [e for e in events if isinstance(e, AgentInput)][1].input
    assert "Error while parsing the output" in second_input[-1].content
    assert [m.content for m in second_input[1:3]] == ["What is 5 + 3?", "What is 5 + 3?"]
    assert "8" in str(result)


def test_an_empty_output_is_retried_with_a_failure_message() -> None:
    agent, _ = _agent(["", REACT_DONE])
    result, events, _ = run_sync(run_collect(agent, user_msg="sum?"))
    first = next(e for e in events if isinstance(e, AgentOutput))
    assert first.retry_messages[1].content.startswith(
        "FAILURE: Your previous response was empty.")
    assert str(result) == "The sum is 8"


def test_get_prompts_gives_the_react_header() -> None:
    agent, _ = _agent([])
    prompts = agent.get_prompts()
    assert list(prompts) == ["react_header"]
    assert prompts["react_header"] == PromptTemplate(agent.formatter.system_header)


def test_update_prompts_accepts_a_string_or_a_template() -> None:
    agent, llm = _agent([REACT_DONE, REACT_DONE])
    agent.update_prompts({"react_header": "HEADER ONE {tool_desc}"})
    agent.run_sync(user_msg="a")
    agent.update_prompts({"react_header": PromptTemplate("HEADER TWO")})
    agent.run_sync(user_msg="b")
    assert llm.requests[0].messages[0].content.startswith("HEADER ONE > Tool Name: add")
    assert llm.requests[1].messages[0].content == "HEADER TWO"


def test_an_answer_without_a_thought_is_understood() -> None:
    agent, _ = _agent(["Answer: The sum is 8"])
    assert "The sum is 8" in str(agent.run_sync(user_msg="sum?"))


def test_an_answer_after_a_preamble_is_understood() -> None:
    agent, _ = _agent(["Let me see.\nAnswer: The sum is 8"])
    assert "The sum is 8" in str(agent.run_sync(user_msg="sum?"))


def test_react_tool_call_ids_come_from_the_seeded_id_source() -> None:
    def first_id() -> str:
        with use_ids(7):
            agent, _ = _agent([REACT_ADD, REACT_DONE])
            return agent.run_sync(user_msg="sum?").tool_calls[0].tool_id

    assert first_id() == first_id()


def test_a_header_templates_partial_values_reach_the_model() -> None:
    # issue 38 D10: upstream 0.12.42 raises KeyError('dummy_var') on the first step (later
    # releases keep the value); agentkit keeps it, never a silent literal "{dummy_var}"
    agent, llm = _agent([REACT_DONE])
    header = PromptTemplate("Be {dummy_var}. Tools: {tool_names}").partial_format(dummy_var="brief")
    agent.update_prompts({"react_header": header})
    agent.run_sync(user_msg="a")
    assert llm.requests[0].messages[0].content == "Be brief. Tools: add"
    assert agent.get_prompts()["react_header"] == header
