"""The recording layer's old import paths (``agentkit.llms.cassette``, ``...cassette_schema``,
``...fake_openai``, the cassette LLMs of ``agentkit.llms.mock``) give the very same objects as
``agentkit.recording`` and keep exactly the names they had; the layer's heavier parts load only
when they are asked for."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys

import pytest

import agentkit.recording
from agentkit.llms import mock
from tests.recording.old_paths import OLD_PATHS, SHIMS, is_reexport, new_home

CASES = [(old, name) for old, names in OLD_PATHS.items() for name in names]


@pytest.mark.parametrize(("old", "name"), CASES)
def test_an_old_path_gives_the_same_object_as_the_recording_layer(old, name):
    assert getattr(importlib.import_module(old), name) is getattr(agentkit.recording, name)


@pytest.mark.parametrize("old", SHIMS)
def test_an_old_module_exports_exactly_its_old_names_and_holds_nothing_else(old):
    module = importlib.import_module(old)

    assert sorted(module.__all__) == sorted(OLD_PATHS[old])
    defined = {name for name in vars(module)  # not pytest's assertion-rewriting helpers
               if name.isidentifier() and not name.startswith("_")}
    assert defined == set(OLD_PATHS[old])


def test_the_mock_backends_still_export_the_cassette_llms():
    assert {"CassetteLLM", "RecordingLLM"} <= set(mock.__all__)
    with pytest.raises(AttributeError, match="has no attribute 'CasetteLLM'"):
        _ = mock.CasetteLLM


def test_every_name_of_the_recording_layer_imports_with_a_star():
    namespace: dict[str, object] = {}
    exec("from agentkit.recording import *", namespace)

    assert set(agentkit.recording.__all__) <= set(namespace)
    with pytest.raises(AttributeError, match="has no attribute 'Casette'"):
        _ = agentkit.recording.Casette


def test_a_name_taken_through_an_old_path_is_the_recording_layers():
    assert new_home("agentkit.llms.cassette.Cassette") == "agentkit.recording.Cassette"
    assert new_home("agentkit.llms.fake_openai") == "agentkit.recording"
    assert new_home("agentkit.llms.mock.CassetteLLM") == "agentkit.recording.CassetteLLM"
    assert new_home("agentkit.llms.mock.ScriptedLLM") == "agentkit.llms.mock.ScriptedLLM"
    assert is_reexport("agentkit.llms.mock", "agentkit.recording.RecordingLLM")
    assert not is_reexport("agentkit.llms.mock", "agentkit.recording.Cassette")
    assert not is_reexport("agentkit.llms.base", "agentkit.recording.CassetteLLM")


_STAGES = """
import json, sys
seen = []
import agentkit.llms.mock
seen.append(set(sys.modules))
agentkit.llms.mock.CassetteLLM
seen.append(set(sys.modules))
import agentkit.recording
server = agentkit.recording.FakeOpenAIServer()
seen.append(set(sys.modules))
server.llm()
seen.append(set(sys.modules))
names = ["agentkit.recording", "agentkit.recording._fake_openai", "respx", "agentkit.llms.openai"]
print(json.dumps([[name for name in names if name in stage] for stage in seen]))
"""


@pytest.mark.slow  # fresh interpreters
def test_the_layer_loads_when_asked_for_and_the_fake_endpoint_only_when_it_is():
    done = subprocess.run([sys.executable, "-c", _STAGES], capture_output=True, text=True,
                          check=True)
    mock_only, cassette_llm, fake_endpoint, its_client = json.loads(done.stdout)

    assert mock_only == []
    assert cassette_llm == ["agentkit.recording"]
    # the fake endpoint alone does not import the OpenAI backend (nor the openai SDK) ...
    assert fake_endpoint == ["agentkit.recording", "agentkit.recording._fake_openai", "respx"]
    # ... a client of it does
    assert its_client == ["agentkit.recording", "agentkit.recording._fake_openai", "respx",
                          "agentkit.llms.openai"]
