"""A streamed answer costs memory in proportion to its length, in ``run``, ``record`` and
``serve``: stream events carry their delta, never the text so far (which every listener that
keeps events -- a trace's collector, a stream nobody reads yet -- would hold once per chunk,
memory growing with the square of the answer). Each test measures the peak of Python
allocations (tracemalloc) for a stream of CHUNKS pieces and holds it to a budget per chunk
that, scaled to 16,000 chunks, stays far under 100 MB; before, a run's peak grew by the text
so far at every chunk (4,000 chunks: over 60 MB)."""

from __future__ import annotations

import threading
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from agentkit.bridge.serve import ServeSession
from agentkit.core.events import LLMStreamChunkEvent
from agentkit.harness._record import record_scenario
from agentkit.harness._runner import load, run_scenario
from agentkit.instrumentation import collect_events
from agentkit.llms.mock import ScriptedLLM, ScriptedResponse

CHUNKS = 2000
PIECES = [f"w{i:05d} " for i in range(CHUNKS)]
ANSWER = "".join(PIECES).strip()
PIECES[-1] = PIECES[-1].strip()
BUDGET = 2048
"""Bytes of peak allocation per chunk: 16,000 chunks at most 32 MB."""


def _scenario(tmp_path: Path, agent: str, model: dict[str, Any]) -> Path:
    path = tmp_path / "long.yaml"
    path.write_text(yaml.safe_dump({"format": 1, "name": "long",
                                    "turns": [{"user": "Tell me everything.", "stream": True}],
                                    "agents": {agent: model}}))
    return path


def _peak(work: Callable[[], Any]) -> tuple[Any, int]:
    tracemalloc.start()
    try:
        result = work()
        return result, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_stream_chunk_event_carries_its_delta_and_nothing_of_the_text_so_far(tmp_path):
    scenario = load(_scenario(tmp_path, "function_calling",
                              {"script": [{"text": ANSWER, "chunks": PIECES}]}))

    with collect_events() as events:
        run_scenario(scenario, "function_calling")

    chunks = [e for e in events if isinstance(e, LLMStreamChunkEvent)]
    assert "".join(e.delta or "" for e in chunks) == ANSWER
    assert sum(len(str(v)) for e in chunks for v in vars_of(e) if isinstance(v, str)) \
        == len(ANSWER)


def vars_of(event: Any) -> list[Any]:
    return [getattr(event, name) for name in event.__slots__ if hasattr(event, name)]


@pytest.mark.slow  # long streams, measured
@pytest.mark.parametrize("agent", ["function_calling", "react", "function_agent"])
def test_a_run_of_a_long_streamed_answer_peaks_linearly_in_its_chunks(tmp_path, agent):
    scenario = load(_scenario(tmp_path, agent, {"script": [{"text": ANSWER, "chunks": PIECES}]}))

    result, peak = _peak(lambda: run_scenario(scenario, agent))

    assert result.passed, result.problems
    assert result.trace.turns[0].response == ANSWER
    assert peak < BUDGET * CHUNKS, f"{peak / 1e6:.1f} MB for {CHUNKS} chunks"


@pytest.mark.slow  # long streams, measured
def test_a_recording_of_a_long_streamed_answer_peaks_linearly_in_its_chunks(tmp_path):
    scenario = load(_scenario(tmp_path, "function_calling",
                              {"recording": "cassettes/long.yaml"}))
    live = ScriptedLLM([ScriptedResponse(text=ANSWER, chunks=PIECES)], name="live")

    recording, peak = _peak(lambda: record_scenario(scenario, "function_calling", live,
                                                    "rewrite"))

    assert recording.ok, recording.problems
    assert peak < BUDGET * CHUNKS, f"{peak / 1e6:.1f} MB for {CHUNKS} chunks"


@pytest.mark.slow  # long streams, measured
@pytest.mark.agentkit_allow_loopback
def test_serving_a_long_streamed_answer_peaks_linearly_in_its_chunks(tmp_path):
    scenario = load(_scenario(tmp_path, "function_calling",
                              {"script": [{"text": ANSWER, "chunks": PIECES}]}))
    session = ServeSession(scenario, "function_calling")
    stop, ready = threading.Event(), threading.Event()
    outcome: list[Any] = []
    tracemalloc.start()
    try:
        server = threading.Thread(target=lambda: outcome.append(
            session.run(stop, lambda url: ready.set())))
        server.start()
        assert ready.wait(30)
        with httpx.stream("POST", f"{session.base_url}/chat/completions", timeout=60, json={
                "model": "m", "stream": True,
                "messages": [{"role": "user", "content": "Tell me everything."}]}) as answer:
            streamed = sum(1 for line in answer.iter_lines() if '"content": "w' in line)
        stop.set()
        server.join(60)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        stop.set()
        session.close()

    assert streamed == CHUNKS
    assert outcome and outcome[0].passed, outcome
    assert peak < BUDGET * CHUNKS, f"{peak / 1e6:.1f} MB for {CHUNKS} chunks"


def test_a_run_builds_no_stream_chunk_event_unless_someone_else_listens(tmp_path, monkeypatch):
    """The harness's trace collector takes every event type but streamed chunks (it files
    nothing from them): with nobody else listening, none is built; a listener of every event
    still gets each, and the trace is the same either way."""
    import agentkit.llms.base as base

    built = []

    class Counted(LLMStreamChunkEvent):
        __slots__ = ()

        def __init__(self, **fields: Any) -> None:
            built.append(fields["delta"])
            super().__init__(**fields)

    monkeypatch.setattr(base, "LLMStreamChunkEvent", Counted)
    pieces = ["Paris ", "is ", "the ", "capital."]
    scenario = load(_scenario(tmp_path, "function_calling",
                              {"script": [{"text": "".join(pieces), "chunks": pieces}]}))
    alone = run_scenario(scenario, "function_calling")
    assert (alone.passed, built) == (True, [])
    with collect_events() as events:
        listened = run_scenario(scenario, "function_calling")
    assert [delta for delta in built if delta] == pieces  # and the stream's closing one
    assert [e.delta for e in events if isinstance(e, Counted)] == built
    assert listened.trace.to_json() == alone.trace.to_json()
