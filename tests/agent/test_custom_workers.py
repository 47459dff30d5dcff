"""CustomSimpleAgentWorker, FnAgentWorker and QueryPipelineAgentWorker (SPEC §4)."""

from typing import Any

import pytest

from agentkit.agent import (
    AgentChatResponse,
    AgentRunner,
    CustomSimpleAgentWorker,
    FnAgentWorker,
    QueryPipelineAgentWorker,
    StreamingAgentChatResponse,
    Task,
)
from agentkit.core.sim import run_sync
from agentkit.llms.types import ChatMessage, MessageRole
from agentkit.memory import ChatMemoryBuffer
from agentkit.tools import FunctionTool, KeywordObjectRetriever


def _user(text: str) -> ChatMessage:
    return ChatMessage(role=MessageRole.USER, content=text)


def _assistant(text: str) -> ChatMessage:
    return ChatMessage(role=MessageRole.ASSISTANT, content=text)


def _texts(messages: list[ChatMessage]) -> list[str]:
    return [m.content or "" for m in messages]


# ======================================================================= CustomSimpleAgentWorker
class _Counter(CustomSimpleAgentWorker):
    """Counts to ``steps``; the last step writes the exchange to ``state["memory"]``."""

    steps: int = 3

    def _initialize_state(self, task: Task, **kwargs: Any) -> dict[str, Any]:
        return {"count": 0}

    def _run_step(self, state: dict[str, Any], task: Task,
                  input: str | None = None) -> tuple[AgentChatResponse, bool]:
        state["count"] += 1
        done = state["count"] >= self.steps
        if done:
            state["memory"].put(_user(task.input))
            state["memory"].put(_assistant(f"counted to {state['count']}"))
        return AgentChatResponse(response=f"step {state['count']}"), done

    def _finalize_task(self, state: dict[str, Any], **kwargs: Any) -> None:
        self.finalized_state = dict(state)


class _AsyncCounter(_Counter):
    async def _arun_step(self, state: dict[str, Any], task: Task,
                         input: str | None = None) -> tuple[AgentChatResponse, bool]:
        state["count"] += 1
        return AgentChatResponse(response=f"async step {state['count']}"), True


class _Reserved(_Counter):
    key = "sources"

    def _initialize_state(self, task: Task, **kwargs: Any) -> dict[str, Any]:
        return {self.key: "mine", "other": 1}


def test_run_step_returns_the_response_and_whether_the_task_is_done():
    agent = _Counter(steps=3).as_agent()
    task = agent.create_task("count")
    outputs = [agent.run_step(task.task_id) for _ in range(3)]
    assert [(str(o), o.is_last) for o in outputs] == [
        ("step 1", False), ("step 2", False), ("step 3", True)]


def test_chat_runs_steps_until_run_step_says_done():
    assert str(_Counter(steps=3).as_agent().chat("count")) == "step 3"


def test_the_first_step_state_comes_from_initialize_state():
    agent = _Counter().as_agent()
    task = agent.create_task("count")
    [step] = agent.get_upcoming_steps(task.task_id)
    assert step.step_state["count"] == 0


def test_run_step_gets_the_new_messages_buffer_and_sources_in_its_state():
    agent = _Counter().as_agent()
    task = agent.create_task("count")
    [step] = agent.get_upcoming_steps(task.task_id)
    assert isinstance(step.step_state["memory"], ChatMemoryBuffer)
    assert step.step_state["sources"] == []


def test_state_is_merged_into_the_task_extra_state_after_each_step():
    agent = _Counter(steps=3).as_agent()
    task = agent.create_task("count")
    agent.run_step(task.task_id)
    assert task.extra_state["count"] == 1
    agent.run_step(task.task_id)
    assert task.extra_state["count"] == 2


@pytest.mark.parametrize("key", ["sources", "memory"])
def test_reserved_state_keys_are_rejected(key):
    worker = _Reserved()
    worker.key = key
    with pytest.raises(ValueError, match=rf"state keys \['{key}'\] are reserved"):
        worker.as_agent().create_task("q")


def test_finalize_writes_the_new_messages_to_memory():
    agent = _Counter(steps=2).as_agent()
    agent.chat("count")
    assert _texts(agent.chat_history) == ["count", "counted to 2"]


def test_finalize_appends_to_the_full_history_not_the_token_limited_window():
    history = [_user(f"old question number {i}") if i % 2 == 0 else _assistant(f"old answer {i}")
               for i in range(10)]
    memory = ChatMemoryBuffer.from_defaults(chat_history=history, token_limit=8)
    assert len(memory.get()) < len(history)
    agent = _Counter(steps=1).as_agent(memory=memory)
    agent.chat("count")
    assert agent.chat_history == history + agent.chat_history[-2:]
    assert _texts(agent.chat_history[-2:]) == ["count", "counted to 1"]


def test_finalize_calls_the_finalize_hook_with_the_task_state():
    worker = _Counter(steps=2)
    worker.as_agent().chat("count")
    assert worker.finalized_state["count"] == 2


def test_a_custom_arun_step_is_used_by_achat():
    agent = _AsyncCounter().as_agent()
    assert str(run_sync(agent.achat("count"))) == "async step 1"


def test_without_a_custom_arun_step_achat_runs_run_step():
    agent = _Counter(steps=1).as_agent()
    assert str(run_sync(agent.achat("count"))) == "step 1"


def test_stream_chat_streams_the_final_response():
    agent = _Counter(steps=2).as_agent()
    stream = agent.stream_chat("count")
    assert isinstance(stream, StreamingAgentChatResponse)
    assert "".join(stream.response_gen) == "step 2"


def test_a_plain_string_response_becomes_an_agent_chat_response():
    class _Plain(_Counter):
        def _run_step(self, state: dict[str, Any], task: Task,
                      input: str | None = None) -> tuple[Any, bool]:
            return "plain text", True

    response = _Plain().as_agent().chat("q")
    assert isinstance(response, AgentChatResponse) and response.response == "plain text"


def test_extra_constructor_keywords_become_worker_attributes():
    assert _Counter(steps=7).steps == 7


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def test_tools_and_a_tool_retriever_together_are_rejected():
    tools = [FunctionTool.from_defaults(add)]
    with pytest.raises(ValueError, match="Cannot specify both tools and tool_retriever"):
        _Counter.from_tools(tools, tool_retriever=KeywordObjectRetriever(tools))


def test_tools_assigned_after_construction_are_the_ones_offered():
    worker = _Counter()
    worker.tools = [FunctionTool.from_defaults(add)]

    assert [t.metadata.name for t in worker._get_tools("anything")] == ["add"]


def test_the_tool_retriever_picks_tools_for_the_input():
    tools = [FunctionTool.from_defaults(add)]
    worker = _Counter.from_tools(tool_retriever=KeywordObjectRetriever(tools))
    assert worker._get_tools("please add") == tools and worker._get_tools("hello") == []


# =========================================================================== FnAgentWorker
def _count_to_three(state: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    state["count"] = state.get("count", 0) + 1
    state["__output__"] = f"count {state['count']}"
    return state, state["count"] >= 3


def test_fn_worker_runs_fn_until_it_says_done_and_answers_with_output():
    agent = FnAgentWorker(fn=_count_to_three).as_agent()
    assert str(agent.chat("go")) == "count 3"


def test_fn_worker_state_holds_the_task():
    seen: list[Any] = []

    def fn(state: dict[str, Any]) -> tuple[dict[str, Any], bool]:
        seen.append(state["__task__"])
        state["__output__"] = "ok"
        return state, True

    agent = FnAgentWorker(fn=fn).as_agent()
    agent.chat("go")
    [state] = agent.list_tasks()
    assert seen == [state.task]


def test_fn_worker_passes_the_returned_state_to_the_next_step():
    seen: list[dict[str, Any]] = []

    def fn(state: dict[str, Any]) -> tuple[dict[str, Any], bool]:
        seen.append(state)
        return {**state, "__output__": "next", "steps": state.get("steps", 0) + 1}, len(seen) == 2

    FnAgentWorker(fn=fn).as_agent().chat("go")
    assert seen[1]["steps"] == 1


def test_fn_worker_puts_the_task_back_into_a_state_that_dropped_it():
    seen: list[Any] = []

    def fn(state: dict[str, Any]) -> tuple[dict[str, Any], bool]:
        seen.append(state["__task__"])
        return {"__output__": "fresh"}, len(seen) == 2

    agent = FnAgentWorker(fn=fn).as_agent()
    agent.chat("go")
    [state] = agent.list_tasks()
    assert seen == [state.task, state.task]


def test_fn_worker_says_what_to_return_when_fn_returns_something_else():
    def fn(state: dict[str, Any]) -> dict[str, Any]:
        return {**state, "__output__": "forgot is_done"}

    with pytest.raises(TypeError, match=r"FnAgentWorker: the step function must return a "
                                        r"\(state, is_done\) tuple, got dict"):
        FnAgentWorker(fn=fn).as_agent().chat("go")


def test_fn_worker_starts_from_the_initial_state():
    agent = FnAgentWorker(fn=_count_to_three, initial_state={"count": 1}).as_agent()
    assert str(agent.chat("go")) == "count 3"
    assert agent.agent_worker.initial_state == {"count": 1}


def test_fn_worker_tasks_do_not_share_the_initial_state():
    worker = FnAgentWorker(fn=_count_to_three, initial_state={"count": 0})
    agent = worker.as_agent()
    assert str(agent.chat("first")) == "count 3"
    assert str(agent.chat("second")) == "count 3"


def test_fn_worker_uses_async_fn_for_async_steps():
    async def async_fn(state: dict[str, Any]) -> tuple[dict[str, Any], bool]:
        state["__output__"] = "from async_fn"
        return state, True

    agent = FnAgentWorker(fn=_count_to_three, async_fn=async_fn).as_agent()
    assert str(run_sync(agent.achat("go"))) == "from async_fn"


def test_fn_worker_sync_run_step_uses_fn():
    async def async_fn(state: dict[str, Any]) -> tuple[dict[str, Any], bool]:
        raise AssertionError("async_fn must not run in a sync step")

    worker = FnAgentWorker(fn=_count_to_three, async_fn=async_fn)
    task = Task(input="go", memory=ChatMemoryBuffer.from_defaults())
    assert str(worker.run_step(worker.initialize_step(task), task)) == "count 1"


def test_fn_worker_without_output_says_where_the_answer_must_go():
    def fn(state: dict[str, Any]) -> tuple[dict[str, Any], bool]:
        state["result"] = 1
        return state, True

    with pytest.raises(ValueError, match=r"FnAgentWorker: the step function must put its answer "
                                         r"in state\['__output__'\]; the state it returned has "
                                         r"keys \['result'\]"):
        FnAgentWorker(fn=fn).as_agent().chat("go")


def test_fn_worker_writes_nothing_to_memory():
    agent = FnAgentWorker(fn=_count_to_three).as_agent()
    agent.chat("go")
    assert agent.chat_history == []


def test_fn_worker_streams_its_final_output():
    agent = FnAgentWorker(fn=_count_to_three).as_agent()
    assert "".join(agent.stream_chat("go").response_gen) == "count 3"


# ====================================================================== QueryPipelineAgentWorker
class _Pipeline:
    """Answers with the step number; done after ``steps`` runs; records update_state calls."""

    def __init__(self, steps: int = 2) -> None:
        self.steps = steps
        self.updates: list[dict[str, Any]] = []

    def update_state(self, state: dict[str, Any]) -> None:
        self.updates.append(state)

    def run(self, state: dict[str, Any], task: Task) -> tuple[AgentChatResponse, bool]:
        state["runs"] = state.get("runs", 0) + 1
        return AgentChatResponse(response=f"run {state['runs']}"), state["runs"] >= self.steps


class _AsyncPipeline:
    def __init__(self) -> None:
        self.updates: list[dict[str, Any]] = []

    def update_state(self, state: dict[str, Any]) -> None:
        self.updates.append(state)

    async def arun(self, state: dict[str, Any], task: Task) -> tuple[str, bool]:
        return f"arun for {task.input}", True


def _pipeline_agent(pipeline: Any) -> AgentRunner:
    with pytest.warns(DeprecationWarning):
        return QueryPipelineAgentWorker(pipeline).as_agent()


def test_query_pipeline_worker_is_deprecated_in_favour_of_fn_agent_worker():
    with pytest.warns(DeprecationWarning, match="QueryPipelineAgentWorker is deprecated; use "
                                                "FnAgentWorker instead"):
        QueryPipelineAgentWorker(_Pipeline())


def test_query_pipeline_worker_runs_the_pipeline_until_it_says_done():
    assert str(_pipeline_agent(_Pipeline(steps=2)).chat("go")) == "run 2"


def test_query_pipeline_worker_uses_arun_for_async_steps():
    assert str(run_sync(_pipeline_agent(_AsyncPipeline()).achat("go"))) == "arun for go"


def test_query_pipeline_worker_with_only_arun_works_in_sync_steps():
    pipeline = _AsyncPipeline()
    agent = _pipeline_agent(pipeline)
    task = agent.create_task("go")
    [step] = agent.get_upcoming_steps(task.task_id)
    assert str(agent.agent_worker.run_step(step, task)) == "arun for go"


def test_query_pipeline_worker_calls_update_state_once_per_step_with_the_step_state():
    pipeline = _Pipeline(steps=2)
    agent = _pipeline_agent(pipeline)
    agent.chat("go")
    assert len(pipeline.updates) == 2
    assert "memory" in pipeline.updates[0] and "sources" in pipeline.updates[0]


def test_query_pipeline_worker_with_only_arun_calls_update_state_once_per_sync_step():
    pipeline = _AsyncPipeline()
    agent = _pipeline_agent(pipeline)
    task = agent.create_task("go")
    [step] = agent.get_upcoming_steps(task.task_id)
    agent.agent_worker.run_step(step, task)
    assert len(pipeline.updates) == 1


def test_query_pipeline_worker_merges_state_into_the_task():
    agent = _pipeline_agent(_Pipeline(steps=2))
    task = agent.create_task("go")
    agent.run_step(task.task_id)
    assert task.extra_state["runs"] == 1


def test_query_pipeline_worker_rejects_an_object_without_run_or_arun():
    with pytest.warns(DeprecationWarning), pytest.raises(
            TypeError, match="the pipeline must have a run\\(\\*\\*kwargs\\) or "
                             "arun\\(\\*\\*kwargs\\) method, got object"):
        QueryPipelineAgentWorker(object())
