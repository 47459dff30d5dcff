"""ParallelAgentRunner: DAGs of steps, every ready step of a round run concurrently (SPEC §4)."""

from typing import Any

import pytest

from agentkit.agent import (
    AgentChatResponse,
    BaseAgentWorker,
    ParallelAgentRunner,
    Task,
    TaskStep,
    TaskStepOutput,
)
from agentkit.core.ids import new_uuid
from agentkit.core.sim import Stopwatch, asleep, run_sync
from agentkit.instrumentation import (
    AgentChatEndEvent,
    AgentChatStartEvent,
    AgentStepEndEvent,
    AgentStepStartEvent,
    collect_events,
)


def _step(task: Task, name: str, **state: Any) -> TaskStep:
    return TaskStep(task_id=task.task_id, step_id=new_uuid(), step_state={"name": name, **state})


def _output(step: TaskStep, text: str, next_steps: list[TaskStep] | None = None,
            is_last: bool = False) -> TaskStepOutput:
    return TaskStepOutput(output=AgentChatResponse(response=text), task_step=step,
                          next_steps=next_steps or [], is_last=is_last)


class _DiamondWorker(BaseAgentWorker):
    """root -> (left, right) -> join, linked up front. Each branch awaits its simulated latency;
    join is last and names the branches in the order they finished."""

    def __init__(self, left_latency: float = 1.0, right_latency: float = 1.0) -> None:
        self.latency = {"left": left_latency, "right": right_latency}
        self.finished: list[str] = []
        self.tool_choices: dict[str, Any] = {}

    def initialize_step(self, task: Task, **kwargs: Any) -> TaskStep:
        root, left, right, join = (_step(task, n) for n in ("root", "left", "right", "join"))
        for branch in (left, right):
            root.link_step(branch)
            branch.link_step(join)
        return root

    async def arun_step(self, step: TaskStep, task: Task, **kwargs: Any) -> TaskStepOutput:
        name = step.step_state["name"]
        self.tool_choices[name] = kwargs.get("tool_choice")
        if name == "join":
            return _output(step, "+".join(self.finished) + " joined", is_last=True)
        if name != "root":
            await asleep(self.latency[name])
            self.finished.append(name)
        return _output(step, name, list(step.next_steps.values()))

    def finalize_task(self, task: Task, **kwargs: Any) -> None:
        task.extra_state["finalized"] = True


class _TwoLastStepsWorker(BaseAgentWorker):
    """root -> two next steps that both claim to be last."""

    def initialize_step(self, task: Task, **kwargs: Any) -> TaskStep:
        return _step(task, "root")

    def run_step(self, step: TaskStep, task: Task, **kwargs: Any) -> TaskStepOutput:
        if step.step_state["name"] == "root":
            return _output(step, "root", [_step(task, "a"), _step(task, "b")])
        return _output(step, step.step_state["name"], is_last=True)

    def finalize_task(self, task: Task, **kwargs: Any) -> None:
        pass


class _DeadEndWorker(BaseAgentWorker):
    """A first step that neither ends the task nor has next steps."""

    def initialize_step(self, task: Task, **kwargs: Any) -> TaskStep:
        return _step(task, "root")

    def run_step(self, step: TaskStep, task: Task, **kwargs: Any) -> TaskStepOutput:
        return _output(step, "stuck")

    def finalize_task(self, task: Task, **kwargs: Any) -> None:
        pass


def _after_root(runner: ParallelAgentRunner) -> Task:
    task = runner.create_task("go")
    runner.run_steps_in_queue(task.task_id)
    return task


def _names(steps: list[TaskStep]) -> list[str]:
    return [s.step_state["name"] for s in steps]


def test_run_steps_in_queue_runs_every_queued_step():
    runner = ParallelAgentRunner(_DiamondWorker())
    task = _after_root(runner)
    outputs = runner.run_steps_in_queue(task.task_id)
    assert [str(o) for o in outputs] == ["left", "right"]
    assert _names(runner.get_upcoming_steps(task.task_id)) == ["join"]


def test_run_steps_in_queue_runs_the_ready_steps_concurrently():
    runner = ParallelAgentRunner(_DiamondWorker(left_latency=1.0, right_latency=1.0))
    task = _after_root(runner)
    watch = Stopwatch.start()
    runner.run_steps_in_queue(task.task_id)
    assert watch.wall == 1.0
    assert watch.serial == 2.0


def test_run_steps_in_queue_returns_outputs_in_queue_order_not_finishing_order():
    runner = ParallelAgentRunner(_DiamondWorker(left_latency=2.0, right_latency=1.0))
    task = _after_root(runner)
    outputs = runner.run_steps_in_queue(task.task_id)
    assert runner.agent_worker.finished == ["right", "left"]
    assert [str(o) for o in outputs] == ["left", "right"]


def test_arun_steps_in_queue_runs_every_queued_step():
    runner = ParallelAgentRunner(_DiamondWorker())
    task = _after_root(runner)
    outputs = run_sync(runner.arun_steps_in_queue(task.task_id))
    assert [str(o) for o in outputs] == ["left", "right"]


def test_a_step_with_two_previous_steps_waits_until_both_completed():
    runner = ParallelAgentRunner(_DiamondWorker())
    task = _after_root(runner)
    left, right = runner.get_upcoming_steps(task.task_id)
    runner.run_step(task.task_id, step=left)
    assert _names(runner.get_upcoming_steps(task.task_id)) == ["right"]
    runner.run_step(task.task_id, step=right)
    assert _names(runner.get_upcoming_steps(task.task_id)) == ["join"]


class _NotReadyWorker(_DeadEndWorker):
    """A first step whose next step is not ready."""

    def run_step(self, step: TaskStep, task: Task, **kwargs: Any) -> TaskStepOutput:
        later = _step(task, "later")
        later.is_ready = False
        return _output(step, "root", [later])


def test_a_next_step_that_is_not_ready_is_not_queued():
    runner = ParallelAgentRunner(_NotReadyWorker())
    task = _after_root(runner)
    assert runner.get_upcoming_steps(task.task_id) == []


def test_chat_runs_the_whole_dag_and_answers_with_the_final_step():
    runner = ParallelAgentRunner(_DiamondWorker())
    assert str(runner.chat("go")) == "left+right joined"


def test_chat_over_the_dag_takes_the_critical_path_in_virtual_time():
    runner = ParallelAgentRunner(_DiamondWorker(left_latency=2.0, right_latency=1.0))
    watch = Stopwatch.start()
    runner.chat("go")
    assert (watch.wall, watch.serial) == (2.0, 3.0)


def test_achat_runs_the_whole_dag():
    runner = ParallelAgentRunner(_DiamondWorker())
    assert str(run_sync(runner.achat("go"))) == "left+right joined"


def test_stream_chat_streams_the_final_steps_answer():
    runner = ParallelAgentRunner(_DiamondWorker())
    assert "".join(runner.stream_chat("go").response_gen) == "left+right joined"


def test_chat_finalizes_the_task():
    runner = ParallelAgentRunner(_DiamondWorker())
    runner.chat("go")
    [state] = runner.list_tasks()
    assert state.task.extra_state["finalized"] is True


def test_a_dag_chat_emits_one_step_event_pair_per_step():
    runner = ParallelAgentRunner(_DiamondWorker())
    with collect_events() as events:
        runner.chat("go")
    agent_events = [e for e in events if isinstance(e, (AgentChatStartEvent, AgentChatEndEvent,
                                                        AgentStepStartEvent, AgentStepEndEvent))]
    assert len(agent_events) == 2 + 2 * 4


def test_the_first_round_gets_the_chats_tool_choice_and_later_rounds_auto():
    runner = ParallelAgentRunner(_DiamondWorker())
    runner.chat("go", tool_choice="required")
    assert runner.agent_worker.tool_choices == {
        "root": "required", "left": "auto", "right": "auto", "join": "auto"}


class _FailingBranchWorker(_DiamondWorker):
    """Like the diamond, but the left branch fails at once while the right one is waiting."""

    async def arun_step(self, step: TaskStep, task: Task, **kwargs: Any) -> TaskStepOutput:
        if step.step_state["name"] == "left":
            raise RuntimeError("left branch failed")
        return await super().arun_step(step, task, **kwargs)


def test_a_failing_step_propagates_its_error_from_the_round():
    runner = ParallelAgentRunner(_FailingBranchWorker())
    with pytest.raises(RuntimeError, match="left branch failed"):
        runner.chat("go")


def test_a_failing_step_cancels_the_other_steps_of_its_round():
    runner = ParallelAgentRunner(_FailingBranchWorker())
    with pytest.raises(RuntimeError):
        runner.chat("go")
    run_sync(asleep(5.0))
    assert runner.agent_worker.finished == []


def test_every_started_step_of_a_failed_round_gets_its_end_event():
    runner = ParallelAgentRunner(_FailingBranchWorker())
    with collect_events() as events, pytest.raises(RuntimeError):
        runner.chat("go")
    starts = [e.step_id for e in events if isinstance(e, AgentStepStartEvent)]
    ends = [e.step_id for e in events if isinstance(e, AgentStepEndEvent)]
    assert sorted(starts) == sorted(ends) and len(starts) == 3


def test_a_final_round_with_more_than_one_output_is_an_error():
    runner = ParallelAgentRunner(_TwoLastStepsWorker())
    with pytest.raises(ValueError, match=r"More than one step output returned in final step\."):
        runner.chat("go")


def test_a_task_that_runs_out_of_steps_without_ending_is_an_error():
    runner = ParallelAgentRunner(_DeadEndWorker())
    with pytest.raises(ValueError, match="has no steps left to run and no step ended it"):
        runner.chat("go")


def test_delete_task_forgets_the_tasks_waiting_steps():
    runner = ParallelAgentRunner(_DiamondWorker())
    task = _after_root(runner)
    left, _right = runner.get_upcoming_steps(task.task_id)
    runner.run_step(task.task_id, step=left)
    runner.delete_task(task.task_id)
    assert runner.list_tasks() == [] and task.task_id not in runner._waiting


def test_reset_forgets_every_tasks_waiting_steps():
    runner = ParallelAgentRunner(_DiamondWorker())
    task = _after_root(runner)
    left, _right = runner.get_upcoming_steps(task.task_id)
    runner.run_step(task.task_id, step=left)
    runner.reset()
    assert runner.list_tasks() == [] and runner._waiting == {}
