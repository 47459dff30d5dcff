"""Task, TaskStep, TaskStepOutput, agent responses and BaseAgentWorker derivations (SPEC §4)."""

from typing import Any

import pytest

from agentkit.agent import (
    AgentChatResponse,
    AgentRunner,
    BaseAgentWorker,
    StreamingAgentChatResponse,
    Task,
    TaskStep,
    TaskStepOutput,
)
from agentkit.core.sim import run_sync, simulation
from agentkit.instrumentation import CallbackManager
from agentkit.memory import ChatMemoryBuffer


def _task(input: str = "hello") -> Task:
    return Task(input=input, memory=ChatMemoryBuffer.from_defaults())


async def _deltas(*parts: str):
    for part in parts:
        yield part


# --------------------------------------------------------------------------- Task
def test_task_keeps_input_memory_and_extra_state():
    memory = ChatMemoryBuffer.from_defaults()
    task = Task(input="hi", memory=memory, extra_state={"k": 1})
    assert (task.input, task.memory, task.extra_state) == ("hi", memory, {"k": 1})


def test_task_ids_come_from_the_seeded_id_source():
    with simulation(seed=3):
        first = _task().task_id
    with simulation(seed=3):
        again = _task().task_id
    with simulation(seed=4):
        other = _task().task_id
    assert first == again != other


def test_task_defaults_to_empty_extra_state_and_a_callback_manager():
    task = _task()
    assert task.extra_state == {}
    assert isinstance(task.callback_manager, CallbackManager)


# --------------------------------------------------------------------------- TaskStep
def test_task_step_defaults_are_ready_with_empty_state_and_no_links():
    step = TaskStep(task_id="t")
    assert step.input is None
    assert step.step_state == {}
    assert step.next_steps == {} and step.prev_steps == {}
    assert step.is_ready is True


def test_get_next_step_inherits_the_parent_state_when_step_state_is_none():
    parent = TaskStep(task_id="t", step_id="s1", step_state={"n": 1})
    child = parent.get_next_step(step_id="s2")
    assert child.step_state == {"n": 1}


def test_get_next_step_keeps_an_explicit_empty_step_state():
    parent = TaskStep(task_id="t", step_id="s1", step_state={"n": 1})
    child = parent.get_next_step(step_id="s2", step_state={})
    assert child.step_state == {}


def test_get_next_step_uses_the_given_step_state():
    parent = TaskStep(task_id="t", step_id="s1", step_state={"n": 1})
    child = parent.get_next_step(step_id="s2", step_state={"n": 2})
    assert child.step_state == {"n": 2}


def test_get_next_step_keeps_the_task_id_and_takes_the_new_id_and_input():
    parent = TaskStep(task_id="t", step_id="s1", input="first")
    child = parent.get_next_step(step_id="s2", input="second")
    assert (child.task_id, child.step_id, child.input) == ("t", "s2", "second")


def test_get_next_step_does_not_link_the_steps():
    parent = TaskStep(task_id="t", step_id="s1")
    child = parent.get_next_step(step_id="s2")
    assert parent.next_steps == {} and child.prev_steps == {}


def test_link_step_records_the_next_step_and_its_previous_step():
    first, second = TaskStep(task_id="t", step_id="a"), TaskStep(task_id="t", step_id="b")
    first.link_step(second)
    assert first.next_steps == {"b": second}
    assert second.prev_steps == {"a": first}


def test_link_step_from_two_parents_gives_the_child_both_previous_steps():
    left, right = TaskStep(task_id="t", step_id="l"), TaskStep(task_id="t", step_id="r")
    join = TaskStep(task_id="t", step_id="j")
    left.link_step(join)
    right.link_step(join)
    assert set(join.prev_steps) == {"l", "r"}


def test_task_step_dump_leaves_out_the_links():
    first, second = TaskStep(task_id="t", step_id="a"), TaskStep(task_id="t", step_id="b")
    first.link_step(second)
    dumped = first.model_dump()
    assert "next_steps" not in dumped and "prev_steps" not in dumped


# --------------------------------------------------------------------------- TaskStepOutput
def test_str_of_task_step_output_is_str_of_its_output():
    step = TaskStep(task_id="t")
    output = TaskStepOutput(output=AgentChatResponse(response="the answer"), task_step=step)
    assert str(output) == "the answer"


def test_task_step_output_defaults_to_no_next_steps_and_not_last():
    output = TaskStepOutput(output="x", task_step=TaskStep(task_id="t"))
    assert output.next_steps == [] and output.is_last is False


# --------------------------------------------------------------------------- responses
def test_str_of_agent_chat_response_is_its_response_text():
    assert str(AgentChatResponse(response="42")) == "42"


def test_agent_chat_response_defaults_to_no_sources_and_no_metadata():
    response = AgentChatResponse(response="x")
    assert (response.sources, response.source_nodes, response.metadata) == ([], [], None)


def test_streaming_response_gen_yields_the_text_deltas():
    stream = StreamingAgentChatResponse(_deltas("Hel", "lo"))
    assert list(stream.response_gen) == ["Hel", "lo"]


def test_streaming_response_holds_the_full_text_once_drained():
    stream = StreamingAgentChatResponse(_deltas("Hel", "lo"))
    assert stream.response == ""
    for _ in stream.response_gen:
        pass
    assert stream.response == "Hello" and stream.is_done


def test_streaming_async_response_gen_yields_the_text_deltas():
    stream = StreamingAgentChatResponse(_deltas("a ", "b"))

    async def drain() -> list[str]:
        return [delta async for delta in stream.async_response_gen()]

    assert run_sync(drain()) == ["a ", "b"]


def test_streaming_on_end_callbacks_run_once_with_the_full_text_when_the_stream_ends():
    seen: list[str] = []
    stream = StreamingAgentChatResponse(_deltas("a ", "b"))
    stream.add_on_end(seen.append)
    iterator = stream.response_gen
    next(iterator)
    assert seen == []
    list(iterator)
    list(stream.response_gen)
    assert seen == ["a b"]


def test_streaming_response_without_deltas_streams_its_response_as_one_chunk():
    stream = StreamingAgentChatResponse(response="whole")
    assert list(stream.response_gen) == ["whole"]


# --------------------------------------------------------------------------- BaseAgentWorker
class _SyncWorker(BaseAgentWorker):
    """Implements only the sync step; finishes in one step."""

    def __init__(self) -> None:
        self.finalized: list[str] = []

    def initialize_step(self, task: Task, **kwargs: Any) -> TaskStep:
        return TaskStep(task_id=task.task_id, input=task.input)

    def run_step(self, step: TaskStep, task: Task, **kwargs: Any) -> TaskStepOutput:
        return TaskStepOutput(output=AgentChatResponse(response=f"sync:{step.input}"),
                              task_step=step, is_last=True)

    def finalize_task(self, task: Task, **kwargs: Any) -> None:
        self.finalized.append(task.task_id)


class _AsyncWorker(_SyncWorker):
    """Implements only the async step."""

    run_step = BaseAgentWorker.run_step

    async def arun_step(self, step: TaskStep, task: Task, **kwargs: Any) -> TaskStepOutput:
        return TaskStepOutput(output=AgentChatResponse(response=f"async:{step.input}"),
                              task_step=step, is_last=True)


class _NoStepWorker(BaseAgentWorker):
    def initialize_step(self, task: Task, **kwargs: Any) -> TaskStep:
        return TaskStep(task_id=task.task_id)

    def finalize_task(self, task: Task, **kwargs: Any) -> None:
        pass


def test_a_worker_with_only_run_step_gets_arun_step():
    task = _task("x")
    worker = _SyncWorker()
    output = run_sync(worker.arun_step(worker.initialize_step(task), task))
    assert str(output) == "sync:x"


def test_a_worker_with_only_arun_step_gets_run_step():
    task = _task("x")
    worker = _AsyncWorker()
    assert str(worker.run_step(worker.initialize_step(task), task)) == "async:x"


def test_a_worker_without_any_step_method_says_what_to_implement():
    task = _task()
    worker = _NoStepWorker()
    message = "_NoStepWorker must implement run_step or arun_step"
    with pytest.raises(NotImplementedError, match=message):
        worker.run_step(worker.initialize_step(task), task)
    with pytest.raises(NotImplementedError, match=message):
        run_sync(worker.arun_step(worker.initialize_step(task), task))


def test_derived_stream_step_hands_out_the_last_answer_as_a_stream():
    task = _task("x")
    worker = _SyncWorker()
    output = worker.stream_step(worker.initialize_step(task), task)
    assert isinstance(output.output, StreamingAgentChatResponse)
    assert list(output.output.response_gen) == ["sync:x"]


def test_derived_astream_step_hands_out_the_last_answer_as_a_stream():
    task = _task("x")
    worker = _AsyncWorker()
    output = run_sync(worker.astream_step(worker.initialize_step(task), task))
    assert isinstance(output.output, StreamingAgentChatResponse)
    assert output.output.get_response().response == "async:x"


def test_set_callback_manager_replaces_the_workers_manager():
    worker, manager = _SyncWorker(), CallbackManager()
    worker.set_callback_manager(manager)
    assert worker.callback_manager is manager


def test_as_agent_wraps_the_worker_in_a_runner_with_the_given_arguments():
    worker = _SyncWorker()
    agent = worker.as_agent(delete_task_on_finish=True)
    assert isinstance(agent, AgentRunner)
    assert agent.agent_worker is worker and agent.delete_task_on_finish is True
    assert str(agent.chat("q")) == "sync:q"


def test_update_prompts_rejects_prompt_names_the_worker_does_not_have():
    with pytest.raises(ValueError, match=r"_SyncWorker has no prompt\(s\) named \['nope'\]"):
        _SyncWorker().update_prompts({"nope": "x"})
