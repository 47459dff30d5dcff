"""Checkpoints: the state after each completed step, resumable by a new run (another instance,
another model), serialisable to JSON and back, deterministic."""

import json

import pytest

from agentkit.core.sim import run_sync, simulation
from agentkit.instrumentation import collect_events
from agentkit.llms.mock import ScriptedLLM
from agentkit.workflow import (
    Checkpoint,
    Context,
    ContextSerdeError,
    Event,
    StartEvent,
    StopEvent,
    Workflow,
    WorkflowCheckpointer,
    WorkflowStepDoesNotExistError,
    step,
)
from agentkit.workflow.context import sealed


class Asked(Event):
    question: str


class Answered(Event):
    answer: str


class Quiz(Workflow):
    """Three steps; the middle one asks the model."""

    def __init__(self, llm, **kwargs):
        super().__init__(**kwargs)
        self.llm = llm

    @step
    async def ask(self, ctx: Context, ev: StartEvent) -> Asked:
        await ctx.set("asked", 1)
        return Asked(question=ev.question)

    @step
    async def answer(self, ctx: Context, ev: Asked) -> Answered:
        return Answered(answer=str(await self.llm.acomplete(ev.question)))

    @step
    async def grade(self, ctx: Context, ev: Answered) -> StopEvent:
        return StopEvent(result=f"{ev.answer} (asked {await ctx.get('asked')})")


def _recorded(script=("four",)):
    async def main():
        checkpointer = WorkflowCheckpointer(Quiz(ScriptedLLM(list(script))))
        handler = checkpointer.run(question="2+2?")
        return checkpointer, handler.run_id, await handler

    return run_sync(main())


def test_a_checkpoint_is_recorded_after_each_completed_step():
    checkpointer, run_id, _ = _recorded()
    taken = checkpointer.checkpoints[run_id]
    assert [(c.id_, c.last_completed_step, type(c.input_event).__name__,
             type(c.output_event).__name__) for c in taken] == [
        (f"{run_id}:1", "ask", "StartEvent", "Asked"),
        (f"{run_id}:2", "answer", "Asked", "Answered"),
        (f"{run_id}:3", "grade", "Answered", "StopEvent")]


def test_a_new_run_resumes_from_a_checkpoint_with_another_model():
    checkpointer, run_id, first = _recorded()
    after_ask = checkpointer.checkpoints[run_id][0]
    other = ScriptedLLM(["five"])

    async def main():
        return await Quiz(other).run_from(after_ask)

    assert (first, run_sync(main()), len(other.requests)) == ("four (asked 1)",
                                                                "five (asked 1)", 1)


def test_resuming_from_a_later_checkpoint_does_not_redo_earlier_steps():
    checkpointer, run_id, _ = _recorded()
    after_answer = checkpointer.checkpoints[run_id][1]
    unused = ScriptedLLM([])

    async def main():
        return await Quiz(unused).run_from(after_answer)

    assert (run_sync(main()), unused.requests) == ("four (asked 1)", [])


def test_the_checkpointer_records_checkpoints_of_a_resumed_run_too():
    checkpointer, run_id, _ = _recorded()

    async def main():
        handler = checkpointer.run_from(checkpointer.checkpoints[run_id][1])
        await handler
        return handler.run_id

    resumed = run_sync(main())
    assert [c.last_completed_step for c in checkpointer.checkpoints[resumed]] == ["grade"]


def test_a_checkpoint_round_trips_through_json():
    checkpointer, run_id, _ = _recorded()
    saved = json.loads(json.dumps(checkpointer.checkpoints[run_id][0].to_dict()))
    workflow = Quiz(ScriptedLLM(["six"]))
    restored = Checkpoint.from_dict(workflow, saved)

    async def main():
        return await workflow.run_from(restored)

    assert (restored == checkpointer.checkpoints[run_id][0], run_sync(main())) == (
        True, "six (asked 1)")


def test_a_checkpoint_changed_after_saving_is_refused():
    checkpointer, run_id, _ = _recorded()
    saved = checkpointer.checkpoints[run_id][1].to_dict()
    saved["output_event"]["fields"]["answer"] = "forged"
    with pytest.raises(ContextSerdeError, match=r"^Checkpoint.from_dict: at \['digest'\]: the "
                                                r"saved checkpoint was changed after it was saved"):
        Checkpoint.from_dict(Quiz(ScriptedLLM([])), saved)


def test_a_checkpoint_naming_a_step_the_workflow_lacks_is_refused():
    checkpointer, run_id, _ = _recorded()
    saved = checkpointer.checkpoints[run_id][1].to_dict()
    forged = sealed({**{k: v for k, v in saved.items() if k != "digest"},
                     "last_completed_step": "nowhere"})
    with pytest.raises(ContextSerdeError, match=r"^Checkpoint.from_dict: at "
                                                r"\['last_completed_step'\]: Quiz has no step "
                                                r"'nowhere'$"):
        Checkpoint.from_dict(Quiz(ScriptedLLM([])), forged)


def test_a_resume_from_one_checkpoint_is_deterministic_byte_for_byte():
    checkpointer, run_id, _ = _recorded()
    saved = json.dumps(checkpointer.checkpoints[run_id][0].to_dict())

    def resume() -> str:
        with simulation(seed=7):
            workflow = Quiz(ScriptedLLM(["seven"]))
            resumed = WorkflowCheckpointer(workflow)

            async def main():
                handler = resumed.run_from(Checkpoint.from_dict(workflow, json.loads(saved)))
                return handler.run_id, await handler

            with collect_events() as events:
                run_id, result = run_sync(main())
            return json.dumps({"result": result,
                               "checkpoints": [c.to_dict() for c in resumed.checkpoints[run_id]],
                               "events": [(type(e).__name__, e.span_id, e.time) for e in events]})

    assert resume() == resume()


def test_checkpoints_can_be_disabled_per_step():
    async def main():
        checkpointer = WorkflowCheckpointer(Quiz(ScriptedLLM(["x"])), disabled_steps=["answer"])
        handler = checkpointer.run(question="?")
        await handler
        return [c.last_completed_step for c in checkpointer.checkpoints[handler.run_id]]

    assert run_sync(main()) == ["ask", "grade"]


def test_enabling_a_step_the_workflow_lacks_is_an_error():
    with pytest.raises(WorkflowStepDoesNotExistError,
                       match=r"^This workflow does not contain a step with name nowhere$"):
        WorkflowCheckpointer(Quiz(ScriptedLLM([]))).enable_checkpoint("nowhere")


def test_filter_checkpoints_by_step_and_event_types():
    checkpointer, run_id, _ = _recorded()
    assert [c.last_completed_step for c in checkpointer.filter_checkpoints(
        output_event_type=Answered)] == ["answer"]
    assert [c.id_ for c in checkpointer.filter_checkpoints(run_id=run_id,
                                                           last_completed_step="grade")] == [
        f"{run_id}:3"]


def test_filter_checkpoints_needs_a_filter():
    with pytest.raises(ValueError, match=r"^Please specify a filter\.$"):
        WorkflowCheckpointer(Quiz(ScriptedLLM([]))).filter_checkpoints()


def test_a_checkpoint_callback_gets_upstreams_arguments_after_each_step():
    seen = []

    async def callback(run_id, last_completed_step, input_ev, output_ev, ctx):
        seen.append((last_completed_step, type(output_ev).__name__, ctx.to_dict()["is_running"]))

    async def main():
        return await Quiz(ScriptedLLM(["x"])).run(checkpoint_callback=callback, question="?")

    run_sync(main())
    assert seen == [("ask", "Asked", True), ("answer", "Answered", True),
                    ("grade", "StopEvent", True)]


def test_a_stepwise_run_records_checkpoints_its_resume_can_use():
    async def main():
        checkpointer = WorkflowCheckpointer(Quiz(ScriptedLLM([])))
        handler = checkpointer.run(stepwise=True, question="?")
        for event in await handler.run_step():
            handler.ctx.send_event(event)
        await handler.cancel_run()
        first = checkpointer.checkpoints[handler.run_id][0]
        return await Quiz(ScriptedLLM(["y"])).run_from(first)

    assert run_sync(main()) == "y (asked 1)"


class Note(Event):
    text: str


class FanOut(Workflow):
    @step
    async def split(self, ctx: Context, ev: StartEvent) -> Note | None:
        ctx.send_event(Note(text="a"))
        ctx.send_event(Note(text="b"))
        return None

    @step
    async def join(self, ctx: Context, ev: Note) -> StopEvent | None:
        notes = ctx.collect_events(ev, [Note, Note])
        return None if notes is None else StopEvent(result="".join(n.text for n in notes))


def test_a_stepwise_checkpoint_keeps_the_events_its_step_sent():
    async def main():
        checkpointer = WorkflowCheckpointer(FanOut())
        handler = checkpointer.run(stepwise=True)
        await handler.run_step()  # split: its two Notes are held for the caller
        await handler.cancel_run()
        return await FanOut().run_from(checkpointer.checkpoints[handler.run_id][0])

    assert run_sync(main()) == "ab"
