"""Scenario files for the evaluation tests, written into ``tmp_path``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from agentkit.llms.mock import ScriptedLLM, tool_call
from tests.scenario_text import adding_scenario


def sampled_scenario(name: str = "sam", extra: str = "") -> str:
    """One `add` call, the answer expected to contain 5, recorded for function_calling."""
    return adding_scenario(name, f"""\
expect:
  answer: {{contains: "5"}}
{extra}agents:
  function_calling:
    recording: cassettes/{name}.yaml
""")


def answering(*answers: str) -> Callable[[int], ScriptedLLM]:
    """A live model per sample: sample i calls add(2, 3), then answers ``answers[i]``."""
    return lambda index: ScriptedLLM([tool_call("add", a=2, b=3), answers[index]],
                                     strict=False, name="scripted-live")


@pytest.fixture
def scenario_file(tmp_path: Path) -> Callable[..., Path]:
    def write(text: str | None = None, name: str = "sam.yaml") -> Path:
        path = tmp_path / name
        path.write_text(text or sampled_scenario(), encoding="utf-8")
        return path

    return write
