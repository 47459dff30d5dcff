"""Scenarios that resume a recorded workflow run (``resume_from:``): the replayed prefix, the
continuation from the checkpoint, determinism, the loader's errors and a changed recording."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from agentkit.harness import load
from agentkit.harness._agent_types import register_agent_type, resolve_agent_type
from agentkit.harness._record import record_scenario
from agentkit.llms.mock import ScriptedLLM, ScriptedResponse, tool_call
from agentkit.scenario import ScenarioError, load_scenario, run_scenario

REPO = Path(__file__).parents[2]
BUNDLED = REPO / "scenarios" / "checkpoint_resume.yaml"


@pytest.fixture
def bundled(tmp_path: Path) -> Path:
    """A copy of the bundled checkpoint_resume scenario with its cassette and snapshots."""
    target = tmp_path / "scenarios"
    (target / "cassettes").mkdir(parents=True)
    shutil.copy(BUNDLED, target / BUNDLED.name)
    shutil.copy(BUNDLED.parent / "cassettes" / "checkpoint_resume.function_agent.yaml",
                target / "cassettes")
    shutil.copytree(BUNDLED.parent / "__snapshots__" / "checkpoint_resume",
                    target / "__snapshots__" / "checkpoint_resume")
    return target / BUNDLED.name


def _edit(path: Path, old: str, new: str) -> Path:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")
    return path


def _error(path: Path) -> str:
    with pytest.raises(ScenarioError) as caught:
        load(path)
    return str(caught.value)


def _line_of(path: Path, text: str) -> int:
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if text in line)


# ---------------------------------------------------------------------------- the run
def test_a_resumed_run_replays_the_recorded_steps_then_goes_on_with_its_own_script():
    result = run_scenario(BUNDLED, "agent_workflow")

    assert result.passed, result.verdict.lines()
    steps = result.trace.steps
    assert [[c.name for c in s.tool_calls] for s in steps] == [["add"], ["multiply"], []]
    assert steps[0].input == "What is (2 + 3) * 4?" and steps[1].input is None
    assert result.trace.turns[0].details["resumed"] == {"from": "function_agent",
                                                        "after_step": 1}
    assert result.trace.turns[0].response == "5 times 4 is 20."


def test_the_replayed_steps_are_the_recorded_ones():
    recorded = run_scenario(BUNDLED, "function_agent").trace.to_dict()["turns"][0]["steps"]
    resumed = run_scenario(BUNDLED, "agent_workflow").trace.to_dict()["turns"][0]["steps"]

    assert resumed[0] == recorded[0]
    assert resumed[1:] != recorded[1:]


def test_the_continuation_sees_the_recorded_steps_work():
    first_call = run_scenario(BUNDLED, "agent_workflow").trace.steps[1].llm_calls[0]

    assert [(m["role"], m.get("content")) for m in first_call.messages] == [
        ("user", "What is (2 + 3) * 4?"), ("assistant", ""), ("tool", "5")]


def test_a_resumed_run_is_byte_identical_across_runs():
    first = run_scenario(BUNDLED, "agent_workflow").trace.to_json()

    assert run_scenario(BUNDLED, "agent_workflow").trace.to_json() == first


def test_the_continuation_takes_simulated_time_after_the_replayed_steps():
    totals = run_scenario(BUNDLED, "agent_workflow").trace.totals()

    # the recorded step (0.8 s model, 0.5 s add), then 1 s per scripted call and 0.5 s multiply
    assert totals.wall_time == pytest.approx(0.8 + 0.5 + 1.0 + 0.5 + 1.0)


def test_a_resume_goes_on_in_later_turns_when_its_step_ends_a_turn(write_file):
    path = write_file("scenarios/two_turns.yaml", """\
        format: 1
        name: two_turns
        tools: [{ref: "mocks.tools:add"}, {ref: "mocks.tools:multiply"}]
        turns:
          - user: What is 2 + 3?
          - user: And times 4?
        agents:
          function_agent:
            recording: cassettes/two_turns.function_agent.yaml
          agent_workflow:
            resume_from: {recording: function_agent, step: 2}
            team:
              - name: Agent
                description: Arithmetic.
                script:
                  - tool_calls: [{name: multiply, args: {a: 5, b: 4}}]
                  - It is 20.
        """)
    recording = record_scenario(path, "function_agent", ScriptedLLM([
        ScriptedResponse(tool_calls=[tool_call("add", a=2, b=3)]), "It is 5.",
        ScriptedResponse(tool_calls=[tool_call("multiply", a=5, b=4)]), "That makes 20."]))
    assert recording.written, recording.problems

    result = run_scenario(path, "agent_workflow")

    assert result.passed, result.verdict.lines()
    first, second = result.trace.turns
    assert (first.response, second.response) == ("It is 5.", "It is 20.")
    assert "resumed" not in first.details
    assert second.details["resumed"] == {"from": "function_agent", "after_step": 2}
    assert [m["content"] for m in second.memory if m["role"] == "user"] == [
        "What is 2 + 3?", "And times 4?"]


def test_a_resume_inside_a_later_turn_replays_the_turns_before_it(write_file):
    path = write_file("scenarios/later.yaml", """\
        format: 1
        name: later
        tools: [{ref: "mocks.tools:add"}, {ref: "mocks.tools:multiply"}]
        turns:
          - user: Hello
          - user: What is (2 + 3) * 4?
        agents:
          function_agent:
            recording: cassettes/later.function_agent.yaml
          agent_workflow:
            resume_from: {recording: function_agent, step: 2}
            team:
              - name: Agent
                description: Arithmetic.
                script:
                  - tool_calls: [{name: multiply, args: {a: 5, b: 4}}]
                  - It is 20.
        """)
    recording = record_scenario(path, "function_agent", ScriptedLLM([
        "Hi!", ScriptedResponse(tool_calls=[tool_call("add", a=2, b=3)]),
        ScriptedResponse(tool_calls=[tool_call("multiply", a=5, b=4)]), "20."]))
    assert recording.written, recording.problems

    result = run_scenario(path, "agent_workflow")

    assert result.passed, result.verdict.lines()
    assert [t.response for t in result.trace.turns] == ["Hi!", "It is 20."]
    assert [len(t.steps) for t in result.trace.turns] == [1, 3]
    assert result.trace.turns[1].details["resumed"]["after_step"] == 2


# ---------------------------------------------------------------------------- wrong on purpose
def test_a_recording_that_changed_fails_the_resumed_run_saying_how(bundled):
    cassette = bundled.parent / "cassettes" / "checkpoint_resume.function_agent.yaml"
    text = cassette.read_text(encoding="utf-8")
    first_args = text.index("tool_kwargs:")  # the first reply's add call: b 3 -> 4
    cassette.write_text(text[:first_args] + text[first_args:].replace("b: 3", "b: 4", 1),
                        encoding="utf-8")

    result = run_scenario(bundled, "agent_workflow")

    changed = [p for p in result.problems if p.startswith("the recording of `function_agent` "
                                                         "changed")]
    assert not result.passed and len(changed) == 1
    assert "replaying its first 1 step no longer gives its recorded trace" in changed[0]
    assert "b: 3 -> 4" in changed[0]


def test_a_step_past_the_recorded_run_is_a_load_error_at_its_line(bundled):
    _edit(bundled, "step: 1}", "step: 3}")

    assert _error(bundled) == (
        f"{bundled}:{_line_of(bundled, 'step: 3')}: agents.agent_workflow.resume_from.step: "
        "step 3 is out of range: the recorded run of `function_agent` has 3 steps "
        f"({bundled.parent / '__snapshots__' / 'checkpoint_resume' / 'function_agent.json'}), "
        "and a resume follows one of steps 1 to 2")


def test_step_zero_is_a_load_error(bundled):
    _edit(bundled, "step: 1}", "step: 0}")

    assert "agents.agent_workflow.resume_from.step: must be >= 1, got 0" in _error(bundled)


def test_an_unknown_recording_is_a_load_error_naming_those_there_are(bundled):
    _edit(bundled, "recording: function_agent,", "recording: function_agnet,")

    assert _error(bundled) == (
        f"{bundled}:{_line_of(bundled, 'function_agnet')}: agents.agent_workflow.resume_from."
        "recording: unknown recording `function_agnet`: it is not an agent type of this "
        "scenario; agent types with a recording: function_agent")


def test_a_recording_of_an_agent_type_without_one_is_a_load_error(bundled):
    _edit(bundled, "agents:\n", "agents:\n  react_agent:\n    script: [done]\n")
    _edit(bundled, "recording: function_agent,", "recording: react_agent,")

    assert "unknown recording `react_agent`: it has no `recording:`" in _error(bundled)


def test_resuming_its_own_recording_is_a_load_error(bundled):
    _edit(bundled, "    recording: cassettes/", "    resume_from: {recording: function_agent, "
                                               "step: 1}\n    recording: cassettes/")

    assert "agents.function_agent.resume_from.recording: `function_agent` cannot resume its " \
           "own recorded run" in _error(bundled)


def test_a_resumed_agent_type_that_is_not_a_workflow_agent_is_a_load_error(bundled):
    _edit(bundled, "agents:\n", "agents:\n  function_calling:\n    resume_from: {recording: "
                                "function_agent, step: 1}\n    script: [done]\n")

    error = _error(bundled)

    assert (f"{bundled}:{_line_of(bundled, 'function_calling:') + 1}: agents.function_calling."
            "resume_from: agent type `function_calling` is not a workflow agent") in error
    assert "resumed by workflow agent types only (function_agent, react_agent, " \
           "agent_workflow)" in error


def test_a_recorded_agent_type_that_is_not_a_workflow_agent_is_a_load_error(bundled):
    _edit(bundled, "agents:\n", "agents:\n  function_calling:\n    recording: cassettes/x.yaml\n")
    _edit(bundled, "recording: function_agent,", "recording: function_calling,")

    assert ("agents.agent_workflow.resume_from.recording: agent type `function_calling` is not "
            "a workflow agent") in _error(bundled)


def test_a_resumed_agent_type_needs_a_script_or_recording_of_its_own(write_file):
    path = write_file("s.yaml", """\
        format: 1
        name: s
        turns: [{user: hi}]
        agents:
          function_agent: {recording: c.yaml}
          react_agent:
            resume_from: {recording: function_agent, step: 1}
        """)

    assert "a resumed agent type goes on with a `script` or `recording` of its own" in \
        _error(path)


def test_a_resume_before_the_recording_is_recorded_says_to_record_it_first(bundled):
    (bundled.parent / "__snapshots__" / "checkpoint_resume" / "function_agent.json").unlink()
    load(bundled)  # recording it needs the file to load

    with pytest.raises(ScenarioError) as caught:
        run_scenario(bundled, "agent_workflow")

    assert str(caught.value) == (
        f"{bundled}:{_line_of(bundled, 'resume_from')}: agents.agent_workflow.resume_from."
        "recording: the recorded run of `function_agent` has no recorded trace yet (its "
        f"snapshot); record it first: agentkit record {bundled} --agent function_agent")


def test_a_checkpoint_that_does_not_fit_the_resumed_workflow_says_why(bundled):
    _edit(bundled, "      - name: Agent", "      - name: Calc")

    result = run_scenario(bundled, "agent_workflow")

    assert result.stopped_by is not None
    assert "the checkpoint after step 1 of the recorded run of `function_agent` does not fit " \
           "this agent type's workflow (it needs the recorded run's agents, by name)" in \
           result.stopped_by


def test_loading_without_checks_still_reports_the_resume_at_run_time(bundled):
    _edit(bundled, "agents:\n", "agents:\n  function_calling:\n    resume_from: {recording: "
                                "function_agent, step: 1}\n    script: [done]\n")
    scenario = load_scenario(bundled)

    with pytest.raises(ScenarioError, match="agent type `function_calling` is not a workflow "
                                            "agent"):
        run_scenario(scenario, "function_calling")



def test_an_agent_type_registered_as_a_workflow_can_resume(bundled, restore_agent_types):
    register_agent_type("my_flow", resolve_agent_type("function_agent").factory, workflow=True)
    _edit(bundled, "  agent_workflow:", "  my_flow:\n    resume_from: {recording: function_agent, "
                                        "step: 2}\n    script: [It is 20.]\n  agent_workflow:")

    result = run_scenario(bundled, "my_flow")

    assert result.passed, result.verdict.lines()
    assert result.trace.turns[0].response == "It is 20."


def test_a_factory_registered_without_workflow_cannot_resume(bundled, restore_agent_types):
    register_agent_type("my_flow", resolve_agent_type("function_agent").factory)
    _edit(bundled, "  agent_workflow:", "  my_flow:\n    resume_from: {recording: function_agent, "
                                        "step: 2}\n    script: [It is 20.]\n  agent_workflow:")

    assert "agents.my_flow.resume_from: agent type `my_flow` is not a workflow agent" in \
        _error(bundled)


def test_recording_a_resumed_agent_type_records_only_its_continuation(bundled):
    _edit(bundled, "        latency: 1.0\n        script:", "        recording: cassettes/x.yaml"
                                                           "\n        script:")
    text = bundled.read_text()
    bundled.write_text(text[:text.index("        script:", text.index("recording: cassettes/x"))])
    live = ScriptedLLM([ScriptedResponse(tool_calls=[tool_call("multiply", a=5, b=4)]),
                        "20, from another model."])

    recording = record_scenario(bundled, "agent_workflow", live)

    assert recording.written, recording.problems
    assert len(live.requests) == 2  # the recorded step 1 came from the first cassette
    replay = run_scenario(bundled, "agent_workflow")
    assert replay.passed, replay.verdict.lines()
    assert replay.trace.turns[0].response == "20, from another model."


@pytest.mark.agentkit_allow_unused_script  # the continuation never ran
def test_a_recorded_trace_longer_than_its_replay_says_nothing_was_resumed(bundled):
    snapshot = bundled.parent / "__snapshots__" / "checkpoint_resume" / "function_agent.json"
    trace = json.loads(snapshot.read_text())
    trace["turns"][0]["steps"].append(trace["turns"][0]["steps"][-1])
    snapshot.write_text(json.dumps(trace))
    _edit(bundled, "step: 1}", "step: 3}")

    result = run_scenario(bundled, "agent_workflow")

    assert not result.passed
    assert result.problems[0].startswith(
        "the run ended before the resume point: the replay of `function_agent`'s recording took "
        "3 steps")


def test_a_recorded_step_that_waited_for_a_human_is_replayed_with_the_turns_answer(write_file):
    path = write_file("scenarios/asks.yaml", """\
        format: 1
        name: asks
        tools: [{ref: "mocks.tools:ask_human"}, {ref: "mocks.tools:lookup_order"}]
        turns:
          - user: Cancel my order please.
            human: ["A-1002"]
        agents:
          function_agent:
            recording: cassettes/asks.function_agent.yaml
          agent_workflow:
            resume_from: {recording: function_agent, step: 1}
            team:
              - name: Agent
                description: Orders.
                script:
                  - tool_calls: [{name: lookup_order, args: {order_id: A-1002}}]
                  - A-1002 can be cancelled.
        """)
    recording = record_scenario(path, "function_agent", ScriptedLLM([
        ScriptedResponse(tool_calls=[tool_call("ask_human", question="Which order id?")]),
        ScriptedResponse(tool_calls=[tool_call("lookup_order", order_id="A-1002")]),
        "Order A-1002 is processing."]))
    assert recording.written, recording.problems

    result = run_scenario(path, "agent_workflow")

    assert result.passed, result.verdict.lines()
    turn = result.trace.turns[0]
    assert turn.details["human"] == [{"request": "Which order id?", "response": "A-1002"}]
    assert [c.name for c in turn.tool_calls] == ["ask_human", "lookup_order"]
    assert turn.tool_calls[0].output == "A-1002"
    assert turn.response == "A-1002 can be cancelled."


def test_a_recorded_trace_of_the_older_trace_format_with_the_same_steps_still_resumes(bundled):
    # format 2 held every message list in full; an upgrade does not make the recording "changed"
    from agentkit.trace._read import expand_trace

    recorded = bundled.parent / "__snapshots__" / "checkpoint_resume" / "function_agent.json"
    full = json.loads(json.dumps(expand_trace(json.loads(recorded.read_text())), default=list))
    recorded.write_text(json.dumps({**full, "format": 2}, indent=2))

    result = run_scenario(bundled, "agent_workflow")

    assert result.passed, result.verdict.lines()
    assert any("resumed" in turn.details for turn in result.trace.turns)


def test_a_recorded_trace_whose_references_cannot_be_followed_is_named(bundled):
    recorded = bundled.parent / "__snapshots__" / "checkpoint_resume" / "function_agent.json"
    data = json.loads(recorded.read_text())
    data["turns"][0]["memory"] = [{"ref": "/turns/9/memory", "start": 0, "count": 1}]
    recorded.write_text(json.dumps(data, indent=2))

    result = run_scenario(bundled, "agent_workflow")

    assert not result.passed
    assert any("the recorded trace of `function_agent` cannot be read any more" in line
               for line in result.verdict.lines()), result.verdict.lines()
