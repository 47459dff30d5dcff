"""MultimodalReActAgentWorker and MultimodalReActAgent: ReAct with images (SPEC §7).

Loop behaviours run in the three step modes (``run_step``, ``arun_step``, ``stream_step``);
chat behaviours in the four chat modes (``chat``, ``achat``, ``stream_chat``,
``astream_chat``).
"""

from pathlib import Path
from typing import Any

import pytest

from agentkit.agent import (
    AgentRunner,
    MultimodalReActAgent,
    MultimodalReActAgentWorker,
    Task,
)
from agentkit.agent.react import PARSE_FAILURE_OBSERVATION, ReActChatFormatter
from agentkit.agent.react_multimodal import (
    MM_FAILURE_ANSWER,
    REACT_MM_CHAT_SYSTEM_HEADER,
    generate_image_chat_message,
)
from agentkit.llms import ChatMessage, ImageBlock, MessageRole, TextBlock
from agentkit.llms.mock import ScriptedLLM, ScriptedResponse
from agentkit.memory import ChatMemoryBuffer

from .conftest import run_one, run_task

PNG = b"\x89PNG\r\n\x1a\n tiny"
DOG = ImageBlock(image=PNG)
CAT_URL = ImageBlock(url="https://example.com/cat.jpg")
ADD_2_3 = 'Thought: I add.\nAction: add\nAction Input: {"a": 2, "b": 3}'
ANSWER_5 = "Thought: I know it now.\nAnswer: 5"
A_DOG = "Thought: I see a dog.\nAnswer: a dog"


def new_task(images: Any = None, message: str = "What is this?", **extra: Any) -> Task:
    state = dict(extra) if images is None else {"image_docs": images, **extra}
    return Task(input=message, memory=ChatMemoryBuffer.from_defaults(), extra_state=state)


def worker_over(llm: ScriptedLLM, tools: list[Any] | None = None,
                **kwargs: Any) -> MultimodalReActAgentWorker:
    return MultimodalReActAgentWorker.from_tools(tools or [], multi_modal_llm=llm, **kwargs)


def user_with(text: str, *images: ImageBlock) -> ChatMessage:
    return ChatMessage(role=MessageRole.USER, blocks=[TextBlock(text=text), *images])


# ---------------------------------------------------------------- construction
def test_it_is_exported_from_agentkit_agent():
    from agentkit import agent

    assert agent.MultimodalReActAgentWorker is MultimodalReActAgentWorker


def test_from_tools_accepts_the_model_as_llm_too(tools):
    llm = ScriptedLLM([])

    worker = MultimodalReActAgentWorker.from_tools(tools, llm=llm)

    assert worker.multi_modal_llm is llm and worker.llm is llm


def test_two_different_models_are_rejected(tools):
    with pytest.raises(ValueError, match="give the model once: `multi_modal_llm` or `llm`"):
        MultimodalReActAgentWorker.from_tools(tools, multi_modal_llm=ScriptedLLM([]),
                                              llm=ScriptedLLM([]))


def test_a_worker_needs_a_model(tools):
    with pytest.raises(ValueError, match="MultimodalReActAgentWorker needs an `llm`"):
        MultimodalReActAgentWorker.from_tools(tools)


def test_from_tools_rejects_unknown_arguments(tools):
    with pytest.raises(TypeError, match=r"unexpected arguments: \['image_detail'\]"):
        MultimodalReActAgentWorker.from_tools(tools, llm=ScriptedLLM([]), image_detail="low")


def test_max_iterations_is_enforced(tools):
    llm = ScriptedLLM([ADD_2_3, ADD_2_3])
    worker = worker_over(llm, tools, max_iterations=4)
    task = new_task([DOG])
    output = worker.run_step(worker.initialize_step(task), task)

    with pytest.raises(ValueError, match=r"^Reached max iterations\.$"):
        worker.run_step(output.next_steps[0], task)


# ---------------------------------------------------------------- the prompt
def test_the_system_header_is_react_with_image_notes_and_the_failure_answer(tools):
    llm = ScriptedLLM([A_DOG])

    run_task(worker_over(llm, tools), new_task([DOG]), "run")

    system = llm.requests[0].messages[0]
    assert system.role == MessageRole.SYSTEM
    assert "## Images" in system.content and "> Tool Name: add" in system.content
    assert f"Answer: {MM_FAILURE_ANSWER}" in system.content
    assert MM_FAILURE_ANSWER == "Sorry, I cannot answer your query."


def test_the_header_keeps_the_react_wire_format():
    for marker in ("Thought:", "Action:", "Action Input:", "Observation:", "Answer:",
                   "{tool_desc}", "{tool_names}"):
        assert marker in REACT_MM_CHAT_SYSTEM_HEADER


def test_get_prompts_returns_the_multimodal_header(tools):
    worker = worker_over(ScriptedLLM([]), tools)

    assert worker.get_prompts()["system_prompt"].get_template() == REACT_MM_CHAT_SYSTEM_HEADER


def test_a_given_formatter_replaces_the_multimodal_header(tools):
    llm = ScriptedLLM([A_DOG])
    formatter = ReActChatFormatter.from_defaults(system_header="Plain header {tool_names}")

    run_task(worker_over(llm, tools, react_chat_formatter=formatter), new_task([DOG]), "run")

    assert llm.requests[0].messages[0].content == "Plain header add, multiply"


# ---------------------------------------------------------------- images on the user message
def test_the_images_are_blocks_of_the_first_user_message_after_its_text(tools, step_mode):
    llm = ScriptedLLM([A_DOG])

    run_task(worker_over(llm, tools), new_task([DOG, CAT_URL]), step_mode)

    assert llm.requests[0].messages[1] == user_with("What is this?", DOG, CAT_URL)


def test_an_image_answer_is_one_step_and_memory_keeps_the_image_message(step_mode):
    llm = ScriptedLLM([A_DOG])
    worker = worker_over(llm)
    task = new_task([DOG])

    outputs = run_task(worker, task, step_mode)
    worker.finalize_task(task)

    assert [o.output.response for o in outputs] == ["a dog"]
    assert task.memory.get_all() == [user_with("What is this?", DOG),
                                     ChatMessage(role=MessageRole.ASSISTANT, content="a dog")]


def test_later_llm_calls_see_the_image_message_once_before_the_reasoning(tools, step_mode):
    llm = ScriptedLLM([ADD_2_3, ANSWER_5])

    run_task(worker_over(llm, tools), new_task([DOG]), step_mode)

    _system, first_user, action, observation = llm.requests[1].messages
    assert first_user == user_with("What is this?", DOG)
    assert (action.role, observation.content) == (MessageRole.ASSISTANT, "Observation: 5")


def test_an_empty_image_list_sends_a_text_only_user_message(step_mode):
    llm = ScriptedLLM([ANSWER_5])

    run_task(worker_over(llm), new_task([]), step_mode)

    assert llm.requests[0].messages[1] == ChatMessage(role=MessageRole.USER,
                                                      content="What is this?")


def test_generate_chat_message_fn_builds_the_first_user_message(step_mode):
    llm = ScriptedLLM([A_DOG])
    seen: list[tuple[str, MessageRole, list[ImageBlock]]] = []

    def images_first(prompt: str, role: MessageRole,
                     image_documents: list[ImageBlock]) -> ChatMessage:
        seen.append((prompt, role, list(image_documents)))
        return ChatMessage(role=role, blocks=[*image_documents, TextBlock(text=prompt)])

    run_task(worker_over(llm, generate_chat_message_fn=images_first), new_task([DOG]), step_mode)

    assert seen == [("What is this?", MessageRole.USER, [DOG])]
    assert llm.requests[0].messages[1].blocks == [DOG, TextBlock(text="What is this?")]


def test_a_chat_message_fn_that_returns_no_message_is_a_clear_error():
    worker = worker_over(ScriptedLLM([]), generate_chat_message_fn=lambda **kw: "text")
    task = new_task([DOG])

    with pytest.raises(TypeError, match="generate_chat_message_fn must return a ChatMessage, "
                                        "got str"):
        worker.run_step(worker.initialize_step(task), task)


def test_the_default_message_fn_puts_the_text_first():
    assert generate_image_chat_message("q", "user", [DOG]) == user_with("q", DOG)


# ---------------------------------------------------------------- missing or bad images
def test_creating_a_task_without_image_docs_does_not_fail_but_its_first_step_does(tools,
                                                                                  step_mode):
    llm = ScriptedLLM([])
    worker = worker_over(llm, tools)
    task = new_task()
    step = worker.initialize_step(task)

    with pytest.raises(ValueError, match=r"^Image docs not found in task extra state\.$"):
        run_one(worker, step, task, step_mode)

    assert task.extra_state["new_memory"].get_all() == [] and llm.calls == 0


def test_a_missing_image_file_names_the_entry_and_the_path_and_touches_no_memory(tmp_path,
                                                                                 step_mode):
    missing = tmp_path / "nope.png"
    llm = ScriptedLLM([])
    worker = worker_over(llm)
    task = new_task([DOG, ImageBlock(path=missing)])

    with pytest.raises(ValueError, match=rf"^image_docs\[1\]: cannot read image file "
                                         rf"'{missing}': No such file or directory$"):
        run_one(worker, worker.initialize_step(task), task, step_mode)

    assert task.extra_state["new_memory"].get_all() == [] and llm.calls == 0


def test_an_unreadable_image_path_is_a_clear_error(tmp_path):
    worker = worker_over(ScriptedLLM([]))
    task = new_task([ImageBlock(path=tmp_path)])  # a directory: reading it fails

    with pytest.raises(ValueError, match=rf"^image_docs\[0\]: cannot read image file "
                                         rf"'{tmp_path}': Is a directory$"):
        worker.run_step(worker.initialize_step(task), task)


def test_an_empty_image_file_is_a_clear_error_that_touches_no_memory(tmp_path):
    empty = tmp_path / "blank.png"
    empty.write_bytes(b"")
    llm = ScriptedLLM([])
    worker = worker_over(llm)
    task = new_task([ImageBlock(path=empty)])

    with pytest.raises(ValueError, match=rf"^image_docs\[0\]: image file '{empty}' is empty "
                                         r"\(0 bytes\)$"):
        worker.run_step(worker.initialize_step(task), task)

    assert task.extra_state["new_memory"].get_all() == [] and llm.calls == 0


def test_an_image_doc_that_is_not_an_image_block_is_named(tmp_path):
    worker = worker_over(ScriptedLLM([]))
    task = new_task([DOG, str(tmp_path / "cat.png")])

    with pytest.raises(TypeError, match=r"image_docs\[1\] is a str, not an "
                                        r"agentkit.llms.ImageBlock \(wrap a file as "
                                        r"ImageBlock\(path=...\)\)"):
        worker.run_step(worker.initialize_step(task), task)


@pytest.mark.parametrize("docs", [DOG, "cat.png", 3])
def test_image_docs_that_are_not_a_list_are_a_clear_error(docs):
    worker = worker_over(ScriptedLLM([]))
    task = new_task(docs)

    with pytest.raises(TypeError, match=r"extra_state\['image_docs'\] must be a list of "
                                        r"agentkit.llms.ImageBlock, got "):
        worker.run_step(worker.initialize_step(task), task)


# ---------------------------------------------------------------- errors are observations (fix)
def test_an_unknown_tool_is_an_observation(tools, step_mode):
    llm = ScriptedLLM(['Thought: t\nAction: subtract\nAction Input: {"a": 1}', ANSWER_5])
    task = new_task([DOG])

    outputs = run_task(worker_over(llm, tools), task, step_mode)

    assert llm.requests[1].messages[-1].content == (
        "Observation: Error: No such tool named `subtract`.")
    assert outputs[-1].output.response == "5" and task.extra_state["sources"][0].is_error


def test_unparseable_output_is_an_observation(tools, step_mode):
    llm = ScriptedLLM(["Thought: I am not sure what to do.", ANSWER_5])

    outputs = run_task(worker_over(llm, tools), new_task([DOG]), step_mode)

    assert llm.requests[1].messages[-1].content == f"Observation: {PARSE_FAILURE_OBSERVATION}"
    assert outputs[-1].output.response == "5"


def test_a_raising_tool_is_an_observation(divide_tool, step_mode):
    llm = ScriptedLLM(['Thought: t\nAction: divide\nAction Input: {"a": 1, "b": 0}', ANSWER_5])
    task = new_task([DOG])

    run_task(worker_over(llm, [divide_tool]), task, step_mode)

    assert llm.requests[1].messages[-1].content == "Observation: Error: division by zero"
    assert task.extra_state["sources"][0].is_error


# ---------------------------------------------------------------- the agent (runner)
def test_as_agent_gives_a_multimodal_agent():
    agent = worker_over(ScriptedLLM([])).as_agent()

    assert isinstance(agent, MultimodalReActAgent) and isinstance(agent, AgentRunner)


def test_chat_takes_the_turns_images(tools, ask):
    llm = ScriptedLLM([A_DOG])
    agent = worker_over(llm, tools).as_agent()

    response = ask(agent, "What is this?", image_docs=[DOG])

    assert str(response) == "a dog"
    assert llm.requests[0].messages[1] == user_with("What is this?", DOG)
    assert agent.chat_history[0] == user_with("What is this?", DOG)


def test_a_follow_up_chat_without_images_sees_the_earlier_image_and_adds_none(ask):
    llm = ScriptedLLM([A_DOG, "Thought: easy.\nAnswer: brown"])
    agent = worker_over(llm).as_agent()
    ask(agent, "What is this?", image_docs=[DOG])

    ask(agent, "What colour is it?")

    assert llm.requests[1].messages[1:] == [
        user_with("What is this?", DOG), ChatMessage(role=MessageRole.ASSISTANT, content="a dog"),
        ChatMessage(role=MessageRole.USER, content="What colour is it?")]


def test_a_streamed_answer_is_streamed_word_by_word():
    llm = ScriptedLLM([ScriptedResponse(chunks=["Thought: I see it.\n", "Answer: a ", "small ",
                                                "dog"])])
    agent = worker_over(llm).as_agent()

    response = agent.stream_chat("What is this?", image_docs=[DOG])
    deltas = list(response.response_gen)

    assert deltas == ["a", " small", " dog"] and response.response == "a small dog"
    assert llm.requests[0].stream and llm.requests[0].messages[1] == user_with("What is this?", DOG)


def test_create_task_with_extra_state_drives_the_worker_step_by_step(tools):
    llm = ScriptedLLM([ADD_2_3, ANSWER_5])
    agent = worker_over(llm, tools).as_agent()

    task = agent.create_task("What is 2 + 3?", extra_state={"image_docs": [DOG]})
    first = agent.run_step(task.task_id)
    last = agent.run_step(task.task_id)
    response = agent.finalize_response(task.task_id)

    assert (first.is_last, last.is_last, str(response)) == (False, True, "5")
    assert agent.chat_history[0] == user_with("What is 2 + 3?", DOG)


def test_a_plain_runner_task_without_image_docs_fails_at_its_first_step():
    agent = AgentRunner(worker_over(ScriptedLLM([])))
    task = agent.create_task("What is this?")

    with pytest.raises(ValueError, match=r"^Image docs not found in task extra state\.$"):
        agent.run_step(task.task_id)


def test_init_task_state_kwargs_supply_images_to_chats_without_image_docs():
    llm = ScriptedLLM([A_DOG])
    agent = worker_over(llm).as_agent(init_task_state_kwargs={"image_docs": [DOG]})

    agent.chat("What is this?")

    assert llm.requests[0].messages[1] == user_with("What is this?", DOG)


def test_image_docs_and_init_task_state_kwargs_together_are_rejected():
    agent = worker_over(ScriptedLLM([])).as_agent(init_task_state_kwargs={"image_docs": [DOG]})

    with pytest.raises(ValueError, match="Cannot specify both `extra_state` and "
                                         "`init_task_state_kwargs`"):
        agent.chat("What is this?", image_docs=[CAT_URL])


def test_a_missing_image_file_fails_the_chat_and_leaves_memory_as_it_was(tmp_path, ask):
    agent = worker_over(ScriptedLLM([])).as_agent()

    with pytest.raises(ValueError, match=r"image_docs\[0\]: cannot read image file"):
        ask(agent, "What is this?", image_docs=[ImageBlock(path=tmp_path / "gone.png")])

    assert agent.chat_history == []


def test_an_image_file_is_read_when_it_is_used(tmp_path: Path):
    path = tmp_path / "dog.png"
    path.write_bytes(PNG)
    llm = ScriptedLLM([A_DOG])
    agent = worker_over(llm).as_agent()

    agent.chat("What is this?", image_docs=[ImageBlock(path=path)])

    assert llm.requests[0].messages[1].blocks[1].resolve_image() == PNG
