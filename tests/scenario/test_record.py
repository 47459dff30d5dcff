"""record_scenario: the one recording function of `agentkit record` and the pytest plugin.

The live backend here is a ScriptedLLM (offline); what matters is what reaches the disk: the
cassette and its trace (the snapshot) are written together, only for a recording that replays, and a
recording that fails or is killed (kill -9 of a subprocess) leaves the old pair."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from agentkit.core import textfiles
from agentkit.harness._record import record_scenario
from agentkit.llms.mock import ScriptedLLM, tool_call
from agentkit.llms.openai import OpenAI
from agentkit.scenario import run_scenario

from .conftest import MINIMAL

ROOT = Path(__file__).parents[2]
RECORDED = MINIMAL.replace(
    "    script:\n      - tool_calls: [{name: add, args: {a: 2, b: 3}}]\n      - 2 + 3 = 5\n",
    "    recording: cassettes/rec.yaml\n").replace("name: demo", "name: rec") + """\
expect:
  answer: {contains: "5"}
"""
ANSWERS = [tool_call("add", a=2, b=3), "2 + 3 = 5"]


@pytest.fixture
def scenario(write_file) -> Path:
    return write_file("rec.yaml", RECORDED)


def _files(scenario: Path) -> tuple[Path, Path]:
    """The cassette and the recorded trace (the agent type's snapshot)."""
    return (scenario.parent / "cassettes" / "rec.yaml",
            scenario.parent / "__snapshots__" / "rec" / "function_calling.json")


def _contents(scenario: Path) -> tuple[str, str]:
    cassette, trace = _files(scenario)
    return cassette.read_text("utf-8"), trace.read_text("utf-8")


def _record(scenario: Path, answers=ANSWERS, mode="once"):
    return record_scenario(scenario, "function_calling", ScriptedLLM(list(answers), strict=False),
                           mode)


def _replays(scenario: Path) -> bool:
    result = run_scenario(scenario)
    recorded = json.loads(_files(scenario)[1].read_text("utf-8"))
    return result.passed and result.trace.to_dict() == recorded


def _stray_files(scenario: Path) -> list[str]:
    """Anything beside the cassette and the snapshot (pending or temporary files)."""
    files = _files(scenario)
    return sorted(p.name for folder in {f.parent for f in files} if folder.is_dir()
                  for p in folder.iterdir() if p not in files)


def test_a_good_recording_writes_the_cassette_and_its_trace_and_replays(scenario):
    recording = _record(scenario)

    assert (recording.ok, recording.written, recording.recorded) == (True, True, 2)
    assert _replays(scenario) and _stray_files(scenario) == []


def test_once_with_a_recording_already_there_records_and_writes_nothing(scenario):
    _record(scenario)
    before = _contents(scenario)

    recording = _record(scenario, answers=[])

    assert (recording.ok, recording.written, recording.recorded) == (True, False, 0)
    assert _contents(scenario) == before


def test_a_re_recording_of_a_symlinked_cassette_writes_through_the_link(scenario, tmp_path):
    cassette = _files(scenario)[0]
    _record(scenario)
    shared = tmp_path / "shared" / "rec.yaml"  # the cassette kept elsewhere, linked in
    shared.parent.mkdir()
    cassette.rename(shared)
    cassette.symlink_to(shared)

    recording = _record(scenario, answers=[tool_call("add", a=2, b=3), "It is 5."],
                        mode="rewrite")

    assert recording.written
    assert cassette.is_symlink() and cassette.resolve() == shared
    assert "It is 5." in shared.read_text("utf-8")
    assert _replays(scenario) and _stray_files(scenario) == []
    assert sorted(p.name for p in shared.parent.iterdir()) == ["rec.yaml"]


def test_a_recording_that_fails_its_expectations_leaves_the_old_pair(scenario):
    _record(scenario)
    before = _contents(scenario)

    recording = _record(scenario, answers=["I cannot add."], mode="rewrite")

    assert not recording.written
    assert recording.problems[0].startswith("the recorded run failed: ")
    assert _contents(scenario) == before


def test_a_recording_its_replay_could_not_read_is_refused_before_anything_is_written(
        scenario, monkeypatch):
    monkeypatch.setattr(textfiles, "MAX_TEXT_BYTES", 64 << 10)  # 64 KiB stands for 256 MiB
    long_answer = "2 + 3 = 5. " + "Five is the sum. " * 5000  # about 85 KB

    recording = _record(scenario, answers=[tool_call("add", a=2, b=3), long_answer])

    assert not recording.written and not any(path.exists() for path in _files(scenario))
    [problem] = recording.problems
    assert problem.startswith("the recording is too large to keep: ")
    assert (f"{_files(scenario)[1]} would be 0.3 MiB, more than the 0.0625 MiB agentkit reads "
            "back (MAX_TEXT_BYTES)") in problem
    assert problem.endswith(
        "so its replay could not read it; nothing was written. Record a shorter conversation "
        "(split the scenario's turns into several scenarios) or ask for shorter answers")


def test_mode_all_after_the_conversation_changed_is_refused_not_reported_as_success(scenario):
    _record(scenario)
    before = _contents(scenario)
    scenario.write_text(RECORDED.replace("What is 2 + 3?", "What is two plus three?"), "utf-8")

    recording = _record(scenario, mode="all")

    assert not recording.ok and not recording.written
    assert any("exchange(s) that were not replayed" in p for p in recording.problems)
    assert _contents(scenario) == before


def test_a_secret_env_value_typed_into_a_turn_is_refused_naming_the_variable(scenario,
                                                                             monkeypatch):
    monkeypatch.setenv("MY_SERVICE_TOKEN", "tok-0123456789abc")
    scenario.write_text(RECORDED.replace("What is 2 + 3?", "What is 2 + 3? tok-0123456789abc"),
                        "utf-8")

    recording = _record(scenario)

    assert not recording.written and not _files(scenario)[0].exists()
    assert "A request held the value of MY_SERVICE_TOKEN" in recording.problems[0]


@pytest.mark.agentkit_allow_loopback
def test_an_unreachable_model_stops_the_recording_with_its_connection_error(scenario):
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    live = OpenAI(base_url=f"http://127.0.0.1:{port}/v1", max_retries=3)

    recording = record_scenario(scenario, "function_calling", live, "once")

    assert recording.problems == [
        f"APIConnectionError: could not reach the server at http://127.0.0.1:{port}/v1 "
        "(1 attempt): connection refused; is the server running at that address?"]
    assert not _files(scenario)[0].exists() and recording.replay is None


# ----------------------------------------------------------------- kill -9
_KILLED_RECORDER = """\
import os, signal, sys
from agentkit.core import textfiles
from agentkit.llms.mock import ScriptedLLM, tool_call
from agentkit.harness._record import record_scenario

scenario, mode, kill_at_replace, answer = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]

def die(messages, tools):
    os.kill(os.getpid(), signal.SIGKILL)

if kill_at_replace:  # kill -9 right before the n-th rename of the commit
    calls, real_replace = [0], os.replace
    def replace(src, dst):
        calls[0] += 1
        if calls[0] == kill_at_replace:
            os.kill(os.getpid(), signal.SIGKILL)
        real_replace(src, dst)
    os.replace = replace
    script = [tool_call("add", a=2, b=3), answer]
else:  # kill -9 while the model answers the second request
    script = [tool_call("add", a=2, b=3), die]
record_scenario(scenario, "function_calling", ScriptedLLM(script), mode)
"""


def _killed_recording(scenario: Path, mode: str, kill_at_replace: int = 0,
                      answer: str = "2 + 3 = 5") -> None:
    run = subprocess.run([sys.executable, "-c", _KILLED_RECORDER, str(scenario), mode,
                          str(kill_at_replace), answer], cwd=ROOT, check=False,
                         capture_output=True)
    assert run.returncode == -signal.SIGKILL, run.stderr.decode()


@pytest.mark.slow  # a recorder killed in a fresh interpreter
@pytest.mark.parametrize("mode", ["rewrite", "all"])
def test_a_recording_killed_mid_run_leaves_the_old_pair(scenario, mode):
    _record(scenario)
    before = _contents(scenario)

    _killed_recording(scenario, mode)

    assert _contents(scenario) == before and _stray_files(scenario) == []
    assert _replays(scenario)


@pytest.mark.slow  # a recorder killed in a fresh interpreter
def test_a_killed_once_does_not_block_the_next_once(scenario):
    _killed_recording(scenario, "once")

    recording = _record(scenario)

    assert recording.written and _replays(scenario)


# the commit's renames: 1 and 2 write the pending files, 3 renames the snapshot (the recorded
# trace), 4 the cassette
@pytest.mark.slow  # a recorder killed in a fresh interpreter
@pytest.mark.parametrize("kill_at_replace, answer_now", [(3, "2 + 3 = 5"), (4, "5, of course")])
def test_a_recording_killed_while_writing_its_files_settles_to_one_pair_that_replays(
        scenario, kill_at_replace, answer_now):
    _record(scenario)

    _killed_recording(scenario, "rewrite", kill_at_replace, answer="5, of course")

    assert _replays(scenario)  # the next run settles the pair first
    assert run_scenario(scenario).trace.turns[0].response == answer_now
    assert _stray_files(scenario) == []


def test_a_re_recording_that_came_back_the_same_keeps_the_cassettes_recorded_at(scenario):
    assert _record(scenario).written
    cassette = _files(scenario)[0]
    old = cassette.read_text("utf-8")
    stamp = next(line for line in old.splitlines() if line.startswith("recorded_at:"))
    cassette.write_text(old.replace(stamp, "recorded_at: '2000-01-01T00:00:00+00:00'"), "utf-8")

    assert _record(scenario, mode="rewrite").written

    assert "recorded_at: '2000-01-01T00:00:00+00:00'" in cassette.read_text("utf-8")
