"""The bundled live fault matrix (examples/faults/scenarios/live_order.yaml, issue 39): recorded
against the local model by continuing from the recorded run -- one shared prefix, a
continuation per variant -- and replayed here offline, every cell classified, the same bytes
twice (tests/live/test_faults_live.py records it again)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml

from agentkit.harness import record_fault_continuations, run_fault_matrix
from agentkit.recording import Cassette
from mocks.openai_server import FakeOpenAIServer

ROOT = Path(__file__).resolve().parents[2]
SCENARIO = ROOT / "examples" / "faults" / "scenarios" / "live_order.yaml"
CASSETTE = SCENARIO.parent / "cassettes" / "live_order.function_calling.yaml"


def test_the_live_matrix_replays_offline_with_every_cell_classified_the_same_twice() -> None:
    first = run_fault_matrix(SCENARIO)
    again = run_fault_matrix(SCENARIO)

    assert first.agent_types == ["function_calling"] and len(first.variants) >= 10
    outcomes = [first.outcome(v, "function_calling") for v in first.variants]
    assert set(outcomes) <= {"recovered", "failed_safely", "fabricated", "crashed"}, outcomes
    assert first.passed  # the scenario allows every class: it measures the model
    assert [c.trace.to_json() for c in first.cells.values()] == \
        [c.trace.to_json() for c in again.cells.values()]


def test_the_cassette_holds_one_shared_prefix_then_a_continuation_per_variant() -> None:
    exchanges = yaml.safe_load(CASSETTE.read_text("utf-8"))["exchanges"]
    question, looked_up = (e["request"]["messages"] for e in exchanges[:2])

    # the unfaulted run: the question, then the answer to the real tool output
    assert question == [{"role": "user", "content": "Where is my order 1001?"}]
    assert looked_up[0] == {"ref": "/exchanges/0/request/messages", "start": 0, "count": 1}
    assert '"status": "packing"' in looked_up[-1]["content"]
    # every other exchange is a variant's continuation, tagged with it, written as that run's
    # question and tool call (a reference into the file: the prefix, once), then its own
    # faulted tool output (one two variants delivered alike is a reference too)
    assert [e.get("variant") for e in exchanges[:2]] == [None, None]
    continuations = exchanges[2:]
    assert len(continuations) >= 8
    assert len({e["variant"] for e in continuations}) == len(continuations)
    for exchange in continuations:
        messages = exchange["request"]["messages"]
        assert len(messages) == 2 and messages[0]["count"] == 2
        assert messages[1] != looked_up[-1]
    outputs = [e.request["messages"][-1] for e in Cassette.load(CASSETTE).exchanges[2:]]
    assert all(m["role"] == "tool" and m != looked_up[-1] for m in outputs)


def test_a_plain_run_of_the_scenario_replays_only_its_own_exchanges() -> None:
    result = subprocess.run([sys.executable, "-m", "agentkit", "run", str(SCENARIO)],
                            capture_output=True, text=True, cwd=ROOT, timeout=600)

    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 passed, 0 failed" in result.stdout


def test_recording_it_again_asks_the_model_nothing() -> None:
    before = CASSETTE.read_bytes()
    server = FakeOpenAIServer([], strict=False)

    again = record_fault_continuations(SCENARIO, "function_calling", server.llm())

    assert again.ok and len(again.recorded) >= 10 and set(again.recorded.values()) == {0}
    assert server.calls == 0 and CASSETTE.read_bytes() == before
