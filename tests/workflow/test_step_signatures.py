"""@step reads a step's wiring from its annotations; a malformed step is named in the error."""

from typing import Optional, Union

import pytest

from agentkit.workflow import Context, Event, StartEvent, StopEvent, Workflow, WorkflowValidationError, step


class A(Event):
    pass


class B(Event):
    pass


def test_a_step_without_an_event_parameter_is_rejected():
    with pytest.raises(WorkflowValidationError,
                       match=r"^Step 'lonely' has no event parameter: annotate one parameter"):
        @step
        async def lonely(self, ctx: Context) -> StopEvent: ...


def test_an_unannotated_parameter_is_rejected():
    with pytest.raises(WorkflowValidationError,
                       match=r"^Step 'bare': parameter 'ev' has no annotation"):
        @step
        async def bare(self, ev) -> StopEvent: ...


def test_a_parameter_annotated_with_a_non_event_is_rejected():
    with pytest.raises(WorkflowValidationError,
                       match=r"^Step 'wrong': parameter 'ev' is annotated str, which is neither "
                             r"an Event type"):
        @step
        async def wrong(self, ev: str) -> StopEvent: ...


def test_two_event_parameters_are_rejected():
    with pytest.raises(WorkflowValidationError,
                       match=r"^Step 'two' has two event parameters \('a', 'b'\)"):
        @step
        async def two(self, a: A, b: B) -> StopEvent: ...


def test_two_context_parameters_are_rejected():
    with pytest.raises(WorkflowValidationError,
                       match=r"^Step 'ctxs' has two Context parameters \('c1', 'c2'\)"):
        @step
        async def ctxs(self, c1: Context, c2: Context, ev: A) -> StopEvent: ...


def test_var_positional_parameters_are_rejected():
    with pytest.raises(WorkflowValidationError, match=r"^Step 'va': \*rest is not allowed"):
        @step
        async def va(self, ev: A, *rest: int) -> StopEvent: ...


def test_var_keyword_parameters_are_rejected():
    with pytest.raises(WorkflowValidationError, match=r"^Step 'kw': \*\*kwargs is not allowed"):
        @step
        async def kw(self, ev: A, **kwargs: int) -> StopEvent: ...


def test_a_missing_return_annotation_is_rejected():
    with pytest.raises(WorkflowValidationError,
                       match=r"^Step 'silent' has no return annotation"):
        @step
        async def silent(self, ev: A): ...


def test_a_non_event_return_annotation_is_rejected():
    with pytest.raises(WorkflowValidationError,
                       match=r"^Step 'texty' is annotated to return str, which is not an Event"):
        @step
        async def texty(self, ev: A) -> str: ...


@pytest.mark.parametrize("bad", [0, -1, 1.5, True])
def test_num_workers_must_be_a_positive_int(bad):
    with pytest.raises(WorkflowValidationError, match=r"num_workers must be an int >= 1"):
        step(num_workers=bad)


def test_step_decorates_only_functions():
    with pytest.raises(WorkflowValidationError, match=r"^@step decorates a function"):
        step(42)


def test_a_union_annotation_accepts_each_member():
    class W(Workflow):
        @step
        async def begin(self, ev: StartEvent) -> A | B: ...

        @step
        async def either(self, ev: A | B) -> StopEvent: ...

    assert W().graph.steps["either"].accepts == (A, B)


def test_typing_union_and_optional_read_like_the_pipe_syntax():
    class W(Workflow):
        @step
        async def begin(self, ev: StartEvent) -> Optional[Union[A, B]]: ...

        @step
        async def end(self, ev: Union[A, B]) -> StopEvent: ...

    spec = W().graph.steps["begin"]
    assert spec.returns == (A, B)


def test_none_return_annotation_declares_no_events():
    class W(Workflow):
        @step
        async def begin(self, ev: StartEvent) -> StopEvent: ...

        @step
        async def side(self, ev: StartEvent) -> None: ...

    assert W().graph.steps["side"].returns == ()


def test_the_context_parameter_is_found_by_its_annotation():
    class W(Workflow):
        @step
        async def begin(self, state: Context, ev: StartEvent) -> StopEvent: ...

    assert W().graph.steps["begin"].ctx_param == "state"


def test_num_workers_defaults_to_four_as_upstream():
    class W(Workflow):
        @step
        async def begin(self, ev: StartEvent) -> StopEvent: ...

    assert W().graph.steps["begin"].num_workers == 4


def test_an_unresolvable_annotation_is_reported_when_the_workflow_is_built():
    class W(Workflow):
        @step
        async def begin(self, ev: "NotDefinedAnywhere") -> StopEvent: ...  # noqa: F821

    with pytest.raises(WorkflowValidationError,
                       match=r"^Step 'begin': cannot resolve its annotations .*NotDefinedAnywhere"):
        W()


def test_an_event_class_defined_after_the_workflow_resolves_when_built():
    class W(Workflow):
        @step
        async def begin(self, ev: StartEvent) -> "Later": ...  # noqa: F821 (defined below)

        @step
        async def end(self, ev: "Later") -> StopEvent: ...  # noqa: F821 (defined below)

    globals()["Later"] = type("Later", (Event,), {})
    try:
        assert W().graph.steps["end"].accepts[0].__name__ == "Later"
    finally:
        del globals()["Later"]
