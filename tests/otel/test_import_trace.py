"""`agentkit import-trace`: an OTLP-JSON export becomes a scenario, a tools module and a
cassette that replay offline and reproduce the traced tool calls and answer."""

from __future__ import annotations

import errno
import json
import os
import shutil
from pathlib import Path

import pytest
import yaml

from agentkit.core import files
from agentkit.tools.recorded import MODULE_TEXT, attribute_names, load_recorded_tools
from otel_helpers import REPO, attrs, spans_of


def _export(cli, scenario: Path, agent: str, out: str = "f.json") -> Path:
    outcome = cli("run", scenario, "--agents", agent, "--snapshots", "off", "--otel-out", out,
                  "--otel-content")
    assert outcome.code == 0, outcome.out + outcome.err
    return Path(out)


@pytest.mark.parametrize(("scenario", "agent"), [
    ("single_tool_call", "react"), ("single_tool_call", "function_calling"),
    ("parallel_lookups", "llm_compiler"), ("parallel_lookups", "coa"),
    ("parallel_lookups", "function_agent"), ("multi_turn_memory", "function_calling"),
    ("streamed_answer", "react")])
def test_an_exported_run_imported_back_replays_and_passes(cli, bundled, scenario, agent):
    exported = _export(cli, bundled(scenario), agent)

    imported = cli("import-trace", exported, "--out", f"imported/{scenario}_{agent}.yaml")
    assert imported.code == 0, imported.out + imported.err
    replayed = cli("run", f"imported/{scenario}_{agent}.yaml")

    assert replayed.code == 0, replayed.out + replayed.err
    assert "1 passed, 0 failed" in replayed.out


def test_the_scenario_holds_the_turns_the_drafted_expectations_and_a_recording(cli, bundled):
    cli("import-trace", _export(cli, bundled("single_tool_call"), "react"), "--out", "s2.yaml")

    data = yaml.safe_load(Path("s2.yaml").read_text())
    assert data["turns"] == [{"user": "What is 2 + 3?"}]
    assert data["expect"]["answer"] == {"equals": "2 + 3 = 5"}
    assert data["expect"]["tool_calls"]["calls"] == [{"name": "add", "args": {"a": 2, "b": 3}}]
    assert data["agents"] == {"react": {"recording": "cassettes/s2.react.yaml"}}
    assert data["tools"] == [{"ref": "s2_tools:add"}]
    assert Path("cassettes/s2.react.yaml").is_file()
    assert Path("__snapshots__/s2/react.json").is_file()


def test_the_tools_module_answers_each_recorded_call_from_its_table(cli, bundled):
    exported = _export(cli, bundled("parallel_lookups"), "llm_compiler")
    cli("import-trace", exported, "--out", "lookups.yaml")
    recorded = {json.loads(attrs(s)["gen_ai.tool.call.arguments"])["city"]:
                attrs(s)["gen_ai.tool.call.result"] for s in spans_of(exported)
                if s["name"] == "execute_tool population"}

    table = json.loads(Path("lookups_tools.json").read_text())
    assert [tool["name"] for tool in table["tools"]] == ["population"]
    tools = load_recorded_tools(Path("lookups_tools.py"))
    assert len(recorded) == 4
    for city, output in recorded.items():
        assert tools["population"].call(city=city).content == output


def _crafted(exported: Path, trace_id: str, name: str) -> Path:
    """``exported`` with every span's trace id replaced, saved as ``name``."""
    data = json.loads(exported.read_text())
    for resource in data["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                span["traceId"] = trace_id
    crafted = exported.parent / name
    crafted.write_text(json.dumps(data))
    return crafted


PAYLOAD = '"""\nimport pathlib; pathlib.Path("pwned").write_text("ran")\n"""'


@pytest.mark.parametrize("where", ["trace id", "file name"])
def test_code_in_a_trace_id_or_file_name_is_never_run(cli, bundled, where):
    exported = _export(cli, bundled("single_tool_call"), "function_calling")
    trace = exported.read_text().split('"traceId": "')[1][:32]
    crafted = (_crafted(exported, f"{trace}{PAYLOAD}", "c.json") if where == "trace id"
               else _crafted(exported, trace, 'x""";import os;os.mkdir("pwned");""".json'))

    imported = cli("import-trace", crafted, "--out", "c.yaml")
    replayed = cli("run", "c.yaml")

    assert imported.code == 0, imported.out + imported.err
    assert replayed.code == 0, replayed.out + replayed.err
    assert not Path("pwned").exists()
    assert Path("c_tools.py").read_text() == MODULE_TEXT
    table = json.loads(Path("c_tools.json").read_text())
    assert (table["trace"], table["source"]) == (
        (f"{trace}{PAYLOAD}", "c.json") if where == "trace id" else (trace, crafted.name))


def test_tool_names_that_are_not_identifiers_get_distinct_attributes(cli, bundled):
    assert attribute_names(["get-x", "get_x", "class", "9lives", "", "é"]) == [
        "get_x", "get_x_2", "t_class", "t_9lives", "tool", "tool_2"]


def test_the_cassette_replays_the_traced_answers_with_their_latency(cli, bundled):
    cli("import-trace", _export(cli, bundled("slow_tools"), "react"), "--out", "slow.yaml")

    original = json.loads((Path("scenarios/__snapshots__/slow_tools/react.json")).read_text())
    imported = json.loads(Path("__snapshots__/slow/react.json").read_text())
    assert imported["totals"]["wall_time"] == original["totals"]["wall_time"]
    assert [c["name"] for t in imported["turns"] for s in t["steps"] for c in s["tool_calls"]] \
        == [c["name"] for t in original["turns"] for s in t["steps"] for c in s["tool_calls"]]


def test_a_failed_tool_call_is_imported_as_an_expected_error(cli, bundled):
    cli("import-trace", _export(cli, bundled("tool_raising"), "react"), "--out", "raise.yaml")

    data = yaml.safe_load(Path("raise.yaml").read_text())
    assert data["expect"]["tool_calls"]["calls"][0]["error"] is True
    assert cli("run", "raise.yaml").code == 0


def test_a_file_of_several_runs_needs_trace_and_lists_them(cli, bundled):
    cli("run", bundled("single_tool_call"), "--snapshots", "off", "--otel-out", "f.json",
        "--otel-content")

    outcome = cli("import-trace", "f.json", "--out", "x.yaml")
    assert outcome.code == 2
    assert "holds 4 traces; choose one with --trace ID" in outcome.err
    assert "single_tool_call[react]" in outcome.err
    trace = next(s["traceId"] for s in spans_of(Path("f.json"))
                 if s["name"] == "single_tool_call[function_calling]")
    chosen = cli("import-trace", "f.json", "--out", "x.yaml", "--trace", trace[:12])
    assert chosen.code == 0, chosen.out + chosen.err
    assert "function_calling" in yaml.safe_load(Path("x.yaml").read_text())["agents"]


def test_an_existing_scenario_is_kept_unless_forced(cli, bundled):
    exported = _export(cli, bundled("single_tool_call"), "react")
    Path("s2.yaml").write_text("mine\n")

    assert cli("import-trace", exported, "--out", "s2.yaml").code == 2
    assert Path("s2.yaml").read_text() == "mine\n"
    assert cli("import-trace", exported, "--out", "s2.yaml", "--force").code == 0


def test_a_run_the_agent_type_cannot_reproduce_fails_and_writes_no_cassette(cli, bundled):
    exported = _export(cli, bundled("single_tool_call"), "react")

    outcome = cli("import-trace", exported, "--out", "wrong.yaml", "--agent", "function_calling")
    assert outcome.code == 1
    assert "does not replay under agent type function_calling" in outcome.out
    assert "--agent react" in outcome.out
    assert not Path("cassettes/wrong.function_calling.yaml").exists()


# ---------------------------------------------------------------------------- bad input
def test_a_file_that_is_not_json_is_bad_input(cli):
    Path("f.json").write_text("<html>not a trace</html>\n")

    outcome = cli("import-trace", "f.json", "--out", "x.yaml")
    assert outcome.code == 2
    assert "f.json:1: not an OTLP-JSON trace export: the file is not JSON" in outcome.err


def test_json_that_is_not_otlp_says_what_was_expected(cli):
    Path("f.json").write_text('{"traces": []}\n')

    outcome = cli("import-trace", "f.json", "--out", "x.yaml")
    assert outcome.code == 2
    assert "expected an object with `resourceSpans`" in outcome.err
    assert "found an object with traces" in outcome.err


def _otlp(*spans: dict) -> str:
    return json.dumps({"resourceSpans": [{"resource": {}, "scopeSpans": [{"spans": list(spans)}]}]})


def _span(span_id: str, name: str, parent: str | None = None, **attributes: str) -> dict:
    data = {"traceId": "ab" * 16, "spanId": span_id, "name": name,
            "startTimeUnixNano": "1000000000", "endTimeUnixNano": "2000000000",
            "attributes": [{"key": k.replace("__", "."), "value": {"stringValue": v}}
                           for k, v in attributes.items()]}
    if parent:
        data["parentSpanId"] = parent
    return data


def test_spans_without_genai_attributes_say_which_instrumentation_is_needed(cli):
    Path("f.json").write_text(_otlp(_span("01" * 8, "GET /orders", http__method="GET")))

    outcome = cli("import-trace", "f.json", "--out", "x.yaml")
    assert outcome.code == 2
    assert "none of the trace's 1 spans (GET /orders) has GenAI attributes" in outcome.err
    assert "GenAI semantic conventions or OpenInference" in outcome.err


def test_a_trace_without_an_llm_span_says_the_llm_client_must_be_traced(cli):
    Path("f.json").write_text(_otlp(
        _span("01" * 8, "invoke_agent shop", gen_ai__operation__name="invoke_agent"),
        _span("02" * 8, "execute_tool refund", "01" * 8, gen_ai__operation__name="execute_tool",
              gen_ai__tool__name="refund")))

    outcome = cli("import-trace", "f.json", "--out", "x.yaml")
    assert outcome.code == 2
    assert "the trace has no LLM call span" in outcome.err
    assert "only agent and tool spans" in outcome.err


def test_a_trace_recorded_without_content_says_how_to_capture_it(cli, bundled):
    cli("run", bundled("single_tool_call"), "--agents", "react", "--snapshots", "off",
        "--otel-out", "f.json")

    outcome = cli("import-trace", "f.json", "--out", "x.yaml")
    assert outcome.code == 2
    assert "carry no output messages: message content was not captured" in outcome.err
    assert "--otel-content" in outcome.err
    assert "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true" in outcome.err
    assert not Path("x.yaml").exists()


def test_a_missing_file_is_bad_input(cli):
    outcome = cli("import-trace", "nowhere.json", "--out", "x.yaml")

    assert outcome.code == 2
    assert "nowhere.json: no such file" in outcome.err


@pytest.mark.parametrize("parents", [["01" * 8, "01" * 8], ["02" * 8, "01" * 8],
                                     ["03" * 8, "01" * 8, "02" * 8]])
def test_a_parent_cycle_through_the_root_is_bad_input_naming_the_cycle(cli, parents):
    spans = [_span(f"{i + 1:02d}" * 8, "chat m", parent, gen_ai__operation__name="chat")
             for i, parent in enumerate(parents)]
    Path("f.json").write_text(_otlp(*spans))

    outcome = cli("import-trace", "f.json", "--out", "x.yaml")

    assert outcome.code == 2, outcome.out + outcome.err
    assert "the spans' parents form a cycle (" in outcome.err
    assert "Traceback" not in outcome.err


@pytest.mark.parametrize("text, said", [
    ('{"resourceSpans": [{"scopeSpans": 7}]}', "f.json:1: not an OTLP-JSON trace export: "
                                               "expected a list, found a JSON int"),
    ('{"resourceSpans": [{"scopeSpans": [{"spans": "x"}]}]}', "expected a list, found a JSON str"),
    ("[" * 100_000 + "]" * 100_000, "f.json:1:101: nested more than"),
    ('{"resourceSpans": [], "n": ' + "9" * 5_000 + "}", "f.json:1:28: an integer of 5,000 digits"),
    (_otlp({**_span("01" * 8, "chat m"), "startTimeUnixNano": "9" * 5_000}),
     "f.json:1: a span is malformed")])
def test_a_malformed_export_is_bad_input_at_its_place_never_a_traceback(cli, text, said):
    Path("f.json").write_text(text)

    outcome = cli("import-trace", "f.json", "--out", "x.yaml")

    assert outcome.code == 2, outcome.out + outcome.err
    assert said in outcome.err
    assert "Traceback" not in outcome.err


@pytest.mark.parametrize("writes", [0, 2, 3])
def test_a_full_disk_leaves_no_scenario_without_its_cassette_and_says_so(cli, bundled,
                                                                         monkeypatch, writes):
    exported = _export(cli, bundled("single_tool_call"), "function_calling")
    real, done = files._write_synced, []

    def write(path, text, *, mode_of):
        if len(done) >= writes:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        done.append(path)
        real(path, text, mode_of=mode_of)

    monkeypatch.setattr(files, "_write_synced", write)

    outcome = cli("import-trace", exported, "--out", "full.yaml")

    assert outcome.code == 2
    assert outcome.err.startswith("agentkit: error: ")
    assert outcome.err.rstrip().endswith("no space left on device (nothing written)")
    assert "Traceback" not in outcome.err
    # (Python's own bytecode cache of a tools module imported while writing is not agentkit's)
    assert [str(p) for p in Path().rglob("*") if p.is_file() and "__pycache__" not in p.parts
            and p.parts[0] != "scenarios" and p != exported] == []


@pytest.mark.parametrize("name", ["live_judged_answer", "live_simulated_user"])
def test_a_run_with_judge_and_simulated_user_spans_imports_as_the_agents_calls_only(cli, name):
    # the roles' spans (judge verdicts, a simulated user's messages) are not the agent's
    # calls: the imported recording replays the agent alone, turn for turn
    shutil.copytree(REPO / "scenarios" / "live_roles", "live_roles",
                    ignore=shutil.ignore_patterns("__pycache__"))
    exported = _export(cli, Path("live_roles") / f"{name}.yaml", "react")
    assert any(s["name"] in ("simulated_user", "judge expect.answer.judge")
               for s in spans_of(exported))

    imported = cli("import-trace", exported, "--out", f"imported/{name}.yaml")
    assert imported.code == 0, imported.out + imported.err
    replayed = cli("run", f"imported/{name}.yaml")

    assert replayed.code == 0, replayed.out + replayed.err
    turns = yaml.safe_load(Path(f"imported/{name}.yaml").read_text())["turns"]
    assert len(turns) == {"live_judged_answer": 1, "live_simulated_user": 2}[name]


def _roots(path: Path) -> list[dict]:
    return [s for s in spans_of(path) if "parentSpanId" not in s]


@pytest.mark.slow  # every sample of every live recording
@pytest.mark.parametrize("name", ["live_answers", "live_compare", "live_function_calling",
                                  "live_react", "live_openai_sdk"])
def test_every_sample_of_a_bundled_live_recording_exports_imports_and_replays(cli, name):
    # the live model's runs as they were: an iteration limit reached, a forced tool, a tool
    # name the model made up -- carried by the export (the agent's params, return_direct) and
    # imported into a scenario that replays to the same end
    shutil.copytree(REPO / "scenarios" / "live", "live",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(REPO / "examples", "examples", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", "pyproject.toml")  # registers openai_sdk_agent
    scenario = yaml.safe_load((REPO / "scenarios" / "live" / f"{name}.yaml").read_text())
    for agent in scenario["agents"]:
        exported = _export(cli, Path("live") / f"{name}.yaml", agent, out=f"{agent}.json")
        roots = _roots(exported)
        assert [attrs(r)["agentkit.sample"] for r in roots] == list(range(len(roots)))
        for root in roots:
            out = f"imported/{name}_{agent}_{attrs(root)['agentkit.sample']}.yaml"
            imported = cli("import-trace", exported, "--trace", root["traceId"], "--out", out)
            assert imported.code == 0, imported.out + imported.err
            replayed = cli("run", out, "--snapshots", "off")
            assert replayed.code == 0, f"{out}\n{replayed.out}{replayed.err}"
            data = yaml.safe_load(Path(out).read_text())
            [(imported_as, entry)] = data["agents"].items()
            # the params are the agent type's: carried when it replays under that type (a
            # wire-traced agent is imported under function_calling, without them)
            carried = scenario["agents"][agent].get("params") if imported_as == agent else None
            assert entry.get("params") == carried
            if root["status"].get("code") == 2:  # the run ended on an error: so does the replay
                assert root["status"]["message"] in data["expect"]["error"]["contains"]


def test_a_file_of_samples_lists_each_trace_with_its_sample(cli):
    shutil.copytree(REPO / "scenarios" / "live", "live",
                    ignore=shutil.ignore_patterns("__pycache__"))
    exported = _export(cli, Path("live") / "live_react.yaml", "react")

    listed = cli("import-trace", exported, "--out", "x.yaml")

    assert listed.code == 2
    for root in _roots(exported):
        sample = attrs(root)["agentkit.sample"]
        assert f"{root['traceId']}  live_react[react] (sample {sample})" in listed.err


def test_a_return_direct_tool_is_carried_into_the_imported_scenario(cli, bundled):
    exported = _export(cli, bundled("return_direct"), "function_calling")

    assert cli("import-trace", exported, "--out", "direct.yaml").code == 0

    tools = yaml.safe_load(Path("direct.yaml").read_text())["tools"]
    assert [t.get("return_direct") for t in tools] == [True]
    replayed = cli("run", "direct.yaml", "--snapshots", "off")
    assert replayed.code == 0, replayed.out + replayed.err
