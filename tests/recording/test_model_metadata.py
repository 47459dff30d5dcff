"""A replayed or scripted model's metadata is built once per model (``model_metadata``) and
shared: the LLM call path reads it on every call, and each read used to build a pydantic
``LLMMetadata``. Builds are counted (the cache's misses), never timed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agentkit.instrumentation import collect_events
from agentkit.llms.mock import ScriptedLLM
from agentkit.llms.types import ChatMessage, LLMMetadata, model_metadata
from agentkit.recording import CassetteLLM, RecordingLLM, RoleKey


@pytest.fixture
def builds() -> Iterator[object]:
    """A fresh cache: its misses are the metadata built."""
    model_metadata.cache_clear()
    yield model_metadata
    model_metadata.cache_clear()


def _cassette(path: Path, name: str, calls: int) -> Path:
    recorder = RecordingLLM(ScriptedLLM([f"answer {i}" for i in range(calls)], name=name,
                                        function_calling=False, context_window=8000), path, "rewrite")
    for i in range(calls):
        recorder.chat([ChatMessage.from_str(f"question {i}")])
    return path


def test_a_replays_metadata_is_built_once_for_all_its_calls_and_replays(tmp_path: Path,
                                                                         builds: object):
    path = _cassette(tmp_path / "a.yaml", "model-a", 3)
    model_metadata.cache_clear()  # recording read the scripted model's
    first, again = CassetteLLM(path), CassetteLLM(path)

    with collect_events() as events:
        for i in range(3):
            first.chat([ChatMessage.from_str(f"question {i}")])
            again.chat([ChatMessage.from_str(f"question {i}")])

    assert model_metadata.cache_info().misses == 1
    assert {e.model for e in events if hasattr(e, "model")} == {"model-a"}
    assert first.metadata is again.metadata
    assert first.metadata == LLMMetadata(model_name="model-a", is_chat_model=True,
                                         is_function_calling_model=False, context_window=8000)


def test_each_model_has_its_own_metadata(tmp_path: Path, builds: object):
    a, b = (CassetteLLM(_cassette(tmp_path / f"{n}.yaml", n, 1)) for n in ("model-a", "model-b"))

    assert (a.metadata.model_name, b.metadata.model_name) == ("model-a", "model-b")
    scripted = ScriptedLLM([], name="model-a", function_calling=True)
    assert scripted.metadata is not a.metadata  # it calls tools: another model
    assert scripted.metadata.is_function_calling_model
    assert scripted.metadata is ScriptedLLM([], name="model-a", function_calling=True).metadata


def test_a_roles_metadata_names_its_recorded_model(tmp_path: Path, builds: object):
    judge = CassetteLLM(_cassette(tmp_path / "a.yaml", "model-a", 1)).role(
        RoleKey(role="judge", at="expect.answer", subject={"rubric": "r"}, transcript="t",
                model="judge-model"))

    assert judge.metadata is judge.metadata
    assert (judge.metadata.model_name, judge.metadata.is_function_calling_model,
            judge.metadata.context_window) == ("judge-model", False, 3900)
