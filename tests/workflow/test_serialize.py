"""Saving and restoring a context: every malformed saved context gets a ContextSerdeError."""

import contextlib
import json
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentkit.workflow import (
    Context,
    ContextSerdeError,
    Event,
    HumanResponseEvent,
    StartEvent,
    StopEvent,
    Workflow,
    step,
)


class Flow(Workflow):
    @step
    async def begin(self, ev: StartEvent) -> StopEvent:
        return StopEvent()


class Scored(Event):
    score: int


def _saved(**changes) -> dict:
    return {**Context(Flow()).to_dict(), **changes}


def _restore(data):
    return Context.from_dict(Flow(), data)


def test_a_store_key_that_is_not_a_string_is_rejected_when_saving():
    ctx = Context(Flow())
    ctx.store._data["k"] = {1: "one"}
    with pytest.raises(ContextSerdeError,
                       match=r"^cannot save store\['k'\]: key 1 \(keys must be strings"):
        ctx.to_dict()


def test_a_saved_queue_that_is_not_a_list_is_rejected():
    with pytest.raises(ContextSerdeError,
                       match=r"^Context.from_dict: queue of step 'begin' must be a list$"):
        _restore(_saved(queues={"begin": "nope"}))


def test_a_saved_waiter_for_a_non_event_type_is_rejected():
    waiter = {"event_type": "builtins:int", "requirements": {}, "announced": False, "events": []}
    with pytest.raises(ContextSerdeError,
                       match=r"^Context.from_dict: waiter 'w' waits for a non-Event type$"):
        _restore(_saved(waiters={"w": waiter}))


def test_a_saved_model_naming_a_class_that_is_not_a_model_is_rejected():
    item = {"__agentkit__": "model", "type": "builtins:dict", "fields": {}, "extra": {}}
    with pytest.raises(ContextSerdeError, match=r"^cannot restore stream\[0\]: builtins:dict is "
                                                r"not a model$"):
        _restore(_saved(stream=[item]))


def test_a_saved_model_without_fields_is_rejected():
    item = {"__agentkit__": "model", "type": f"{__name__}:Scored", "extra": {}}
    with pytest.raises(ContextSerdeError,
                       match=r"^cannot restore stream\[0\]: `fields` must be a dict, got NoneType$"):
        _restore(_saved(stream=[item]))


def test_a_saved_entry_of_an_unknown_kind_is_rejected():
    item = {"__agentkit__": "pickle", "type": "builtins:dict"}
    with pytest.raises(ContextSerdeError,
                       match=r"^cannot restore store\['x'\]: unknown kind 'pickle'$"):
        _restore(_saved(store={"x": item}))


def test_a_saved_object_whose_class_has_no_from_dict_is_rejected():
    item = {"__agentkit__": "object", "type": "builtins:dict", "data": {}}
    with pytest.raises(ContextSerdeError,
                       match=r"^cannot restore store\['x'\]: builtins:dict has no from_dict$"):
        _restore(_saved(store={"x": item}))


def test_a_saved_object_its_class_cannot_load_is_rejected():
    item = {"__agentkit__": "object", "type": "agentkit.memory:ChatMemoryBuffer", "data": []}
    with pytest.raises(ContextSerdeError,
                       match=r"^cannot restore store\['x'\] with ChatMemoryBuffer.from_dict: "
                             r"ChatMemoryBuffer data must be a JSON object"):
        _restore(_saved(store={"x": item}))


def test_a_saved_event_whose_fields_fail_validation_is_rejected():
    item = {"__agentkit__": "model", "type": f"{__name__}:Scored",
            "fields": {"score": "high"}, "extra": {}}
    # pydantic's report follows agentkit's frame
    with pytest.raises(ContextSerdeError, match=r"^cannot restore stream\[0\] as Scored: \S"):
        _restore(_saved(stream=[item]))


@pytest.mark.parametrize("part", ["fields", "extra"])
def test_a_saved_model_whose_fields_are_a_saved_object_is_rejected(part):
    memory = {"__agentkit__": "object", "type": "agentkit.memory:ChatMemoryBuffer", "data": {}}
    item = {"__agentkit__": "model", "type": f"{__name__}:Scored", "fields": {"score": 1},
            "extra": {}, part: memory}
    with pytest.raises(ContextSerdeError,
                       match=rf"^cannot restore stream\[0\]: `{part}` must map field names"):
        _restore(_saved(stream=[item]))


def test_a_saved_context_nested_deeper_than_python_can_walk_is_rejected():
    deep: list = []
    for _ in range(sys.getrecursionlimit()):  # one level per frame is deeper than Python walks
        deep = [deep]
    with pytest.raises(ContextSerdeError, match="nested too deeply"):
        _restore(_saved(store={"x": deep}))


def test_events_with_fields_and_extras_round_trip():
    ctx = Context(Flow())
    ctx.write_event_to_stream(HumanResponseEvent(response="yes", meta={"n": Scored(score=1)}))
    restored = _restore(json.loads(json.dumps(ctx.to_dict())))
    assert restored._stream.pending() == [HumanResponseEvent(response="yes",
                                                             meta={"n": Scored(score=1)})]


_paths = st.sampled_from(["builtins:int", "builtins:dict", "agentkit.memory:ChatMemoryBuffer",
                          f"{__name__}:Scored", "agentkit.workflow:StopEvent", "..", ":",
                          "nowhere:x", "os:system"])


def _tagged(inner: st.SearchStrategy) -> st.SearchStrategy:
    """Entries that look like saved models/objects, with any parts missing or wrong."""
    return st.fixed_dictionaries(
        {"__agentkit__": st.sampled_from(["model", "object", "other"]), "type": _paths},
        optional={"fields": inner, "extra": inner, "data": inner})


_json = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (st.lists(inner, max_size=3)
                   | st.dictionaries(st.text(max_size=8), inner, max_size=3)
                   | _tagged(inner)),
    max_leaves=10)
_keys = st.sampled_from(["format", "workflow", "steps", "is_running", "store", "queues",
                         "buffers", "waiters", "unclaimed", "stream"])


@settings(max_examples=200, deadline=None)
@given(key=_keys, value=_json)
def test_any_malformed_part_of_a_saved_context_is_a_context_serde_error(key, value):
    data = _saved(**{key: value})
    with contextlib.suppress(ContextSerdeError):
        _restore(data)


@settings(max_examples=200, deadline=None)
@given(value=_json)
def test_any_malformed_saved_event_is_a_context_serde_error(value):
    data = _saved(queues={"begin": [value]})
    with contextlib.suppress(ContextSerdeError):
        _restore(data)
