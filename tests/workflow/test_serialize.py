"""Saving and restoring a context: a saved context is checked completely before any of it is
used; every problem is one ContextSerdeError naming the path in the saved data, nothing is
ever imported by a name in the data, and a resumed run that cannot progress ends with a clear
error instead of hanging."""

import contextlib
import json
import re
import sys
import textwrap

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentkit.core.sim import run_sync
from agentkit.llms import ChatMessage
from agentkit.memory import ChatMemoryBuffer
from agentkit.workflow import (
    Context,
    ContextSerdeError,
    Event,
    HumanResponseEvent,
    StartEvent,
    StopEvent,
    Workflow,
    WorkflowRuntimeError,
    step,
)
from agentkit.workflow.context import sealed


class Part(Event):
    n: int


class Scored(Event):
    score: int


class Flow(Workflow):
    """Two Parts gathered into one answer; keeps a chat history in its store."""

    context_types = (ChatMemoryBuffer,)

    def context_store_schema(self):
        return {"history": list[ChatMessage], "count": int}

    @step
    async def begin(self, ctx: Context, ev: StartEvent) -> Part:
        ctx.send_event(Part(n=1))
        return Part(n=2)

    @step
    async def gather(self, ctx: Context, ev: Part) -> StopEvent | Scored | None:
        parts = ctx.collect_events(ev, [Part, Part])
        return None if parts is None else StopEvent(result=sum(p.n for p in parts))

    @step
    async def score(self, ev: Scored) -> None:
        return None


def _saved(**changes) -> dict:
    """A saved context of Flow, changed as given and resealed (as a forger would)."""
    data = {**Context(Flow(timeout=None)).to_dict(), **changes}
    return _resealed(data)


def _resealed(data: dict) -> dict:
    return sealed({key: value for key, value in data.items() if key != "digest"})


def _restore(data):
    return Context.from_dict(Flow(timeout=None), data)


def _model(cls, fields, extra=None, **more):
    return {"__agentkit__": "model", "type": f"{cls.__module__}:{cls.__qualname__}",
            "fields": fields, "extra": extra or {}, **more}


def _message(role, content):
    return _model(ChatMessage, {"role": role, "content": content, "additional_kwargs": {},
                                "blocks": []})


def _error(data) -> str:
    with pytest.raises(ContextSerdeError) as caught:
        _restore(data)
    return str(caught.value)


# ---------------------------------------------------------------------- integrity
def test_a_saved_context_changed_after_saving_is_refused():
    async def main():
        ctx = Context(Flow())
        await ctx.store.set("history", [ChatMessage(role="user", content="hi")])
        return ctx.to_dict()

    data = run_sync(main())
    data["store"]["history"][0]["fields"]["role"] = "system"  # a user message made a system one
    assert _error(data).startswith(
        "Context.from_dict: at ['digest']: the saved context was changed after it was saved")


def test_a_saved_context_without_its_digest_is_refused():
    data = Context(Flow()).to_dict()
    del data["digest"]
    assert _error(data) == ("Context.from_dict: at ['digest']: the saved context has no digest "
                            "(save it with to_dict())")


def test_an_unchanged_saved_context_round_trips_through_json():
    async def main():
        ctx = Context(Flow())
        await ctx.store.set("history", [ChatMessage(role="user", content="hi")])
        ctx.write_event_to_stream(HumanResponseEvent(response="yes", meta={"s": Scored(score=1)}))
        restored = _restore(json.loads(json.dumps(ctx.to_dict())))
        return await restored.store.get("history"), restored._stream.pending()

    assert run_sync(main()) == ([ChatMessage(role="user", content="hi")],
                                [HumanResponseEvent(response="yes", meta={"s": Scored(score=1)})])


def test_restoring_contexts_again_builds_no_validator_for_a_store_type_seen_before(monkeypatch):
    from agentkit.workflow import context as context_module

    async def saved():
        ctx = Context(Flow())
        await ctx.store.set("history", [ChatMessage(role="user", content="hi")])
        await ctx.store.set("count", 2)
        return ctx.to_dict()

    data = run_sync(saved())
    built: list[object] = []
    real = context_module.TypeAdapter
    monkeypatch.setattr(context_module, "TypeAdapter",
                        lambda annotation, **kw: built.append(annotation) or real(annotation, **kw))
    context_module._cached_adapter.cache_clear()

    first, second = _restore(data), _restore(data)

    assert built == [list[ChatMessage], int]  # once per type, not once per restore
    assert run_sync(second.store.get("count")) == run_sync(first.store.get("count")) == 2


# ---------------------------------------------------------------------- classes
def test_a_saved_type_never_imports_a_module(tmp_path, monkeypatch):
    (tmp_path / "planted_module.py").write_text(textwrap.dedent("""
        import builtins
        builtins.PLANTED_RAN = True

        class Boom:
            pass
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    data = _saved(stream=[{"__agentkit__": "object", "type": "planted_module:Boom", "data": {}}])
    message = _error(data)
    assert ("planted_module" not in sys.modules, message) == (
        True, "Context.from_dict: at ['stream'][0]['type']: class planted_module:Boom is not one "
              "this workflow restores (its events, the models their fields name, and the types "
              "it declares; register another with workflow.register_context_types(...)); "
              "nothing is imported from saved data")


def test_a_class_the_workflow_does_not_declare_is_refused_even_if_imported():
    other = {"__agentkit__": "object", "type": "agentkit.core.sim:VirtualClock", "data": {}}
    assert "class agentkit.core.sim:VirtualClock is not one this workflow restores" in _error(
        _saved(store={"m": other}))


def test_a_type_registered_on_the_workflow_restores():
    class Note(Event):
        text: str

    async def main():
        wf = Flow()
        wf.register_context_types(Note)
        ctx = Context(wf)
        await ctx.store.set("note", Note(text="kept"))
        return await Context.from_dict(wf, ctx.to_dict()).store.get("note")

    assert run_sync(main()) == Note(text="kept")


def test_a_saved_model_naming_a_class_that_is_not_a_model_is_refused():
    item = {"__agentkit__": "object", "type": f"{ChatMemoryBuffer.__module__}:ChatMemoryBuffer",
            "data": {}}
    item = {**item, "__agentkit__": "model", "fields": {}, "extra": {}}
    del item["data"]
    assert _error(_saved(store={"x": item})) == (
        "Context.from_dict: at ['store']['x']['type']: agentkit.memory.chat_memory_buffer:"
        "ChatMemoryBuffer is not a pydantic model")


def test_a_saved_model_with_a_field_its_class_does_not_declare_is_refused():
    assert _error(_saved(stream=[_model(Scored, {"score": 1, "bonus": 2})])) == (
        "Context.from_dict: at ['stream'][0]['fields']: Scored has no field(s) 'bonus'")


def test_a_saved_model_with_unknown_keys_is_refused():
    assert _error(_saved(stream=[_model(Scored, {"score": 1}, code="x")])) == (
        "Context.from_dict: at ['stream'][0]: unknown key(s) 'code' in a saved model")


def test_a_saved_model_without_fields_is_refused():
    item = _model(Scored, {})
    del item["fields"]
    assert _error(_saved(stream=[item])) == (
        "Context.from_dict: at ['stream'][0]['fields']: must be a dict, got NoneType")


def test_a_saved_entry_of_an_unknown_kind_is_refused():
    assert _error(_saved(store={"x": {"__agentkit__": "pickle", "type": "builtins:dict"}})) == (
        "Context.from_dict: at ['store']['x']['__agentkit__']: unknown kind 'pickle' (expected "
        "'model' or 'object')")


def test_a_saved_object_its_class_cannot_load_is_refused():
    item = {"__agentkit__": "object",
            "type": f"{ChatMemoryBuffer.__module__}:ChatMemoryBuffer", "data": []}
    assert _error(_saved(store={"x": item})).startswith(
        "Context.from_dict: at ['store']['x']['data']: ChatMemoryBuffer.from_dict rejected it: "
        "ChatMemoryBuffer data must be a JSON object")


def test_a_saved_event_whose_fields_fail_validation_is_refused():
    # pydantic's report follows agentkit's frame
    assert re.match(r"^Context.from_dict: at \['stream'\]\[0\]: not a valid Scored: \S",
                    _error(_saved(stream=[_model(Scored, {"score": "high"})])))


# ---------------------------------------------------------------------- shape and references
def test_an_unknown_part_of_a_saved_context_is_refused():
    assert _error(_saved(extra_part=1)) == ("Context.from_dict: at ['extra_part']: not part of a "
                                            "saved context")


def test_is_running_must_be_a_boolean():
    assert _error(_saved(is_running=1)) == ("Context.from_dict: at ['is_running']: must be a bool, "
                                            "got int")


def test_a_saved_queue_that_is_not_a_list_is_refused():
    assert _error(_saved(is_running=True, queues={"gather": "nope"})) == (
        "Context.from_dict: at ['queues']['gather']: must be a list, got str")


def test_a_queue_for_a_step_the_workflow_does_not_have_is_refused():
    assert _error(_saved(is_running=True, queues={"nowhere": []})) == (
        "Context.from_dict: at ['queues']['nowhere']: no step named 'nowhere' in Flow")


def test_an_event_queued_for_a_step_that_does_not_accept_it_is_refused():
    queues = {"gather": [_model(Scored, {"score": 1})]}
    assert _error(_saved(is_running=True, queues=queues)) == (
        "Context.from_dict: at ['queues']['gather'][0]: step 'gather' accepts Part, got Scored")


def test_a_plain_dict_where_the_workflow_keeps_messages_is_refused():
    history = [{"role": "user", "content": "hi"}]  # a message with its class tag taken off
    # pydantic's report between agentkit's path and the type the workflow declares
    assert re.fullmatch(r"Context.from_dict: at \['store'\]\['history'\]\[0\]\['role'\]: .+ "
                        r"\(the workflow keeps a list\[agentkit.llms.types.ChatMessage\] here\)",
                        _error(_saved(store={"history": history})))


def test_a_store_value_of_the_wrong_type_is_refused():
    assert re.fullmatch(r"Context.from_dict: at \['store'\]\['count'\]: .+ \(the workflow "
                        r"keeps a int here\)", _error(_saved(store={"count": True})))


def test_a_saved_waiter_for_a_type_the_workflow_does_not_restore_is_refused():
    waiter = {"event_type": "builtins:int", "requirements": {}, "announced": False, "events": []}
    assert _error(_saved(is_running=True, waiters={"w": waiter})) == (
        "Context.from_dict: at ['waiters']['w']['event_type']: builtins:int is not an event type "
        "this workflow restores")


def test_a_waiters_event_of_another_type_is_refused():
    waiter = {"event_type": "agentkit.workflow.events:HumanResponseEvent", "requirements": {},
              "announced": True, "events": [_model(Scored, {"score": 1})]}
    assert _error(_saved(is_running=True, waiters={"w": waiter})) == (
        "Context.from_dict: at ['waiters']['w']['events'][0]: must be HumanResponseEvent, got "
        "Scored")


def test_a_waiters_event_that_misses_its_requirements_is_refused():
    waiter = {"event_type": "agentkit.workflow.events:HumanResponseEvent",
              "requirements": {"response": "yes"}, "announced": True,
              "events": [_model(HumanResponseEvent, {}, {"response": "no"})]}
    assert _error(_saved(is_running=True, waiters={"w": waiter})) == (
        "Context.from_dict: at ['waiters']['w']['events'][0]: does not meet the waiter's "
        "requirements")


def test_a_context_saved_after_its_run_ended_holds_no_queued_events():
    assert _error(_saved(queues={"gather": [_model(Part, {"n": 1})]})) == (
        "Context.from_dict: at ['queues']: a context saved with no run in progress (is_running "
        "false) holds no run state")


def test_a_saved_context_nested_deeper_than_python_can_walk_is_refused():
    deep: list = []
    # deeper than Python walks: its recursion limit (3.11's JSON encoder) and the C stack's
    # (3.12 and later: the encoder counts C levels, 8,000-10,000, beyond the Python limit)
    for _ in range(max(sys.getrecursionlimit(), 100_000)):
        deep = [deep]
    with pytest.raises(ContextSerdeError, match="nested too deeply"):
        _restore({**Context(Flow()).to_dict(), "store": {"x": deep}})


# ---------------------------------------------------------------------- resumed runs
def test_a_resumed_run_with_nothing_left_to_do_ends_with_a_clear_error():
    async def main():
        wf = Flow(timeout=None)  # no timeout: a stuck run would wait forever
        return await wf.run(ctx=Context.from_dict(wf, _saved(is_running=True)))

    with pytest.raises(WorkflowRuntimeError,
                       match=r"^Workflow Flow cannot progress when it resumed: no step is running "
                             r"and no event is waiting for a step"):
        run_sync(main())


def test_a_resumed_run_that_stalls_ends_with_a_clear_error():
    async def main():
        wf = Flow(timeout=None)
        saved = _saved(is_running=True, queues={"gather": [_model(Part, {"n": 1})]})
        return await wf.run(ctx=Context.from_dict(wf, saved))  # gather waits for a 2nd Part

    with pytest.raises(WorkflowRuntimeError,
                       match=r"^Workflow Flow cannot progress after step 'gather' emitted no "
                             r"event"):
        run_sync(main())


def test_a_restored_context_resumes_and_finishes():
    async def main():
        wf = Flow(timeout=None)
        saved = _saved(is_running=True, queues={"gather": [_model(Part, {"n": 1}),
                                                           _model(Part, {"n": 4})]})
        return await wf.run(ctx=Context.from_dict(wf, saved))

    assert run_sync(main()) == 5


# ---------------------------------------------------------------------- fuzzing
_paths = st.sampled_from(["builtins:int", "builtins:dict", "agentkit.memory:ChatMemoryBuffer",
                          f"{__name__}:Scored", f"{__name__}:Part", "agentkit.workflow:StopEvent",
                          "agentkit.llms.types:ChatMessage", "..", ":", "nowhere:x", "os:system"])


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
                         "buffers", "waiters", "unclaimed", "stream", "digest", "other"])


@pytest.mark.slow  # property test at full size
@settings(max_examples=200, deadline=None)
@given(key=_keys, value=_json, reseal=st.booleans())
def test_any_malformed_part_of_a_saved_context_is_a_context_serde_error(key, value, reseal):
    data = {**Context(Flow()).to_dict(), key: value}
    with contextlib.suppress(ContextSerdeError):
        _restore(_resealed(data) if reseal else data)


@pytest.mark.slow  # property test at full size
@settings(max_examples=200, deadline=None)
@given(value=_json, step_name=st.sampled_from(["gather", "score", "begin"]))
def test_any_malformed_saved_event_is_a_context_serde_error(value, step_name):
    with contextlib.suppress(ContextSerdeError):
        _restore(_saved(is_running=True, queues={step_name: [value]}))
