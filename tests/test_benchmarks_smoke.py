"""The benchmark scripts run end to end with tiny counts and report what they promise.

Counts and rows only: timings are never asserted.
"""

import importlib
import importlib.util
import io
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

#: each test runs a benchmark script end to end (some in fresh interpreters): the slow lane's
pytestmark = pytest.mark.slow

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"_bench_{name}", BENCHMARKS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


bench_agents = _load("bench_agents")  # puts benchmarks/ on sys.path for the helpers below
bench_long = _load("bench_long_conversation")
bench_trace = _load("bench_trace_size")
harness = importlib.import_module("_harness")
targets = importlib.import_module("targets")
agentkit_side = importlib.import_module("_agentkit_side")
conversation = importlib.import_module("_conversation")
targets = importlib.import_module("targets")
TINY_AGENTS = ["--quick", "--chats", "3", "--rounds", "1", "--warmup", "1", "--import-runs", "1"]


def test_bench_agents_reports_one_row_per_scenario():
    out = io.StringIO()

    result = bench_agents.main(TINY_AGENTS, out=out)

    text = out.getvalue()
    for label in ("ReAct, 1 tool call", "ReAct, 10 sequential tool calls",
                  "function calling, 1 tool call"):
        assert label in text
    assert {key: row["chats"] for key, row in result["agentkit"].items()} == {
        "react_1": 3, "react_10": 1, "fc_1": 3, "react_sweep": 1}
    assert all(result["agentkit"][key]["rate"] > 0 for key in ("react_1", "react_10", "fc_1"))


def test_bench_agents_reports_the_cost_of_each_step_after_1_to_15_tool_calls():
    out = io.StringIO()

    result = bench_agents.main(TINY_AGENTS, out=out)

    lines = out.getvalue().split("cost per step:")[1].split("cold import")[0]
    rows = [line.split()[0] for line in lines.splitlines() if line[:1].isdigit()]
    assert rows == [str(k) for k in range(1, 16)]
    assert list(result["agentkit"]["react_sweep"]["steps"]) == list(range(1, 16))
    assert ("cost per step does not grow with the steps taken: no step after 2 to 15 tool calls"
            in out.getvalue())


def test_a_step_is_timed_from_one_tool_call_to_the_next():
    def chat(_n: int) -> tuple[str, list[str]]:
        observations = [conversation.lookup_population(city) for city in ("Lima", "Oslo", "Rome")]
        assert len(conversation.CALL_TIMES.times) == 3
        conversation.CALL_TIMES.times[:] = [1.0, 1.5, 3.5]  # the calls' CPU times, made up
        return "done", observations

    measured = harness.Throughput(chat, lambda reply: reply, "done", 3, chats=3, warmup=0)
    measured.steps()

    assert measured.result()["steps"] == {1: 0.5, 2: 2.0}
    assert conversation.CALL_TIMES.times is None  # recording stops with the chat


def test_step_us_reads_a_sides_steps_by_calls_before_them_in_microseconds():
    numbers = {"react_sweep": {"steps": {"1": 0.0001, "2": 0.00025}}}

    assert bench_agents.step_us(numbers) == {1: 100.0, 2: 250.0}


def test_bench_agents_reports_the_cold_import_of_agentkit_agent():
    out = io.StringIO()

    result = bench_agents.main(TINY_AGENTS, out=out)

    assert list(result["import_ms"]) == ["agentkit.agent", "agentkit.agent, asyncio"]
    assert all(ms > 0 for ms in result["import_ms"].values())
    assert "(agentkit.agent, asyncio: the import and the event loop" in out.getvalue()
    assert "import agentkit.agent < 150 ms:" in out.getvalue()


def test_bench_agents_rejects_a_zero_chat_count(capsys):
    with pytest.raises(SystemExit):
        bench_agents.main(["--chats", "0"], out=io.StringIO())

    assert "--chats must be at least 1" in capsys.readouterr().err


def test_benchmark_fails_loudly_when_the_agent_leaves_the_script():
    chat = agentkit_side.build_chat("react", 1, agentkit_side.build_tool())

    with pytest.raises(RuntimeError, match="the agent left the script: answered"):
        harness.throughput(chat, agentkit_side.inspect, "not the scripted answer", 1,
                           chats=1, rounds=1, warmup=1)


def test_bench_long_conversation_reports_a_block_per_block_of_chats():
    out = io.StringIO()

    result = bench_long.main(["--chats", "3", "--block", "1"], out=out)

    blocks = result["agentkit"]["blocks"]
    assert [(b.last, b.chats) for b in blocks] == [(1, 1), (2, 1), (3, 1)]
    text = out.getvalue()
    assert all(f"agentkit: chats {n}-{n}:" in text for n in (1, 2, 3))
    [found] = bench_long.measured(result)
    assert found.target == "long_conversation_flat" and found.target in targets.TARGETS
    assert found.met == (bench_long.drift(blocks) <= 1.5)
    assert found.figure.endswith(" end/start over 3 chats")


def test_bench_long_conversation_reports_the_last_partial_block():
    result = bench_long.main(["--chats", "5", "--block", "2"], out=io.StringIO())

    assert [(b.last, b.chats) for b in result["agentkit"]["blocks"]] == [(2, 2), (4, 2), (5, 1)]


def test_bench_long_conversation_reports_rss_from_first_to_last_chat():
    out = io.StringIO()

    run = bench_long.main(["--chats", "2", "--block", "2"], out=out)["agentkit"]

    assert run["start_rss_kib"] > 0 and run["end_rss_kib"] > 0
    assert "RSS growth MiB" in out.getvalue()


@pytest.mark.parametrize("options, tasks", [([], 3), (["--delete-task-on-finish"], 0)])
def test_bench_long_conversation_keeps_the_whole_history_and_the_tasks_unless_told(options,
                                                                                  tasks):
    out = io.StringIO()

    run = bench_long.main(["--chats", "3", "--block", "3", *options], out=out)["agentkit"]

    assert (run["messages_kept"], run["tasks_kept"]) == (6, tasks)
    assert f"agentkit: kept 6 messages of history and {tasks} finished tasks" in out.getvalue()


def _long_chat():
    return agentkit_side.build_chat("react", 1, agentkit_side.build_tool(),
                                    final_answer=conversation.LONG_ANSWER, keep_history=True)


def test_long_conversation_keeps_every_chat_in_one_agent_memory():
    chat = _long_chat()

    blocks = list(harness.long_conversation(chat, agentkit_side.inspect,
                                            conversation.LONG_ANSWER, chat.agent.memory,
                                            chats=4, block=4))

    assert [b.chats for b in blocks] == [4]
    assert len(chat.agent.memory.get_all()) == 8  # user message + answer per chat


def test_long_conversation_trims_memory_within_its_first_40_chats():
    chat = _long_chat()

    blocks = list(harness.long_conversation(chat, agentkit_side.inspect,
                                            conversation.LONG_ANSWER, chat.agent.memory,
                                            chats=40, block=40))

    assert blocks[0].first_trim is not None and blocks[0].first_trim <= 40


bench_scenarios = _load("bench_scenarios")


def test_bench_scenarios_replays_every_bundled_case_and_counts_the_replays():
    from agentkit.harness._runner import load
    from agentkit.scenario import discover_scenarios

    cases = sum(len(load(p).agents) for p in discover_scenarios(BENCHMARKS.parent / "scenarios"))
    out = io.StringIO()

    numbers = bench_scenarios.main(["--replays", "5", "--slow-runs", "1"], out)

    assert (numbers["throughput"]["cases"], numbers["throughput"]["replays"]) == (cases, 5)
    assert "replays/s" in out.getvalue()


def test_bench_scenarios_runs_as_its_own_command():
    # in process, the pytest plugin has already declared the project's agent types; run alone,
    # the script must find them itself (pyproject's [tool.agentkit])
    # (--quick: a smoke run appends nothing to benchmarks/results.jsonl)
    results = BENCHMARKS / "results.jsonl"
    before = results.read_bytes() if results.exists() else None
    done = subprocess.run([sys.executable, str(BENCHMARKS / "bench_scenarios.py"), "--quick",
                           "--replays", "2", "--slow-runs", "1"], cwd=BENCHMARKS.parent,
                          capture_output=True, text=True, timeout=300)

    assert done.returncode == 0, done.stderr
    assert "replays/s" in done.stdout
    assert (results.read_bytes() if results.exists() else None) == before


def test_bench_scenarios_slow_case_carries_sixty_seconds_of_simulated_latency():
    numbers = bench_scenarios.main(["--replays", "1", "--slow-runs", "1"], io.StringIO())

    assert numbers["slow"]["simulated_serial_s"] == 60.0
    assert numbers["slow"]["simulated_wall_s"] == 40.0


def test_bench_scenarios_rejects_zero_replays(capsys):
    with pytest.raises(SystemExit):
        bench_scenarios.main(["--replays", "0"], io.StringIO())
    assert "--replays must be at least 1" in capsys.readouterr().err


def test_long_conversation_drift_compares_the_last_third_of_blocks_with_the_first():
    Block = bench_long.Block
    fields = Block.__dataclass_fields__
    blocks = []
    for index, ms in enumerate([1.0, 1.0, 1.0, 5.0, 1.0, 2.0, 2.0, 2.0, 2.0]):
        values = {"last": (index + 1) * 10, "chats": 10, "mean_ms": ms}
        values.update({name: 0 if name != "digest" else "" for name in fields if name not in values})
        blocks.append(Block(**values))

    assert bench_long.drift(blocks) == 2.0


bench_planning = _load("bench_planning")
TINY_PLANNING = ["--quick", "--runs", "1", "--warmup", "0"]


def test_bench_planning_reports_each_architecture_at_each_llm_latency():
    out = io.StringIO()

    result = bench_planning.main(TINY_PLANNING, out=out)

    assert list(result["agentkit"]) == [
        (kind, llm) for llm in (0.0, 0.2)
        for kind in ("react", "function_calling", "llm_compiler", "coa")]
    for label in ("ReAct", "function calling", "LLMCompiler", "CoA"):
        assert out.getvalue().count(f"\n{label} ") == 2
    # what a run from the command line adds to the targets table: the two targets it prints
    found = {m.target: m for m in bench_planning.measured(result)}
    assert set(found) == {"planning_critical_path", "planning_real_ms"} <= set(targets.TARGETS)
    assert found["planning_critical_path"].met is result["exact"] is True
    assert found["planning_critical_path"].figure == "every row of 8 exact"
    assert found["planning_real_ms"].met == (result["slowest_ms"] < 50)


def test_bench_planning_agentkit_wall_time_is_the_critical_path_of_every_row():
    result = bench_planning.main(TINY_PLANNING, out=io.StringIO())

    walls = {key: round(row["wall"], 9) for key, row in result["agentkit"].items()}
    assert walls == {("react", 0.0): 0.4, ("function_calling", 0.0): 0.1,
                     ("llm_compiler", 0.0): 0.1, ("coa", 0.0): 0.1,
                     ("react", 0.2): 1.4, ("function_calling", 0.2): 0.5,
                     ("llm_compiler", 0.2): 0.5, ("coa", 0.2): 0.5}
    assert result["exact"] is True


def test_bench_planning_prints_the_ideal_ratios_for_the_tools_alone_and_with_llm_latency():
    out = io.StringIO()

    bench_planning.main(TINY_PLANNING, out=out)

    rows = [line.split() for line in out.getvalue().splitlines()
            if line.startswith(("LLMCompiler ", "CoA "))]
    # columns: ..., ideal ratio, agentkit wall s, agentkit ratio, agentkit ms/run
    assert [(row[-4], row[-2]) for row in rows] == [("4.00x", "4.00x"), ("4.00x", "4.00x"),
                                                    ("2.80x", "2.80x"), ("2.80x", "2.80x")]


def test_bench_planning_counts_serial_time_as_every_latency_added_up():
    result = bench_planning.main(TINY_PLANNING, out=io.StringIO())

    serial = {key: round(row["serial"], 9) for key, row in result["agentkit"].items()}
    assert serial[("react", 0.2)] == 1.4  # five LLM calls and four look-ups
    assert serial[("llm_compiler", 0.2)] == 0.8  # planner, four look-ups, joiner


def test_planning_run_fails_loudly_when_the_agent_leaves_the_script():
    def wrong_answer():
        return "not the answer", ["Lagos", "Lima", "Osaka", "Paris"], 2, 0.1, 0.4

    with pytest.raises(RuntimeError, match="coa left the script: answered 'not the answer'"):
        harness.planning(wrong_answer, "coa", 0.0, runs=1, warmup=0)


def test_bench_planning_rejects_zero_runs(capsys):
    with pytest.raises(SystemExit):
        bench_planning.main(["--runs", "0"], out=io.StringIO())

    assert "--runs must be at least 1" in capsys.readouterr().err


bench_workflows = _load("bench_workflows")


def test_bench_workflows_reports_one_row_per_workflow_scenario():
    out = io.StringIO()

    result = bench_workflows.main(["--quick", "--runs", "10", "--rounds", "1", "--warmup", "1"],
                                  out=out)

    text = out.getvalue()
    assert "AgentWorkflow + FunctionAgent, 1 tool call" in text
    assert "AgentWorkflow + FunctionAgent, 10 tool calls" in text
    assert {key: row["chats"] for key, row in result["agentkit"].items()} == {
        "workflow_fc_1": 10, "workflow_fc_10": 1}
    # the targets are ratios to LlamaIndex: without its side a run records none
    assert bench_workflows.measured(result) == []
    theirs = {key: {"rate": row["rate"] / 20} for key, row in result["agentkit"].items()}
    found = bench_workflows.measured({**result, "llamaindex": theirs})
    assert [(m.target, m.met) for m in found] == [("workflows_1", True), ("workflows_10", True)]
    assert {m.target for m in found} <= set(targets.TARGETS)


def test_a_workflow_run_of_the_benchmark_answers_from_its_script():
    run = agentkit_side.build_workflow_run(2, agentkit_side.build_tool())

    reply, observations = run(0)

    assert reply == conversation.answer(2)
    assert observations == ["Paris has 5 million people.", "Lagos has 5 million people."]


measure = importlib.import_module("_measure")


def test_throughput_rounds_can_be_taken_one_at_a_time_and_the_median_counts():
    chat = agentkit_side.build_chat("react", 1, agentkit_side.build_tool())
    measured = harness.Throughput(chat, agentkit_side.inspect, conversation.answer(1), 1,
                                  chats=2, warmup=1)

    for _ in range(3):
        measured.round()

    assert len(measured.rounds) == 3
    assert measured.result()["rate"] == 2 / sorted(measured.rounds)[1]


def test_side_session_answers_each_request_with_the_scripts_json_line(tmp_path):
    script = tmp_path / "side.py"
    script.write_text("import json, sys\n"
                      "for line in sys.stdin:\n"
                      "    print('noise'); print(json.dumps({'twice': json.loads(line)['n'] * 2}))\n")

    with measure.side_session(sys.executable, script, []) as ask:
        answers = [ask({"n": n}) for n in (1, 2)]

    assert answers == [{"twice": 2}, {"twice": 4}]


def test_side_session_reports_a_failing_script_with_its_error(tmp_path):
    script = tmp_path / "side.py"
    script.write_text("raise SystemExit('no llama here')\n")

    with (pytest.raises(RuntimeError, match="no llama here"),
          measure.side_session(sys.executable, script, []) as ask):
        ask({"n": 1})


bench_bridge = _load("bench_bridge")
TINY_BRIDGE = ["--quick", "--runs", "2", "--rounds", "1", "--warmup", "1"]


def test_bench_bridge_replays_the_sdk_agents_conversations_on_every_side():
    out = io.StringIO()

    result = bench_bridge.main([*TINY_BRIDGE, "--no-vcrpy"], out=out)

    text = out.getvalue()
    for label in ("plain openai-SDK agent, 1 tool call", "plain openai-SDK agent, 10 tool calls",
                  "raw httpx client (no SDK), 1 tool call",
                  "raw httpx client (no SDK), 10 tool calls",
                  "overhead per model call over the bare client (us)",
                  "the SDK's own cost per model call",
                  "same conversation on every side (transcript digests): yes"):
        assert label in text
    assert {key: (row["calls"], set(row) - {"calls"}) for key, row in result.items()} == {
        "sdk_1": (2, {"bridge", "bare"}), "sdk_10": (11, {"bridge", "bare"}),
        "wire_1": (2, {"bridge", "bare"}), "wire_10": (11, {"bridge", "bare"})}
    assert all(row[side]["rate"] > 0 for row in result.values() for side in ("bridge", "bare"))
    assert bench_bridge.measured(result) == []  # no vcrpy: nothing for the targets table


def test_bench_bridge_replays_the_same_conversation_from_vcrpy_at_its_defaults_and_ours():
    out = io.StringIO()

    result = bench_bridge.main(TINY_BRIDGE, out=out)

    assert all(row[side]["digest"] == row["bridge"]["digest"] for row in result.values()
               for side in ("vcrpy", "vcrpy_body"))
    text = out.getvalue()
    assert "bridge runs/s >= 2x vcrpy at its defaults" in text
    assert "vcrpy+body* runs/s" in text and "chosen by us (*)" in text
    measured = bench_bridge.measured(result)
    assert [m.target for m in measured] == ["bridge_sdk_1", "bridge_sdk_10", "bridge_wire_1",
                                            "bridge_wire_10"]
    assert all(m.target in targets.TARGETS for m in measured)
    # an SDK row's figure carries the SDK's bound: the bare client over vcrpy at its defaults
    for key, figure in zip(("sdk_1", "sdk_10"), measured, strict=False):
        assert figure.figure.endswith(f" (SDK bound {bench_bridge.sdk_bound(result[key]):.2f}x)")
    assert "bound by the SDK: a bridge costing nothing would be" in text


def test_bench_trace_size_records_and_replays_each_scenario_and_checks_linear_growth():
    out = io.StringIO()

    rows = bench_trace.main(["--turns", "4", "8", "--answer-mb", "0.01"], out=out)

    assert [(row["name"], row["turns"]) for row in rows] == [
        ("long4", 4), ("long8", 8), ("long_answer", 1)]
    assert all(row["record"]["ok"] and row["replay"]["ok"] for row in rows)
    assert 0 < rows[1]["trace_bytes"] <= 2.2 * rows[0]["trace_bytes"]
    assert all(row["cassette_bytes"] > 0 for row in rows)
    target = out.getvalue().split("target:")[1]
    assert target.count(": met") == 2
    [found] = bench_trace.measured(rows)
    assert (found.target, found.met) == ("trace_size_linear", True)
    assert found.target in targets.TARGETS and found.figure.endswith("(4 -> 8 turns)")
    assert bench_trace.measured(rows[:1]) == []  # one length shows no growth


bench_rate_limit = _load("bench_rate_limit")


@pytest.mark.agentkit_allow_loopback
def test_bench_rate_limit_drives_its_rate_limited_server_and_reports_goodput_and_429s():
    out = io.StringIO()

    figures = bench_rate_limit.main(["--quick", "--seconds", "2"], out=out)

    assert figures["answered"] > 0 and figures["gave_up"] == 0
    text = out.getvalue()
    assert "goodput:" in text and "of the limit" in text and "429s:" in text
    [found] = bench_rate_limit.measured(figures)
    assert found.target == "rate_limit_goodput" and found.target in targets.TARGETS
    assert found.met == (figures["goodput"] >= 0.98)
    assert found.figure.startswith(f"{figures['goodput']:.1%} (")


def test_bench_paired_prints_each_tests_error_rate_and_the_sequential_saving(capsys):
    _load("bench_paired").main(["--runs", "40"])

    out = capsys.readouterr().out
    assert out.startswith("40 simulated comparisons per row, alpha 0.05")
    assert out.count("McNemar, equal agents") == 3
    assert out.count("ever declared a difference") == 2
    assert out.count("a fixed design needs") == 2


@pytest.mark.agentkit_allow_loopback
def test_bench_rate_limit_queueing_drives_a_one_slot_server_and_reports_its_queue():
    out = io.StringIO()

    figures = bench_rate_limit.main(["--queueing", "--slots", "1", "--latency", "0.02",
                                     "--start", "2", "--workers", "4", "--seconds", "1"],
                                    out=out)

    assert figures["answered"] > 0 and figures["gave_up"] == 0
    assert 1 <= figures["most_inside"] <= 4
    assert "in the server at once: at most" in out.getvalue()


def test_bench_mutate_counts_the_mutants_it_ran_and_their_fates():
    out = io.StringIO()

    bench_mutate = _load("bench_mutate")
    numbers = bench_mutate.main([str(BENCHMARKS.parent / "scenarios" / "flaky_tool.yaml")], out)

    assert numbers["cases"] == 4
    assert numbers["mutants"] > numbers["killed"] > 0
    [found] = bench_mutate.measured(numbers)
    assert found.target == "mutate" and found.target in targets.TARGETS
    assert found.met == (numbers["mutants"] >= 50 and numbers["wall"] < 60)
    assert found.figure.startswith(f"{numbers['mutants']} mutants in ")
    assert out.getvalue().startswith(f"{numbers['mutants']} mutants against 4 cases: ")


def test_bench_suite_bfcl_writes_lists_and_reports_every_case():
    bench_bfcl = _load("bench_suite_bfcl")
    out = io.StringIO()

    result = bench_bfcl.main(["--quick"], out=out)

    assert {name: result[name]["count"] for name in ("write", "list", "report")} == {
        "write": 7, "list": 7, "report": 28}
    assert [report["count"] for report in result["reports"]] == [20, 28]
    assert (result["report"]["passed"], result["report"]["failed"]) == (28, 0)
    assert all(row["rss_mb"] > 0 for row in (result["write"], result["list"], *result["reports"]))
    assert result["fit"]["row_kb"] > 0 and result["fit"]["row_json_kb"] > 0
    assert "report: 28 of 28 runs passed" in out.getvalue()
    assert "KB per row (least squares over 2 sizes); a row in memory: " in out.getvalue()
    assert "as text " in out.getvalue()


def test_the_bfcl_memory_line_is_the_least_squares_fit():
    fixed, per_row = _load("bench_suite_bfcl").line_through([(100, 60.0), (200, 70.0),
                                                             (400, 90.0)])

    assert (round(fixed, 6), round(per_row, 6)) == (50.0, 0.1)


bench_recording = _load("bench_recording")


def test_bench_recording_records_each_conversation_length_and_the_calibration():
    out = io.StringIO()

    numbers = bench_recording.main(["--exchanges", "2", "4"], out)

    assert [row["exchanges"] for row in numbers["rows"]] == [2, 4]
    assert numbers["rows"][0]["bytes"] < numbers["rows"][1]["bytes"]
    assert numbers["calibration"]["calls"] == 180
    assert "CPU per exchange at 4 / at 2" in out.getvalue()


def test_bench_recording_rejects_a_zero_length(capsys):
    with pytest.raises(SystemExit):
        bench_recording.main(["--exchanges", "0"], io.StringIO())
    assert "--exchanges must be at least 1" in capsys.readouterr().err


def test_bench_trace_size_measures_a_phase_own_peak_not_the_one_of_the_process_that_started_it():
    """Linux carries ru_maxrss over exec: a phase started by a pytest worker of 1 GiB reported
    1 GiB (and failed its budget) though it used 50 MiB. A parent holding 400 MiB starts a
    child that measures itself the benchmark's way."""
    child = (f"import sys; sys.path.insert(0, {str(Path(bench_trace.__file__).parent)!r}); "
             "import bench_trace_size; print(bench_trace_size._peak_mib())")
    parent = ("import subprocess, sys\n"
              "held = bytearray(400 * 1024 * 1024)\n"
              "for at in range(0, len(held), 4096): held[at] = 1\n"
              f"print(subprocess.run([sys.executable, '-c', {child!r}], capture_output=True, "
              "text=True, check=True).stdout)")

    done = subprocess.run([sys.executable, "-c", parent], capture_output=True, text=True,
                          check=True)

    assert 0 < float(done.stdout.split()[-1]) < 300, done.stdout
