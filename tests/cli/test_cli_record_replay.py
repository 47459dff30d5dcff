"""``agentkit record`` against a (fake) OpenAI-compatible endpoint, and ``agentkit replay``."""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from agentkit.llms.mock import ScriptedResponse, tool_call
from cli_helpers import FAKE_URL, Outcome
from mocks.openai_server import FakeOpenAIServer
from tests.fake_keys import fake_key
from tests.scenario_text import adding_scenario

FAKE_KEY = fake_key("fake-0123456789abcdefghijklmnop")


def _cassette(adding: Path) -> Path:
    return adding.parent / "cassettes" / "adding.function_calling.yaml"


def _trace(adding: Path) -> Path:
    """The recorded trace: the agent type's snapshot, written with the cassette."""
    return adding.parent / "__snapshots__" / "adding" / "function_calling.json"


@pytest.fixture
def recorded(cli: Callable[..., Outcome], adding: Path,
             fake_openai_endpoint: Callable[..., FakeOpenAIServer]) -> Path:
    """`adding` with its function_calling agent recorded."""
    fake_openai_endpoint()
    result = cli("record", adding, "--agent", "function_calling", "--base-url", FAKE_URL)
    assert result.code == 0, result.out + result.err
    return adding


def test_record_without_a_recording_field_exits_2_with_the_fix(cli: Callable[..., Outcome],
                                                               adding: Path) -> None:
    result = cli("record", adding, "--agent", "react", "--base-url", FAKE_URL)

    assert result.code == 2
    assert (f"agentkit: error: {adding}: agents.react has a `script`, not a `recording`; set "
            "`recording: cassettes/adding.react.yaml` (instead of `script`) to record it"
            in result.err)


def test_record_unknown_agent_type_exits_2(cli: Callable[..., Outcome], adding: Path) -> None:
    result = cli("record", adding, "--agent", "planner", "--base-url", FAKE_URL)

    assert result.code == 2
    assert f"{adding}: no agent type `planner` (it has react, function_calling)" in result.err


def test_record_without_an_api_key_for_openai_exits_2_naming_the_variable(
        cli: Callable[..., Outcome], adding: Path) -> None:
    result = cli("record", adding, "--agent", "function_calling")

    assert result.code == 2
    assert "set the OPENAI_API_KEY environment variable" in result.err
    assert not _cassette(adding).exists()


def test_record_writes_the_cassette_and_the_trace_beside_it(
        cli: Callable[..., Outcome], adding: Path,
        fake_openai_endpoint: Callable[..., FakeOpenAIServer]) -> None:
    server = fake_openai_endpoint()

    result = cli("record", adding, "--agent", "function_calling", "--base-url", FAKE_URL)

    assert result.code == 0
    assert server.calls == 2
    cassette = yaml.safe_load(_cassette(adding).read_text(encoding="utf-8"))
    assert [e["response"]["message"]["content"] for e in cassette["exchanges"]] == \
        ["", "2 + 3 = 5"]
    trace = json.loads(_trace(adding).read_text(encoding="utf-8"))
    assert (trace["agent"], trace["turns"][0]["response"]) == ("function_calling", "2 + 3 = 5")
    assert f"wrote {_cassette(adding)} and {_trace(adding)}" in result.out.splitlines()
    assert result.out.splitlines()[-1].strip() == "the offline replay reproduces the recorded trace"


def test_record_sends_the_temperature_and_seed_it_is_given_with_every_request(
        cli: Callable[..., Outcome], adding: Path,
        fake_openai_endpoint: Callable[..., FakeOpenAIServer]) -> None:
    server = fake_openai_endpoint()

    result = cli("record", adding, "--agent", "function_calling", "--base-url", FAKE_URL,
                 "--temperature", "0", "--seed", "7")

    assert result.code == 0, result.out + result.err
    assert [(r["temperature"], r["seed"]) for r in server.requests] == [(0, 7), (0, 7)]


@pytest.mark.parametrize("value", ["2.5", "-0.1", "warm"])
def test_record_with_a_temperature_outside_0_to_2_exits_2(cli: Callable[..., Outcome],
                                                          adding: Path, value: str) -> None:
    result = cli("record", adding, "--agent", "function_calling", "--temperature", value)

    assert result.code == 2
    assert "--temperature" in result.err and value in result.err
    assert not _cassette(adding).exists()


def test_record_prints_a_progress_line_per_call(
        cli: Callable[..., Outcome], adding: Path,
        fake_openai_endpoint: Callable[..., FakeOpenAIServer]) -> None:
    fake_openai_endpoint()

    result = cli("record", adding, "--agent", "function_calling", "--base-url", FAKE_URL)

    lines = result.out.splitlines()
    assert lines[0] == (f"recording adding [function_calling] with gpt-4o-mini at {FAKE_URL} "
                        f"(mode once) -> {_cassette(adding)}")
    assert lines[1] == "  turn: 'What is 2 + 3?'"
    assert lines[2].startswith("    [  1] LLM call  ")
    assert lines[3] == "          tool add"
    assert lines[4].startswith("    [  2] LLM call  ")
    assert lines[5].startswith("PASS  adding[function_calling] ")


def test_record_uses_the_key_from_the_environment_and_never_writes_it(
        cli: Callable[..., Outcome], adding: Path, monkeypatch: pytest.MonkeyPatch,
        fake_openai_endpoint: Callable[..., FakeOpenAIServer]) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    # the server only answers requests carrying that key; the model's reply echoes it
    fake_openai_endpoint([tool_call("add", a=2, b=3), f"2 + 3 = 5 (key {FAKE_KEY})"],
                         api_key=FAKE_KEY)

    result = cli("record", adding, "--agent", "function_calling", "--base-url", FAKE_URL)

    assert result.code == 0
    cassette, trace = (_cassette(adding).read_text(encoding="utf-8"),
                       _trace(adding).read_text(encoding="utf-8"))
    assert FAKE_KEY not in cassette and FAKE_KEY not in trace
    assert "2 + 3 = 5 (key <redacted:OPENAI_API_KEY>)" in cassette
    assert FAKE_KEY not in result.out + result.err


def test_record_never_prints_a_secret_env_value_typed_into_a_turn(
        cli: Callable[..., Outcome], write: Callable[[str, str], Path],
        monkeypatch: pytest.MonkeyPatch,
        fake_openai_endpoint: Callable[..., FakeOpenAIServer]) -> None:
    token = "tok-3e4r5t6y7u8i9o0p"
    monkeypatch.setenv("PROBE_SERVICE_TOKEN", token)
    scenario = write("scenarios/secret.yaml", f"""\
        format: 1
        name: secret
        turns:
          - user: my token is {token}, keep it
        agents:
          react:
            recording: cassettes/secret.react.yaml
        """)
    fake_openai_endpoint(["Answer: kept"])

    result = cli("record", scenario, "--agent", "react", "--base-url", FAKE_URL)

    assert result.code == 1  # refused: it could never replay (tests/scenario/test_record.py)
    assert "turn: 'my token is <redacted:PROBE_SERVICE_TOKEN>, keep it'" in result.out
    assert token not in result.out + result.err


def test_record_of_a_run_failing_its_expectations_exits_1_and_writes_nothing(
        cli: Callable[..., Outcome], adding: Path,
        fake_openai_endpoint: Callable[..., FakeOpenAIServer]) -> None:
    fake_openai_endpoint(["I cannot add."])

    result = cli("record", adding, "--agent", "function_calling", "--base-url", FAKE_URL)

    assert result.code == 1
    assert "FAIL  the recorded run failed: final answer 'I cannot add.' does not match " \
           "contains '5'" in result.out.splitlines()
    assert not _cassette(adding).exists() and not _trace(adding).exists()


def test_replay_reproducing_the_recorded_trace_exits_0(cli: Callable[..., Outcome],
                                                       recorded: Path) -> None:
    result = cli("replay", recorded)

    assert result.code == 0
    assert result.out.splitlines()[1] == \
        f"      replay reproduces the recorded trace ({_trace(recorded)})"


def test_replay_differing_from_the_recorded_trace_exits_1_with_the_diff(
        cli: Callable[..., Outcome], recorded: Path) -> None:
    trace = json.loads(_trace(recorded).read_text(encoding="utf-8"))
    trace["turns"][0]["steps"][1]["llm_calls"][0]["response"]["content"] = "2 + 3 = 6"
    _trace(recorded).write_text(json.dumps(trace), encoding="utf-8")

    result = cli("replay", recorded)

    assert result.code == 1
    lines = result.out.splitlines()
    assert lines[1] == f"      replay differs from the recorded trace {_trace(recorded)}:"
    assert "          step 2: changed" in lines
    assert '            llm_calls[0].response.content: "2 + 3 = 6" -> "2 + 3 = 5"' in lines


def test_replay_cassette_miss_exits_1_naming_the_nearest_recorded_request(
        cli: Callable[..., Outcome], recorded: Path) -> None:
    recorded.write_text(recorded.read_text(encoding="utf-8").replace("2 + 3?", "2 + 4?"),
                        encoding="utf-8")

    result = cli("replay", recorded)

    assert result.code == 1
    lines = result.out.splitlines()
    assert lines[0].startswith("FAIL  adding[function_calling] ")
    assert lines[1].startswith(f"      cassette miss: {_cassette(recorded)}: no recorded "
                               "exchange matches this request")
    assert lines[2].startswith("        nearest recorded: exchanges[0] (hash ")
    assert lines[3] == ("        first difference (recorded -> now), at messages[0].content: "
                        '"What is 2 + 3?" -> "What is 2 + 4?"')
    assert lines[5] == (f"      to re-record: agentkit record {recorded} --agent function_calling "
                        f"--mode rewrite --model gpt-4o-mini --base-url {FAKE_URL}")


def test_replay_of_an_agent_type_without_recording_exits_2(cli: Callable[..., Outcome],
                                                           recorded: Path) -> None:
    result = cli("replay", recorded, "--agent", "react")

    assert result.code == 2
    assert f"{recorded}: agent type `react` has no recording" in result.err


def test_record_with_an_unusable_tool_exits_2_naming_the_field(
        cli: Callable[..., Outcome], adding: Path,
        fake_openai_endpoint: Callable[..., FakeOpenAIServer]) -> None:
    fake_openai_endpoint([])
    adding.write_text(adding.read_text(encoding="utf-8").replace("mocks.tools:add",
                                                                 "mocks.tools:subtract"),
                      encoding="utf-8")

    result = cli("record", adding, "--agent", "function_calling", "--base-url", FAKE_URL)

    assert result.code == 2
    assert "tools.0.ref: cannot use `mocks.tools:subtract`" in result.err
    assert "Traceback" not in result.err


def test_replay_without_a_cassette_exits_2_with_how_to_record(cli: Callable[..., Outcome],
                                                              adding: Path) -> None:
    result = cli("replay", adding)

    assert result.code == 2
    assert f"fix: record it with `agentkit record {adding} --agent function_calling`" in \
        result.err


def test_record_of_a_run_that_cannot_replay_exits_1_saying_so(
        cli: Callable[..., Outcome], write: Callable[[str, str], Path], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch,
        fake_openai_endpoint: Callable[..., FakeOpenAIServer]) -> None:
    # a tool whose output changes from run to run makes the second request differ on replay
    write("ticket_tools.py", """\
        issued = 0

        def ticket() -> str:
            \"\"\"Issue a support ticket.\"\"\"
            global issued
            issued += 1
            return f"T-{issued}"
        """)
    monkeypatch.syspath_prepend(str(tmp_path))
    scenario = write("scenarios/ticket.yaml", """\
        format: 1
        name: ticket
        tools:
          - ref: ticket_tools:ticket
        turns:
          - user: Open a ticket for me.
        agents:
          function_calling:
            recording: cassettes/ticket.function_calling.yaml
        """)
    fake_openai_endpoint([tool_call("ticket"), "Your ticket is T-1."])

    result = cli("record", scenario, "--agent", "function_calling", "--base-url", FAKE_URL)

    assert result.code == 1
    assert any(line.startswith("FAIL  the fresh recording does not replay (are the agent's "
                                "requests deterministic?): ") for line in result.out.splitlines())
    assert '"T-1" -> "T-2"' in result.out


TEAM = adding_scenario("team", """\
expect:
  answer: {contains: "5"}
agents:
  agent_workflow:
    root: planner
    team:
      - {name: planner, description: Plans., tools: [], can_handoff_to: [calculator],
         recording: cassettes/team.planner.yaml}
      - {name: calculator, description: Adds., recording: cassettes/team.calculator.yaml}
""")
TEAM_ANSWERS = [tool_call("handoff", to_agent="calculator", reason="a sum"),
                tool_call("add", a=2, b=3), "2 + 3 = 5"]


def test_record_of_a_team_writes_each_agents_cassette_and_the_team_trace_and_replays(
        cli: Callable[..., Outcome], write: Callable[[str, str], Path],
        fake_openai_endpoint: Callable[..., FakeOpenAIServer]) -> None:
    team = write("scenarios/team.yaml", TEAM)
    fake_openai_endpoint(TEAM_ANSWERS)
    folder = team.parent / "cassettes"
    files = [folder / "team.planner.yaml", folder / "team.calculator.yaml",
             team.parent / "__snapshots__" / "team" / "agent_workflow.json"]

    recorded = cli("record", team, "--agent", "agent_workflow", "--base-url", FAKE_URL)

    assert recorded.code == 0, recorded.out + recorded.err
    assert f"wrote {files[0]}, {files[1]} and {files[2]}" in recorded.out.splitlines()
    replayed = cli("replay", team)
    assert replayed.code == 0, replayed.out
    assert f"      replay reproduces the recorded trace ({files[2]})" in replayed.out.splitlines()


def test_record_of_a_team_without_recordings_exits_2_with_the_fix(
        cli: Callable[..., Outcome], write: Callable[[str, str], Path]) -> None:
    team = write("scenarios/team.yaml", TEAM.replace(
        "recording: cassettes/team.planner.yaml", "script: [done]").replace(
        "recording: cassettes/team.calculator.yaml", "script: [done]"))

    result = cli("record", team, "--agent", "agent_workflow", "--base-url", FAKE_URL)

    assert result.code == 2
    assert (f"{team}: agents.agent_workflow: every team agent has a `script`; set `recording: "
            "cassettes/team.agent_workflow.<agent>.yaml` (instead of `script`) on each team "
            "agent to record") in result.err


def test_list_shows_where_each_team_agents_answers_come_from(
        cli: Callable[..., Outcome], write: Callable[[str, str], Path]) -> None:
    team = write("scenarios/team.yaml", TEAM.replace("recording: cassettes/team.planner.yaml",
                                                     "script: [done]"))

    result = cli("list", team)

    assert result.out.splitlines()[1] == ("  - agent_workflow: team: planner (script, 1 replies), "
                                          "calculator (recording cassettes/team.calculator.yaml)")


def test_after_a_recording_run_and_pytest_find_its_snapshot_and_pass(
        cli: Callable[..., Outcome], recorded: Path) -> None:
    result = cli("run", recorded, "--agents", "function_calling")

    assert result.code == 0, result.out + result.err
    assert result.out.splitlines()[-1] == "1 passed, 0 failed"


def _answers(*, latency: float, final: str = "2 + 3 = 5") -> list[ScriptedResponse]:
    """The `adding` conversation as a live model answers it, taking ``latency`` per answer."""
    return [ScriptedResponse(tool_calls=[tool_call("add", a=2, b=3)], latency=latency),
            ScriptedResponse(text=final, latency=latency)]


def test_record_once_over_an_existing_cassette_says_nothing_was_recorded(
        cli: Callable[..., Outcome], adding: Path,
        fake_openai_endpoint: Callable[..., FakeOpenAIServer]) -> None:
    server = fake_openai_endpoint()
    assert cli("record", adding, "--agent", "function_calling", "--base-url", FAKE_URL).code == 0
    before = _cassette(adding).read_bytes()

    result = cli("record", adding, "--agent", "function_calling", "--base-url", FAKE_URL)

    assert result.code == 0, result.out
    assert result.out.splitlines()[0] == (
        f"{_cassette(adding)}: cassette exists, nothing recorded (mode once records only what "
        "is missing); use --mode rewrite to record it again, or --mode new_episodes to add "
        "requests it lacks")
    assert "deterministic" not in result.out
    assert server.calls == 2 and _cassette(adding).read_bytes() == before


def test_re_recording_an_unchanged_conversation_leaves_every_file_byte_for_byte(
        cli: Callable[..., Outcome], adding: Path,
        fake_openai_endpoint: Callable[..., FakeOpenAIServer]) -> None:
    # a live model never takes the same time twice
    fake_openai_endpoint(_answers(latency=0.25) + _answers(latency=0.75))
    record = ("record", adding, "--agent", "function_calling", "--base-url", FAKE_URL)
    assert cli(*record).code == 0
    before = {p: p.read_bytes() for p in (_cassette(adding), _trace(adding))}

    result = cli(*record, "--mode", "rewrite")

    assert result.code == 0, result.out
    assert {p: p.read_bytes() for p in before} == before


def test_a_changed_answer_re_records_only_what_changed(
        cli: Callable[..., Outcome], adding: Path,
        fake_openai_endpoint: Callable[..., FakeOpenAIServer]) -> None:
    fake_openai_endpoint(_answers(latency=0.25) + _answers(latency=0.75, final="It is 5."))
    record = ("record", adding, "--agent", "function_calling", "--base-url", FAKE_URL)
    assert cli(*record).code == 0
    old = yaml.safe_load(_cassette(adding).read_text(encoding="utf-8"))["exchanges"]

    result = cli(*record, "--mode", "rewrite")

    assert result.code == 0, result.out
    new = yaml.safe_load(_cassette(adding).read_text(encoding="utf-8"))["exchanges"]
    assert new[0] == old[0]  # same request, same answer: its recorded latency kept
    assert new[1]["response"]["message"]["content"] == "It is 5."
    assert (old[1]["latency"], new[1]["latency"]) == (0.25, 0.75)


def test_the_cassette_keeps_the_server_it_was_recorded_with_without_credentials(
        cli: Callable[..., Outcome], adding: Path,
        fake_openai_endpoint: Callable[..., FakeOpenAIServer]) -> None:
    fake_openai_endpoint()
    with_password = FAKE_URL.replace("http://", "http://me:hunter2@")

    result = cli("record", adding, "--agent", "function_calling", "--base-url", with_password)

    assert result.code == 0, result.out + result.err
    text = _cassette(adding).read_text(encoding="utf-8")
    assert yaml.safe_load(text)["base_url"] == FAKE_URL
    assert "hunter2" not in text


def test_the_re_record_command_replay_prints_re_records_as_printed(
        cli: Callable[..., Outcome], adding: Path,
        fake_openai_endpoint: Callable[..., FakeOpenAIServer]) -> None:
    fake_openai_endpoint([tool_call("add", a=2, b=3), "2 + 3 = 5",
                          tool_call("add", a=2, b=4), "2 + 4 = 6"])
    assert cli("record", adding, "--agent", "function_calling", "--base-url", FAKE_URL).code == 0
    adding.write_text(adding.read_text(encoding="utf-8").replace("2 + 3?", "2 + 4?")
                      .replace('{contains: "5"}', '{contains: "6"}')
                      .replace("{a: 2, b: 3}", "{a: 2, b: 4}"), encoding="utf-8")
    replayed = cli("replay", adding)
    assert replayed.code == 1
    hint = next(line.strip().removeprefix("to re-record: ")
                for line in replayed.out.splitlines() if "to re-record:" in line)
    argv = shlex.split(hint)
    assert argv[:2] == ["agentkit", "record"]

    rerecorded = cli(*argv[2:] and argv[1:])

    assert rerecorded.code == 0, rerecorded.out + rerecorded.err
    assert cli("replay", adding).code == 0
