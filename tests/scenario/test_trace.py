"""Traces: the normalised, deterministic record of a run, built from bus events."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentkit.core.sim import Stopwatch
from agentkit.eval._samples import run_samples, sample_count
from agentkit.instrumentation import collect_events
from agentkit.llms.mock import ScriptedLLM
from agentkit.llms.types import ChatMessage, ToolSelection, fix_message
from agentkit.scenario import discover_scenarios, load_scenario, run_scenario
from agentkit.trace import _trace as _trace_module
from agentkit.trace._diff import diff_traces
from agentkit.trace._trace import (
    IdNormalizer,
    ToolCallTrace,
    TurnTrace,
    build_turn,
    critical_path,
)
from tests.fake_keys import fake_key
from tests.python_calls import python_calls

from .conftest import MINIMAL

SCENARIOS = Path(__file__).parents[2] / "scenarios"
BUNDLED = [(path, agent) for path in discover_scenarios(SCENARIOS)
           for agent in load_scenario(path).agents]


def _bundled(name: str, agent: str):
    return run_scenario(SCENARIOS / f"{name}.yaml", agent)


# ----------------------------------------------------------------- determinism
@pytest.mark.parametrize(("path", "agent"), BUNDLED,
                         ids=[f"{p.stem}-{a}" for p, a in BUNDLED])
def test_a_bundled_scenario_gives_byte_identical_json_twice_and_matches_its_snapshot(path, agent):
    def trace_json() -> str:
        if sample_count(load_scenario(path), agent) is not None:  # the traces of all samples
            sampled = run_samples(path, agent).trace
            assert sampled is not None
            return sampled.to_json()
        return run_scenario(path, agent).trace.to_json()

    first, second = trace_json(), trace_json()
    committed = (path.parent / "__snapshots__" / path.stem / f"{agent}.json").read_text("utf-8")

    assert first == second
    assert first == committed


# ----------------------------------------------------------------- ids
def test_tool_call_ids_are_numbered_in_order_of_first_appearance():
    trace = _bundled("parallel_calls", "function_calling").trace

    assert [(c.id, c.args["city"]) for c in trace.tool_calls] == [("call_1", "Paris"),
                                                                  ("call_2", "Tokyo")]


def test_messages_refer_to_tool_calls_by_their_normalised_ids():
    turn = _bundled("parallel_calls", "function_calling").trace.turns[0]

    requested = [c["id"] for c in turn.memory[1]["tool_calls"]]
    answered = [m["tool_call_id"] for m in turn.memory if m["role"] == "tool"]

    assert requested == answered == ["call_1", "call_2"]


def test_normalised_ids_continue_across_turns():
    trace = _bundled("multi_turn_memory", "function_calling").trace

    assert [[c.id for c in turn.tool_calls] for turn in trace.turns] == [["call_1"], ["call_2"]]


def test_the_id_normalizer_names_each_raw_id_once_and_keeps_none():
    ids = IdNormalizer()

    assert [ids("x9"), ids("a1"), ids("x9"), ids(None)] == ["call_1", "call_2", "call_1", None]


# ----------------------------------------------------------------- attribution to steps
def test_each_step_holds_its_own_llm_call_and_tool_calls():
    steps = _bundled("tool_raising", "function_calling").trace.steps

    assert [(len(s.llm_calls), [c.args for c in s.tool_calls], s.is_last) for s in steps] == [
        (1, [{"a": 10, "b": 0}], False),
        (1, [{"a": 10, "b": 4}], False),
        (1, [], True),
    ]


def test_parallel_tool_calls_belong_to_the_step_that_requested_them():
    steps = _bundled("slow_tools", "function_calling").trace.steps

    assert [[c.args["city"] for c in s.tool_calls] for s in steps] == [
        ["Paris", "Rome", "Lima"], []]
    assert steps[0].llm_calls[0].response["tool_calls"][2]["id"] == steps[0].tool_calls[2].id


def test_a_step_records_its_input_and_output():
    steps = _bundled("single_tool_call", "react").trace.steps

    assert (steps[0].input, steps[0].is_last) == ("What is 2 + 3?", False)
    assert (steps[-1].output, steps[-1].is_last) == ("2 + 3 = 5", True)


def test_an_llm_call_records_messages_response_usage_latency_and_offered_tools():
    call = _bundled("single_tool_call", "function_calling").trace.llm_calls[0]

    assert call.kind == "chat"
    assert call.messages == [{"role": "user", "content": "What is 2 + 3?"}]
    assert call.response == {"content": "", "tool_calls": [
        {"id": "call_1", "name": "add", "args": {"a": 2, "b": 3}}]}
    assert call.latency == 0.5
    assert call.tools == ["add"]
    assert set(call.usage) == {"prompt_tokens", "completion_tokens", "total_tokens"}


def test_llm_calls_outside_any_agent_step_go_to_a_trailing_step():
    llm = ScriptedLLM(["hello"])
    with collect_events() as events:
        llm.chat([ChatMessage(role="user", content="hi")])

    turn = build_turn("hi", events, IdNormalizer(), response="hello", error=None, memory=[],
                      wall_time=0.0, serial_time=0.0)

    assert [(s.index, len(s.llm_calls)) for s in turn.steps] == [(0, 1)]


def test_a_message_every_call_of_a_turn_sends_is_converted_once(monkeypatch):
    llm = ScriptedLLM(["one", "two", "three"])
    system = ChatMessage(role="system", content="be brief")
    with collect_events() as events:
        for question in ("a", "b", "c"):
            llm.chat([system, ChatMessage(role="user", content=question)])
    converted = []
    convert = IdNormalizer.message
    monkeypatch.setattr(IdNormalizer, "message",
                        lambda self, m: converted.append(m.content) or convert(self, m))

    turn = build_turn("hi", events, IdNormalizer(), response="three", error=None, memory=[],
                      wall_time=0.0, serial_time=0.0)

    assert sorted(converted) == ["a", "b", "be brief", "c"]
    assert [[m["content"] for m in c.messages] for c in turn.steps[0].llm_calls] == [
        ["be brief", "a"], ["be brief", "b"], ["be brief", "c"]]


def test_a_call_resending_the_last_calls_messages_looks_up_only_the_added_ones(monkeypatch):
    llm = ScriptedLLM(["one", "two", "three"])
    sent = [ChatMessage(role="system", content="be brief"), ChatMessage(content="a")]
    with collect_events() as events:
        llm.chat(sent)
        sent.append(ChatMessage(role="assistant", content="one"))
        sent.append(ChatMessage(content="b"))
        llm.chat(sent)
        llm.chat([ChatMessage(role="system", content="be brief"), ChatMessage(content="c")])
    looked_up = []
    look_up = IdNormalizer.message
    monkeypatch.setattr(IdNormalizer, "message",
                        lambda self, m: looked_up.append(m.content) or look_up(self, m))

    turn = build_turn("hi", events, IdNormalizer(), response="three", error=None, memory=[],
                      wall_time=0.0, serial_time=0.0)

    # the second call's first two are the first call's objects; the third call's are others
    assert looked_up == ["be brief", "a", "one", "b", "be brief", "c"]
    assert [[m["content"] for m in c.messages] for c in turn.steps[0].llm_calls] == [
        ["be brief", "a"], ["be brief", "a", "one", "b"], ["be brief", "c"]]


def _conversation() -> list[ChatMessage]:
    return [ChatMessage(role="user", content="Population of Paris?"),
            ChatMessage(role="assistant", content="", additional_kwargs={"tool_calls": [
                ToolSelection(tool_id="raw-9", tool_name="lookup",
                              tool_kwargs={"city": "Paris", "n": 1, "exact": True})]}),
            ChatMessage(role="tool", content="2.1 million",
                        additional_kwargs={"tool_call_id": "raw-9", "name": "lookup"})]


def test_a_fixed_messages_trace_form_is_converted_once_across_runs(monkeypatch):
    fixed = _conversation()
    for message in fixed:
        fix_message(message)
    converted: list[str] = []
    to_dict = ChatMessage.to_dict

    def counted(self: ChatMessage, **options: Any) -> dict[str, Any]:
        converted.append(self.role.value)
        return to_dict(self, **options)

    monkeypatch.setattr(ChatMessage, "to_dict", counted)
    runs = [[IdNormalizer().message(m) for m in fixed] for _ in range(3)]

    assert converted == ["user", "assistant", "tool"]  # the first run's only
    assert runs[0] == runs[1] == runs[2]
    assert runs[0][1] is not runs[1][1]  # each run its own message dicts


def test_a_fixed_message_is_in_a_trace_what_the_same_message_unfixed_is():
    fixed, loose = _conversation(), _conversation()
    for message in fixed:
        fix_message(message)
    before = IdNormalizer()
    before("raw-1")  # another call named first: raw-9 is call_2
    after = IdNormalizer()
    after("raw-1")

    assert [before.message(m) for m in fixed] == [after.message(m) for m in loose]
    assert before.message(fixed[1])["tool_calls"] == [
        {"id": "call_2", "name": "lookup", "args": {"city": "Paris", "n": 1, "exact": True}}]
    assert [IdNormalizer().message(m) for m in fixed] == [
        IdNormalizer().message(m) for m in loose]  # other ids: call_1


def test_equal_messages_of_a_run_are_one_object_fixed_or_not():
    fixed, loose = _conversation(), _conversation()
    for message in fixed:
        fix_message(message)
    ids = IdNormalizer()

    assert all(ids.message(f) is ids.message(m) for f, m in zip(fixed, loose, strict=True))


@pytest.mark.parametrize("value", [
    {"city": "Paris"}, {"n": 1, "ok": True, "none": None, "x": 1.5, "nan": float("nan"),
                        "zero": -0.0, "big": 10 ** 30, "huge": 10 ** 5000},
    {1: "one"}, {"nested": [1, {"a": 2}]}, {}, {"text": "é\u2028\ud800"}, [1, "a"], "text",
    {"when": __import__("datetime").date(2026, 1, 2)}, ("a", 1)])
def test_a_value_in_a_trace_is_what_its_json_reads_back(value):
    jsonable = _trace_module._jsonable
    if isinstance(value, dict) and any(v == 10 ** 5000 for v in value.values()):
        with pytest.raises(ValueError):  # json refuses to read so long an integer back
            jsonable(value)
        return

    assert repr(jsonable(value)) == repr(json.loads(json.dumps(value, default=str)))


def test_flat_tool_arguments_are_copied_without_a_json_round_trip(monkeypatch):
    written: list[Any] = []
    encoder = _trace_module._PLAIN

    class Counted:
        def encode(self, value: Any) -> str:
            written.append(value)
            return encoder.encode(value)

    monkeypatch.setattr(_trace_module, "_PLAIN", Counted())
    flat = {"city": "Paris", "n": 3, "exact": False}

    copied = _trace_module._jsonable(flat)
    _trace_module._jsonable({"cities": ["Paris"]})

    assert copied == flat and copied is not flat
    assert written == [{"cities": ["Paris"]}]


# ----------------------------------------------------------------- tools
def test_the_trace_holds_each_offered_tool_once_per_run_with_description_and_schema():
    trace = _bundled("multi_turn_memory", "function_calling").trace

    tools = trace.to_dict()["tools"]

    assert [t["name"] for t in tools] == ["capital", "weather"]
    assert tools[0]["description"].startswith("capital(")
    assert tools[0]["parameters"]["type"] == "object"
    assert len(trace.llm_calls) > len(tools)  # offered in every call, written once


@pytest.mark.parametrize("agent", ["react", "function_calling"])
def test_tools_described_in_the_prompt_or_in_requests_give_the_same_tools_section(agent):
    function_calling = _bundled("single_tool_call", "function_calling").trace.tools

    assert _bundled("single_tool_call", agent).trace.tools == function_calling


def test_a_changed_tool_description_is_a_readable_change_of_the_trace(write_file):
    described = MINIMAL.replace("  - ref: mocks.tools:add\n", "  - ref: mocks.tools:add\n"
                                "    description: |-\n      Add two numbers.\n      Integers only.\n")
    before = run_scenario(write_file("before.yaml", described)).trace.to_dict()
    after = run_scenario(write_file("after.yaml", described.replace("Integers", "Whole numbers"))
                         ).trace.to_dict()

    assert diff_traces(before, after)[:6] == [
        "tools.add.description:", "  @@ -1,2 +1,2 @@", "   Add two numbers.",
        "  -Integers only.", "  +Whole numbers only.", 'turn 1 ("What is 2 + 3?"):']


# ----------------------------------------------------------------- totals
def test_totals_count_steps_calls_and_tool_errors():
    totals = _bundled("flaky_tool", "function_calling").trace.totals()

    assert (totals.steps, totals.llm_calls, totals.tool_calls, totals.tool_errors) == (3, 3, 2, 1)


def test_totals_sum_the_token_usage_of_every_llm_call(write_file):
    path = write_file("usage.yaml", """\
        format: 1
        name: usage
        tools: [{ref: "mocks.tools:add"}]
        turns: [{user: add}]
        agents:
          function_calling:
            script:
              - tool_calls: [{name: add, args: {a: 1, b: 2}}]
                usage: {prompt_tokens: 10, completion_tokens: 3}
              - {text: "3", usage: {prompt_tokens: 20, completion_tokens: 4}}
        """)

    totals = run_scenario(path).trace.totals()

    assert (totals.prompt_tokens, totals.completion_tokens) == (30, 7)


def test_concurrent_tool_calls_make_wall_time_shorter_than_serial_time():
    totals = _bundled("slow_tools", "function_calling").trace.totals()

    assert (totals.wall_time, totals.serial_time, totals.critical_path) == (4.0, 8.0, 4.0)


def test_sequential_tool_calls_make_wall_time_equal_serial_time():
    totals = _bundled("slow_tools", "react").trace.totals()

    assert (totals.wall_time, totals.serial_time, totals.critical_path) == (10.0, 10.0, 10.0)


def test_each_turn_records_its_own_wall_and_serial_time():
    turn = _bundled("parallel_calls", "function_calling").trace.to_dict()["turns"][0]

    assert turn["time"] == {"wall": 2.0, "serial": 3.0}


def test_the_totals_are_part_of_the_json():
    data = _bundled("single_tool_call", "react").trace.to_dict()

    assert data["totals"]["llm_calls"] == 2 and data["totals"]["wall_time"] == 1.0


# ----------------------------------------------------------------- critical path
@pytest.mark.parametrize(("intervals", "expected"), [
    ([], 0.0),
    ([(0.0, 2.0)], 2.0),
    ([(0.0, 1.0), (1.0, 2.0), (0.0, 2.5)], 3.0),
    ([(0.0, 2.0), (0.0, 2.0), (0.0, 2.0), (2.0, 1.0)], 3.0),
    ([(0.0, 2.0), (1.0, 2.0)], 2.0),
    ([(5.0, 1.0), (0.0, 1.0), (1.0, 1.0), (3.0, 0.5)], 3.5),
], ids=["empty", "one", "chain-beats-long-one", "parallel-then-one", "overlapping",
        "unsorted-with-gaps"])
def test_critical_path_is_the_longest_chain_of_back_to_back_intervals(intervals, expected):
    assert critical_path(intervals) == expected


# ----------------------------------------------------------------- streaming and errors
def test_a_streamed_turn_records_the_streamed_call_and_memory_after_the_stream_ended():
    turn = _bundled("streamed_answer", "react").trace.turns[0]

    assert turn.response == "The capital of Kenya is Nairobi."
    assert turn.steps[-1].llm_calls[0].kind == "stream_chat"
    assert turn.memory[-1] == {"role": "assistant", "content": "The capital of Kenya is Nairobi."}


def test_an_erroring_turn_records_the_error_and_no_later_turn_runs(write_file):
    path = write_file("err.yaml", """\
        format: 1
        name: err
        turns: [{user: first}, {user: second}]
        agents:
          function_calling:
            max_retries: 0
            script:
              - error: {type: server, message: upstream exploded}
              - never used
        expect:
          error: {contains: upstream exploded}
        """)

    trace = run_scenario(path).trace

    assert len(trace.turns) == 1
    assert trace.turns[0].response is None
    assert trace.turns[0].error == "ServerError: upstream exploded"
    assert trace.llm_calls[0].error == "ServerError: upstream exploded"


def test_the_stopwatch_of_a_turn_is_simulated(sim):
    watch = Stopwatch.start()
    sim.clock.advance(1.25)

    assert watch.wall == 1.25


# ----------------------------------------------------------------- handler registry
def _turn_of(events):
    return build_turn("hi", events, IdNormalizer(), response="ok", error=None, memory=[],
                      wall_time=0.0, serial_time=0.0)


def test_a_registered_handler_files_a_new_kind_of_event_into_its_step():
    from dataclasses import dataclass

    from agentkit.core.events import AgentStepEndEvent, AgentStepStartEvent, Event
    from agentkit.trace._trace import trace_handler

    @dataclass(kw_only=True)
    class PlanMade(Event):
        tasks: list[str]

    @trace_handler(PlanMade)
    def _plan(turn, event):
        turn.owner(event.parent_id).details["plan"] = event.tasks

    events = [AgentStepStartEvent(task_id="t", step_id="s", span_id="span-1"),
              PlanMade(tasks=["search", "join"], span_id="span-2", parent_id="span-1"),
              AgentStepEndEvent(task_id="t", step_id="s", span_id="span-1", is_last=True)]

    step = _turn_of(events).steps[0]

    assert step.details == {"plan": ["search", "join"]}


def test_details_are_written_after_the_core_fields_and_omitted_when_empty():
    from agentkit.trace._trace import StepTrace, Trace, TurnTrace

    plain = StepTrace(index=0, input="hi", is_last=True, output="ok")
    planned = StepTrace(index=1, input=None, is_last=True, output="ok",
                        details={"plan": [1, 2]})
    turn = TurnTrace(user="hi", steps=[plain, planned], response="ok", error=None, memory=[],
                     wall_time=0.0, serial_time=0.0, details={"handoffs": []})

    data = Trace(scenario="s", agent="a", turns=[turn]).to_dict()["turns"][0]

    assert "plan" not in data["steps"][0]
    assert list(data["steps"][1])[-1] == "plan"
    assert data["handoffs"] == []


def test_a_detail_that_would_overwrite_a_core_field_is_refused():
    from agentkit.trace._trace import StepTrace, Trace, TurnTrace

    step = StepTrace(index=0, input="hi", is_last=True, output="ok", details={"output": "x"})
    turn = TurnTrace(user="hi", steps=[step], response="ok", error=None, memory=[],
                     wall_time=0.0, serial_time=0.0)

    with pytest.raises(ValueError, match="`output` would overwrite a core field"):
        Trace(scenario="s", agent="a", turns=[turn]).to_dict()


# ----------------------------------------------------------------- secrets
LEAKY = """\
format: 1
name: leaky
tools:
  - ref: mocks.tools:weather
turns:
  - user: Use postgres://admin:pw-s3cr3t-xyz@db.local/app with {key}
agents:
  function_calling:
    script:
      - tool_calls: [{name: weather, args: {city: "Bearer abcdefghijklmnop"}}]
      - Done with postgres://admin:pw-s3cr3t-xyz@db.local/app
""".replace("{key}", fake_key("abcdefghijklmnopqrstuv"))


def test_keys_bearer_tokens_and_url_passwords_in_a_run_never_reach_its_trace(write_file):
    text = run_scenario(write_file("leaky.yaml", LEAKY), "function_calling").trace.to_json()

    for secret in ("pw-s3cr3t-xyz", fake_key("abcdefghijklmnopqrstuv"), "abcdefghijklmnop"):
        assert secret not in text
    assert "postgres://admin:<redacted>@db.local/app" in text


def test_a_trace_is_the_same_whatever_secrets_the_environment_holds(write_file, monkeypatch):
    path = write_file("leaky.yaml", LEAKY)
    without = run_scenario(path, "function_calling").trace.to_json()
    monkeypatch.setenv("PROBE_SERVICE_TOKEN", "db.local/app")

    assert run_scenario(path, "function_calling").trace.to_json() == without


def _call(started: float, latency: float, issued: int, finished: int) -> ToolCallTrace:
    return ToolCallTrace(id=None, name="t", args={}, output="", is_error=False, latency=latency,
                         started=started, issued=issued, finished=finished)


@pytest.mark.parametrize("first, second, ordered", [
    ((0.0, 1.0, 1, 2), (1.0, 1.0, 3, 4), True),     # starts when the first ends
    ((0.0, 1.0, 1, 4), (0.5, 1.0, 2, 5), False),    # starts while the first runs
    ((0.0, 0.0, 1, 2), (0.0, 0.0, 3, 4), True),     # same instant: the first's end came first
    ((0.0, 0.0, 1, 3), (0.0, 0.0, 2, 4), False),    # same instant: it started before that end
])
def test_a_call_ended_before_another_on_the_clock_then_by_the_order_of_events(
        first, second, ordered):
    assert _call(*first).ended_before(_call(*second)) is ordered


def test_a_plain_messages_trace_form_runs_few_python_calls(monkeypatch):
    # issue 36 (a replay's trace building): a message with one text block and no tool calls,
    # ids or name is converted without the content property, the enum's value descriptor, the
    # tool-call and id scans, the message's dict form, or the JSON encoder's Python layers
    # (its key, kept by role and text: the next replay's equal message looks it up)
    from agentkit.trace import _trace

    monkeypatch.setattr(_trace, "_PLAIN_KEYS", _trace._PLAIN_KEYS.emptied())  # (not this
    message = ChatMessage(role="user", content="What is the capital of France?")  # test's own)
    ids = IdNormalizer()
    data, called = python_calls(lambda: ids.message(message))
    assert data == {"role": "user", "content": "What is the capital of France?"}
    assert data == ids._messages[next(iter(ids._messages))]
    assert called == ["<lambda>", "message", "fixed_memo", "_plain", "put"]  # its key kept
    again = IdNormalizer()  # the next run's: its own dict, the same key
    equal = ChatMessage(role="user", content="What is the capital of France?")
    data_again, called = python_calls(lambda: again.message(equal))
    assert called == ["<lambda>", "message", "fixed_memo", "_plain"]
    assert data_again == data and data_again is not data
    assert list(again._messages) == list(ids._messages)


def test_a_message_with_tool_calls_is_not_taken_for_a_plain_one():
    from agentkit.llms.types import ToolSelection

    call = ToolSelection(tool_id="raw-1", tool_name="add", tool_kwargs={"a": 2})
    message = ChatMessage(role="assistant", content="", additional_kwargs={"tool_calls": [call]})
    data = IdNormalizer().message(message)
    assert data["tool_calls"] == [{"id": "call_1", "name": "add", "args": {"a": 2}}]


def test_flat_tool_arguments_are_copied_without_python_calls_per_argument():
    # issue 36 (a replay's trace building): each tool call's arguments
    args = {"city": "Paris", "days": 3, "metric": True, "note": None, "ratio": 0.5}
    copied, called = python_calls(lambda: _trace_module._jsonable(args))
    assert copied == args and copied is not args
    assert called == ["<lambda>", "_jsonable"]
    assert _trace_module._jsonable({"big": 10 ** 20, "nested": {"a": (1,)}}) == {
        "big": 10 ** 20, "nested": {"a": [1]}}


def test_a_turns_trace_is_built_with_few_python_calls_per_event(write_file, monkeypatch):
    # issue 36 (a replay's trace building): the 14 events of a turn with one tool call (two
    # steps, two LLM calls) took 127 Python calls before, 95 after -- no dict form of a
    # message converted only to drop its tool calls, a call's step found by its own span,
    # the spans' parents mapped only when a call is not in its step's span
    import agentkit.harness._runner as runner

    seen: list[tuple[str, list[Any], dict[str, Any]]] = []
    real = runner.build_turn
    monkeypatch.setattr(runner, "build_turn", lambda user, events, ids, **kw: seen.append(
        (user, list(events), kw)) or real(user, events, ids, **kw))
    run_scenario(write_file("demo.yaml", MINIMAL), "function_calling")
    user, events, options = seen[-1]
    first = build_turn(user, events, IdNormalizer(), **options)

    again, called = python_calls(lambda: build_turn(user, events, IdNormalizer(), **options))
    assert isinstance(again, TurnTrace) and again.steps == first.steps
    assert len(called) <= 7.5 * len(events)  # 14 events: 9.1 a piece before, 6.8 after
