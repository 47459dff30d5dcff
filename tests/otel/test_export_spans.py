"""Runs exported as spans following the GenAI semantic conventions: one trace per run, the tree
of agents, LLM calls and tools, LLMCompiler's plan and CoA's chain, expectations as evaluation
events, virtual time from a fixed epoch."""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable
from pathlib import Path

from otel_helpers import REPO, Outcome, attrs, seconds, spans_of, tree


def _export(cli: Callable[..., Outcome], scenario: Path, agent: str, *extra: str) -> list[dict]:
    outcome = cli("run", scenario, "--agents", agent, "--snapshots", "off",
                  "--otel-out", "spans.json", *extra)
    assert outcome.code == 0, outcome.out + outcome.err
    return spans_of(Path("spans.json"))


def test_a_react_run_is_one_trace_of_an_agent_span_holding_its_chats_and_tool_calls(
        cli, bundled):
    spans = _export(cli, bundled("single_tool_call"), "react")

    assert tree(spans) == ["single_tool_call[react]", "  invoke_agent react",
                           "    chat single_tool_call/react", "    execute_tool add",
                           "    chat single_tool_call/react"]
    assert len({s["traceId"] for s in spans}) == 1


def test_a_chat_span_names_its_model_and_usage_as_the_conventions_say(cli, bundled):
    chat = _export(cli, bundled("single_tool_call"), "react")[2]

    found = attrs(chat)
    assert chat["kind"] == 3  # CLIENT
    assert found["gen_ai.operation.name"] == "chat"
    assert found["gen_ai.request.model"] == "single_tool_call/react"
    assert found["gen_ai.provider.name"] == "agentkit"
    assert (found["gen_ai.usage.input_tokens"], found["gen_ai.usage.output_tokens"]) == (489, 33)


def test_a_tool_span_carries_the_call_arguments_and_result_when_content_is_captured(cli,
                                                                                    bundled):
    tool = _export(cli, bundled("single_tool_call"), "react", "--otel-content")[3]

    found = attrs(tool)
    assert found["gen_ai.operation.name"] == "execute_tool"
    assert found["gen_ai.tool.name"] == "add"
    assert json.loads(found["gen_ai.tool.call.arguments"]) == {"a": 2, "b": 3}
    assert found["gen_ai.tool.call.result"] == "5"


def test_without_content_capture_a_tool_span_names_the_tool_but_not_its_arguments_or_result(
        cli, bundled):
    found = attrs(_export(cli, bundled("single_tool_call"), "react")[3])

    assert (found["gen_ai.operation.name"], found["gen_ai.tool.name"]) == ("execute_tool", "add")
    assert "gen_ai.tool.call.arguments" not in found
    assert "gen_ai.tool.call.result" not in found


def test_a_failed_tool_call_is_an_error_span_with_its_message(cli, bundled):
    spans = _export(cli, bundled("tool_raising"), "react")

    tool = next(s for s in spans if s["name"].startswith("execute_tool"))
    assert tool["status"]["code"] == 2
    assert "Error" in tool["status"]["message"]
    assert "gen_ai.tool.call.result" not in attrs(tool)


def test_llm_compilers_plan_is_a_span_holding_the_planner_chat_and_the_parallel_lookups(
        cli, bundled):
    spans = _export(cli, bundled("parallel_lookups"), "llm_compiler")

    assert tree(spans) == ["parallel_lookups[llm_compiler]", "  invoke_agent llm_compiler",
                           "    plan (round 1)", "      chat parallel_lookups/llm_compiler",
                           *["      execute_tool population"] * 4,
                           "    chat parallel_lookups/llm_compiler"]
    plan = attrs(spans[2])
    assert [t["tool"] for t in json.loads(plan["agentkit.plan.tasks"])] == ["population"] * 4 + [
        "join"]


def test_parallel_tool_calls_overlap_in_time_as_on_agentkits_timeline(cli, bundled):
    spans = _export(cli, bundled("parallel_lookups"), "llm_compiler")

    lookups = [s for s in spans if s["name"] == "execute_tool population"]
    assert {(seconds(s, "startTimeUnixNano"), seconds(s, "endTimeUnixNano")) for s in lookups} \
        == {(0.0, 1.0)}


def test_coas_chain_is_a_span_holding_the_chain_chat_and_its_calls(cli, bundled):
    spans = _export(cli, bundled("parallel_lookups"), "coa")

    names = tree(spans)
    assert names[2] == "    chain"
    assert names[3].strip().startswith("chat ")
    assert names[4:8] == ["      execute_tool population"] * 4
    assert names[-1].strip().startswith("chat ")  # the refine call, outside the chain
    assert "population" in attrs(spans[2])["agentkit.chain"]


def test_a_team_run_is_a_workflow_span_with_an_agent_span_per_agent_and_hand_off(cli, bundled):
    spans = _export(cli, bundled("team_handoff"), "agent_workflow")

    top = [line for line in tree(spans) if "invoke_" in line]
    assert top == ["  invoke_workflow agent_workflow", "    invoke_agent researcher",
                   "    invoke_agent calculator"]
    calculator = next(s for s in spans if s["name"] == "invoke_agent calculator")
    assert attrs(calculator)["agentkit.handoff.from"] == "researcher"
    researcher = next(s for s in spans if s["name"] == "invoke_agent researcher")
    assert researcher["endTimeUnixNano"] == calculator["startTimeUnixNano"]


def test_children_lie_within_their_parents_time(cli, bundled):
    spans = _export(cli, bundled("team_handoff"), "agent_workflow")

    by_id = {s["spanId"]: s for s in spans}
    for span in spans:
        if "parentSpanId" in span:
            parent = by_id[span["parentSpanId"]]
            assert int(parent["startTimeUnixNano"]) <= int(span["startTimeUnixNano"])
            assert int(span["endTimeUnixNano"]) <= int(parent["endTimeUnixNano"])


def test_a_stable_export_puts_virtual_seconds_on_the_fixed_epoch(cli, bundled):
    spans = _export(cli, bundled("slow_tools"), "react")

    root = spans[0]
    assert seconds(root, "startTimeUnixNano") == 0.0
    assert seconds(root, "endTimeUnixNano") > 0
    assert root["startTimeUnixNano"] == str(1_767_225_600 * 10**9)


def test_by_default_a_run_ends_when_it_was_exported_with_its_virtual_durations(
        cli, bundled, monkeypatch):
    # a backend's default window ("the last 15 minutes") shows the run: it ends at the wall
    # clock's moment of the export, and starts as long before as its virtual time says
    monkeypatch.delenv("AGENTKIT_OTEL_STABLE")
    before = time.time_ns()
    spans = _export(cli, bundled("slow_tools"), "react")
    after = time.time_ns()

    root = spans[0]
    start, end = int(root["startTimeUnixNano"]), int(root["endTimeUnixNano"])
    assert before <= end <= after
    monkeypatch.setenv("AGENTKIT_OTEL_STABLE", "1")
    stable = _export(cli, bundled("slow_tools"), "react")
    assert end - start == int(stable[0]["endTimeUnixNano"]) - int(stable[0]["startTimeUnixNano"])
    tools = [s for s in spans if s["name"].startswith("execute_tool")]
    assert all(start <= int(t["startTimeUnixNano"]) <= int(t["endTimeUnixNano"]) <= end
               for t in tools)


def test_by_default_each_export_of_a_run_is_a_trace_of_its_own(cli, bundled, monkeypatch):
    monkeypatch.delenv("AGENTKIT_OTEL_STABLE")
    scenario = bundled("single_tool_call")
    ids = []
    for name in ("a.json", "b.json"):
        assert cli("run", scenario, "--agents", "react", "--snapshots", "off",
                   "--otel-out", name).code == 0
        ids.append({s["traceId"] for s in spans_of(Path(name))})

    assert len(ids[0]) == len(ids[1]) == 1 and ids[0] != ids[1]


def test_each_expectation_is_a_gen_ai_evaluation_result_event_on_the_run(cli, bundled):
    root = _export(cli, bundled("single_tool_call"), "react")[0]

    events = {attrs(e)["gen_ai.evaluation.name"]: attrs(e) for e in root["events"]}
    assert {e["name"] for e in root["events"]} == {"gen_ai.evaluation.result"}
    assert {"answer", "tool_calls", "max_llm_calls", "verdict"} <= set(events)
    assert events["answer"]["gen_ai.evaluation.score.label"] == "pass"
    assert events["answer"]["gen_ai.evaluation.score.value"] == 1.0


def test_an_unmet_expectation_is_a_failing_evaluation_that_says_why(cli, tmp_path, bundled):
    scenario = bundled("single_tool_call")
    scenario.write_text(scenario.read_text().replace('contains: "5"', 'contains: "6"'))
    cli("run", scenario, "--agents", "react", "--snapshots", "off", "--otel-out", "s.json")

    root = spans_of(Path("s.json"))[0]
    answer = next(attrs(e) for e in root["events"]
                  if attrs(e)["gen_ai.evaluation.name"] == "answer")
    assert answer["gen_ai.evaluation.score.label"] == "fail"
    assert "does not match" in answer["gen_ai.evaluation.explanation"]


def test_a_stable_export_is_the_same_byte_for_byte_every_time(cli, bundled):
    scenario = bundled("parallel_lookups")
    for name in ("a.json", "b.json"):
        assert cli("run", scenario, "--snapshots", "off", "--otel-out", name).code == 0

    assert Path("a.json").read_bytes() == Path("b.json").read_bytes()


def test_every_run_of_a_command_is_its_own_trace_in_order_of_name(cli, bundled):
    spans = _export(cli, bundled("single_tool_call"), "react,function_calling")

    roots = [s["name"] for s in spans if "parentSpanId" not in s]
    assert roots == ["single_tool_call[function_calling]", "single_tool_call[react]"]
    assert len({s["traceId"] for s in spans}) == 2


def test_a_run_that_stops_on_an_error_ends_its_turn_span_in_error(cli, bundled):
    spans = _export(cli, bundled("max_iterations"), "react")

    agent = next(s for s in spans if s["name"] == "invoke_agent react")
    assert agent["status"]["code"] == 2
    assert "Reached max iterations" in agent["status"]["message"]
    assert attrs(agent)["error.type"] == "ValueError"


def test_a_streamed_call_says_so(cli, bundled):
    spans = _export(cli, bundled("streamed_answer"), "react")

    chats = [attrs(s) for s in spans if s["name"].startswith("chat ")]
    assert chats and all(chat["gen_ai.request.stream"] is True for chat in chats)


def _folder(name: str) -> Path:
    """A copy of a bundled scenario folder (with its cassettes and snapshots) in the test's
    folder."""
    shutil.copytree(REPO / "scenarios" / name, Path(name),
                    ignore=shutil.ignore_patterns("__pycache__"))
    return Path(name)


def test_an_llm_judges_verdict_is_a_judge_span_with_its_reason_and_an_evaluation_event(cli):
    scenario = _folder("live_roles") / "live_judged_answer.yaml"

    spans = _export(cli, scenario, "react")

    judge = next(s for s in spans if s["name"] == "judge expect.answer.judge")
    found = attrs(judge)
    assert (found["agentkit.judge.verdict"], found["agentkit.role"]) == ("pass", "judge")
    assert found["agentkit.judge.reason"]
    parent = next(s for s in spans if s["spanId"] == judge["parentSpanId"])
    assert parent["name"] == "invoke_agent react"
    assert judge["startTimeUnixNano"] == parent["endTimeUnixNano"]
    [event] = judge["events"]
    assert attrs(event)["gen_ai.evaluation.name"] == "expect.answer.judge"
    assert attrs(event)["gen_ai.evaluation.score.label"] == "pass"


def test_a_simulated_users_message_is_a_span_at_the_start_of_its_turn(cli):
    scenario = _folder("live_roles") / "live_simulated_user.yaml"

    spans = _export(cli, scenario, "react")

    users = [s for s in spans if s["name"] == "simulated_user"]
    turns = [s for s in spans if s["name"] == "invoke_agent react"]
    assert len(users) == len(turns) >= 2
    for user, turn in zip(users, turns, strict=True):
        assert user["parentSpanId"] == turn["spanId"]
        assert user["startTimeUnixNano"] == turn["startTimeUnixNano"]
    opening, answer = (attrs(user) for user in users)
    assert (opening["agentkit.simulated_user.by"], opening["agentkit.role.calls"]) == (
        "opening", 0)
    assert answer["agentkit.simulated_user.by"] == "smollm2-135m-instruct"
    assert (answer["agentkit.role.calls"], answer["gen_ai.usage.input_tokens"]) == (1, 326)


def test_each_sample_of_a_sampled_recording_is_a_trace_with_its_sample_number(cli):
    scenario = _folder("live") / "live_compare.yaml"

    spans = _export(cli, scenario, "function_calling")

    roots = [s for s in spans if "parentSpanId" not in s]
    assert [attrs(r)["agentkit.sample"] for r in roots] == [0, 1, 2, 3, 4]
    assert len({r["traceId"] for r in roots}) == 5


def test_a_team_runs_workflow_span_names_it_as_the_current_conventions_do(cli, bundled):
    spans = _export(cli, bundled("team_handoff"), "agent_workflow")

    workflow = attrs(next(s for s in spans if s["name"].startswith("invoke_workflow")))
    assert workflow["gen_ai.operation.name"] == "invoke_workflow"
    assert workflow["gen_ai.agent.name"] == "agent_workflow"
    assert "gen_ai.workflow.name" not in workflow


def test_a_run_replayed_from_a_recording_of_a_server_names_its_provider_openai(cli, tmp_path):
    """A chat span says who answered: the bundled live recording came from a server speaking
    the OpenAI wire, so its replay's spans say ``openai``, where a scripted run says
    ``agentkit`` (above)."""
    shutil.copytree(REPO / "scenarios" / "live", tmp_path / "live")
    spans = _export(cli, tmp_path / "live" / "live_react.yaml", "react")

    chats = [attrs(s) for s in spans if s["name"].startswith("chat ")]
    agents = [attrs(s) for s in spans if s["name"].startswith("invoke_agent")]
    assert chats and {c["gen_ai.provider.name"] for c in chats} == {"openai"}
    assert agents and {a["gen_ai.provider.name"] for a in agents} == {"openai"}
